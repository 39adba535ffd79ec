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
  subgraph where not;
- a community with the same members as before, none of them at a changed relationship, is carried
  with everything below it where the splits would make it again (kept_subtrees.py).

The graph is held as arrays (edge_graph.py): a node's neighbours are made when the moves visit it.

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
from typing import TYPE_CHECKING, Any, TypedDict, cast

from graphrag_mcp_server.handlers.indexing import fresh_reference
from graphrag_mcp_server.handlers.indexing.edge_graph import (
    EdgeGraph,
    EdgeList,
    EdgeTable,
    by_pairs,
)
from graphrag_mcp_server.handlers.indexing.fresh_reference import FreshReference
from graphrag_mcp_server.handlers.indexing.frontier_moves import (
    Edge,
    maintained,
    split_disconnected,
)
from graphrag_mcp_server.handlers.indexing.kept_subtrees import Community, Subtrees
from graphrag_mcp_server.handlers.results import Clustering

if TYPE_CHECKING:
    from pathlib import Path

    import pyarrow as pa

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


@dataclass
class Partition:
    """A version's clustering: each level's node -> community, each community's parent, the
    graph's edges (in the order its table holds them), and each community's id (a community kept
    keeps its id)."""

    levels: list[dict[str, int]]
    parents: dict[int, int]
    edges: EdgeTable
    members: dict[int, list[str]]
    """Each community's nodes, in the order its level lists them."""
    ids: dict[int, str] = field(default_factory=dict)
    periods: dict[int, str] = field(default_factory=dict)
    """Each community's `period`: the day of the run that made it (graphrag's column)."""


def members_of(levels: list[dict[str, int]]) -> dict[int, list[str]]:
    """Each community's nodes, in the order its level lists them."""
    members: dict[int, list[str]] = {}
    for level in levels:
        for node, community in level.items():
            members.setdefault(community, []).append(node)
    return members


@dataclass
class KeptCommunities:
    """An incremental run's clustering: the previous partition, graphrag's parameters (set when it
    clusters), the next free community ids, the nodes at changed relationships, the previous
    subtrees that can be carried whole, and what is reported."""

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
    subtrees: Subtrees | None = None
    """The previous communities as subtrees to carry (set when the top level is kept)."""
    unchanged: set[int] = field(default_factory=set)
    """The communities with the same members as before."""


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
    import pyarrow as pa

    try:
        communities = _communities(version.path)
        entities = version.table("entities")
        relationships = version.table("relationships")
    except (OSError, ValueError, KeyError, pa.ArrowException) as error:
        logger.info("no previous communities to keep (%s): clustering afresh", error)
        return None
    numbers = communities["community"].cast(pa.int64()).to_pylist()
    rows = _member_titles(communities["entity_ids"], entities)
    levels: list[dict[str, int]] = []
    members: dict[int, list[str]] = {}
    for level, community, titles in zip(
        communities["level"].cast(pa.int64()).to_pylist(), numbers, rows, strict=True
    ):
        while len(levels) <= level:
            levels.append({})
        levels[level].update(dict.fromkeys(titles, community))
        members.setdefault(community, []).extend(titles)
    if len(members) != len(communities) or sum(map(len, levels)) != sum(
        map(len, members.values())
    ):  # a community in two rows, or a title twice at a level
        members = members_of(levels)
    parents = dict(zip(numbers, communities["parent"].cast(pa.int64()).to_pylist(), strict=True))
    ids = dict(zip(numbers, communities["id"].cast(pa.string()).to_pylist(), strict=True))
    periods = (
        dict(zip(numbers, communities["period"].cast(pa.string()).to_pylist(), strict=True))
        if "period" in communities.column_names
        else {}
    )
    return Partition(levels, parents, _table_edges(relationships), members, ids, periods)


COMMUNITY_COLUMNS = ("id", "community", "level", "parent", "entity_ids", "period")
"""The previous communities' columns a partition is read from (`period` optional)."""


def _communities(version: "Path") -> "pa.Table":
    """The previous version's communities, by Arrow: its member lists stay lists of ids (as
    Python objects they were most of a partition's reading at 10,000 documents)."""
    import pyarrow.parquet as pq

    path = version / "communities.parquet"
    held = set(pq.read_schema(path).names)
    return pq.read_table(path, columns=[name for name in COMMUNITY_COLUMNS if name in held])


