"""The workflow `create_final_documents_kept`, named in the pipeline in place of graphrag's
`create_final_documents`.

graphrag's workflow lists, for every document, the text units cut from it, streaming each text
unit and each document (texts included) through a dict and the documents back into a frame (a
quarter of a second of a one-document update at 10,000 documents). This one writes the same table
from the tables' columns: the same rows, order, values and lists
(tests/test_kept_final_documents.py checks it against graphrag's). Without the run's memos, or
with documents graphrag's row transformer would change, it is graphrag's own workflow.
"""

from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.kept_final_text_units import ids_listed
from graphrag_mcp_server.handlers.indexing.memos import sample

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

WORKFLOW, REPLACES = "create_final_documents_kept", "create_final_documents"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_final_documents, by columns."""
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag.index.workflows import create_final_documents

    from graphrag_mcp_server.handlers.indexing.record_tables import columns_provider

    tables = columns_provider(context)
    if tables is None:
        return await create_final_documents.run_workflow(config, context)
    documents = await tables.read_dataframe("documents")
    if not _as_graphrag_reads(documents):
        return await create_final_documents.run_workflow(config, context)
    final = await final_documents(tables, documents)
    await tables.write_dataframe("documents", final)
    return WorkflowFunctionOutput(result=sample(final))


def _as_graphrag_reads(documents: "pd.DataFrame") -> bool:
    """Whether graphrag's document row transformer leaves every row as it is: whole numbers
    (`human_readable_id`) and no id lists yet (`text_unit_ids`), as the documents read hold."""
    import pandas as pd

    numbers = documents.get("human_readable_id")
    return "text_unit_ids" not in documents and (
        numbers is None or pd.api.types.is_int64_dtype(numbers.dtype)
    )


async def final_documents(
    tables: "RecordParquetTableProvider", documents: "pd.DataFrame"
) -> "pd.DataFrame":
    """The documents as graphrag's create_final_documents writes them: each with the ids of the
    text units cut from it, in their order; a column the documents lack is empty (None)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    from graphrag.data_model.schemas import DOCUMENTS_FINAL_COLUMNS, TEXT_UNIT_IDS

    units = await tables.read_columns("text_units", ["id", "document_id"])
    named = units.filter(pc.not_equal(units["document_id"], ""))  # graphrag skips an empty id
    documents = documents.reset_index(drop=True)
    columns = {name: documents.get(name) for name in DOCUMENTS_FINAL_COLUMNS}
    columns[TEXT_UNIT_IDS] = ids_listed(
        named.column("id"), named.column("document_id"), pa.array(documents["id"])
    )
    return pd.DataFrame(columns)
