"""What the tool modules share: failures as tool errors that say what to do, and the tools'
annotations."""

import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations

from graphrag_mcp_server.errors import GraphRagMcpError, IndexNotFoundError
from graphrag_mcp_server.providers.faults import Operation, provider_failure
from graphrag_mcp_server.server.context import ServerContext

T = TypeVar("T")
logger = logging.getLogger(__name__)


async def guarded(shared: ServerContext, work: Awaitable[T]) -> T:
    """Await `work`; every failure becomes a tool error that says what went wrong and, where it can,
    what to do."""
    try:
        return await work
    except (ToolError, MCPError):
        raise
    except Exception as error:
        mapped = tool_error(error, shared.root)
        if mapped is None:
            logger.exception("unexpected failure")
            mapped = ToolError(
                f"internal error: {type(error).__name__}: {error} (details in the server's log); "
                "the server keeps serving"
            )
        raise mapped from error


def tool_error(error: Exception, root: Path) -> ToolError | None:
    """A ToolError for a failure the caller can act on; None for an unexpected one."""
    if isinstance(error, IndexNotFoundError):
        return ToolError(
            f"{error}; or call the build_index tool with the folder of documents as data_path"
        )
    if isinstance(error, GraphRagMcpError):
        return ToolError(str(error))
    if (
        failure := provider_failure(error, Operation.SEARCH, str(root / "settings.yaml"))
    ) is not None:
        return ToolError(f"{failure}. The server keeps serving")
    return None


READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
"""Searches, statistics, job status: read the index (a search also asks the configured model);
change nothing."""
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
"""build_index and cancel_index_job: change the served index, never the documents; the version
before stays until the next one, and the same call twice changes nothing more."""
TUNE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
"""tune_prompts: rewrites the project's prompts (the previous ones kept aside)."""