def _member_titles(lists: "pa.ChunkedArray", entities: Any) -> list[list[str]]:
    """Each community row's members as titles, in its list's order (an id no entity has left
    out)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    listed = lists.combine_chunks()
    ids = pa.array(entities["id"].astype(str).tolist(), pa.string())
    found = pc.index_in(pc.list_flatten(listed).cast(pa.string()), value_set=ids)
    owners = pc.list_parent_indices(listed).to_numpy()
    titles = entities["title"].astype(str).to_numpy()[found.drop_null().to_numpy()].tolist()
    valid = found.is_valid().to_numpy(zero_copy_only=False)
    ends = np.cumsum(np.bincount(owners[valid], minlength=len(listed))).tolist()
    return [titles[start:end] for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def _table_edges(relationships: Any) -> EdgeTable:
    """Relationships as graphrag's cluster_graph reads them: undirected, the last of a pair kept,
    with their `weight` (1.0 without the column), in the table's order."""
    import numpy as np

    weights = (
        relationships["weight"].astype(float).to_numpy()
        if "weight" in relationships
        else np.ones(len(relationships))
    )
    return EdgeTable.of(relationships["source"], relationships["target"], weights, by_pair=False)


def graphrag_leiden(
    edges: list[tuple[str, str, float]], max_cluster_size: int, random_seed: int | None
) -> list[Any]:
    """graphrag's own hierarchical Leiden (a fresh clustering)."""
    from graphrag.graphs.hierarchical_leiden import hierarchical_leiden

    return hierarchical_leiden(edges, max_cluster_size=max_cluster_size, random_seed=random_seed)


def kept_hierarchical_leiden(
    run: "KeptCommunities",
    graph: EdgeGraph,
    max_cluster_size: int = 10,
    random_seed: int | None = 0xDEADBEEF,
) -> list[Community]:
    """graphrag's hierarchical Leiden of `graph` (the edges graphrag's cluster_graph hands it),
    keeping the previous version's communities."""
    if not len(graph.edges.low):
        run.clustering.seeded = False
        return _grouped(graphrag_leiden([], max_cluster_size, random_seed))
    run.seed, run.max_cluster_size = random_seed, max_cluster_size
    run.ids = itertools.count(max([-1, *run.previous.parents]) + 1)
    run.changed = changed_edges(run.previous.edges, graph)
    run.frontier = _frontier(run.changed, run.previous.edges, graph)
    if run.reference is not None:
        bound = fresh_reference.change_bound(
            run.previous.edges.weights(), graph.edges.weights(), run.changed, graph
        )
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
        edges = list(graph.edge_list())
        found = _grouped(graphrag_leiden(edges, max_cluster_size, random_seed))
    else:
        previous = run.previous
        run.subtrees = Subtrees(
            previous.levels,
            previous.parents,
            previous.members,
            graph,
            run.frontier,
            max_cluster_size,
        )
        found = []
        _place(graph, top, 0, -1, run, found)
    _count_kept(run, found)
    logger.info("communities: %s", run.clustering)
    return found


def changed_edges(previous: EdgeTable, graph: EdgeGraph) -> dict[Edge, float | None]:
    """Each relationship added, removed or re-weighted -> its previous weight (None: added), by
    their ends' titles: the edge tables compared by positions, not edge by edge (200,000 edges at
    10,000 documents)."""
    import numpy as np

    now = graph.edges
    count = len(now.titles)
    at = graph.positions(previous.titles.tolist())
    low, high = at[previous.low], at[previous.high]
    keys, now_keys = low * count + high, now.low * count + now.high
    by_pair = by_pairs(low, high, count)  # looked up in order: much faster than at random
    place = np.empty(len(keys), dtype=np.int64)
    place[by_pair] = np.searchsorted(now_keys, keys[by_pair])
    place = np.minimum(place, len(now_keys) - 1)
    same = (low >= 0) & (high >= 0) & (now_keys[place] == keys)
    matched = np.zeros(len(now_keys), dtype=bool)
    matched[place[same]] = True
    differs = ~same
    differs[same] = ~(previous.weight[same] == now.weight[place[same]])
    changed: dict[Edge, float | None] = {
        (before_low, before_high): None if math.isnan(weight) else weight
        for before_low, before_high, weight in zip(
            previous.titles[previous.low[differs]].tolist(),
            previous.titles[previous.high[differs]].tolist(),
            previous.weight[differs].tolist(),
            strict=True,
        )
    }
    added = ~matched
    changed.update(
        (edge, None)
        for edge in zip(
            now.titles[now.low[added]].tolist(), now.titles[now.high[added]].tolist(), strict=True
        )
    )
    return dict(sorted(changed.items()))


def _frontier(changed: dict[Edge, float | None], previous: EdgeTable, graph: EdgeGraph) -> set[str]:
    """The nodes whose relationships changed (added, removed, re-weighted) and the new ones."""
    import numpy as np

    known = np.zeros(len(graph.titles), dtype=bool)
    at = graph.positions(previous.titles.tolist())
    known[at[at >= 0]] = True
    new = set(graph.titles[~known].tolist())
    return {node for edge in changed for node in edge if node in graph} | new


