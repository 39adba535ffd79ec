"""The `graphrag-mcp` command: thin typer commands; graphrag is imported only inside them."""

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from graphrag_mcp_server import __version__
from graphrag_mcp_server.cli.common import (
    OFFLINE_NOTICE,
    FormatOption,
    IndexPath,
    StorageOption,
    fail,
    index_root,
    local_copy,
    notice,
    user_errors,
)
from graphrag_mcp_server.cli.output import (
    OutputFormat,
    plain,
    print_piece,
    print_summary,
    render_context,
)
from graphrag_mcp_server.cli.tune import tune
from graphrag_mcp_server.config.providers import Provider
from graphrag_mcp_server.config.settings import AnswerModel, ServerSettings
from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.explore.graph import GraphFormat
from graphrag_mcp_server.handlers.indexing.build import IndexMethod, IndexMode
from graphrag_mcp_server.handlers.indexing.versions import graphrag_output, legacy_version
from graphrag_mcp_server.handlers.search.context import DEFAULT_CONTEXT_TOKENS
from graphrag_mcp_server.handlers.search.run import SearchType
from graphrag_mcp_server.providers.operation import retries_told_to, retry_notice

app = typer.Typer(
    name="graphrag-mcp",
    help="GraphRAG knowledge of your own documents for AI assistants: index a folder, query it, serve it over MCP.",
    pretty_exceptions_enable=False,
)


def _version(show: bool) -> None:
    if show:
        from importlib.metadata import version

        typer.echo(
            f"graphrag-mcp {__version__} (graphrag {version('graphrag')}, mcp {version('mcp')})"
        )
        raise typer.Exit


app.command()(tune)


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """GraphRAG knowledge of your own documents for AI assistants."""


@app.command()
@user_errors
def init(
    index_path: IndexPath = None,
    provider: Annotated[
        Provider, typer.Option(help="Model provider to configure.")
    ] = Provider.OPENAI,
    model: Annotated[
        str | None, typer.Option(help="Completion model (provider's default if omitted).")
    ] = None,
    embedding_model: Annotated[
        str | None, typer.Option(help="Embedding model (provider's default if omitted).")
    ] = None,
    force: Annotated[
        bool, typer.Option(help="Overwrite an existing settings.yaml and prompts.")
    ] = False,
    api_base: Annotated[
        str | None,
        typer.Option(
            "--api-base",
            metavar="URL",
            help="Base URL of both models (a local OpenAI-compatible server: http://localhost:8000/v1).",
        ),
    ] = None,
    storage: StorageOption = None,
) -> None:
    """Write graphrag's settings.yaml and prompts into the index root, configured for a provider; with --storage,
    also create the blob container the index versions will be published to (checking the credentials now)."""
    from graphrag_mcp_server.config.index_root import write_index_root

    root = index_root(index_path)
    if storage is not None:
        from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
        from graphrag_mcp_server.handlers.indexing.blob.versions import create_container

        create_container(location := BlobLocation.parse(storage))
    settings = write_index_root(root, provider, model, embedding_model, force, api_base)
    typer.echo(f"Wrote {settings} and prompts/ for provider {provider.value}.")
    if provider is not Provider.OFFLINE:
        typer.echo(
            "Credentials are read from the environment: see the ${...} references in settings.yaml."
        )
    if storage is not None:
        typer.echo(
            f"{location} is ready: publish to it with `graphrag-mcp index DATA_PATH --index-path {root} "
            f"--storage {location}`, or set GRAPHRAG_MCP_STORAGE={location} (environment or .env)."
        )


