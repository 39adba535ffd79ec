"""create_final_documents_kept's table against graphrag's create_final_documents on the same
tables: the same parquet file, byte for byte."""

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag_mcp_server.handlers.indexing.kept_final_documents import final_documents

DOCUMENTS = pd.DataFrame(
    [
        {"id": "d1", "text": "One.", "title": "a.txt", "creation_date": "2026", "raw_data": None},
        {"id": "d2", "text": "Two.", "title": "b.txt", "creation_date": "2026", "raw_data": None},
        {"id": "d3", "text": "No unit.", "title": "c.txt", "creation_date": "", "raw_data": None},
        {"id": "d1", "text": "One.", "title": "d.txt", "creation_date": "2026", "raw_data": None},
    ]
).assign(human_readable_id=range(4))
"""Documents as build.read_documents hands them to the pipeline (d.txt repeats a.txt's text)."""
UNITS = pd.DataFrame(
    {
        "id": ["u1", "u2", "u3", "u4"],
        "document_id": ["d2", "d1", "d2", ""],
        "text": ["two", "one", "two more", "none"],
        "n_tokens": [3, 3, 5, 1],
    }
)


def tables_in(folder: Path) -> Any:
    """The test's tables in `folder`, through this project's table provider."""
    from graphrag_storage.file_storage import FileStorage

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    tables = RecordParquetTableProvider(storage=FileStorage(base_dir=str(folder)))

    async def write() -> None:
        await tables.write_dataframe("documents", DOCUMENTS)
        await tables.write_dataframe("text_units", UNITS)

    asyncio.run(write())
    return tables


def by_graphrag(folder: Path) -> bytes:
    from graphrag.data_model.row_transformers import transform_document_row
    from graphrag.index.workflows.create_final_documents import create_final_documents

    tables = tables_in(folder)

    async def run() -> None:
        async with (
            tables.open("text_units") as units,
            tables.open("documents", transformer=transform_document_row) as documents,
            tables.open("documents") as output,
        ):
            await create_final_documents(units, documents, output)

    asyncio.run(run())
    return (folder / "documents.parquet").read_bytes()


def ours(folder: Path) -> bytes:
    tables = tables_in(folder)

    async def run() -> None:
        documents = await tables.read_dataframe("documents")
        await tables.write_dataframe("documents", await final_documents(tables, documents))

    asyncio.run(run())
    return (folder / "documents.parquet").read_bytes()


def test_final_documents_equal_graphrags(tmp_path: Path) -> None:
    mine = ours(tmp_path / "ours")
    assert mine == by_graphrag(tmp_path / "graphrag")
    final = pd.read_parquet(tmp_path / "ours" / "documents.parquet")
    assert [list(ids) for ids in final["text_unit_ids"]] == [["u2"], ["u1", "u3"], [], ["u2"]]
