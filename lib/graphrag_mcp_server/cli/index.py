"""`graphrag-mcp index`: build or update the index of a folder, publish it with --storage, keep it
current with --watch."""

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from graphrag_mcp_server.cli.common import (
    OFFLINE_NOTICE,
    FormatOption,
    IndexPath,
    StorageOption,
    index_root,
    notice,
    user_errors,
)
from graphrag_mcp_server.cli.output import OutputFormat, print_summary
from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing.build import IndexMethod, IndexMode
from graphrag_mcp_server.handlers.indexing.versions import graphrag_output, legacy_version


@user_errors
def index(
    data_path: Annotated[
        Path,
        typer.Argument(
            help="Folder of documents (text, Markdown, PDF, Word, PowerPoint, Excel, HTML, CSV, "
            "JSON)."
        ),
    ],
    index_path: IndexPath = None,
    full: Annotated[bool, typer.Option("--full", help="Rebuild the whole index.")] = False,
    incremental: Annotated[
        bool, typer.Option("--incremental", help="Update the existing index.")
    ] = False,
    method: Annotated[
        IndexMethod, typer.Option(help="standard: LLM extraction; fast: NLP extraction.")
    ] = (IndexMethod.STANDARD),
    offline: Annotated[
        bool, typer.Option(help="Use the offline model (no key, no network).")
    ] = False,
    watch: Annotated[bool, typer.Option(help="Keep the index current as files change.")] = False,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Do not ask before taking over a `graphrag index` output/."
        ),
    ] = False,
    storage: StorageOption = None,
    wait: Annotated[
        float,
        typer.Option(
            min=0,
            metavar="SECONDS",
            help="With --storage: how long to wait for another "
            "indexer's lease before giving up (default: do not wait).",
        ),
    ] = 0,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Count the documents and chunks a run would process and estimate its model "
            "calls and tokens; write nothing, call no model.",
        ),
    ] = False,
    output_format: FormatOption = OutputFormat.TEXT,
) -> None:
    """Build or update the index of DATA_PATH (GraphRAG parquet tables + LanceDB vectors); with
    --storage, publish each version to the blob container the servers follow."""
    publish = _publishing(storage, wait)
    if full and incremental:
        raise typer.BadParameter("choose one of --full and --incremental")
    mode = IndexMode.FULL if full else IndexMode.INCREMENTAL
    data_path, root = data_path.resolve(), index_root(index_path)
    if dry_run:
        _print_estimate(
            asyncio.run(_estimate(data_path, root, full, method, offline)), output_format
        )
        return
    if (output := graphrag_output(root)) is not None:
        notice(
            f"{output} is a folder written by `graphrag index`: this run moves it to "
            f"{legacy_version(root)} (kept until the next run) and makes {output} a link to the "
            "version it writes, which graphrag's CLI reads as before; graphrag's cache in "
            f"{root / 'cache'} is reused."
        )
        if sys.stdin.isatty() and not yes:
            typer.confirm("Go on?", abort=True, err=True)
    summary = asyncio.run(publish(root, lambda: run_index(data_path, root, mode, method, offline)))
    print_summary(summary, output_format)
    if watch:
        _watch(data_path, root, method, offline, output_format, publish)


Publish = Callable[[Path, Callable[[], Any]], Any]
"""How an index run is made: as it is, or as the blob container's one indexer (blob/publish.py)."""


def _publishing(storage: str | None, wait: float) -> Publish:
    settings = ServerSettings()
    url = storage or settings.storage
    if url is None:

        async def local(root: Path, run: Callable[[], Any]) -> Any:
            return await run()

        return local
    from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
    from graphrag_mcp_server.handlers.indexing.blob.publish import published_build

    location = BlobLocation.parse(url)

    async def published(root: Path, run: Callable[[], Any]) -> Any:
        return await published_build(location, root, run, settings.storage_grace_seconds, wait)

    return published


