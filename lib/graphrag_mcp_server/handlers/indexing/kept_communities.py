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
there; 1,999 MiB now). The relationships' and entities' columns it needs are read alone, as Arrow
(graphrag's reader made every column of 200,000 relationships into Python objects)."""

from collections.abc import Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from uuid import uuid4

from graphrag_mcp_server.handlers.indexing.edge_graph import EdgeGraph, EdgeTable
from graphrag_mcp_server.handlers.indexing.inside_lists import Communities, inside_lists
from graphrag_mcp_server.handlers.indexing.memos import run_state
from graphrag_mcp_server.handlers.indexing.stable_communities import (
    STATE,
    KeptCommunities,
    kept_hierarchical_leiden,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag_storage import TableProvider

WORKFLOW, REPLACES = "create_communities_kept", "create_communities"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""

RELATIONSHIP_COLUMNS = ["id", "source", "target", "weight", "text_unit_ids"]
"""The relationship columns the communities are made from."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_communities, its clustering keeping the previous version's communities."""
    from graphrag.index.operations.cluster_graph import cluster_graph
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    run: KeptCommunities | None = run_state(context, STATE)
    tables = context.output_table_provider
    relationships = await _relationship_columns(tables)
    settings = config.cluster_graph
    clusters = (
        cluster_graph(
            relationships.select(["source", "target", "weight"]).to_pandas(),
            settings.max_cluster_size,
            settings.use_lcc,
            settings.seed,
        )
        if run is None
        else kept_clusters(
            run, relationships, settings.max_cluster_size, settings.use_lcc, settings.seed
        )
    )
    titles = await _entity_ids(tables)
    kept_ids = {} if run is None else run.previous.ids
    periods = {} if run is None else _unchanged_periods(run)
    rows = communities_rows(clusters, titles, relationships, kept_ids, periods)
    async with tables.open("communities") as communities:
        for row in rows:
            await communities.write(row)
    return WorkflowFunctionOutput(result=rows[:5])


async def _relationship_columns(tables: "TableProvider") -> "pa.Table":
    """The relationships' RELATIONSHIP_COLUMNS, read alone where the provider can (their
    descriptions are most of the table)."""
    import pyarrow as pa
    from graphrag.data_model.data_reader import DataReader

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    if isinstance(tables, RecordParquetTableProvider):
        return await tables.read_columns("relationships", RELATIONSHIP_COLUMNS)
    frame = await DataReader(tables).relationships()
    return pa.Table.from_pandas(frame.loc[:, RELATIONSHIP_COLUMNS], preserve_index=False)


async def _entity_ids(tables: "TableProvider") -> dict[str, str]:
    """Each entity's id by its title."""
    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    if isinstance(tables, RecordParquetTableProvider):
        entities = await tables.read_columns("entities", ["title", "id"])
        titles, ids = (entities.column(name).to_pylist() for name in ("title", "id"))
    else:
        frame = await tables.read_dataframe("entities")
        titles, ids = frame["title"].tolist(), frame["id"].tolist()
    return dict(zip(titles, ids, strict=True))


def kept_clusters(
    run: KeptCommunities,
    relationships: "pa.Table",
    max_cluster_size: int,
    use_lcc: bool,
    seed: int | None,
) -> Communities:
    """graphrag's cluster_graph of `relationships` (its edge preparation and result shape),
    clustered by kept_hierarchical_leiden; each community's members in the order the previous
    version listed them, new ones after (Leiden's order differs from run to run: every community's
    `entity_ids` changed on every update, though few changed members)."""
    found = kept_hierarchical_leiden(
        run, _graph(relationships, use_lcc), max_cluster_size=max_cluster_size, random_seed=seed
    )
    ranks: dict[int, dict[str, int]] = {}
    for each in found:
        if not each.carried and each.level not in ranks:
            levels = run.previous.levels
            at_level = levels[each.level] if each.level < len(levels) else {}
            ranks[each.level] = {title: rank for rank, title in enumerate(at_level)}
    return [
        (
            each.level,
            each.community,
            each.parent,
            each.nodes if each.carried else _ranked(each.nodes, ranks[each.level]),
        )
        for each in sorted(found, key=lambda each: each.level)
    ]


def _graph(relationships: "pa.Table", use_lcc: bool) -> EdgeGraph:
    """The graph graphrag's cluster_graph clusters: undirected, the last of a pair kept, with
    their weight (1.0 without the column), the largest connected component (`use_lcc`)."""
    import numpy as np
    import pandas as pd
    from graphrag.graphs.stable_lcc import stable_lcc

    source, target = relationships.column("source"), relationships.column("target")
    weight = (
        relationships.column("weight").to_numpy()
        if "weight" in relationships.column_names
        else np.ones(relationships.num_rows)
    )
    if not use_lcc:
        return EdgeGraph(EdgeTable.of(source, target, weight))
    table = EdgeTable.of(source, target, weight, by_pair=False)
    edges = stable_lcc(
        pd.DataFrame(
            {
                "source": table.titles[table.low],
                "target": table.titles[table.high],
                "weight": table.weight,
            }
        )
    )
    return EdgeGraph(EdgeTable.of(edges["source"], edges["target"], edges["weight"]))


def _unchanged_periods(run: KeptCommunities) -> dict[int, str]:
    """The previous `period` of each community whose members are the same as before (graphrag's
    own update keeps the period of the communities it carries)."""
    periods = run.previous.periods
    return {community: periods[community] for community in run.unchanged if community in periods}


def _ranked(nodes: list[str], rank: dict[str, int]) -> list[str]:
    """`nodes` by their `rank`, those without one after, in their own order."""
    return sorted(nodes, key=lambda node: rank.get(node, len(rank)))


def communities_rows(
    clusters: Communities,
    entity_ids: dict[str, str],
    relationships: "pa.Table",
    kept_ids: Mapping[int, str] = MappingProxyType({}),
    kept_periods: Mapping[int, str] = MappingProxyType({}),
) -> list[dict[str, Any]]:
    """The communities table's rows, as graphrag's create_communities makes them from its clusters:
    each community's entities, its relationships and text units inside it, its children. A
    community numbered in `kept_ids` (the previous version's) keeps its id; graphrag gives each a
    new uuid, which would change every row of the table on every update. A community in
    `kept_periods` keeps that `period` (the day of the run that made it); the others get today's,
    as graphrag gives every community (the first update on a new day changed every row)."""
    from graphrag.data_model.schemas import COMMUNITIES_FINAL_COLUMNS

    members: dict[int, list[str]] = {}
    for _, community, _, titles in clusters:
        members.setdefault(community, []).extend(
            [entity_ids[title] for title in titles if title in entity_ids]
        )
    found = [listed for listed in inside_lists(clusters, relationships) if members.get(listed[1])]
    children: dict[int, list[int]] = {}
    for _, community, parent, _, _ in found:
        if community not in children.setdefault(parent, []):
            children[parent].append(community)
    today = datetime.now(UTC).date().isoformat()
    rows = [
        {
            "id": kept_ids.get(community) or str(uuid4()),
            "human_readable_id": community,
            "community": community,
            "level": level,
            "parent": parent,
            "children": children.get(community, []),
            "title": f"Community {community}",
            "entity_ids": members[community],
            "relationship_ids": ids,
            "text_unit_ids": units,
            "period": kept_periods.get(community, today),
            "size": len(members[community]),
        }
        for level, community, parent, ids, units in found
    ]
    return [{column: row[column] for column in COMMUNITIES_FINAL_COLUMNS} for row in rows]
