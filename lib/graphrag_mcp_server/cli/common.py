"""What the commands share: their common options, one-line errors, notices, the index root and its
local copy."""

import asyncio
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any

import typer

from graphrag_mcp_server.cli.output import OutputFormat
from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import GraphRagMcpError

OFFLINE_NOTICE = (
    "Using the offline model: no language model, answers are extracted from your documents (for "
    "trying graphrag-mcp without a key, and for tests). Configure one with: graphrag-mcp init "
    "--provider openai"
)


IndexPath = Annotated[
    Path | None,
    typer.Option(
        "--index-path",
        "-i",
        help="Index root (env GRAPHRAG_MCP_INDEX_PATH; default ./graphrag_index).",
    ),
]
StorageOption = Annotated[
    str | None,
    typer.Option(
        "--storage",
        metavar="az://CONTAINER/PREFIX",
        help="Blob location of the index versions; --index-path is then this host's local copy "
        "(env GRAPHRAG_MCP_STORAGE; credentials from AZURE_STORAGE_*; see docs/deployment.md).",
    ),
]
FormatOption = Annotated[
    OutputFormat, typer.Option("--format", "-f", help="text or json (one object on stdout).")
]


def index_root(index_path: Path | None) -> Path:
    """The index root a command works on: --index-path, else GRAPHRAG_MCP_INDEX_PATH, else
    ./graphrag_index."""
    return (index_path or ServerSettings().index_path).resolve()


def local_copy(index_path: Path | None, storage: str | None) -> Path:
    """The index root to read; with blob storage (--storage or GRAPHRAG_MCP_STORAGE), the local copy
    first brought onto the container's current version."""
    root, url = index_root(index_path), storage or ServerSettings().storage
    if url is not None:
        from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
        from graphrag_mcp_server.handlers.indexing.blob.follower import follow

        asyncio.run(follow(BlobLocation.parse(url), root, 0, once=True))
    return root


def fail(message: str, code: int = 1) -> None:
    """Stop the command with one `error:` line."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


BUILD_COMMANDS = {"index", "tune"}
"""Commands whose model calls build (the advice for a failed call differs from a search's)."""


def user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Report GraphRagMcpError as one line on stderr with exit code 1, never a traceback."""

    @wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraphRagMcpError as error:
            fail(str(error))
        except Exception as error:
            from graphrag_mcp_server.providers.faults import Operation, provider_failure

            operation = Operation.BUILD if command.__name__ in BUILD_COMMANDS else Operation.SEARCH
            if (failure := provider_failure(error, operation)) is None:
                raise
            fail(failure)

    return run


def notice(message: str) -> None:
    """A line for the user on stderr (stdout carries the result)."""
    typer.echo(message, err=True)
