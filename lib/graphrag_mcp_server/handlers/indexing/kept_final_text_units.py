"""The workflow `create_final_text_units_kept`, named in the pipeline in place of graphrag's
`create_final_text_units`.

graphrag's workflow lists, for every text unit, the entities, relationships and claims drawn from
it, streaming each row of four tables through a dict (about a second of an update at 1,000
documents, and growing with the corpus). This one writes the same table from the tables' columns:
the same rows, order, numbers and lists (tests/test_kept_final_text_units.py checks it against
graphrag's). Without the run's memos it is graphrag's own workflow.
"""

from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.memos import CARRIED, run_state, sample

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

WORKFLOW, REPLACES = "create_final_text_units_kept", "create_final_text_units"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_final_text_units, by columns."""
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag.index.workflows import create_final_text_units

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    tables = context.output_table_provider
    if run_state(context, CARRIED) is None or not isinstance(tables, RecordParquetTableProvider):
        return await create_final_text_units.run_workflow(config, context)
    claims = config.extract_claims.enabled and await tables.has("covariates")
    final = await final_text_units(tables, claims)
    await tables.write_dataframe("text_units", final)
    return WorkflowFunctionOutput(result=sample(final))


async def final_text_units(tables: "RecordParquetTableProvider", claims: bool) -> "pd.DataFrame":
    """The text units as graphrag's create_final_text_units writes them: numbered in order, each
    with the ids of the entities, relationships and (when `claims`) covariates drawn from it."""
    import pandas as pd
    import pyarrow.compute as pc
    from graphrag.data_model.schemas import TEXT_UNITS_FINAL_COLUMNS

    units = await tables.read_columns("text_units", ["id", "text", "n_tokens", "document_id"])
    listed = ["id", "text_unit_ids"]
    entities = _ids_by_unit(await tables.read_columns("entities", listed))
    relationships = _ids_by_unit(await tables.read_columns("relationships", listed))
    covariates: dict[str, list[str]] = {}
    if claims:
        found = await tables.read_columns("covariates", ["id", "text_unit_id"])
        covariates = _ids_by_unit(found, "text_unit_id")
    ids = units.column("id").to_pylist()
    final = pd.DataFrame(
        {
            "id": ids,
            "human_readable_id": range(len(ids)),
            "text": units.column("text").to_pylist(),
            "n_tokens": pc.fill_null(units.column("n_tokens"), 0).cast("int64").to_numpy(),
            "document_id": units.column("document_id").to_pylist(),
            "entity_ids": [entities.get(unit, []) for unit in ids],
            "relationship_ids": [relationships.get(unit, []) for unit in ids],
            "covariate_ids": [covariates.get(unit, []) for unit in ids],
        }
    )
    return final[TEXT_UNITS_FINAL_COLUMNS]


def _ids_by_unit(table: "pa.Table", units: str = "text_unit_ids") -> dict[str, list[str]]:
    """text unit id -> the ids of the rows drawn from it, in row order (graphrag's reverse map),
    grouped by a stable sort of the pairs' unit codes, not row by row (`units`: a list column, or
    one unit a row)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    column = table.column(units).combine_chunks()
    ids = table.column("id").combine_chunks()
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        # one pair for each unit a row lists
        ids, column = ids.take(pc.list_parent_indices(column)), pc.list_flatten(column)
    encoded = pc.dictionary_encode(column.drop_null())
    ids = ids.filter(pc.is_valid(column))
    codes = encoded.indices.to_numpy()
    listed = ids.take(pa.array(np.argsort(codes, kind="stable"))).to_pylist()
    ends = np.cumsum(np.bincount(codes, minlength=len(encoded.dictionary))).tolist()
    return {
        unit: listed[start:end]
        for unit, start, end in zip(
            encoded.dictionary.to_pylist(), [0, *ends[:-1]], ends, strict=True
        )
    }
