"""stable_communities without an index build: a previous version's three tables, a small edge
list, and the clustering create_communities_kept runs in place of graphrag's
(`kept_hierarchical_leiden`, handed the edges as graphrag's cluster_graph hands them)."""

import itertools
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from graphrag_mcp_server.handlers.indexing import stable_communities
from graphrag_mcp_server.handlers.indexing.edge_graph import EdgeGraph
from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

Edges = list[tuple[str, str, float]]


def clique(names: str) -> Edges:
    """Every pair of `names` (one letter a node) linked with weight 1."""
    return [(source, target, 1.0) for source, target in itertools.combinations(sorted(names), 2)]


def previous_version(
    folder: Path,
    communities: dict[int, str],
    edges: Edges,
    parents: dict[int, int] | None = None,
    levels: dict[int, int] | None = None,
) -> PreviousVersion:
    """The three tables read_partition reads: communities (id -> member letters), entities and
    relationships."""
    folder.mkdir()
    titles = sorted({node for members in communities.values() for node in members})
    pd.DataFrame(
        {
            "id": [f"e-{title}" for title in titles],
            "human_readable_id": range(len(titles)),
            "title": titles,
        }
    ).to_parquet(folder / "entities.parquet")
    pd.DataFrame(
        {
            "id": [f"c-{community}" for community in communities],
            "community": list(communities),
            "level": [(levels or {}).get(community, 0) for community in communities],
            "parent": [(parents or {}).get(community, -1) for community in communities],
            "entity_ids": [[f"e-{node}" for node in members] for members in communities.values()],
            "period": [f"2026-01-{community % 28 + 1:02d}" for community in communities],
        }
    ).to_parquet(folder / "communities.parquet")
    relationships = pd.DataFrame(edges, columns=["source", "target", "weight"])
    relationships.insert(0, "id", [f"r-{number}" for number in range(len(edges))])
    relationships.insert(1, "human_readable_id", range(len(edges)))
    relationships.to_parquet(folder / "relationships.parquet")
    return PreviousVersion(folder)


def clustered(
    previous: PreviousVersion, edges: Edges, max_cluster_size: int = 10
) -> tuple[dict[str, int], object]:
    """Level 0 of graphrag's clustering of `edges` (as cluster_graph calls it) with `previous`'s
    communities kept, and the run's Clustering."""
    run = stable_communities.communities_kept(previous)
    assert run is not None
    found = stable_communities.kept_hierarchical_leiden(
        run, EdgeGraph.of(sorted(edges)), max_cluster_size=max_cluster_size, random_seed=0xDEADBEEF
    )
    return level_zero(found), run.clustering


def level_zero(found: list[stable_communities.Community]) -> dict[str, int]:
    """node -> its community at level 0."""
    return {node: c.community for c in found if c.level == 0 for node in c.nodes}


def groups(top: dict[str, int]) -> dict[int, str]:
    """community -> its member letters, sorted."""
    grouped: dict[int, list[str]] = {}
    for node, community in top.items():
        grouped.setdefault(community, []).append(node)
    return {community: "".join(sorted(nodes)) for community, nodes in grouped.items()}


TWO_CLIQUES = clique("abcde") + clique("fghij") + [("e", "f", 1.0)]


def test_unchanged_graph_keeps_every_community(tmp_path: Path) -> None:
    previous = previous_version(tmp_path / "v1", {3: "abcde", 7: "fghij"}, TWO_CLIQUES)
    top, clustering = clustered(previous, TWO_CLIQUES)
    assert groups(top) == {3: "abcde", 7: "fghij"}
    assert clustering.seeded and clustering.kept == clustering.communities == 2
    assert clustering.modularity == pytest.approx(clustering.fresh_modularity)


def test_entity_whose_relationships_moved_follows_them(tmp_path: Path) -> None:
    before = TWO_CLIQUES + [("x", name, 1.0) for name in "abc"]
    after = TWO_CLIQUES + [("x", name, 1.0) for name in "fgh"]
    previous = previous_version(tmp_path / "v1", {3: "abcdex", 7: "fghij"}, before)
    top, clustering = clustered(previous, after)
    assert groups(top) == {3: "abcde", 7: "fghijx"}
    assert clustering.seeded and clustering.kept == 0  # both communities' members changed


