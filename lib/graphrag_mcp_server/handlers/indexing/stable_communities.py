"""Communities kept across updates: graphrag's hierarchical Leiden seeded with the previous
version's partition.

graphrag clusters the whole relationship graph from scratch on every run (`cluster_graph`), and
Leiden's partition of a changed graph moves entities far from the change: every community that moved
gets a new context and so a new report. An incremental run (graphrag's create_communities workflow
replaced in its pipeline by create_communities_kept, kept_communities.py) instead keeps the previous
version's communities and moves only what the change touches (the "Dynamic Frontier" approach, Sahu,
arXiv 2405.11658):

- every entity starts in its previous community; a new entity joins the community most of its
  (weighted) links go to, or starts one of its own;
- the entities at a changed relationship (added, removed, re-weighted) and the new ones are moved by
  Leiden's local-moving rule (the best modularity gain), and an entity that moves sends its
  neighbours to be visited;
- an entity at a changed relationship moves only when the change is what makes the move pay: the
  previous partition (graphrag's Leiden, refined and randomised) is not a local optimum of that
  rule, and a hub with thousands of relationships, visited for one new one, would otherwise move
  to the community its old relationships already favoured, taking its sub-communities' reports
  with it (frontier_moves.py);
- a community left in pieces keeps its largest piece; each other piece becomes a community of its
  own;
- a community of `max_cluster_size` or more is split as graphrag's hierarchical Leiden splits it:
  seeded with its previous sub-communities where it had any, by a fresh hierarchical Leiden of its
  subgraph where not.

Every partition made this way (the whole graph, each split) is checked against a fresh Leiden run
on the same graph. Where the kept partition's modularity is below 0.97x the fresh one's, the fresh
clustering is taken there (for the whole graph: graphrag's own, as a rebuild clusters). For the
whole graph the fresh run's score is carried between versions with a bound on what each change can
do to it (fresh_reference.py): a fresh run is made only when the kept partition does not pass
against that. `index --full` runs graphrag's clustering untouched.

Why not graspologic's own seeded run (`leiden(edges, starting_communities=...)`) for the local
moves: it visits every node and refines every community, so it moves entities far from the change,
and it numbers its communities afresh. On the 300-document corpus of bench_incremental, one edge of
the most connected entity moved to another community: the seeded run moved 5 of 376 entities (with
each of 5 seeds) and kept the seed's id for 12 of them; the frontier moves here moved 1, every id
kept, at modularity 0.87772 against the seeded run's 0.87778 (both checked by the same 0.97x floor
against a fresh run). Splits keep previous sub-communities by the same frontier moves (`_split`).
"""

import itertools
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from graphrag_mcp_server.handlers.indexing import fresh_reference
from graphrag_mcp_server.handlers.indexing.fresh_reference import FreshReference
from graphrag_mcp_server.handlers.indexing.frontier_moves import (
    Edge,
    Graph,
    maintained,
    split_disconnected,
)
from graphrag_mcp_server.handlers.results import Clustering

if TYPE_CHECKING:
    import pandas as pd

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

logger = logging.getLogger(__name__)

MODULARITY_FLOOR = 0.97
"""A kept partition must score at least this share of a fresh clustering's modularity."""


class LeidenParameters(TypedDict):
    """The arguments of graspologic's `leiden` that graphrag sets."""

    resolution: float
    randomness: float
    iterations: int
    use_modularity: bool


LEIDEN: LeidenParameters = {
    "resolution": 1.0,
    "randomness": 0.001,
    "iterations": 1,
    "use_modularity": True,
}
"""graphrag's Leiden parameters (graphrag.graphs.hierarchical_leiden)."""


@dataclass(frozen=True)
class Cluster:
    """One node's community at one level: what graphrag's cluster_graph reads of graspologic's
    result."""

    node: str
    cluster: int
    level: int
    parent_cluster: int | None
    is_final_cluster: bool


@dataclass
class Partition:
    """A version's clustering: each level's node -> community, each community's parent, the
    graph's edges, and each community's id (a community kept keeps its id)."""

    levels: list[dict[str, int]]
    parents: dict[int, int]
    edges: "pd.DataFrame"
    """Undirected edges: `low`, `high` (the ends in order) and `weight`."""
    ids: dict[int, str] = field(default_factory=dict)
    periods: dict[int, str] = field(default_factory=dict)
    """Each community's `period`: the day of the run that made it (graphrag's column)."""

    def members(self) -> dict[int, frozenset[str]]:
        """Each community's nodes."""
        grouped: dict[int, set[str]] = {}
        for level in self.levels:
            for node, community in level.items():
                grouped.setdefault(community, set()).add(node)
        return {community: frozenset(nodes) for community, nodes in grouped.items()}