def _watch(
    data_path: Path,
    root: Path,
    method: IndexMethod,
    offline: bool,
    output_format: OutputFormat,
    publish: Publish,
) -> None:
    """Update the index after each burst of changes under `data_path` until Ctrl-C."""
    from graphrag_mcp_server.handlers.indexing.watch import watch_folder

    settings = ServerSettings()

    async def update() -> bool:
        try:
            summary = await publish(
                root, lambda: run_index(data_path, root, IndexMode.INCREMENTAL, method, offline)
            )
        except GraphRagMcpError as error:
            typer.echo(
                f"error: {error} (still watching; retrying in {settings.watch_retry_seconds:.0f} s "
                "at the latest)",
                err=True,
            )
            return False
        print_summary(summary, output_format)
        return True

    async def watch_until_interrupted() -> None:
        # graphrag's nest_asyncio2 replaces asyncio.run, whose Ctrl-C handling then sometimes lost
        # the signal while the loop waited: the loop's own signal handler wakes it every time.
        loop, watching = asyncio.get_running_loop(), asyncio.current_task()
        assert watching is not None  # a coroutine that asyncio.run runs is always its task
        loop.add_signal_handler(signal.SIGINT, watching.cancel)
        try:
            await watch_folder(
                data_path, root, settings.watch_settle_seconds, update, settings.watch_retry_seconds
            )
        except asyncio.CancelledError:
            return
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    notice(f"Watching {data_path} for changes (Ctrl-C to stop).")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(watch_until_interrupted())
    notice("Stopped watching.")


async def _estimate(
    data_path: Path, root: Path, full: bool, method: IndexMethod, offline: bool
) -> Any:
    from graphrag_mcp_server.handlers.indexing.build import index_config, undone_unless_published
    from graphrag_mcp_server.handlers.indexing.estimate import estimate

    with undone_unless_published(root, look_only=True):
        config = index_config(root, data_path, offline)
        return await estimate(config, root, full, method is IndexMethod.FAST)


async def _cost_line(config: Any, root: Path, mode: IndexMode, method: IndexMethod) -> str:
    from graphrag_mcp_server.handlers.indexing.estimate import estimate

    found = await estimate(config, root, mode is IndexMode.FULL, method is IndexMethod.FAST)
    unknown = (
        " (summaries and reports follow what extraction finds)"
        if found.summary_calls is None
        else ""
    )
    return (
        f"This run: {found.documents_to_index} documents, {found.chunks_to_extract} new chunks, "
        f"about {found.calls} model calls{unknown} and {found.input_tokens} extraction input "
        "tokens (`index --dry-run` says how)."
    )


def _print_estimate(found: Any, output_format: OutputFormat) -> None:
    """The estimate: one JSON object, or a line a figure."""
    from graphrag_mcp_server.handlers.indexing.estimate import as_rows

    if output_format is OutputFormat.JSON:
        typer.echo(found.model_dump_json())
        return
    for label, value in as_rows(found):
        typer.echo(f"{label}: {value}")


async def run_index(
    data_path: Path, root: Path, mode: IndexMode, method: IndexMethod, offline: bool
) -> Any:
    """One build of `data_path` into `root` with a progress bar (stderr); undone unless
    published."""
    from graphrag_mcp_server.cli.progress import RichWorkflowProgress
    from graphrag_mcp_server.config.index_root import is_offline
    from graphrag_mcp_server.handlers.indexing.build import (
        build,
        index_config,
        undone_unless_published,
    )

    with undone_unless_published(root):
        config = index_config(root, data_path, offline)
        if is_offline(config):
            notice(OFFLINE_NOTICE)
        elif sys.stdin.isatty():  # a paid build, watched: its cost first
            notice(await _cost_line(config, root, mode, method))
        with RichWorkflowProgress() as progress:
            return await build(config, root, mode, method, callbacks=[progress], notice=notice)