def _kept_partition(
    graph: EdgeGraph, seed: dict[str, int], run: KeptCommunities, split: bool = False
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
    if not seed:
        return None, 0.0, _fresh_modularity(graph.edge_list(), run, split)
    partition = maintained(graph, seed, frontier, run.ids, run.changed)
    modularity = graph.modularity(partition)
    if modularity is None:
        modularity = gn.modularity(_as_listed(graph.edge_list()), partition, LEIDEN["resolution"])
    reference = None if split else run.reference
    if reference is None or not _passes(modularity, reference.highest):
        reference = FreshReference(_fresh_modularity(graph.edge_list(), run, split))
    if not _passes(modularity, reference.highest):
        logger.info(
            "kept communities score %.4f against %.4f fresh: clustering afresh",
            modularity,
            reference.highest,
        )
        return None, modularity, reference.modularity
    return partition, modularity, reference.modularity


def _fresh_modularity(edges: EdgeList, run: KeptCommunities, split: bool) -> float:
    """A fresh Leiden run's modularity on `edges`; for the whole graph (not a `split`) it becomes
    the run's reference."""
    import graspologic_native as gn

    fresh, _ = gn.leiden(
        _as_listed(edges), starting_communities=None, seed=run.seed, trials=1, **LEIDEN
    )
    if not split:
        run.reference = FreshReference(fresh)
    return float(fresh)


def _as_listed(edges: EdgeList) -> list[tuple[str, str, float]]:
    """`edges` as graspologic's signatures name them (a list): it reads any sequence."""
    return cast("list[tuple[str, str, float]]", edges)


def _passes(modularity: float, fresh: float) -> bool:
    """Whether a kept partition's modularity is within MODULARITY_FLOOR of a fresh one's."""
    return modularity >= fresh - (1 - MODULARITY_FLOOR) * abs(fresh)


def _place(
    graph: EdgeGraph,
    partition: dict[str, int],
    level: int,
    parent: int,
    run: KeptCommunities,
    found: list[Community],
) -> None:
    """Emit `partition` at `level` and split each community over max_cluster_size below it; a
    community the walk would make as before is carried with its subtree (kept_subtrees.py)."""
    assert run.subtrees is not None
    grouped: dict[int, list[str]] = {}
    for node, community in partition.items():
        grouped.setdefault(community, []).append(node)
    for community, nodes in sorted(grouped.items()):
        if (carried := run.subtrees.carried(community, level, parent, nodes)) is not None:
            found.extend(carried)
            continue
        found.append(Community(level, community, parent, sorted(nodes)))
        if len(nodes) >= run.max_cluster_size:  # graspologic splits at the size itself
            _split(graph.subgraph(nodes), community, level + 1, run, found)


def _split(
    graph: EdgeGraph, community: int, level: int, run: KeptCommunities, found: list[Community]
) -> None:
    """A community's sub-communities: its previous ones kept where they still score, else a fresh
    split (one sub-community: the community is not split)."""
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
        _fresh_split(graph, community, level, run, found)
    elif len(set(children.values())) > 1:
        _place(graph, children, level, community, run, found)


def _fresh_split(
    graph: EdgeGraph, community: int, level: int, run: KeptCommunities, found: list[Community]
) -> None:
    """graphrag's hierarchical Leiden of a community's subgraph, its levels and ids placed below
    `community`."""
    fresh = graphrag_leiden(list(graph.edge_list()), run.max_cluster_size, run.seed)
    renumbered: dict[int, int] = {}
    for cluster in fresh:
        renumbered.setdefault(cluster.cluster, next(run.ids))
    found.extend(
        Community(
            level + each.level,
            renumbered[each.community],
            community if each.parent == -1 else renumbered[each.parent],
            each.nodes,
        )
        for each in _grouped(fresh)
    )


def _grouped(clusters: list[Any]) -> list[Community]:
    """graspologic's clusters (a node at a level each) as communities, their nodes in its
    order."""
    grouped: dict[tuple[int, int], Community] = {}
    for cluster in clusters:
        if (known := grouped.get((cluster.level, cluster.cluster))) is None:
            parent = -1 if cluster.parent_cluster is None else cluster.parent_cluster
            known = grouped[cluster.level, cluster.cluster] = Community(
                cluster.level, cluster.cluster, parent, []
            )
        known.nodes.append(cluster.node)
    return list(grouped.values())


def _count_kept(run: KeptCommunities, found: list[Community]) -> None:
    """The communities found and those with the same members as before (a carried one has)."""
    before = run.previous.members
    run.unchanged = {
        each.community
        for each in found
        if each.carried
        or (each.community in before and frozenset(before[each.community]) == frozenset(each.nodes))
    }
    run.clustering.communities = len({each.community for each in found})
    run.clustering.kept = len(run.unchanged)