@app.command()
@user_errors
def index(
    data_path: Annotated[
        Path,
        typer.Argument(
            help="Folder of documents (text, Markdown, PDF, Word, PowerPoint, Excel, HTML, CSV, JSON)."
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
    output_format: FormatOption = OutputFormat.TEXT,
) -> None:
    """Build or update the index of DATA_PATH (GraphRAG parquet tables + LanceDB vectors); with --storage, publish
    each version to the blob container the servers follow."""
    publish = _publishing(storage, wait)
    if full and incremental:
        raise typer.BadParameter("choose one of --full and --incremental")
    mode = IndexMode.FULL if full else IndexMode.INCREMENTAL
    data_path, root = data_path.resolve(), index_root(index_path)
    if (output := graphrag_output(root)) is not None:
        notice(
            f"{output} is a folder written by `graphrag index`: this run moves it to {legacy_version(root)} "
            f"(kept until the next run) and makes {output} a link to the version it writes, which graphrag's CLI "
            f"reads as before; graphrag's cache in {root / 'cache'} is reused."
        )
        if sys.stdin.isatty() and not yes:
            typer.confirm("Go on?", abort=True, err=True)
    summary = asyncio.run(publish(root, lambda: _run_index(data_path, root, mode, method, offline)))
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
                root, lambda: _run_index(data_path, root, IndexMode.INCREMENTAL, method, offline)
            )
        except GraphRagMcpError as error:
            typer.echo(
                f"error: {error} (still watching; retrying in {settings.watch_retry_seconds:.0f} s at the "
                "latest)",
                err=True,
            )
            return False
        print_summary(summary, output_format)
        return True

    async def watch_until_interrupted() -> None:
        # graphrag's nest_asyncio2 replaces asyncio.run, whose Ctrl-C handling then sometimes lost the
        # signal while the loop waited: the loop's own signal handler wakes it every time.
        loop, watching = asyncio.get_running_loop(), asyncio.current_task()
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
    try:
        asyncio.run(watch_until_interrupted())
    except KeyboardInterrupt:
        pass
    notice("Stopped watching.")


async def _run_index(
    data_path: Path, root: Path, mode: IndexMode, method: IndexMethod, offline: bool
) -> Any:
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
        with RichWorkflowProgress() as progress:
            return await build(config, root, mode, method, callbacks=[progress], notice=notice)


@app.command()
@user_errors
def query(
    query_text: Annotated[str, typer.Argument(metavar="QUERY", help="The question.")],
    index_path: IndexPath = None,
    query_type: Annotated[
        SearchType, typer.Option("--type", "-t", help="Search method.")
    ] = SearchType.GLOBAL,
    community_level: Annotated[
        int, typer.Option(min=0, help="Community level (0 = broadest).")
    ] = 2,
    top_k: Annotated[
        int | None,
        typer.Option(
            min=1, help="Records to retrieve: text units (basic) or entities (local, drift)."
        ),
    ] = None,
    response_type: Annotated[str, typer.Option(help="Form of the answer.")] = "Multiple Paragraphs",
    context_only: Annotated[
        bool,
        typer.Option(
            "--context-only",
            help="Print the context the model would get instead of an answer (no completion call).",
        ),
    ] = False,
    max_tokens: Annotated[
        int, typer.Option(min=100, help="Token budget of the context (with --context-only).")
    ] = DEFAULT_CONTEXT_TOKENS,
    timeout: Annotated[
        float | None,
        typer.Option(
            min=1,
            help="Seconds to wait for the model (default GRAPHRAG_MCP_SEARCH_TIMEOUT_SECONDS, 45).",
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.TEXT,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also print graphrag's log records (kept in logs/query.log) on stderr.",
        ),
    ] = False,
    storage: StorageOption = None,
    stream: Annotated[
        bool,
        typer.Option(
            "--stream",
            help="Print the answer as the model writes it (text output; JSON stays whole).",
        ),
    ] = False,
) -> None:
    """Answer a question from the index (for debugging what the MCP tools return)."""
    if (
        verbose
    ):  # graphrag's loggers propagate here; their own handler (init_loggers) writes logs/query.log
        logging.basicConfig(
            stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
        )
    streaming = stream and output_format is OutputFormat.TEXT and not context_only
    options = QueryOptions(
        query_type,
        community_level,
        top_k,
        response_type,
        max_tokens if context_only else None,
        timeout or ServerSettings().search_timeout_seconds,
        print_piece if streaming else None,
    )
    result = asyncio.run(_run_query(local_copy(index_path, storage), query_text, options))
    if output_format is OutputFormat.JSON:
        typer.echo(result.model_dump_json())
        return
    if streaming:
        typer.echo()  # the answer's pieces were printed as they came
    else:
        typer.echo(result.answer if result.context is None else render_context(result.context))
    documents = list(dict.fromkeys(source.document for source in result.sources))
    typer.echo("\nSources: " + (", ".join(documents) if documents else "none"))
    typer.echo(
        f"LLM calls {result.llm_calls}, prompt tokens {result.prompt_tokens}, "
        f"completion tokens {result.completion_tokens}, embedding calls {result.embedding_calls}, "
        f"{result.seconds:.1f} s.",
        err=True,
    )


@dataclass(frozen=True)
class QueryOptions:
    """How `query` searches; `context_tokens` set means context only, within that budget."""

    search_type: SearchType
    community_level: int
    top_k: int | None
    response_type: str
    context_tokens: int | None
    timeout: float
    on_text: Callable[[str], Awaitable[None]] | None = None


async def _run_query(root: Path, text: str, options: QueryOptions) -> Any:
    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import run_search, tuned_config
    from graphrag_mcp_server.handlers.tables import load_tables
    from graphrag_mcp_server.server.state import disk_version

    config = load_index_config(root, without_credentials=True)
    version, tables = disk_version(root, config), await load_tables(config, root)
    config = tuned_config(config, options.search_type, top_k=options.top_k)
    if options.context_tokens is not None:
        result = search_context(
            config,
            tables,
            options.search_type,
            text,
            max_tokens=options.context_tokens,
            community_level=options.community_level,
        )
    else:
        with retries_told_to(_say_retry):
            result = await run_search(
                config,
                tables,
                options.search_type,
                text,
                community_level=options.community_level,
                response_type=options.response_type,
                timeout=options.timeout,
                on_text=options.on_text,
            )
    return result.model_copy(update={"index_version": version})


def _say_retry(reason: str, wait: float) -> None:
    typer.echo(retry_notice(reason, wait), err=True)


@app.command()
@user_errors
def stats(
    index_path: IndexPath = None,
    output_format: FormatOption = OutputFormat.TEXT,
    storage: StorageOption = None,
) -> None:
    """Show the size and makeup of the index."""
    statistics = asyncio.run(_run_stats(local_copy(index_path, storage)))
    if output_format is OutputFormat.JSON:
        typer.echo(statistics.model_dump_json())
    else:
        for key, value in statistics.model_dump(mode="json", exclude={"issues"}).items():
            typer.echo(f"{key.replace('_', ' '):>18}: {plain(value)}")
        for issue in statistics.issues:
            typer.echo(f"{issue.severity}: {issue.message}", err=True)
    if any(issue.severity == "error" for issue in statistics.issues):
        raise typer.Exit(1)


async def _run_stats(root: Path) -> Any:
    from graphrag_mcp_server.handlers.explore.stats import version_statistics

    return version_statistics(*await _read_index(root))


async def _read_index(root: Path) -> tuple[Any, Any]:
    """The index's config (no model provider, no credentials: nothing here calls a model) and its tables."""
    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.handlers.tables import load_tables

    config = load_index_config(root, without_credentials=True, with_models=False)
    return config, await load_tables(config, root)


@app.command()
@user_errors
def export(
    index_path: IndexPath = None,
    graph_format: Annotated[
        GraphFormat,
        typer.Option(
            "--format",
            "-f",
            help="graphml (Gephi, Cytoscape), gexf (Gephi), json "
            "(networkx node-link), html (one offline page for a browser).",
        ),
    ] = GraphFormat.GRAPHML,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="File to write (default ./entity-graph.FORMAT)."),
    ] = None,
    storage: StorageOption = None,
) -> None:
    """Write the entity graph (entities, relationships, communities, documents) as a file."""
    from graphrag_mcp_server.handlers.explore.graph import entity_graph, write_graph

    target = (
        output or Path(f"entity-graph.{graph_format.value}")
    ).resolve()  # graphrag's loader changes the cwd
    _, tables = asyncio.run(_read_index(local_copy(index_path, storage)))
    graph = entity_graph(tables)
    try:
        target.write_bytes(write_graph(graph, graph_format))
    except OSError as error:
        fail(f"cannot write {target}: {error.strerror}; choose another file with --output")
    typer.echo(
        f"Wrote {graph.number_of_nodes()} entities and {graph.number_of_edges()} relationships to {target}."
    )


