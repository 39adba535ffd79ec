"""MCP tools that read one record of the index by its id, as the resource templates do: for
clients whose model cannot read resources, so that it can still follow a citation."""

import asyncio
from collections.abc import Callable
from typing import Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from pydantic import Field

from graphrag_mcp_server.handlers.explore import views
from graphrag_mcp_server.handlers.tables import IndexTables
from graphrag_mcp_server.server.context import ServerContext
from graphrag_mcp_server.server.tool_base import READ, guarded

T = TypeVar("T")


def register_record_tools(server: MCPServer, shared: ServerContext) -> None:
    """Add get_entity, get_community and get_text_unit (the same JSON as
    graphrag://entities/{name}, graphrag://communities/{community_id},
    graphrag://text_units/{text_unit_id}); no model call."""

    async def read(view: Callable[[IndexTables], T]) -> T:
        async def from_snapshot() -> T:
            snapshot = await shared.state.snapshot()
            return await asyncio.to_thread(view, snapshot.tables)

        return await guarded(shared, from_snapshot())

    @server.tool(
        title="Read an entity",
        annotations=READ,
        description="One entity by name (as graphrag://entities/{name}): type, description, "
        "relationships, communities, documents. No model call.",
    )
    async def get_entity(
        name: Annotated[str, Field(min_length=1, max_length=500, description="Entity name")],
    ) -> views.EntityDetail:
        return await read(lambda tables: views.entity_detail(tables, name))

    @server.tool(
        title="Read a community report",
        annotations=READ,
        description="One community and its report by number (as graphrag://communities/{id}): "
        "title, summary, findings, rating, members. No model call.",
    )
    async def get_community(
        community_id: Annotated[int, Field(ge=0, le=999_999_999, description="Community number")],
    ) -> views.CommunityDetail:
        return await read(lambda tables: views.community_detail(tables, community_id))

    @server.tool(
        title="Read a text unit",
        annotations=READ,
        description="One text unit (chunk) by the id a source cites (as graphrag://text_units/"
        "{id}): its text, document, entities. No model call.",
    )
    async def get_text_unit(
        text_unit_id: Annotated[
            str, Field(min_length=1, max_length=200, description="Text unit id (a source's)")
        ],
    ) -> views.TextUnitDetail:
        return await read(lambda tables: views.text_unit_detail(tables, text_unit_id))
