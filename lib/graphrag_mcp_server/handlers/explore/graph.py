"""The entity graph as networkx sees it, written as GraphML, GEXF, node-link JSON or one offline
HTML page."""

import json
from enum import StrEnum
from importlib import resources
from io import BytesIO
from typing import TYPE_CHECKING, Literal

from graphrag_mcp_server.handlers.explore.graph_layout import graph_layout
from graphrag_mcp_server.handlers.explore.views import community_titles
from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.tables import IndexTables

if TYPE_CHECKING:
    import networkx as nx

NO_COMMUNITY = -1


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
    """One self-contained HTML page (no network) drawing the graph with sigma.js: laid out by
    community, coloured by community and outlined by type, searchable, an entity's description
    and documents on click."""
    placed = graph_layout(graph)
    nodes = [
        {
            "id": name,
            "x": round(placed[name][0], 3),
            "y": round(placed[name][1], 3),
            "radius": round(placed[name][2], 3),
            **data,
        }
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
    folder = resources.files("graphrag_mcp_server.handlers.explore")
    template = folder.joinpath("graph_view.html").read_text()
    libraries = folder.joinpath("vendor", "graph_libs.js").read_text()
    page = template.replace("/*GRAPH_LIBS*/", libraries)  # before the data, which is any text
    return page.replace("/*GRAPH_DATA*/null", data)
