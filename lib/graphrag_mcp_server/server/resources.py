"""MCP resources: read-only JSON views of the index (statistics, entities, communities, text
units)."""

import asyncio
import json
import re
from collections.abc import Callable
from typing import TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from pydantic import BaseModel, TypeAdapter

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.explore import views
from graphrag_mcp_server.handlers.tables import IndexTables
from graphrag_mcp_server.server.context import ServerContext, server_statistics

JSON = "application/json"
T = TypeVar("T")


def register_resources(server: MCPServer, shared: ServerContext) -> None:
    """Add the graphrag:// resources and resource templates."""

    async def view(read: Callable[[IndexTables], T], render: Callable[[T], str] = _to_json) -> str:
        try:
            snapshot = await shared.state.snapshot()
            result = await asyncio.to_thread(read, snapshot.tables)
        except views.RecordNotFoundError as error:
            raise ResourceNotFoundError(str(error)) from error
        except GraphRagMcpError as error:
            raise ResourceError(str(error)) from error
        return render(result)

    @server.resource(
        "graphrag://statistics",
        name="statistics",
        title="Index statistics",
        mime_type=JSON,
        description="Index and server statistics (the same as the get_statistics tool)",
    )
    async def statistics() -> str:
        try:
            return (await server_statistics(shared)).model_dump_json(indent=2)
        except GraphRagMcpError as error:
            raise ResourceError(str(error)) from error

    @server.resource(
        "graphrag://graph",
        name="graph",
        title="Entity graph (GraphML)",
        mime_type="application/graphml+xml",
        description="The whole entity graph as GraphML (entities with type, description, degree, "
        "community and documents; relationships with weight and description), for Gephi or "
        "networkx",
    )
    async def graph() -> str:
        from graphrag_mcp_server.handlers.explore.graph import (
            GraphFormat,
            entity_graph,
            write_graph,
        )

        return await view(
            lambda tables: write_graph(entity_graph(tables), GraphFormat.GRAPHML), bytes.decode
        )

    @server.resource(
        "graphrag://entities",
        name="entities",
        title="Most connected entities",
        mime_type=JSON,
        description="The 50 most connected entities: name, type, degree, short description",
    )
    async def entities() -> str:
        return await view(views.top_entities)

    def listing(name: str, what: str, page_view: Callable[..., BaseModel]) -> None:
        """graphrag://NAME (its first page) and the template graphrag://NAME/page/{page}."""

        @server.resource(
            f"graphrag://{name}",
            name=name,
            title=f"All {name}",
            mime_type=JSON,
            description=f"{what}, {views.PAGE_SIZE} a page; `next` names the next page",
        )
        async def first_page() -> str:
            return await view(page_view)

        @server.resource(
            f"graphrag://{name}/page/{{page}}",
            name=f"{name}_page",
            title=f"All {name}, page by page",
            mime_type=JSON,
            description=f"A page of graphrag://{name} (from 1)",
        )
        async def numbered_page(page: str) -> str:
            return await view(lambda tables: page_view(tables, _page_number(page)))

    listing("documents", "The documents (title, id, text units)", views.document_page)
    listing(
        "communities",
        "The communities, broadest first (id, level, report title, size, parent)",
        views.community_page,
    )

    @server.resource(
        "graphrag://entities/{name}",
        name="entity",
        title="Entity",
        mime_type=JSON,
        description="One entity by name: type, description, degree, relationships, communities, "
        "source documents",
    )
    async def entity(name: str) -> str:
        return await view(lambda tables: views.entity_detail(tables, name))

    @server.resource(
        "graphrag://communities/{community_id}",
        name="community",
        title="Community and its report",
        mime_type=JSON,
        description="One community by number: report title, summary, findings, rating, level, "
        "members",
    )
    async def community(community_id: str) -> str:
        if not re.fullmatch(r"[0-9]{1,9}", community_id):
            raise ResourceNotFoundError(
                f"community ids are numbers (0, 1, 2...), not {community_id[:100]!r}"
            )
        return await view(lambda tables: views.community_detail(tables, int(community_id)))

    @server.resource(
        "graphrag://text_units/{text_unit_id}",
        name="text_unit",
        title="Text unit",
        mime_type=JSON,
        description="One text unit (chunk) by id: its text, its document, the entities found in it",
    )
    async def text_unit(text_unit_id: str) -> str:
        return await view(lambda tables: views.text_unit_detail(tables, text_unit_id))


def _page_number(page: str) -> int:
    if not re.fullmatch(r"[0-9]{1,6}", page):
        raise ResourceNotFoundError(f"pages are numbered 1, 2, 3..., not {page[:100]!r}")
    return int(page)


def _to_json(result: object) -> str:
    if isinstance(result, BaseModel):
        return result.model_dump_json(indent=2)
    return json.dumps(TypeAdapter(type(result)).dump_python(result, mode="json"), indent=2)
