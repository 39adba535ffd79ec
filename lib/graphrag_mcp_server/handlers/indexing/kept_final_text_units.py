"""The workflow `create_final_text_units_kept`, named in the pipeline in place of graphrag's
`create_final_text_units`.

graphrag's workflow lists, for every text unit, the entities, relationships and claims drawn from
it, streaming each row of four tables through a dict (about a second of an update at 1,000
documents, and growing with the corpus). This one writes the same table from the tables' columns:
the same rows, order, numbers and lists (tests/test_kept_final_text_units.py checks it against
graphrag's). Without the run's memos it is graphrag's own workflow.
"""

from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.memos import sample

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

    from graphrag_mcp_server.handlers.indexing.record_tables import columns_provider

    tables = columns_provider(context)
    if tables is None:
        return await create_final_text_units.run_workflow(config, context)
    claims = config.extract_claims.enabled and await tables.has("covariates")
    final = await final_text_units(tables, claims)
    await tables.write_dataframe("text_units", final)
    return WorkflowFunctionOutput(result=sample(final))


async def final_text_units(tables: "RecordParquetTableProvider", claims: bool) -> "pd.DataFrame":
    """The text units as graphrag's create_final_text_units writes them: numbered in order, each
    with the ids of the entities, relationships and (when `claims`) covariates drawn from it; the
    units' own columns handed on as Arrow holds them (no Python string a unit)."""
    import pandas as pd
    import pyarrow.compute as pc
    from graphrag.data_model.schemas import TEXT_UNITS_FINAL_COLUMNS

    units = await tables.read_columns("text_units", ["id", "text", "n_tokens", "document_id"])
    ids = units.column("id")
    listed = ["id", "text_unit_ids"]
    entities = _ids_by_unit(await tables.read_columns("entities", listed), ids)
    relationships = _ids_by_unit(await tables.read_columns("relationships", listed), ids)
    covariates: list[list[str]] | pd.arrays.ArrowExtensionArray = [[] for _ in range(len(ids))]
    if claims:
        found = await tables.read_columns("covariates", ["id", "text_unit_id"])
        covariates = _ids_by_unit(found, ids, "text_unit_id")
    final = pd.DataFrame(
        {
            "id": ids.to_pandas(),
            "human_readable_id": range(len(ids)),
            "text": units.column("text").to_pandas(),
            "n_tokens": pc.fill_null(units.column("n_tokens"), 0).cast("int64").to_numpy(),
            "document_id": units.column("document_id").to_pandas(),
            "entity_ids": entities,
            "relationship_ids": relationships,
            "covariate_ids": covariates,
        }
    )
    return final[TEXT_UNITS_FINAL_COLUMNS]


def _ids_by_unit(
    table: "pa.Table", units: "pa.ChunkedArray", column: str = "text_unit_ids"
) -> "pd.arrays.ArrowExtensionArray":
    """For each of `units` (text unit ids), the ids of the rows drawn from it, in row order
    (graphrag's reverse map; `column`: a list of units a row, or one unit a row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    drawn, ids = table.column(column), table.column("id")
    if pa.types.is_list(drawn.type) or pa.types.is_large_list(drawn.type):
        # one pair for each unit a row lists (the chunks read as they are: no copy of the lists)
        ids, drawn = ids.take(pc.list_parent_indices(drawn)), pc.list_flatten(drawn)
    return ids_listed(ids, drawn, units)


def ids_listed(
    ids: "pa.Array | pa.ChunkedArray",
    keys: "pa.Array | pa.ChunkedArray",
    wanted: "pa.Array | pa.ChunkedArray",
) -> "pd.arrays.ArrowExtensionArray":
    """For each of `wanted`, the ids of the rows whose key it is, in row order ([] for none; rows
    without a key left out), as a column of Arrow lists of strings: the rows grouped by a stable
    sort of their keys' codes and listed by Arrow. The lists stay Arrow's: as Python lists, a
    10,000-document corpus's relationship ids were 34 MiB of objects, and as much again when the
    table was written."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    ids, keys = _whole(ids).cast(pa.string()), _whole(keys)
    present = pc.is_valid(keys)
    encoded = pc.dictionary_encode(keys.filter(present))
    codes = encoded.indices.to_numpy()
    counts = np.bincount(codes, minlength=len(encoded.dictionary))
    offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]), pa.int32())
    grouped = ids.filter(present).take(pa.array(np.argsort(codes, kind="stable")))
    lists = pa.ListArray.from_arrays(offsets, grouped)
    places = pc.index_in(_whole(wanted).cast(keys.type), value_set=encoded.dictionary)
    found = pc.fill_null(lists.take(places), pa.scalar([], lists.type))
    return pd.arrays.ArrowExtensionArray(found)


def _whole(column: "pa.Array | pa.ChunkedArray") -> "pa.Array":
    """A column as one array."""
    import pyarrow as pa

    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
