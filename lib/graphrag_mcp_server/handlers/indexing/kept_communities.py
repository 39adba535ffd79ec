"""The workflow `create_communities_kept`, named in the pipeline in place of graphrag's
`create_communities`.

graphrag's workflow clusters the relationship graph afresh (`cluster_graph`, hierarchical Leiden)
and writes the communities table. During an incremental run this workflow clusters the same
edges, as cluster_graph prepares them, keeping the previous version's communities
(stable_communities.py), and writes the table as graphrag's `create_communities` does (its code
after clustering, graphrag 3.3; tests/test_stable_communities_unit.py compares the tables on a
fresh clustering). Without a previous partition (a first build, `index --full`) it clusters with
graphrag's own `cluster_graph` and writes the same table, merging only the relationship columns
the table is made of: graphrag's merges copied every column (descriptions, weights) of every
relationship once per level (at 10,000 archive documents the cold build's memory rose to 2,185 MiB
there; 1,999 MiB now)."""

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from graphrag_mcp_server.handlers.indexing.memos import run_state
from graphrag_mcp_server.handlers.indexing.stable_communities import (
    STATE,
    KeptCommunities,
    Partition,
    kept_hierarchical_leiden,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

WORKFLOW, REPLACES = "create_communities_kept", "create_communities"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""

Communities = list[tuple[int, int, int, list[str]]]
"""graphrag's cluster_graph result: (level, community, parent, entity titles)."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_communities, its clustering keeping the previous version's communities."""
    from graphrag.data_model.data_reader import DataReader
    from graphrag.index.operations.cluster_graph import cluster_graph
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    run: KeptCommunities | None = run_state(context, STATE)
    tables = context.output_table_provider
    relationships = await DataReader(tables).relationships()
    settings = config.cluster_graph
    clusters = (
        cluster_graph(relationships, settings.max_cluster_size, settings.use_lcc, settings.seed)
        if run is None
        else kept_clusters(
            run, relationships, settings.max_cluster_size, settings.use_lcc, settings.seed
        )
    )
    async with tables.open("entities") as entities, tables.open("communities") as communities:
        titles = {row["title"]: row["id"] async for row in entities}
        kept_ids = {} if run is None else run.previous.ids
        periods = {} if run is None else _unchanged_periods(run.previous, clusters)
        rows = communities_rows(clusters, titles, relationships, kept_ids, periods)
        for row in rows:
            await communities.write(row)
    return WorkflowFunctionOutput(result=rows[:5])


def kept_clusters(
    run: KeptCommunities,
    relationships: "pd.DataFrame",
    max_cluster_size: int,
    use_lcc: bool,
    seed: int | None,
) -> Communities:
    """graphrag's cluster_graph of `relationships` (its edge preparation and result shape),
    clustered by kept_hierarchical_leiden; each community's members in the order the previous
    version listed them, new ones after (Leiden's order differs from run to run: every community's
    `entity_ids` changed on every update, though few changed members)."""
    import numpy as np
    import pandas as pd
    from graphrag.graphs.stable_lcc import stable_lcc

    # only the columns clustering reads: a copy of every column was a tenth of this step at 10,000
    edges = relationships.loc[
        :, [name for name in ("source", "target", "weight") if name in relationships]
    ]
    if edges[["source", "target"]].isna().any(axis=None):  # pandas' min and max skip a missing end
        low, high = edges[["source", "target"]].min(axis=1), edges[["source", "target"]].max(axis=1)
    else:  # the same by arrays (row-wise min and max over strings are slow in pandas)
        source, target = (edges[end].to_numpy(dtype=object) for end in ("source", "target"))
        first = source <= target
        low, high = np.where(first, source, target), np.where(first, target, source)
    edges["source"], edges["target"] = low, high
    edges = edges.drop_duplicates(subset=["source", "target"], keep="last")
    if use_lcc:
        edges = stable_lcc(edges)
    weights = (
        edges["weight"].astype(float)
        if "weight" in edges.columns
        else pd.Series(1.0, index=edges.index)
    )
    edge_list = sorted(
        zip(
            edges["source"].astype(str).tolist(),
            edges["target"].astype(str).tolist(),
            weights.tolist(),
            strict=True,
        )
    )
    levels: dict[int, dict[int, list[str]]] = {}
    parents: dict[int, int] = {}
    clustered = kept_hierarchical_leiden(
        run, edge_list, max_cluster_size=max_cluster_size, random_seed=seed
    )
    for found in clustered:
        levels.setdefault(found.level, defaultdict(list))[found.cluster].append(found.node)
        parents[found.cluster] = found.parent_cluster if found.parent_cluster is not None else -1
    ranks = [{title: rank for rank, title in enumerate(level)} for level in run.previous.levels]
    return [
        (
            level,
            community,
            parents[community],
            _ranked(nodes, ranks[level] if level < len(ranks) else {}),
        )
        for level in sorted(levels)
        for community, nodes in levels[level].items()
    ]


def _unchanged_periods(previous: Partition, clusters: Communities) -> dict[int, str]:
    """The previous `period` of each community whose members are the same as before (graphrag's
    own update keeps the period of the communities it carries)."""
    before = previous.members()
    return {
        community: previous.periods[community]
        for _, community, _, titles in clusters
        if community in previous.periods and before.get(community) == frozenset(titles)
    }


def _ranked(nodes: list[str], rank: dict[str, int]) -> list[str]:
    """`nodes` by their `rank`, those without one after, in their own order."""
    return sorted(nodes, key=lambda node: rank.get(node, len(rank)))


def communities_rows(
    clusters: Communities,
    entity_ids: dict[str, str],
    relationships: "pd.DataFrame",
    kept_ids: Mapping[int, str] = MappingProxyType({}),
    kept_periods: Mapping[int, str] = MappingProxyType({}),
) -> list[dict[str, Any]]:
    """The communities table's rows, as graphrag's create_communities makes them from its clusters:
    each community's entities, its relationships and text units inside it, its children. A
    community numbered in `kept_ids` (the previous version's) keeps its id; graphrag gives each a
    new uuid, which would change every row of the table on every update. A community in
    `kept_periods` keeps that `period` (the day of the run that made it); the others get today's,
    as graphrag gives every community (the first update on a new day changed every row)."""
    import numpy as np
    import pandas as pd
    from graphrag.data_model.schemas import COMMUNITIES_FINAL_COLUMNS

    relationships = relationships.loc[:, ["id", "source", "target", "text_unit_ids"]]
    communities = pd.DataFrame(
        clusters, columns=pd.Index(["level", "community", "parent", "title"])
    ).explode("title")
    communities["community"] = communities["community"].astype(int)
    entity_map = communities[["community", "title"]].copy()
    entity_map["entity_id"] = entity_map["title"].map(entity_ids)
    listed = entity_map.dropna(subset=["entity_id"])
    numbers, entities = _lists(listed["community"], listed["entity_id"], sort=False)
    members = pd.DataFrame({"community": numbers, "entity_ids": entities})
    by_level = []
    ends = _Ends.of(relationships)
    for level in communities["level"].unique():
        inside = _inside(relationships, ends, communities[communities["level"] == level])
        if inside.empty:
            continue
        grouped = _inside_lists(inside)
        grouped["level"] = level
        by_level.append(grouped)
    final = pd.concat(by_level, ignore_index=True).rename(
        columns={"community_x": "community", "parent_x": "parent"}
    )
    final = final.merge(members, on="community", how="inner")
    final["id"] = [kept_ids.get(number) or str(uuid4()) for number in final["community"].tolist()]
    final["human_readable_id"] = final["community"]
    final["title"] = "Community " + final["community"].astype(str)
    final["parent"] = final["parent"].astype(int)
    children = final.groupby("parent").agg(children=("community", "unique"))
    final = final.merge(children, left_on="community", right_on="parent", how="left")
    final["children"] = final["children"].apply(
        lambda found: found if isinstance(found, np.ndarray) else []
    )
    today = datetime.now(UTC).date().isoformat()
    final["period"] = [kept_periods.get(number, today) for number in final["community"].tolist()]
    final["size"] = final.loc[:, "entity_ids"].apply(len)
    return [_plain(row) for row in final.loc[:, COMMUNITIES_FINAL_COLUMNS].to_dict("records")]


@dataclass
class _Ends:
    """Each relationship's ends as positions in a list of titles (-1: a title not in it), found
    once for every level (pyarrow's `index_in`: pandas' `map` of 200,000 titles took 0.2 s, three
    times a level)."""

    titles: "pd.Index"
    source: "np.ndarray"
    target: "np.ndarray"

    @classmethod
    def of(cls, relationships: "pd.DataFrame") -> "_Ends":
        import pandas as pd
        import pyarrow as pa
        import pyarrow.compute as pc

        source, target = (
            pa.array(relationships[end].to_numpy(dtype=object), pa.large_string())
            for end in ("source", "target")
        )
        titles = pc.unique(pa.concat_arrays([source, target]).drop_null())

        def positions(ends: "pa.Array") -> "np.ndarray":
            found: np.ndarray = pc.fill_null(pc.index_in(ends, value_set=titles), -1).to_numpy()
            return found

        return cls(pd.Index(titles.to_pylist()), positions(source), positions(target))


def _inside(relationships: "pd.DataFrame", ends: _Ends, at_level: "pd.DataFrame") -> "pd.DataFrame":
    """The relationships whose two ends are in one community of a level (its rows of
    `communities_rows`), with that community (`community_x`) and its parent (`parent_x`): graphrag
    joins every relationship to the level's communities twice; the ends looked up by position give
    the same rows without the joins (two merges of every relationship a level were most of this
    workflow's table-making at 10,000 documents)."""
    import numpy as np

    members = at_level.dropna(subset=["title"]).drop_duplicates("title")
    at = ends.titles.get_indexer(members["title"])
    known = at >= 0
    # one more slot, -1, for the ends whose title is in no community (position -1)
    community = np.full(len(ends.titles) + 1, -1, dtype=np.int64)
    parent = np.full(len(ends.titles) + 1, -1, dtype=np.int64)
    community[at[known]] = members["community"].to_numpy(dtype=np.int64)[known]
    parent[at[known]] = members["parent"].to_numpy(dtype=np.int64)[known]
    source, target = community[ends.source], community[ends.target]
    together = (source >= 0) & (source == target)
    inside = relationships[together].copy()
    inside["community_x"] = source[together]
    inside["parent_x"] = parent[ends.source][together]
    return inside


def _inside_lists(inside: "pd.DataFrame") -> "pd.DataFrame":
    """Each community of `inside` (`community_x`, `parent_x`) with the ids of its relationships
    and their text units, each list sorted without repeats: graphrag's groupby into lists and
    `sorted(set(...))` of each, made by sorting whole columns (pandas aggregates lists one group
    at a time in Python: most of this step's table-making at 10,000 documents)."""
    import itertools

    import numpy as np
    import pandas as pd

    community = inside["community_x"].to_numpy()
    units = inside["text_unit_ids"].tolist()
    counts = np.fromiter(map(len, units), np.int64, len(units))
    numbers, ids = _lists(community, inside["id"].to_numpy(dtype=object), sort=True)
    _, unit_ids = _lists(
        np.repeat(community, counts),
        np.fromiter(itertools.chain.from_iterable(units), object, int(counts.sum())),
        sort=True,
    )
    parents = dict(zip(community.tolist(), inside["parent_x"].tolist(), strict=True))
    return pd.DataFrame(
        {
            "community_x": numbers,
            "parent_x": np.asarray([parents[number] for number in numbers.tolist()], np.int64),
            "relationship_ids": ids,
            "text_unit_ids": unit_ids,
        }
    )


def _lists(keys: Any, values: Any, sort: bool) -> "tuple[np.ndarray, list[list[Any]]]":
    """The distinct keys in order, and each one's values: in their order (`sort` False), or
    sorted without repeats."""
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame({"key": np.asarray(keys), "value": np.asarray(values, dtype=object)})
    if sort:
        frame = frame.drop_duplicates().sort_values(["key", "value"])
    else:
        frame = frame.sort_values("key", kind="stable")
    ordered = frame["key"].to_numpy()
    numbers, starts = np.unique(ordered, return_index=True)
    split = np.split(frame["value"].to_numpy(dtype=object), starts[1:])
    return numbers, [part.tolist() for part in split]


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """A row with numpy values as Python's, as graphrag writes them."""
    import numpy as np

    def plain(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return value.tolist()
        return value.item() if isinstance(value, np.integer | np.floating) else value

    return {key: plain(value) for key, value in row.items()}