@dataclass
class KeptCommunities:
    """An incremental run's clustering: the previous partition, graphrag's parameters (set when it
    clusters), the next free community ids, the nodes at changed relationships, and what is
    reported."""

    previous: Partition
    clustering: Clustering
    seed: int | None = None
    max_cluster_size: int = 10
    ids: Iterator[int] = field(default_factory=itertools.count)
    frontier: set[str] = field(default_factory=set)
    changed: dict[Edge, float | None] = field(default_factory=dict)
    """Each changed relationship's previous weight (None: it is new)."""
    reference: FreshReference | None = None
    """The whole graph's fresh modularity as the previous version recorded it, then as this run
    leaves it (None: no fresh run to go by)."""


STATE = "stable_communities"
"""The key of a run's KeptCommunities in the state graphrag hands its workflows
(kept_communities.py)."""


def communities_kept(previous: "PreviousVersion | None") -> KeptCommunities | None:
    """The clustering state of a run keeping the communities of the `previous` version; None (a
    fresh clustering, as a rebuild) without a previous version or a readable partition."""
    partition = read_partition(previous) if previous is not None else None
    if partition is None or previous is None:
        return None
    return KeptCommunities(
        partition, Clustering(seeded=True), reference=fresh_reference.read(previous.path)
    )


def read_partition(version: "PreviousVersion") -> Partition | None:
    """The clustering stored in a version's tables; None when they cannot be read."""
    try:
        communities = version.table("communities")
        entities = version.table("entities")
        relationships = version.table("relationships")
    except (OSError, ValueError, KeyError) as error:
        logger.info("no previous communities to keep (%s): clustering afresh", error)
        return None
    titles = dict(zip(entities["id"].tolist(), entities["title"].tolist(), strict=True))
    levels: list[dict[str, int]] = []
    parents: dict[int, int] = {}
    ids: dict[int, str] = {}
    for level, community, parent, entity_ids, community_id in communities[
        ["level", "community", "parent", "entity_ids", "id"]
    ].itertuples(index=False):
        while len(levels) <= int(level):
            levels.append({})
        parents[int(community)] = int(parent)
        ids[int(community)] = str(community_id)
        for entity in entity_ids:
            if (title := titles.get(entity)) is not None:
                levels[int(level)][str(title)] = int(community)
    numbers = communities["community"].astype(int).tolist()
    periods = (
        dict(zip(numbers, communities["period"].astype(str).tolist(), strict=True))
        if "period" in communities
        else {}
    )
    return Partition(levels, parents, _normalised_edges(relationships), ids, periods)


def _normalised_edges(relationships: Any) -> "pd.DataFrame":
    """Relationships as graphrag's cluster_graph reads them: undirected (`low`, `high`), the last of
    a pair kept, with their `weight` (1.0 without the column)."""
    import numpy as np

    source = relationships["source"].astype(str).to_numpy(dtype=object)
    target = relationships["target"].astype(str).to_numpy(dtype=object)
    first = source <= target
    weights = (
        relationships["weight"].astype(float).to_numpy()
        if "weight" in relationships
        else np.ones(len(source))
    )
    return _edge_frame(np.where(first, source, target), np.where(first, target, source), weights)


def _edge_frame(low: Any, high: Any, weight: Any) -> "pd.DataFrame":
    """Undirected edges (`low` <= `high`) with their weight, the last of a repeated pair kept."""
    import pandas as pd

    frame = pd.DataFrame({"low": low, "high": high, "weight": weight})
    return frame.drop_duplicates(["low", "high"], keep="last").reset_index(drop=True)


def graphrag_leiden(
    edges: list[tuple[str, str, float]], max_cluster_size: int, random_seed: int | None
) -> list[Any]:
    """graphrag's own hierarchical Leiden (a fresh clustering)."""
    from graphrag.graphs.hierarchical_leiden import hierarchical_leiden

    return hierarchical_leiden(edges, max_cluster_size=max_cluster_size, random_seed=random_seed)


