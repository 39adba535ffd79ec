"""Every entity in a community: a graphrag workflow that gives each entity without relationships its
own.

graphrag clusters the relationship graph with Leiden. An entity with no relationship is in no edge,
so no community holds it, and local, global and drift search (which read entities through their
communities, up to a level) never see it. (With `cluster_graph.use_lcc: true`, graphrag's default,
every connected component but the largest is left out the same way: `init` writes `use_lcc: false`,
and a root that keeps `true` keeps that choice, reported by `stats`.) This workflow runs after
graphrag's `create_communities` and adds a level-0 community for each entity without relationships,
so the next workflow writes its report from that entity's row (`lone_entity_report`: there is
nothing for a model to summarise, and a paid call would only paraphrase the description).
"""

import csv
import io
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import sample

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag_storage import TableProvider

WORKFLOW = "cluster_unclustered_entities"
AFTER = "create_communities"


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """Append a singleton community for each entity that has no relationship and so no community."""
    import pandas as pd
    from graphrag.data_model.schemas import COMMUNITIES_FINAL_COLUMNS
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    tables = context.output_table_provider
    alone = await _unclustered(tables)
    if alone.empty:
        return WorkflowFunctionOutput(result=[])
    communities = await tables.read_dataframe("communities")
    first = int(communities["community"].max()) + 1 if len(communities) else 0
    numbers = range(first, first + len(alone))
    added = pd.DataFrame(
        {
            "id": [str(uuid.uuid4()) for _ in numbers],
            "human_readable_id": list(numbers),
            "community": list(numbers),
            "level": 0,
            "parent": -1,
            "children": [[] for _ in numbers],
            "title": [f"Community {number}" for number in numbers],
            "entity_ids": [[entity] for entity in alone["id"]],
            "relationship_ids": [[] for _ in numbers],
            "text_unit_ids": [sorted(units) for units in alone["text_unit_ids"]],
            "period": datetime.now(UTC).date().isoformat(),
            "size": 1,
        }
    )
    combined = pd.concat([communities, added], ignore_index=True).loc[:, COMMUNITIES_FINAL_COLUMNS]
    await tables.write_dataframe("communities", combined)
    return WorkflowFunctionOutput(result=sample(added))


async def _unclustered(tables: "TableProvider") -> "pd.DataFrame":
    """The entities without relationships (degree 0) that no community holds, by title (`id`,
    `text_unit_ids`): the tables' columns read alone where the provider can, compared as Arrow
    arrays (the entities' descriptions and every community's lists stay unread)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    columns = ["id", "title", "degree", "text_unit_ids"]
    if isinstance(tables, RecordParquetTableProvider):
        held = (await tables.read_columns("communities", ["entity_ids"])).column("entity_ids")
        entities = await tables.read_columns("entities", columns)
    else:
        communities = await tables.read_dataframe("communities")
        held = pa.array([list(ids) for ids in communities["entity_ids"]], pa.list_(pa.string()))
        frame = await tables.read_dataframe("entities")
        entities = pa.Table.from_pandas(frame.loc[:, columns], preserve_index=False)
    ids = pc.list_flatten(held)
    alone = pc.and_(
        pc.invert(pc.is_in(entities.column("id"), value_set=ids.cast(entities.column("id").type))),
        pc.equal(entities.column("degree"), 0),
    )
    return entities.filter(alone).to_pandas().sort_values("title")


def with_every_entity_clustered(config: "GraphRagConfig", method: str) -> "GraphRagConfig":
    """The config running graphrag's pipeline for `method` with this workflow after
    create_communities."""
    from graphrag.index.workflows.factory import PipelineFactory

    PipelineFactory.register(WORKFLOW, run_workflow)
    workflows = list(config.workflows or PipelineFactory.pipelines[method])
    if AFTER in workflows and WORKFLOW not in workflows:
        workflows.insert(workflows.index(AFTER) + 1, WORKFLOW)
    return config.model_copy(update={"workflows": workflows})


LONE_ENTITY_RANK = 1.0
"""The rating of a lone entity's report: graphrag's scale is 0-10 by the community's impact, and one
entity that nothing in the corpus relates to has the least."""


def lone_entity_report(context: str) -> dict[str, Any] | None:
    """The report of a community whose context is one entity and nothing else (no relationship,
    claim or sub-community report), written from that entity's row as graphrag writes a model's
    report; None for any other context."""
    from graphrag.index.operations.summarize_communities.community_reports_extractor import (
        CommunityReportResponse,
        FindingModel,
    )

    header, body = "-----Entities-----\n", context.strip()
    if not body.startswith(header) or "\n-----" in body:
        return None
    rows = [row for row in csv.DictReader(io.StringIO(body.removeprefix(header)))]
    if len(rows) != 1 or not {"human_readable_id", "title", "description"} <= rows[0].keys():
        return None
    title, description = rows[0]["title"], rows[0]["description"].strip() or rows[0]["title"]
    report = CommunityReportResponse(
        title=title,
        summary=description,
        rating=LONE_ENTITY_RANK,
        rating_explanation=(
            f"{title} is one entity that no relationship in the corpus links to another."
        ),
        findings=[
            FindingModel(
                summary=title,
                explanation=f"{description} [Data: Entities ({rows[0]['human_readable_id']})]",
            )
        ],
    )
    sections = "\n\n".join(
        f"## {finding.summary}\n\n{finding.explanation}" for finding in report.findings
    )
    return {
        "title": report.title,
        "summary": report.summary,
        "rank": report.rating,
        "rating_explanation": report.rating_explanation,
        "findings": [finding.model_dump() for finding in report.findings],
        "full_content": f"# {report.title}\n\n{report.summary}\n\n{sections}",
        "full_content_json": report.model_dump_json(indent=4),
    }