@app.command(
    "graphrag",
    add_help_option=False,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def graphrag_cli(context: typer.Context) -> None:
    """GraphRAG's own CLI (graphrag index|update|query|prompt-tune ...) with this project's model types
    (offline, bounded_backoff retries) registered, so it reads and builds indexes made with them."""
    if (root := _graphrag_mcp_root_written(context.args)) is not None:
        fail(
            f"{root} is a graphrag-mcp index root, whose output is the version being served: update it with "
            f"`graphrag-mcp index DATA_PATH --index-path {root}`, or give `graphrag {context.args[0]}` a root of its own"
        )
    from graphrag_mcp_server.config.runtime import prepare_models
    from graphrag_mcp_server.providers import register_providers

    prepare_models()
    register_providers()
    from graphrag.cli.main import app as graphrag_app

    graphrag_app(args=context.args, prog_name="graphrag-mcp graphrag")


def _graphrag_mcp_root_written(args: list[str]) -> Path | None:
    """The root that `graphrag index|update ARGS` would write into when it is a graphrag-mcp root."""
    if not args or args[0] not in ("index", "update"):
        return None
    root = Path(".")
    for position, arg in enumerate(args):
        if arg in ("--root", "-r") and position + 1 < len(args):
            root = Path(args[position + 1])
        elif arg.startswith("--root="):
            root = Path(arg.removeprefix("--root="))
    return root.resolve() if (root / "output").is_symlink() else None


class TransportOption(StrEnum):
    """MCP transports."""

    STDIO = "stdio"
    SSE = "sse"
    STREAMABLE_HTTP = "streamable-http"


@app.command()
@user_errors
def serve(
    index_path: IndexPath = None,
    transport: Annotated[
        TransportOption, typer.Option(help="stdio for local clients; HTTP transports for remote.")
    ] = (TransportOption.STDIO),
    host: Annotated[
        str | None, typer.Option(help="Address to bind (env GRAPHRAG_MCP_HOST; default 127.0.0.1).")
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="Port to bind (env GRAPHRAG_MCP_PORT; default 8080).")
    ] = None,
    watch: Annotated[
        Path | None,
        typer.Option(help="Folder of documents to keep the index current with while serving."),
    ] = None,
    data_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--data-path",
            help="A folder the build_index tool may index (repeatable; env "
            "GRAPHRAG_MCP_DATA_ROOTS). Without it (or --watch) build_index is off.",
        ),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            help="No build_index or cancel_index_job tools (env GRAPHRAG_MCP_READ_ONLY).",
        ),
    ] = False,
    llm: Annotated[
        AnswerModel | None,
        typer.Option(
            help="Who writes search answers: index (settings.yaml's model) or sampling (each client's own "
            "model, through MCP sampling). Env GRAPHRAG_MCP_LLM; default index."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="Processes serving streamable HTTP, searching in parallel (env "
            "GRAPHRAG_MCP_WORKERS; default 1). Above 1: stateless sessions, no sampling, read-only.",
        ),
    ] = None,
    stateless: Annotated[
        bool,
        typer.Option(
            "--stateless",
            help="Streamable HTTP without sessions: any replica answers any request "
            "(env GRAPHRAG_MCP_STATELESS; no sampling).",
        ),
    ] = False,
    storage: StorageOption = None,
) -> None:
    """Serve the index to MCP clients (Claude, VS Code, Cursor...): search tools, resources, prompts."""
    from graphrag_mcp_server.server.run import serve as run_server

    settings = ServerSettings()
    overrides = {
        key: value
        for key, value in {"host": host, "port": port, "llm": llm, "workers": workers}.items()
        if value is not None
    }
    for folder in [*(data_path or []), *([watch] if watch else [])]:
        if not folder.is_dir():
            fail(f"{folder} is not a folder (given with --data-path or --watch)")
    if data_path:
        overrides["data_roots"] = [folder.resolve() for folder in data_path]
    if read_only:
        overrides["read_only"] = True
    if stateless:
        overrides["stateless"] = True
    if storage is not None:
        overrides["storage"] = storage
    run_server(
        index_root(index_path), transport.value, settings.model_copy(update=overrides), watch
    )


def main() -> int:
    """Console-script entry point: usage errors are one `error:` line (exit 2), like every other error."""
    try:
        return (
            app(args=sys.argv[1:] or ["--help"], prog_name="graphrag-mcp", standalone_mode=False)
            or 0
        )
    except typer.TyperException as error:  # click's ClickException: a usage error
        context = getattr(error, "ctx", None)
        command = context.command_path if context else "graphrag-mcp"
        typer.echo(f"error: {error.format_message()} (see: {command} --help)", err=True)
        return error.exit_code
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