def test_entity_far_from_the_change_stays_where_fresh_leiden_would_not_put_it(
    tmp_path: Path,
) -> None:
    """Only the frontier moves: a new entity joins the community most of its links go to, the
    rest stay."""
    after = TWO_CLIQUES + [("y", "a", 1.0), ("y", "b", 1.0), ("y", "f", 1.0)]
    previous = previous_version(tmp_path / "v1", {3: "abcde", 7: "fghij"}, TWO_CLIQUES)
    top, clustering = clustered(previous, after)
    assert groups(top) == {3: "abcdey", 7: "fghij"}
    assert clustering.kept == 1


def test_hub_gaining_one_relationship_stays_where_the_previous_version_put_it(
    tmp_path: Path,
) -> None:
    """An entity that the previous clustering left in community 3 although more of its links go to
    7 (graphrag's Leiden is not a local optimum of the moving rule) gains one relationship to a new
    entity: the change does not make a move pay, so it stays; the new entity joins it."""
    small, capitals = "abcdefghijklmnopqrst", "ABCDEFGHIJKLMNOPQRST"
    cliques = clique(small) + clique(capitals) + [("T", "t", 1.0)]
    before = cliques + [(min(name, "x"), max(name, "x"), 1.0) for name in "abABCD"]
    previous = previous_version(tmp_path / "v1", {3: small + "x", 7: capitals}, before)
    top, clustering = clustered(previous, before + [("x", "z", 1.0)], max_cluster_size=50)
    assert groups(top) == {3: small + "xz", 7: capitals}
    assert clustering.seeded and clustering.kept == 1


def test_entity_better_alone_before_the_change_stays_where_it_was_placed(
    tmp_path: Path,
) -> None:
    """An entity whose self-loop outweighs its links was better alone before the change (the
    previous clustering placed it in 3 all the same); gaining a relationship to a new entity does
    not make that move the change's doing, so it stays, and the new entity joins it."""
    before = TWO_CLIQUES + [("x", "x", 10.0), ("a", "x", 1.0), ("f", "x", 1.0)]
    previous = previous_version(tmp_path / "v1", {3: "abcdex", 7: "fghij"}, before)
    top, clustering = clustered(previous, before + [("x", "z", 1.0)])
    assert groups(top) == {3: "abcdexz", 7: "fghij"}
    assert clustering.seeded


def test_entity_moves_when_its_changed_relationships_make_the_move_pay(tmp_path: Path) -> None:
    """An entity placed where most of its links went loses four of them: it follows the rest."""
    before = TWO_CLIQUES + [(name, "x", 1.0) for name in "abcdefg"]
    after = TWO_CLIQUES + [(name, "x", 1.0) for name in "afghi"]
    previous = previous_version(tmp_path / "v1", {3: "abcdex", 7: "fghij"}, before)
    top, _ = clustered(previous, after)
    assert groups(top) == {3: "abcde", 7: "fghijx"}


def test_community_in_pieces_keeps_its_id_on_the_largest(tmp_path: Path) -> None:
    """A removed bridge leaves community 3 in two pieces: the larger keeps 3, the smaller gets an
    id above every previous one (7 and the parent ids included)."""
    bridged = (
        clique("abcd") + clique("xyz") + [("d", "x", 1.0)] + clique("fghij") + [("a", "f", 1.0)]
    )
    broken = [edge for edge in bridged if edge != ("d", "x", 1.0)] + [("z", "g", 0.1)]
    previous = previous_version(tmp_path / "v1", {3: "abcdxyz", 7: "fghij"}, bridged)
    top, clustering = clustered(previous, broken)
    found = groups(top)
    assert found[3] == "abcd" and found[7] == "fghij"
    (new_id,) = found.keys() - {3, 7}
    assert found[new_id] == "xyz" and new_id > 7
    assert clustering.seeded and clustering.kept == 1


def test_new_community_ids_are_above_every_previous_id(tmp_path: Path) -> None:
    """New entities linked only to each other start a community of their own, numbered past the
    previous ids (sub-communities' ids included)."""
    edges = TWO_CLIQUES + clique("pqrst")
    previous = previous_version(
        tmp_path / "v1",
        {3: "abcde", 7: "fghij", 12: "abc"},
        TWO_CLIQUES,
        parents={12: 3},
        levels={12: 1},
    )
    top, _ = clustered(previous, edges)
    found = groups(top)
    assert found[3] == "abcde" and found[7] == "fghij"
    (new_id,) = found.keys() - {3, 7}
    assert found[new_id] == "pqrst" and new_id > 12


