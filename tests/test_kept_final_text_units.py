"""create_final_text_units_kept's table against graphrag's create_final_text_units on the same
tables: rows, order, numbers, id lists and dtypes."""

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from graphrag_mcp_server.handlers.indexing.kept_final_text_units import final_text_units

UNITS = pd.DataFrame(
    {
        "id": ["u1", "u2", "u3"],
        "document_id": ["d1", "d1", "d2"],
        "text": ["one", "two", "three"],
        "n_tokens": [3, 5, 8],
    }
)
ENTITIES = pd.DataFrame(
    {
        "id": ["e1", "e2", "e3"],
        "title": ["A", "B", "C"],
        "text_unit_ids": [["u1"], ["u1", "u3"], []],
    }
)
RELATIONSHIPS = pd.DataFrame(
    {
        "id": ["r1", "r2"],
        "source": ["A", "B"],
        "target": ["B", "C"],
        "text_unit_ids": [["u3"], ["u3", "u1"]],
    }
)
COVARIATES = pd.DataFrame({"id": ["c1", "c2"], "text_unit_id": ["u2", "u2"]})


def tables_in(folder: Path, claims: bool) -> Any:
    """The test's tables in `folder`, through this project's table provider (graphrag's reads
    them the same way)."""
    from graphrag_storage.file_storage import FileStorage

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    tables = RecordParquetTableProvider(storage=FileStorage(base_dir=str(folder)))

    async def write() -> None:
        await tables.write_dataframe("text_units", UNITS)
        await tables.write_dataframe("entities", ENTITIES)
        await tables.write_dataframe("relationships", RELATIONSHIPS)
        if claims:
            await tables.write_dataframe("covariates", COVARIATES)

    asyncio.run(write())
    return tables


def by_graphrag(folder: Path, claims: bool) -> pd.DataFrame:
    from graphrag.data_model.row_transformers import (
        transform_entity_row,
        transform_relationship_row,
        transform_text_unit_row,
    )
    from graphrag.index.workflows.create_final_text_units import create_final_text_units

    tables = tables_in(folder, claims)

    async def run() -> pd.DataFrame:
        async with (
            tables.open("text_units", transformer=transform_text_unit_row) as units,
            tables.open("entities", transformer=transform_entity_row) as entities,
            tables.open("relationships", transformer=transform_relationship_row) as relations,
            tables.open("text_units") as output,
        ):
            covariates = tables.open("covariates") if claims else None
            await create_final_text_units(units, entities, relations, output, covariates)
        return await tables.read_dataframe("text_units")

    return asyncio.run(run())


def ours(folder: Path, claims: bool) -> pd.DataFrame:
    tables = tables_in(folder, claims)

    async def run() -> pd.DataFrame:
        await tables.write_dataframe("text_units", await final_text_units(tables, claims))
        return await tables.read_dataframe("text_units")

    return asyncio.run(run())


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {key: list(value) if key.endswith("_ids") else value for key, value in row.items()}
        for row in frame.to_dict("records")
    ]


@pytest.mark.parametrize("claims", [False, True])
def test_final_text_units_equal_graphrags(tmp_path: Path, claims: bool) -> None:
    mine, graphrags = ours(tmp_path / "ours", claims), by_graphrag(tmp_path / "graphrag", claims)
    written = [tmp_path / name / "text_units.parquet" for name in ("ours", "graphrag")]
    assert written[0].read_bytes() == written[1].read_bytes()
    assert list(mine.columns) == list(graphrags.columns)
    assert dict(mine.dtypes) == dict(graphrags.dtypes)
    assert _rows(mine) == _rows(graphrags)
    assert list(mine["entity_ids"][0]) == ["e1", "e2"]
    assert list(mine["relationship_ids"][2]) == ["r1", "r2"]
    assert list(mine["covariate_ids"][1]) == (["c1", "c2"] if claims else [])
