"""fresh_reference.py: the whole graph's fresh Leiden score carried between versions with a bound
on what each change can do to it, so that an update's floor check makes no fresh run while its
kept partition passes against that."""

import random
from pathlib import Path

import graspologic_native as gn
import pytest

from graphrag_mcp_server.handlers.indexing import fresh_reference, stable_communities
from graphrag_mcp_server.handlers.indexing.edge_graph import EdgeGraph, EdgeTable
from graphrag_mcp_server.handlers.indexing.fresh_reference import FreshReference
from test_stable_communities_unit import (
    TWO_CLIQUES,
    Edges,
    clique,
    clustered,
    groups,
    level_zero,
    previous_version,
)

pytestmark = pytest.mark.quick


def _bound(before: Edges, after: Edges) -> float:
    old = EdgeTable.of(*zip(*before, strict=True), by_pair=False)
    graph = EdgeGraph.of(after)
    changed = stable_communities.changed_edges(old, graph)
    return fresh_reference.change_bound(old.weights(), graph.edges.weights(), changed, graph)


def _random_graph(rng: random.Random, nodes: int, edges: int) -> Edges:
    pairs = {tuple(sorted(rng.sample(range(nodes), 2))) for _ in range(edges)}
    return sorted((f"n{a:03}", f"n{b:03}", float(rng.randint(1, 4))) for a, b in pairs)


def test_no_partition_moves_more_than_the_bound() -> None:
    """On random graphs changed by additions, removals and new weights, the modularity of random
    partitions and of Leiden's moves by no more than `change_bound`, and the bound is tight
    enough to use (the largest move is a fair share of it)."""
    rng = random.Random(7)
    largest_share = 0.0
    for _ in range(40):
        before = _random_graph(rng, 60, 240)
        after = [edge for edge in before if rng.random() > 0.03]
        after = [(s, t, w + 2.0) if rng.random() < 0.03 else (s, t, w) for s, t, w in after]
        after = sorted({(s, t): w for s, t, w in after + _random_graph(rng, 70, 8)}.items())
        after_edges = [(s, t, w) for (s, t), w in after]
        bound = _bound(before, after_edges)
        assert 0 < bound < 1
        nodes = sorted({n for s, t, _ in before + after_edges for n in (s, t)})
        leiden, _ = gn.leiden(before, seed=1, trials=1, resolution=1.0, use_modularity=True)
        _, partition = gn.leiden(before, seed=1, trials=1, resolution=1.0, use_modularity=True)
        partitions = [partition] + [{n: rng.randrange(5) for n in nodes} for _ in range(5)]
        for chosen in partitions:
            whole = {n: chosen.get(n, 1000 + index) for index, n in enumerate(nodes)}
            moved = abs(gn.modularity(after_edges, whole) - gn.modularity(before, whole))
            assert moved <= bound
            largest_share = max(largest_share, moved / bound)
    assert largest_share > 0.05


def _counting_leiden(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """graspologic's leiden, its fresh runs (no starting communities) counted."""
    calls: list[int] = []
    real = gn.leiden

    def leiden(edges, starting_communities=None, **arguments):  # type: ignore[no-untyped-def]
        if starting_communities is None:
            calls.append(len(edges))
        return real(edges, starting_communities=starting_communities, **arguments)

    monkeypatch.setattr(gn, "leiden", leiden)
    return calls


SMALL, CAPITALS = "abcdefghijklmnopqrst", "ABCDEFGHIJKLMNOPQRST"
BEFORE = [(s, t, 4.0) for s, t, _ in clique(SMALL) + clique(CAPITALS) + [("T", "t", 1.0)]]
"""Two cliques of 20 and a bridge: 381 edges of weight 4."""
AFTER = BEFORE + [("a", "z", 1.0), ("b", "z", 1.0)]
"""A new entity linked to two of the first clique: a bound of 3 x 2 / 1524."""
AFTER_SMALL = TWO_CLIQUES + [("y", "a", 1.0), ("y", "b", 1.0)]


def test_update_within_the_bound_makes_no_fresh_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A previous version that recorded a fresh score: the kept partition passes against it moved
    by the change's bound, so no fresh run is made and the communities are those the fresh
    check would have kept."""
    communities = {3: SMALL, 7: CAPITALS}
    without = previous_version(tmp_path / "v0", communities, BEFORE)
    expected, _ = clustered(without, AFTER, max_cluster_size=50)
    fresh, _ = gn.leiden(sorted(BEFORE), seed=0xDEADBEEF, trials=1, **stable_communities.LEIDEN)
    previous = previous_version(tmp_path / "v1", communities, BEFORE)
    fresh_reference.write(FreshReference(fresh, 0.001), previous.path)
    calls = _counting_leiden(monkeypatch)
    top, clustering = clustered(previous, AFTER, max_cluster_size=50)
    assert calls == []
    assert groups(top) == groups(expected) == {3: SMALL + "z", 7: CAPITALS}
    assert clustering.seeded and clustering.fresh_modularity == fresh
    assert clustering.fresh_drift == pytest.approx(0.001 + 3 * 2 / 1524)


def test_a_large_change_of_a_small_graph_gets_a_fresh_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two edges of 23 can move a partition's modularity by more than the floor allows: the
    recorded score is not trusted, a fresh run is made."""
    fresh, _ = gn.leiden(
        sorted(TWO_CLIQUES), seed=0xDEADBEEF, trials=1, **stable_communities.LEIDEN
    )
    previous = previous_version(tmp_path / "v1", {3: "abcde", 7: "fghij"}, TWO_CLIQUES)
    fresh_reference.write(FreshReference(fresh), previous.path)
    calls = _counting_leiden(monkeypatch)
    top, clustering = clustered(previous, AFTER_SMALL)
    assert len(calls) == 1 and clustering.fresh_drift == 0
    assert groups(top) == {3: "abcdey", 7: "fghij"}


def test_partition_below_the_moved_reference_gets_a_fresh_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recorded score the kept partition cannot pass (higher than any partition of the graph
    scores) is checked by a fresh run, which becomes the reference: the partition is kept, and
    the run reports the fresh score with no drift."""
    previous = previous_version(tmp_path / "v1", {3: "abcde", 7: "fghij"}, TWO_CLIQUES)
    fresh_reference.write(FreshReference(0.9), previous.path)
    calls = _counting_leiden(monkeypatch)
    run = stable_communities.communities_kept(previous)
    assert run is not None and run.reference == FreshReference(0.9)
    found = stable_communities.kept_hierarchical_leiden(run, EdgeGraph.of(sorted(AFTER_SMALL)))
    assert len(calls) == 1
    fresh, _ = gn.leiden(
        sorted(AFTER_SMALL), seed=0xDEADBEEF, trials=1, **stable_communities.LEIDEN
    )
    assert run.reference == FreshReference(fresh) and run.clustering.fresh_modularity == fresh
    assert run.clustering.seeded and run.clustering.fresh_drift == 0
    assert level_zero(found).keys() == set("abcdefghijy")


@pytest.mark.parametrize("text", ["", "{", '{"modularity": "x", "drift": 0}', '{"drift": 0}'])
def test_an_unreadable_reference_is_none(tmp_path: Path, text: str) -> None:
    (tmp_path / fresh_reference.FILE).write_text(text, encoding="utf-8")
    assert fresh_reference.read(tmp_path) is None
    assert fresh_reference.read(tmp_path / "absent") is None
