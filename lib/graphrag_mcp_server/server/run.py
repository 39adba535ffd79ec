"""Running the server: one process on stdio or HTTP, or several HTTP workers."""

import os
import signal
import sys
from pathlib import Path

from graphrag_mcp_server.config.settings import AnswerModel, ServerSettings
from graphrag_mcp_server.errors import ConfigError
from graphrag_mcp_server.server.app import Transport, create_server


def check_sessionless(
    transport: Transport, settings: ServerSettings, option: str, instead: str
) -> None:
    """Serving without sessions (`option`: several workers, or --stateless) is streamable HTTP with
    nothing that needs a session or one process; `instead` says how to serve sampling."""
    if transport != "streamable-http":
        msg = (
            f"{option} needs --transport streamable-http (sessions of {transport} live in one "
            "process)"
        )
        raise ConfigError(msg)
    if settings.llm is AnswerModel.SAMPLING:
        msg = f"--llm sampling needs a session per client: serve it {instead}"
        raise ConfigError(msg)


def _exit_on_interrupt() -> None:
    """Ctrl-C ends a stdio server at once, with code 130 and one line (the SDK's stdin reader
    thread, blocked in a read, kept the interpreter from ever raising KeyboardInterrupt). An index
    job already running goes on in its own process; the index then holds the version before it or
    the whole new one (versions switch in one step)."""

    def interrupted(signum: int, frame: object) -> None:
        os.write(2, b"graphrag-mcp: interrupted\n")
        os._exit(130)

    signal.signal(signal.SIGINT, interrupted)


def first_version(root: Path, settings: ServerSettings, watch: Path | None) -> ServerSettings:
    """With blob storage: the local copy brought onto the container's current version before serving
    (a container without one yet is followed until one appears); the server is then read-only."""
    import asyncio

    from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
    from graphrag_mcp_server.handlers.indexing.blob.follower import follow
    from graphrag_mcp_server.handlers.indexing.blob.versions import ContainerMissingError

    if watch is not None:
        msg = (
            "--watch builds into the local index; with GRAPHRAG_MCP_STORAGE the indexer is a "
            "command of its own: graphrag-mcp index DATA_PATH --watch, with the same storage "
            "setting"
        )
        raise ConfigError(msg)
    location = BlobLocation.parse(settings.storage or "")
    try:
        version = asyncio.run(follow(location, root, settings.storage_poll_seconds, once=True))
        where = f"version {version}" if version else "no version yet (waiting for an indexer)"
    except ContainerMissingError:  # an indexer starting beside this replica creates it
        where = (
            "its container does not exist yet (waiting for an indexer: graphrag-mcp index "
            f"DATA_PATH --storage {location})"
        )
    print(
        f"graphrag-mcp: following {location}: {where}; local copy {root}",
        file=sys.stderr,
        flush=True,
    )
    return settings.model_copy(update={"read_only": True})


def serve(
    root: Path, transport: Transport, settings: ServerSettings, watch: Path | None = None
) -> None:
    """Run the server until the client disconnects (stdio) or the process is stopped (HTTP)."""
    if settings.stateless:
        check_sessionless(transport, settings, "--stateless", "without --stateless")
    if settings.storage is not None:
        settings = first_version(root, settings, watch)
    if settings.workers > 1:
        from graphrag_mcp_server.server.http import serve_workers

        check_sessionless(
            transport,
            settings,
            f"--workers {settings.workers}",
            f"with --workers 1 (not {settings.workers})",
        )
        serve_workers(root, settings, watch)
        return
    if transport == "stdio":
        _exit_on_interrupt()
        create_server(root, settings, watch).run("stdio")
        return
    from graphrag_mcp_server.server.http import serve_http

    serve_http(create_server(root, settings, watch, transport), root, transport, settings)
