"""Argument completion (`completion/complete`): entity names, community ids and levels for the
resource templates and prompts that take them, from the loaded index."""

import asyncio
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp_types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.explore import views
from graphrag_mcp_server.handlers.tables import IndexTables
from graphrag_mcp_server.server.context import ServerContext

CANDIDATES: dict[tuple[str, str], Callable[[IndexTables], list[str]]] = {
    ("graphrag://entities/{name}", "name"): views.entity_names,
    ("graphrag://communities/{community_id}", "community_id"): views.community_ids,
    ("explore", "entity"): views.entity_names,
    ("compare", "a"): views.entity_names,
    ("compare", "b"): views.entity_names,
    ("summarize", "level"): views.community_levels,
}
"""(resource template URI or prompt name, argument) -> its candidate values."""


def register_completions(server: MCPServer, shared: ServerContext) -> None:
    """Complete the arguments CANDIDATES names; any other argument, or no index yet, gets no
    suggestion."""

    # The SDK's MCPServer.completion() carries no annotations.
    @server.completion()  # type: ignore[no-untyped-call, untyped-decorator]
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        where = ref.uri if isinstance(ref, ResourceTemplateReference) else ref.name
        candidates = CANDIDATES.get((where, argument.name))
        if candidates is None:
            return None
        try:
            tables = (await shared.state.snapshot()).tables
        except GraphRagMcpError:
            return None
        values, total = await asyncio.to_thread(
            lambda: views.completed(candidates(tables), argument.value)
        )
        return Completion(values=values, total=total, has_more=total > len(values))
