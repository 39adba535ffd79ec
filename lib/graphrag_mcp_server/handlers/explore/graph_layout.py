"""Positions and sizes for the graph page: each community laid out on its own with ForceAtlas2,
then the communities placed as discs by their links, and no two circles left overlapping.
Deterministic (fixed seeds, sorted input), so a page is the same for the same index."""

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np
    from numpy.typing import NDArray

Placed = dict[Any, tuple[float, float, float]]
"""name -> (x, y, radius), in one unit for positions and sizes."""

SEED = 7
GAP = 1.5
"""Centres kept at least this many times the sum of the two radii apart."""
MEMBER_DENSITY, COMMUNITY_DENSITY = 0.2, 0.45
"""The share of a group's disc its circles cover before separation: members leave room for labels,
communities sit close."""
PAIR_BLOCK = 512
"""Rows of the pairwise distance matrix computed at once (memory: PAIR_BLOCK x nodes)."""


def node_radius(degree: int) -> float:
    """The drawn radius of an entity: grows with the square root of its degree."""
    return 1.0 + 0.45 * math.sqrt(degree)


def graph_layout(graph: "nx.MultiDiGraph") -> Placed:
    """Every node's position and radius: communities (by `community`) spread apart from each other,
    the members of each spread inside it."""
    import networkx as nx

    groups: dict[int, list[str]] = {}
    for name, community in sorted(graph.nodes(data="community"), key=lambda pair: pair[0]):
        groups.setdefault(int(community), []).append(name)
    simple = _weighted(graph)
    local = {key: _community_layout(_ordered(simple, members)) for key, members in groups.items()}
    between = nx.Graph()
    for key, placed in local.items():
        between.add_node(key, radius=max(abs(complex(x, y)) + r for x, y, r in placed.values()))
    for source, target, weight in simple.edges(data="weight"):
        one, other = graph.nodes[source]["community"], graph.nodes[target]["community"]
        if one != other:
            previous = between.get_edge_data(one, other, {"weight": 0.0})["weight"]
            between.add_edge(one, other, weight=previous + weight)
    centres = _community_layout(between, dict(between.nodes(data="radius")), COMMUNITY_DENSITY)
    return {
        name: (cx + x, cy + y, r)
        for key, (cx, cy, _) in centres.items()
        for name, (x, y, r) in local[key].items()
    }


def _weighted(graph: "nx.MultiDiGraph") -> "nx.Graph":
    """The graph undirected and simple, a pair's relationships' weights summed (log-damped)."""

    import networkx as nx

    simple = nx.Graph()
    simple.add_nodes_from(sorted(graph.nodes))
    for source, target, weight in graph.edges(data="weight"):
        if source != target:
            previous = simple.get_edge_data(source, target, {"weight": 0.0})["weight"]
            simple.add_edge(source, target, weight=previous + math.log1p(max(weight, 0.0)) + 0.1)
    return simple


def _ordered(graph: "nx.Graph", members: list[str]) -> "nx.Graph":
    """The members' subgraph with nodes and edges in sorted order: a subgraph view iterates a set,
    whose order (string hashing) changes from process to process, and ForceAtlas2 with it."""
    import networkx as nx

    ordered = nx.Graph()
    ordered.add_nodes_from(sorted(members))
    edges = graph.subgraph(members).edges(data="weight")
    ordered.add_weighted_edges_from(sorted((*sorted((u, v)), w) for u, v, w in edges))
    return ordered


def _community_layout(
    graph: "nx.Graph", radii: dict[Any, float] | None = None, density: float = MEMBER_DENSITY
) -> Placed:
    """ForceAtlas2 over one group (nodes sized by degree unless `radii` says), rescaled to a
    readable density, then separated; centred on the origin."""
    import networkx as nx
    import numpy as np

    names = sorted(graph.nodes)
    if radii is None:
        radii = {name: node_radius(graph.degree(name)) for name in names}
    sizes = np.array([radii[name] for name in names], dtype=float)
    if len(names) == 1:
        return {names[0]: (0.0, 0.0, float(sizes[0]))}
    iterations = max(30, min(150, int(4e6 / len(names) ** 2)))
    start = {name: np.array(_spiral(index)) for index, name in enumerate(names)}
    found = nx.forceatlas2_layout(
        graph,
        pos=start,
        max_iter=iterations,
        node_size=radii,
        weight="weight",
        seed=SEED,
        strong_gravity=True,
    )
    points = np.array([found[name] for name in names], dtype=float)
    points -= points.mean(axis=0)
    spread = float(np.hypot(points[:, 0], points[:, 1]).mean()) or 1.0
    wanted = 2 / 3 * float(np.sqrt((sizes**2).sum() / density))  # a uniform disc's mean radius
    points *= wanted / spread
    points = separate(points, sizes)
    points -= points.mean(axis=0)
    return {
        name: (float(x), float(y), float(r))
        for name, (x, y), r in zip(names, points, sizes, strict=True)
    }


def _spiral(index: int) -> tuple[float, float]:
    """A start position on a sunflower spiral: spread, and the same on every run."""

    angle, distance = index * 2.399963, math.sqrt(index + 0.5)
    return distance * math.cos(angle), distance * math.sin(angle)


def separate(
    points: "NDArray[np.float64]", sizes: "NDArray[np.float64]", rounds: int = 200
) -> "NDArray[np.float64]":
    """Points pushed apart, pair by pair, until no two circles come closer than GAP times the sum
    of their radii (graphology-layout-noverlap's rule, on numpy)."""
    import numpy as np

    points = points.copy()
    for _ in range(rounds):
        moves, crowded = np.zeros_like(points), False
        for start in range(0, len(points), PAIR_BLOCK):
            rows = slice(start, start + PAIR_BLOCK)
            delta = points[rows, None, :] - points[None, :, :]
            distance = np.hypot(delta[..., 0], delta[..., 1])
            wanted = GAP * (sizes[rows, None] + sizes[None, :])
            index = np.arange(start, min(start + PAIR_BLOCK, len(points)))
            wanted[np.arange(len(index)), index] = 0.0
            short = np.clip(wanted - distance, 0.0, None)
            if not short.any():
                continue
            crowded = True
            tied = distance == 0
            unit = delta / np.where(tied, 1.0, distance)[..., None]
            direction = np.where(tied[..., None], _tie_breaks(index, len(points)), unit)
            moves[rows] += (direction * (short / 2)[..., None]).sum(axis=1)
        if not crowded:
            break
        points += moves
    return points


def _tie_breaks(rows: "NDArray[np.int64]", count: int) -> "NDArray[np.float64]":
    """Unit directions for pairs at the same point: fixed by the pair's indices, opposite for the
    two of a pair."""
    import numpy as np

    columns = np.arange(count)[None, :]
    low, high = np.minimum(rows[:, None], columns), np.maximum(rows[:, None], columns)
    angle = (low * 7.0 + high * 3.0) % (2 * np.pi)
    sign = np.where(rows[:, None] < columns, 1.0, -1.0)
    return np.stack([np.cos(angle) * sign, np.sin(angle) * sign], axis=-1)
