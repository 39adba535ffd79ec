"""edge_graph.py: the relationship graph as arrays reads as the dict of dicts the clustering read
before (neighbours, node order, degrees), and what it computes on the arrays is what was
computed on that dict (graspologic's modularity, pieces of communities, changed edges)."""

import random

import graspologic_native as gn
import networkx as nx
import pandas as pd
import pytest

from graphrag_mcp_server.handlers.indexing.edge_graph import EdgeGraph, EdgeTable, pieces
from graphrag_mcp_server.handlers.indexing.stable_communities import changed_edges

Edges = list[tuple[str, str, float]]


def random_edges(rng: random.Random, nodes: int, edges: int, whole: bool = True) -> Edges:
    """Edges in either direction, some repeated (the last one counts), some self-loops."""
    names = [f"n{number:02}" + rng.choice(["", "É", " b"]) for number in range(nodes)]
    return [
        (
            rng.choice(names),
            rng.choice(names),
            float(rng.randint(1, 9)) if whole else rng.uniform(0.1, 3),
        )
        for _ in range(edges)
    ]


def cluster_graph_list(edges: Edges) -> Edges:
    """The sorted edge list graphrag's cluster_graph makes (ends in order, the last pair kept)."""
    frame = pd.DataFrame(edges, columns=["source", "target", "weight"])
    low = frame[["source", "target"]].min(axis=1)
    high = frame[["source", "target"]].max(axis=1)
    frame["source"], frame["target"] = low, high
    frame = frame.drop_duplicates(subset=["source", "target"], keep="last")
    return sorted(zip(frame["source"], frame["target"], frame["weight"], strict=True))


def dict_of_dicts(edges: Edges) -> dict[str, dict[str, float]]:
    graph: dict[str, dict[str, float]] = {}
    for source, target, weight in edges:
        graph.setdefault(source, {})[target] = weight
        graph.setdefault(target, {})[source] = weight
    return graph


@pytest.mark.parametrize("seed", range(20))
def test_graph_reads_as_the_dict_of_dicts_of_its_edge_list(seed: int) -> None:
    rng = random.Random(seed)
    edges = random_edges(rng, rng.randint(2, 30), rng.randint(1, 120))
    listed = cluster_graph_list(edges)
    graph = EdgeGraph.of(edges)
    expected = dict_of_dicts(listed)
    assert list(graph.edge_list()) == listed
    assert list(graph) == list(expected)
    assert all(list(graph[node].items()) == list(expected[node].items()) for node in expected)
    assert graph.degrees() == {node: sum(links.values()) for node, links in expected.items()}
    nodes = rng.sample(list(expected), rng.randint(1, len(expected)))
    part = graph.subgraph(nodes)
    assert {node: dict(part[node]) for node in nodes} == {
        node: {other: weight for other, weight in expected[node].items() if other in nodes}
        for node in nodes
    }


@pytest.mark.parametrize("seed", range(20))
def test_modularity_is_graspologics_to_the_last_bit(seed: int) -> None:
    rng = random.Random(seed)
    edges = cluster_graph_list(random_edges(rng, rng.randint(2, 40), rng.randint(1, 150)))
    graph = EdgeGraph.of(edges)
    for _ in range(5):
        partition = {node: rng.randrange(rng.randint(1, 6)) * 7 for node in graph}
        assert graph.modularity(partition) == gn.modularity(edges, partition, 1.0)


def test_modularity_of_other_weights_is_left_to_graspologic() -> None:
    graph = EdgeGraph.of(random_edges(random.Random(1), 10, 30, whole=False))
    assert graph.modularity(dict.fromkeys(graph, 0)) is None


@pytest.mark.parametrize("seed", range(20))
def test_pieces_are_the_communities_not_connected_within(seed: int) -> None:
    import numpy as np

    rng = random.Random(seed)
    graph = EdgeGraph.of(random_edges(rng, rng.randint(2, 40), rng.randint(1, 60)))
    community = np.asarray([rng.randrange(-1, 4) for _ in graph.titles])
    expected = set()
    for number in set(community.tolist()) - {-1}:
        members = {title for title, at in zip(graph.titles, community, strict=True) if at == number}
        inside = nx.Graph()
        inside.add_nodes_from(members)
        inside.add_edges_from((s, t) for s, t, _ in graph.edge_list() if {s, t} <= members)
        if nx.number_connected_components(inside) > 1:
            expected.add(number)
    assert set(pieces(community, graph.edges).tolist()) == expected


@pytest.mark.parametrize("seed", range(20))
def test_changed_edges_are_those_a_join_of_the_edge_tables_finds(seed: int) -> None:
    """Added, removed and re-weighted edges with their previous weights, in the join's order
    (by ends): what the clustering compared by a pandas outer merge before."""
    rng = random.Random(seed)
    before = random_edges(rng, 25, 60)
    after = [edge for edge in before if rng.random() > 0.1]
    after += random_edges(rng, 30, rng.randint(0, 10))
    after = [(s, t, w + 1.0) if rng.random() < 0.1 else (s, t, w) for s, t, w in after]
    previous = EdgeTable.of(*zip(*before, strict=True), by_pair=False)
    old = pd.DataFrame(cluster_graph_list(before), columns=["low", "high", "weight"])
    new = pd.DataFrame(cluster_graph_list(after), columns=["low", "high", "weight"])
    both = old.merge(new, on=["low", "high"], how="outer", suffixes=("_before", "_now"))
    differs = both[~(both["weight_before"] == both["weight_now"])]
    expected = [
        ((low, high), None if pd.isna(weight) else weight)
        for low, high, weight in differs[["low", "high", "weight_before"]].itertuples(index=False)
    ]
    assert list(changed_edges(previous, EdgeGraph.of(after)).items()) == expected