def test_kept_partition_far_below_fresh_modularity_is_replaced(tmp_path: Path) -> None:
    """A previous partition mixing the two cliques (modularity well under 0.97x Leiden's) is not
    kept: the result is graphrag's own clustering."""
    previous = previous_version(tmp_path / "v1", {0: "abcdefghij"}, TWO_CLIQUES)
    top, clustering = clustered(previous, TWO_CLIQUES)
    assert not clustering.seeded
    assert clustering.modularity < stable_communities.MODULARITY_FLOOR * clustering.fresh_modularity
    fresh = stable_communities.graphrag_leiden(
        sorted(TWO_CLIQUES), max_cluster_size=10, random_seed=0xDEADBEEF
    )
    assert top == {c.node: c.cluster for c in fresh if c.level == 0}
    assert sorted(groups(top).values()) == ["abcde", "fghij"]


def test_large_community_split_keeps_its_previous_children(tmp_path: Path) -> None:
    """A community of max_cluster_size or more is split below it, seeded with its previous sub-
    communities; one without sub-communities before is split by a fresh run, its ids above every
    previous one."""
    edges = (
        clique("abcd")
        + clique("wxyz")
        + [("d", "w", 1.0)]
        + clique("fghijk")
        + [("a", "f", 1.0)]
        + clique("lmnopq")
        + [("k", "l", 1.0)]
        + clique("rstuv")
        + [("q", "r", 1.0)]
    )
    communities = {3: "abcdwxyz", 7: "fghijk", 9: "lmnopq", 11: "rstuv", 20: "abcd", 21: "wxyz"}
    previous = previous_version(
        tmp_path / "v1", communities, edges, parents={20: 3, 21: 3}, levels={20: 1, 21: 1}
    )
    run = stable_communities.communities_kept(previous)
    assert run is not None
    found = stable_communities.kept_hierarchical_leiden(
        run, EdgeGraph.of(sorted(edges)), max_cluster_size=6, random_seed=0xDEADBEEF
    )
    clustering = run.clustering
    assert groups(level_zero(found)) == {3: "abcdwxyz", 7: "fghijk", 9: "lmnopq", 11: "rstuv"}
    assert groups({node: c.community for c in found if c.parent == 3 for node in c.nodes}) == {
        20: "abcd",
        21: "wxyz",
    }
    assert not [c for c in found if c.parent in (20, 21)]  # final: not split
    fresh_ids = {c.community for c in found if c.parent in (7, 9)}
    assert fresh_ids and min(fresh_ids) > 21
    assert clustering is not None and clustering.seeded and clustering.fresh_splits == 2


def test_communities_table_written_as_graphrag_writes_it() -> None:
    """create_communities_kept writes graphrag's create_communities rows for the same clusters (its
    code after clustering, taken from graphrag 3.3): compared on graphrag's own clustering."""
    import asyncio

    from graphrag.index.operations.cluster_graph import cluster_graph
    from graphrag.index.workflows.create_communities import create_communities

    from graphrag_mcp_server.handlers.indexing.kept_communities import communities_rows

    edges = TWO_CLIQUES + clique("pqr") + [("j", "p", 0.5)]
    relationships = pd.DataFrame(
        {
            "id": [f"r{n}" for n in range(len(edges))],
            "source": [source for source, _, _ in edges],
            "target": [target for _, target, _ in edges],
            "weight": [weight for _, _, weight in edges],
            "text_unit_ids": [[f"t{n % 3}"] for n in range(len(edges))],
        }
    )
    titles = sorted({node for edge in edges for node in edge[:2]})

    class Table:
        def __init__(self, rows: list[dict]) -> None:
            self.rows, self.written = rows, []

        async def __aiter__(self):  # type: ignore[no-untyped-def]
            for row in self.rows:
                yield row

        async def write(self, row: dict) -> None:
            self.written.append(row)

    written = Table([])
    entities = Table([{"title": title, "id": f"e-{title}"} for title in titles])
    asyncio.run(create_communities(written, entities, relationships, 4, False, seed=0xDEADBEEF))
    clusters = cluster_graph(relationships, 4, False, seed=0xDEADBEEF)
    ours = communities_rows(
        clusters, {title: f"e-{title}" for title in titles}, pa.Table.from_pandas(relationships)
    )

    def without_ids(rows: list[dict]) -> list[dict]:
        return [{key: value for key, value in row.items() if key != "id"} for row in rows]

    assert len(written.written) == 3 and without_ids(ours) == without_ids(written.written)


