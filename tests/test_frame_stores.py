"""An Arrow table written as the frame it converts to would be (parquet_pages.as_frame_stores,
RecordParquetTableProvider.write_arrow): the same table, metadata and file, without the round
trip through pandas."""

import asyncio
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphrag_mcp_server.handlers.indexing.local_files import LocalFileStorage
from graphrag_mcp_server.handlers.indexing.parquet_pages import (
    arrow_table,
    as_frame_stores,
    table_bytes,
)
from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

pytestmark = pytest.mark.quick

UNITS = pa.array([["u1", "u2"], [], ["u3"], None], pa.list_(pa.string()))
TABLES = {
    "strings, lists, numbers": pa.table(
        {
            "id": pa.array(["a", "b", None, "d"], pa.large_string()),
            "human_readable_id": pa.array([0, 1, 2, 3], pa.int64()),
            "weight": pa.array([1.5, 2.5, None, 2.0]),
            "text_unit_ids": UNITS,
        }
    ),
    "in chunks": pa.Table.from_batches(
        [
            pa.record_batch({"title": pa.array(["X", "Y"]), "units": UNITS.slice(0, 2)}),
            pa.record_batch({"title": pa.array(["Z", "W"]), "units": UNITS.slice(2, 2)}),
        ]
    ),
    "a float's NaN": pa.table({"weight": pa.array([1.5, float("nan")])}),
    "integers with a null": pa.table({"degree": pa.array([3, None], pa.int64())}),
    "a first row of nulls": pa.table({"units": pa.array([None, ["u1"]], pa.list_(pa.string()))}),
    "no rows": pa.table({"id": pa.array([], pa.string())}),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_an_arrow_table_is_stored_as_its_frame_would_be(name: str) -> None:
    table = TABLES[name]
    through_pandas, direct = arrow_table(table.to_pandas()), as_frame_stores(table)
    assert direct.equals(through_pandas) and direct.schema.equals(through_pandas.schema, True)
    assert table_bytes(direct) == table_bytes(through_pandas)


def test_a_provider_writes_an_arrow_table_as_the_same_file(tmp_path: Path) -> None:
    table = TABLES["in chunks"]
    written = []
    for folder, write in (("frame", "write_dataframe"), ("arrow", "write_arrow")):
        (tmp_path / folder).mkdir()
        provider = RecordParquetTableProvider(LocalFileStorage(base_dir=str(tmp_path / folder)))
        data = table.to_pandas() if write == "write_dataframe" else table
        asyncio.run(getattr(provider, write)("relationships", data))
        written.append((tmp_path / folder / "relationships.parquet").read_bytes())
    assert written[0] == written[1]
    assert pq.read_table(tmp_path / "arrow" / "relationships.parquet").num_rows == 4