def kept_hierarchical_leiden(
    run: "KeptCommunities",
    edges: list[tuple[str, str, float]],
    max_cluster_size: int = 10,
    random_seed: int | None = 0xDEADBEEF,
) -> list[Any]:
    """graphrag's hierarchical Leiden of `edges` (as graphrag's cluster_graph hands them), keeping
    the previous version's communities."""
    if not edges:
        run.clustering.seeded = False
        return graphrag_leiden(edges, max_cluster_size, random_seed)
    graph = _graph(edges)
    sources, targets, weights = zip(*edges, strict=True)
    current = _edge_frame(list(sources), list(targets), list(weights))
    run.seed, run.max_cluster_size = random_seed, max_cluster_size
    run.ids = itertools.count(max([-1, *run.previous.parents]) + 1)
    run.changed = _changed(run.previous.edges, current)
    run.frontier = _frontier(run.changed, run.previous.edges, graph)
    if run.reference is not None:
        bound = fresh_reference.change_bound(run.previous.edges, current, run.changed, graph)
        run.reference = run.reference.moved(bound)
    seed = (
        {node: community for node, community in run.previous.levels[0].items() if node in graph}
        if run.previous.levels
        else {}
    )
    top, modularity, fresh = _kept_partition(graph, seed, run)
    run.clustering.modularity, run.clustering.fresh_modularity = modularity, fresh
    run.clustering.fresh_drift = run.reference.drift if run.reference else 0.0
    if top is None:
        run.clustering.seeded = False
        clusters = graphrag_leiden(edges, max_cluster_size, random_seed)
    else:
        clusters = []
        _place(graph, top, 0, None, run, clusters)
    _count_kept(run, clusters)
    logger.info("communities: %s", run.clustering)
    return clusters


def _graph(edges: "list[tuple[str, str, float]]") -> Graph:
    graph: Graph = {}
    for source, target, weight in edges:
        graph.setdefault(source, {})[target] = weight
        graph.setdefault(target, {})[source] = weight
    return graph


def _changed(previous: "pd.DataFrame", current: "pd.DataFrame") -> dict[Edge, float | None]:
    """Each relationship added, removed or re-weighted -> its previous weight (None: added); the
    edge tables compared by a join, not edge by edge (200,000 edges at 10,000 documents)."""
    import pandas as pd

    both = previous.merge(current, on=["low", "high"], how="outer", suffixes=("_before", "_now"))
    differs = both[~(both["weight_before"] == both["weight_now"])]
    return {
        (low, high): None if pd.isna(before) else float(before)
        for low, high, before in zip(
            differs["low"].tolist(),
            differs["high"].tolist(),
            differs["weight_before"].tolist(),
            strict=True,
        )
    }


def _frontier(
    changed: dict[Edge, float | None], previous: "pd.DataFrame", graph: Graph
) -> set[str]:
    """The nodes whose relationships changed (added, removed, re-weighted) and the new ones."""
    old_nodes = set(previous["low"].tolist()) | set(previous["high"].tolist())
    return {node for edge in changed for node in edge if node in graph} | (graph.keys() - old_nodes)


def _edge_list(graph: Graph) -> list[tuple[str, str, float]]:
    return sorted(
        (source, target, weight)
        for source, neighbours in graph.items()
        for target, weight in neighbours.items()
        if source <= target
    )


def _kept_partition(
    graph: Graph, seed: dict[str, int], run: KeptCommunities, split: bool = False
) -> tuple[dict[str, int] | None, float, float]:
    """The seeded partition of `graph`, its modularity and a fresh Leiden run's; None for the
    partition when there is nothing to keep or it scores below MODULARITY_FLOOR of the fresh one.
    A `split` (a community's sub-communities) where no relationship changed is its seed, unscored
    (NaN: no Leiden run for the hundreds of communities an update does not touch). The whole
    graph's fresh score is `run.reference` while the partition passes against it."""
    import graspologic_native as gn

    frontier = run.frontier & graph.keys()
    if split and seed and not frontier and seed.keys() >= graph.keys():
        # no relationship in this community changed: its sub-communities stay, whatever a fresh
        # Leiden of its subgraph scores (graphrag's hierarchy drew them otherwise, and can score
        # lower); those left in pieces by a member that moved out are split
        kept = dict(seed)
        split_disconnected(graph, kept, run.ids)
        return kept, math.nan, math.nan
    edges = _edge_list(graph)
    if not seed:
        return None, 0.0, _fresh_modularity(edges, run, split)
    partition = maintained(graph, seed, frontier, run.ids, run.changed)
    modularity = gn.modularity(edges, partition, LEIDEN["resolution"])
    reference = None if split else run.reference
    if reference is None or not _passes(modularity, reference.highest):
        reference = FreshReference(_fresh_modularity(edges, run, split))
    if not _passes(modularity, reference.highest):
        logger.info(
            "kept communities score %.4f against %.4f fresh: clustering afresh",
            modularity,
            reference.highest,
        )
        return None, modularity, reference.modularity
    return partition, modularity, reference.modularity


