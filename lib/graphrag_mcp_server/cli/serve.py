"""`graphrag-mcp serve`: serve the index to MCP clients over stdio or HTTP."""

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from graphrag_mcp_server.cli.common import IndexPath, StorageOption, fail, index_root, user_errors
from graphrag_mcp_server.config.settings import AnswerModel, ServerSettings


class TransportOption(StrEnum):
    """MCP transports."""

    STDIO = "stdio"
    SSE = "sse"
    STREAMABLE_HTTP = "streamable-http"


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
    write_path: Annotated[
        Path | None,
        typer.Option(
            "--write-path",
            help="Folder where the add_document, update_document and delete_document tools write "
            "Markdown documents, indexed incrementally (env GRAPHRAG_MCP_WRITE_PATH). Not with "
            "--read-only.",
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
            help="Who writes search answers: index (settings.yaml's model) or sampling (each "
            "client's own model, through MCP sampling). Env GRAPHRAG_MCP_LLM; default index."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="Processes serving streamable HTTP, searching in parallel (env "
            "GRAPHRAG_MCP_WORKERS; default 1). Above 1: stateless sessions, no sampling, "
            "read-only.",
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
    """Serve the index to MCP clients (Claude, VS Code, Cursor...): search tools, resources,
    prompts."""
    from graphrag_mcp_server.server.run import serve as run_server

    settings = ServerSettings()
    overrides: dict[str, object] = {
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
    if write_path is not None:
        if read_only or settings.read_only:
            fail(
                "--write-path and --read-only exclude each other: a read-only server writes nothing"
            )
        if write_path.exists() and not write_path.is_dir():
            fail(f"{write_path} is not a folder (given with --write-path)")
        overrides["write_path"] = write_path.resolve()
    if stateless:
        overrides["stateless"] = True
    if storage is not None:
        overrides["storage"] = storage
    run_server(
        index_root(index_path), transport.value, settings.model_copy(update=overrides), watch
    )