def test_a_kept_community_keeps_its_id_and_a_new_one_gets_a_fresh_one(tmp_path: Path) -> None:
    """graphrag gives every community a new uuid; a community the previous version numbered keeps
    that version's id, so an update does not change every row of the communities table."""
    previous = previous_version(tmp_path / "v1", {0: "abc", 1: "xyz"}, TWO_CLIQUES)
    partition = stable_communities.read_partition(previous)
    assert partition is not None and partition.ids == {0: "c-0", 1: "c-1"}
    relationships = pd.DataFrame(
        {
            "id": ["r-ab", "r-xy", "r-pq"],
            "source": ["a", "x", "p"],
            "target": ["b", "y", "q"],
            "text_unit_ids": [["t1"], ["t2"], ["t3"]],
        }
    )
    clusters = [(0, 0, -1, ["a", "b"]), (0, 1, -1, ["x", "y"]), (0, 7, -1, ["p", "q"])]
    titles = {title: f"e-{title}" for title in "abxypq"}
    from graphrag_mcp_server.handlers.indexing.kept_communities import communities_rows

    rows = communities_rows(clusters, titles, pa.Table.from_pandas(relationships), partition.ids)
    ids = {row["community"]: row["id"] for row in rows}
    assert ids[0] == "c-0" and ids[1] == "c-1"
    assert ids[7] not in ("c-0", "c-1") and len(ids[7]) == 36  # a new uuid


def test_kept_communities_list_their_members_in_the_previous_order(tmp_path: Path) -> None:
    """Leiden returns a community's members in an order of its own on each run; a kept community
    lists them as the previous version did, a new member after (else every community's
    `entity_ids` changed on every update)."""
    import pandas as pd

    from graphrag_mcp_server.handlers.indexing.kept_communities import kept_clusters

    order = {3: "ecadb", 7: "jhfig"}
    previous = previous_version(tmp_path / "v1", order, TWO_CLIQUES)
    run = stable_communities.communities_kept(previous)
    assert run is not None
    edges = TWO_CLIQUES + [("k", name, 1.0) for name in "fghij"]
    relationships = pa.Table.from_pandas(
        pd.DataFrame(edges, columns=["source", "target", "weight"]), preserve_index=False
    )
    clusters = kept_clusters(run, relationships, 10, False, 0xDEADBEEF)
    members = {community: "".join(nodes) for level, community, _, nodes in clusters if level == 0}
    assert members == {3: "ecadb", 7: "jhfigk"}


def test_a_community_whose_members_stay_keeps_its_period(tmp_path: Path) -> None:
    """graphrag dates every community with the run's day (`period`); an update keeps the day of a
    community whose members did not change, as graphrag's own update keeps the communities it
    carries, so the first update of a new day does not change every row."""
    from datetime import UTC, datetime

    from graphrag_mcp_server.handlers.indexing import kept_communities

    previous = previous_version(tmp_path / "v1", {3: "abcde", 7: "fghij"}, TWO_CLIQUES)
    run = stable_communities.communities_kept(previous)
    assert run is not None
    edges = TWO_CLIQUES + [("k", name, 1.0) for name in "fghij"]
    relationships = pd.DataFrame(edges, columns=["source", "target", "weight"])
    relationships["id"] = [f"r{number}" for number in range(len(edges))]
    relationships["text_unit_ids"] = [["t1"]] * len(edges)
    table = pa.Table.from_pandas(relationships, preserve_index=False)
    clusters = kept_communities.kept_clusters(run, table, 10, False, 0xDEADBEEF)
    periods = kept_communities._unchanged_periods(run)
    titles = {title: f"e-{title}" for title in "abcdefghijk"}
    rows = kept_communities.communities_rows(clusters, titles, table, {}, periods)
    dated = {row["community"]: row["period"] for row in rows}
    assert dated == {3: "2026-01-04", 7: datetime.now(UTC).date().isoformat()}