def _fresh_modularity(
    edges: list[tuple[str, str, float]], run: KeptCommunities, split: bool
) -> float:
    """A fresh Leiden run's modularity on `edges`; for the whole graph (not a `split`) it becomes
    the run's reference."""
    import graspologic_native as gn

    fresh, _ = gn.leiden(edges, starting_communities=None, seed=run.seed, trials=1, **LEIDEN)
    if not split:
        run.reference = FreshReference(fresh)
    return float(fresh)


def _passes(modularity: float, fresh: float) -> bool:
    """Whether a kept partition's modularity is within MODULARITY_FLOOR of a fresh one's."""
    return modularity >= fresh - (1 - MODULARITY_FLOOR) * abs(fresh)


def _place(
    graph: Graph,
    partition: dict[str, int],
    level: int,
    parent: int | None,
    run: KeptCommunities,
    clusters: list[Cluster],
) -> None:
    """Emit `partition` at `level` and split each community over max_cluster_size below it."""
    grouped: dict[int, list[str]] = {}
    for node, community in partition.items():
        grouped.setdefault(community, []).append(node)
    for community, nodes in sorted(grouped.items()):
        split = len(nodes) >= run.max_cluster_size  # graspologic splits at the size itself
        clusters.extend(
            Cluster(node, community, level, parent, not split) for node in sorted(nodes)
        )
        if split:
            _split(_subgraph(graph, set(nodes)), community, level + 1, run, clusters)


def _split(
    graph: Graph, community: int, level: int, run: KeptCommunities, clusters: list[Cluster]
) -> None:
    """A community's sub-communities: its previous ones kept where they still score, else a fresh
    split."""
    previous = run.previous.levels[level] if level < len(run.previous.levels) else {}
    seed = {
        node: child
        for node in graph
        if (child := previous.get(node)) is not None
        and run.previous.parents.get(child) == community
    }
    children, _, _ = _kept_partition(graph, seed, run, split=True)
    if children is None:
        run.clustering.fresh_splits += 1
        _fresh_split(graph, community, level, run, clusters)
    elif len(set(children.values())) > 1:
        _place(graph, children, level, community, run, clusters)
    else:  # one community: nothing to split (the clusters above stay final)
        clusters[:] = [
            Cluster(c.node, c.cluster, c.level, c.parent_cluster, True)
            if c.cluster == community
            else c
            for c in clusters
        ]


def _fresh_split(
    graph: Graph, community: int, level: int, run: KeptCommunities, clusters: list[Cluster]
) -> None:
    """graphrag's hierarchical Leiden of a community's subgraph, its levels and ids placed below
    `community`."""
    fresh = graphrag_leiden(_edge_list(graph), run.max_cluster_size, run.seed)
    renumbered: dict[int, int] = {}
    for found in fresh:
        renumbered.setdefault(found.cluster, next(run.ids))
    clusters.extend(
        Cluster(
            found.node,
            renumbered[found.cluster],
            level + found.level,
            community if found.parent_cluster is None else renumbered[found.parent_cluster],
            found.is_final_cluster,
        )
        for found in fresh
    )


def _subgraph(graph: Graph, nodes: set[str]) -> Graph:
    return {
        node: {other: weight for other, weight in graph[node].items() if other in nodes}
        for node in nodes
    }


def _count_kept(run: KeptCommunities, clusters: list[Any]) -> None:
    members: dict[int, set[str]] = {}
    for found in clusters:
        members.setdefault(found.cluster, set()).add(found.node)
    before = run.previous.members()
    run.clustering.communities = len(members)
    run.clustering.kept = sum(
        1 for community, nodes in members.items() if before.get(community) == frozenset(nodes)
    )
