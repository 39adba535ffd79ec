"""Turning failures into MCP tool errors whose message says what to fix."""

from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.errors import GraphRagMcpError, IndexNotFoundError

if TYPE_CHECKING:
    from mcp.server.mcpserver.exceptions import ToolError


def provider_error_reason(error: BaseException) -> str | None:
    """The model provider's reason for a failed call (auth, rate limit, timeout...), if that is what failed."""
    import openai  # LiteLLM raises subclasses of OpenAI's errors for every provider

    from graphrag_mcp_server.providers.retry import describe

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, openai.OpenAIError):
            return describe(cause)
        cause = cause.__cause__ or cause.__context__
    return None


def tool_error(error: Exception, root: Path) -> "ToolError | None":
    """A ToolError for a failure the caller can act on; None for a bug (the SDK reports it generically)."""
    from mcp.server.mcpserver.exceptions import ToolError

    if isinstance(error, IndexNotFoundError):
        return ToolError(f"{error}; or call the build_index tool with the folder of documents as data_path")
    if isinstance(error, GraphRagMcpError):
        return ToolError(str(error))
    if (reason := provider_error_reason(error)) is not None:
        return ToolError(
            f"the model provider failed: {reason}. Check the model settings and credentials in "
            f"{root / 'settings.yaml'}; the server keeps serving"
        )
    return None
