"""The entity graph as networkx sees it, written as GraphML, GEXF, node-link JSON or one offline
HTML page."""

import json
import math
from enum import StrEnum
from importlib import resources
from io import BytesIO
from typing import TYPE_CHECKING, Any, Literal

from graphrag_mcp_server.handlers.explore.views import community_titles
from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.tables import IndexTables

if TYPE_CHECKING:
    import networkx as nx

NO_COMMUNITY = -1
LAYOUT_GROUP_LIMIT = 1500
"""Groups up to this size get a force-directed layout (dense, O(n²) memory); larger ones a
circle."""


class GraphFormat(StrEnum):
    """Files the entity graph is written as."""

    GRAPHML = "graphml"
    GEXF = "gexf"
    JSON = "json"
    HTML = "html"


def entity_graph(tables: IndexTables) -> "nx.MultiDiGraph":
    """Entities (type, description, degree, top-level community, documents) joined by their
    relationships (weight, description): every relationship row one edge, keyed by its id (a pair
    related both ways, or twice, keeps each relationship)."""
    import networkx as nx

    lookup = prepared(tables).lookup()
    community, finest = (
        _community_of_entities(tables, "broadest"),
        _community_of_entities(tables, "finest"),
    )
    graph = nx.MultiDiGraph(communities=json.dumps(community_titles(tables)))
    for entity in tables.entities.itertuples():
        graph.add_node(
            str(entity.title),
            type=str(entity.type or ""),
            description=str(entity.description or ""),
            degree=int(entity.degree),
            community=community.get(entity.id, NO_COMMUNITY),
            subcommunity=finest.get(entity.id, NO_COMMUNITY),
            documents="; ".join(lookup.documents(entity.text_unit_ids)),
        )
    for edge in tables.relationships.itertuples():
        if edge.source in graph and edge.target in graph:
            graph.add_edge(
                str(edge.source),
                str(edge.target),
                key=str(edge.id),
                weight=float(edge.weight),
                description=str(edge.description or ""),
            )
    return graph


def _community_of_entities(
    tables: IndexTables, which: Literal["broadest", "finest"]
) -> dict[str, int]:
    """entity id -> the number of the broadest (lowest level) or finest (highest level) community
    holding it."""
    held: dict[str, int] = {}
    for row in tables.communities.sort_values("level", ascending=which == "finest").itertuples():
        for entity_id in row.entity_ids:
            held[entity_id] = int(row.community)  # the last level written wins
    return held


def write_graph(graph: "nx.MultiDiGraph", graph_format: GraphFormat) -> bytes:
    """The graph as a file of `graph_format`."""
    import networkx as nx

    if graph_format is GraphFormat.JSON:
        return json.dumps(nx.node_link_data(graph, edges="edges"), indent=1).encode()
    if graph_format is GraphFormat.HTML:
        return graph_page(graph).encode()
    buffer = BytesIO()
    write = nx.write_graphml if graph_format is GraphFormat.GRAPHML else nx.write_gexf
    write(graph, buffer)
    return buffer.getvalue()


def graph_page(graph: "nx.MultiDiGraph") -> str:
    """One self-contained HTML page (no network) drawing the graph: coloured by community,
    searchable, an entity's description and documents on click."""
    positions = layout(graph)
    nodes = [
        {"id": name, "x": round(positions[name][0], 2), "y": round(positions[name][1], 2), **data}
        for name, data in graph.nodes(data=True)
    ]
    edges = [
        {
            "source": source,
            "target": target,
            "weight": data["weight"],
            "description": data["description"],
        }
        for source, target, data in graph.edges(data=True)
    ]
    titles = json.loads(graph.graph.get("communities", "{}"))
    data = json.dumps({"nodes": nodes, "edges": edges, "communities": titles}).replace(
        "<", "\\u003c"
    )  # no text can end the script
    template = (
        resources.files("graphrag_mcp_server.handlers.explore")
        .joinpath("graph_view.html")
        .read_text()
    )
    return template.replace("/*GRAPH_DATA*/null", data)


def layout(graph: "nx.MultiDiGraph", scale: float = 100.0) -> dict[str, tuple[float, float]]:
    """Positions that keep each community together: a spring layout inside every community (a circle
    for very large ones), the communities placed on a grid, the biggest first."""
    import networkx as nx

    groups: dict[int, list[str]] = {}
    for name, community in graph.nodes(data="community"):
        groups.setdefault(community, []).append(name)
    ordered = sorted(groups.values(), key=len, reverse=True)
    columns = max(1, math.ceil(math.sqrt(len(ordered))))
    cell = 2.6 * scale
    positions: dict[str, tuple[float, float]] = {}
    for index, members in enumerate(ordered):
        group = graph.subgraph(members)
        radius = scale * math.sqrt(len(members) / max(len(ordered[0]), 1))
        if len(members) == 1:
            local: dict[Any, Any] = {members[0]: (0.0, 0.0)}
        elif len(members) <= LAYOUT_GROUP_LIMIT:
            local = nx.spring_layout(group, seed=7, scale=radius, method="force")
        else:
            local = nx.circular_layout(group, scale=radius)
        row, column = divmod(index, columns)
        for name, (x, y) in local.items():
            positions[name] = (float(x) + column * cell, float(y) + row * cell)
    return positions
