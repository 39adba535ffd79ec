"""The workflow `create_final_text_units_kept`, named in the pipeline in place of graphrag's
`create_final_text_units`.

graphrag's workflow lists, for every text unit, the entities, relationships and claims drawn from
it, streaming each row of four tables through a dict (about a second of an update at 1,000
documents, and growing with the corpus). This one writes the same table from the tables' columns:
the same rows, order, numbers and lists (tests/test_kept_final_text_units.py checks it against
graphrag's). Without the run's memos it is graphrag's own workflow.
"""

from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import CARRIED, run_state, sample

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

WORKFLOW, REPLACES = "create_final_text_units_kept", "create_final_text_units"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_final_text_units, by columns."""
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag.index.workflows import create_final_text_units

    if run_state(context, CARRIED) is None:
        return await create_final_text_units.run_workflow(config, context)
    tables = context.output_table_provider
    claims = config.extract_claims.enabled and await tables.has("covariates")
    final = await final_text_units(tables, claims)
    await tables.write_dataframe("text_units", final)
    return WorkflowFunctionOutput(result=sample(final))


async def final_text_units(tables: Any, claims: bool) -> "pd.DataFrame":
    """The text units as graphrag's create_final_text_units writes them: numbered in order, each
    with the ids of the entities, relationships and (when `claims`) covariates drawn from it."""
    import pandas as pd
    from graphrag.data_model.schemas import TEXT_UNITS_FINAL_COLUMNS

    units = await tables.read_dataframe("text_units")
    entities = _ids_by_unit(await tables.read_dataframe("entities"))
    relationships = _ids_by_unit(await tables.read_dataframe("relationships"))
    covariates: dict[str, list[str]] = {}
    if claims:
        found = await tables.read_dataframe("covariates")
        for unit, identity in zip(found["text_unit_id"], found["id"], strict=True):
            covariates.setdefault(unit, []).append(identity)
    ids = list(units["id"])
    final = pd.DataFrame(
        {
            "id": ids,
            "human_readable_id": range(len(ids)),
            "text": list(units["text"]),
            "n_tokens": [_count(n) for n in units["n_tokens"]],
            "document_id": list(units["document_id"]),
            "entity_ids": [entities.get(unit, []) for unit in ids],
            "relationship_ids": [relationships.get(unit, []) for unit in ids],
            "covariate_ids": [covariates.get(unit, []) for unit in ids],
        }
    )
    return final[TEXT_UNITS_FINAL_COLUMNS]


def _ids_by_unit(table: "pd.DataFrame") -> dict[str, list[str]]:
    """text unit id -> the ids of the rows drawn from it, in row order (graphrag's reverse map)."""
    by_unit: dict[str, list[str]] = {}
    for identity, units in zip(table["id"], table["text_unit_ids"], strict=True):
        for unit in units:
            by_unit.setdefault(unit, []).append(identity)
    return by_unit


def _count(value: Any) -> int:
    """graphrag's row transformer's `n_tokens`: an int, 0 when missing."""
    return 0 if value is None or value != value else int(value)