def test_communities_the_change_does_not_touch_are_carried_without_a_split(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three large communities with their sub-communities; a new entity joins one: only that
    community is split again (its subgraph made), the other two keep their sub-communities as
    they were, carried whole (the walk made a subgraph and a split for each)."""
    groups_of = {3: "abcdefgh", 7: "ijklmnop", 9: "qrstuvwx"}
    children = {20: "abcd", 21: "efgh", 22: "ijkl", 23: "mnop", 24: "qrst", 25: "uvwx"}
    inside = {edge[:2] for members in children.values() for edge in clique(members)}
    edges = [
        (source, target, 3.0 if (source, target) in inside else 1.0)
        for members in groups_of.values()
        for source, target, _ in clique(members)
    ] + [("h", "i", 0.1), ("p", "q", 0.1)]
    previous = previous_version(
        tmp_path / "v1",
        groups_of | children,
        edges,
        parents={20: 3, 21: 3, 22: 7, 23: 7, 24: 9, 25: 9},
        levels=dict.fromkeys(children, 1),
    )
    made: list[int] = []
    subgraph = EdgeGraph.subgraph

    def counted(graph: EdgeGraph, nodes: list[str]) -> EdgeGraph:
        made.append(len(nodes))
        return subgraph(graph, nodes)

    monkeypatch.setattr(EdgeGraph, "subgraph", counted)
    run = stable_communities.communities_kept(previous)
    assert run is not None
    changed = EdgeGraph.of(sorted(edges + [("a", "z", 1.0), ("b", "z", 1.0)]))
    found = stable_communities.kept_hierarchical_leiden(run, changed, max_cluster_size=6)
    below = {node: c.community for c in found if c.level == 1 for node in c.nodes}
    assert groups(below) == {
        20: "abcdz",
        21: "efgh",
        22: "ijkl",
        23: "mnop",
        24: "qrst",
        25: "uvwx",
    }
    assert made == [9]  # community 3, with z
    assert run.clustering.kept == 7  # all but 3 and 20


def test_a_sub_community_in_pieces_is_split_though_nothing_changed(tmp_path: Path) -> None:
    """A previous sub-community whose members the graph does not connect (a fresh split can leave
    one so) is not carried: its pieces are split, as the walk over every community splits them."""
    links = [("a", "e"), ("b", "f"), ("c", "g"), ("d", "h"), ("e", "f"), ("g", "h")]
    edges = clique("abcd") + [(*link, 1.0) for link in links] + clique("ijklmnop")
    edges += [("h", "i", 0.1)]
    previous = previous_version(
        tmp_path / "v1",
        {3: "abcdefgh", 7: "ijklmnop", 20: "abcd", 21: "efgh"},
        edges,
        parents={20: 3, 21: 3},
        levels={20: 1, 21: 1},
    )
    run = stable_communities.communities_kept(previous)
    assert run is not None
    found = stable_communities.kept_hierarchical_leiden(
        run, EdgeGraph.of(sorted(edges)), max_cluster_size=6
    )
    below = groups({node: c.community for c in found if c.parent == 3 for node in c.nodes})
    assert below[20] == "abcd" and sorted(below.values()) == ["abcd", "ef", "gh"]


def test_the_communities_workflows_read_only_the_columns_they_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """create_communities_kept and cluster_unclustered_entities read the relationships, entities
    and communities by the columns they use: no whole table (descriptions, every list) is made a
    frame when every entity has a community."""
    import asyncio
    from types import SimpleNamespace

    from graphrag_storage.file_storage import FileStorage

    from graphrag_mcp_server.handlers.indexing import kept_communities, lone_entities
    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    edges = TWO_CLIQUES + [("k", name, 1.0) for name in "fghij"]
    titles = sorted({node for edge in edges for node in edge[:2]})
    entities = pd.DataFrame(
        {
            "id": [f"e-{title}" for title in titles],
            "title": titles,
            "description": "a long text",
            "degree": 1,
            "text_unit_ids": [["t1"]] * len(titles),
        }
    )
    relationships = pd.DataFrame(edges, columns=["source", "target", "weight"])
    relationships["id"] = [f"r{number}" for number in range(len(edges))]
    relationships["description"] = "a long text"
    relationships["text_unit_ids"] = [["t1"]] * len(edges)
    tables = RecordParquetTableProvider(storage=FileStorage(base_dir=str(tmp_path / "out")))
    asyncio.run(tables.write_dataframe("entities", entities))
    asyncio.run(tables.write_dataframe("relationships", relationships))
    read: list[str] = []

    async def whole(provider: RecordParquetTableProvider, name: str) -> pd.DataFrame:
        read.append(name)
        raise AssertionError(name)

    monkeypatch.setattr(RecordParquetTableProvider, "read_dataframe", whole)
    run = stable_communities.communities_kept(
        previous_version(tmp_path / "v1", {3: "abcde", 7: "fghij"}, TWO_CLIQUES)
    )
    config = SimpleNamespace(
        cluster_graph=SimpleNamespace(max_cluster_size=10, use_lcc=False, seed=0xDEADBEEF)
    )
    context = SimpleNamespace(
        output_table_provider=tables,
        state={"additional_context": {stable_communities.STATE: run}},
    )
    asyncio.run(kept_communities.run_workflow(config, context))
    asyncio.run(lone_entities.run_workflow(config, context))
    written = asyncio.run(tables.read_columns("communities", ["community", "entity_ids"]))
    assert read == [] and written.column("community").to_pylist() == [3, 7]
    assert written.column("entity_ids").to_pylist()[1] == [f"e-{node}" for node in "fghijk"]
