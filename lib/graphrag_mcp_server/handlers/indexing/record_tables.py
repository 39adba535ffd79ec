"""graphrag's parquet tables, read row by row through `DataFrame.to_dict("records")`.

graphrag's workflows stream their tables through `ParquetTable`, which loads the whole file and
then yields each row by `iterrows()` and `Series.to_dict()`: a pandas Series built and taken apart
per row, about 1.5 s of a one-document update at 1000 documents (every workflow reads its tables
this way). `to_dict("records")` gives the same dicts (values and types, checked on every table of
the benchmark and fixtures indexes) about 8 times faster. Registered under graphrag's own `parquet`
table type, so settings.yaml and graphrag's CLI see no difference. Its tables are written with
parquet_pages' options (pages that stay the same where rows did not change).
"""

from collections.abc import AsyncIterator
from io import BytesIO
from typing import TYPE_CHECKING, Any

import pandas as pd
from graphrag_storage.tables.parquet_table import ParquetTable, _apply_transformer
from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider
from graphrag_storage.tables.table import RowTransformer, Table
from graphrag_storage.tables.table_provider_factory import register_table_provider
from graphrag_storage.tables.table_type import TableType

from graphrag_mcp_server.handlers.indexing.parquet_pages import parquet_bytes

if TYPE_CHECKING:
    import pyarrow as pa

# rows turned into dicts at a time, so a large table is never all dicts at once
ROWS_PER_BATCH = 1024


class RecordParquetTable(ParquetTable):
    """graphrag's ParquetTable, its rows made by `to_dict("records")` a batch at a time."""

    async def _aiter_impl(self) -> AsyncIterator[Any]:
        if self._df is None:
            if await self._storage.has(self._file_key):
                data = await self._storage.get(self._file_key, as_bytes=True)
                self._df = pd.read_parquet(BytesIO(data))
            else:
                self._df = pd.DataFrame()
        for start in range(0, len(self._df), ROWS_PER_BATCH):
            for row in self._df.iloc[start : start + ROWS_PER_BATCH].to_dict("records"):
                yield _apply_transformer(self._transformer, row)

    async def close(self) -> None:
        """graphrag's close (the rows written, appended to the file unless truncating), its file
        written by parquet_bytes."""
        if self._write_rows:
            frame = pd.DataFrame(self._write_rows)
            if not self._truncate and await self._storage.has(self._file_key):
                existing = await self._storage.get(self._file_key, as_bytes=True)
                frame = pd.concat([pd.read_parquet(BytesIO(existing)), frame], ignore_index=True)
            await self._storage.set(self._file_key, parquet_bytes(frame))
            self._write_rows = []
        self._df = None


class RecordParquetTableProvider(ParquetTableProvider):
    """graphrag's ParquetTableProvider opening RecordParquetTables, writing by parquet_bytes."""

    def open(
        self, table_name: str, transformer: RowTransformer | None = None, truncate: bool = True
    ) -> Table:
        return RecordParquetTable(self._storage, table_name, transformer, truncate=truncate)

    async def write_dataframe(self, table_name: str, df: pd.DataFrame) -> None:
        await self._storage.set(f"{table_name}.parquet", parquet_bytes(df))

    async def read_columns(self, table_name: str, columns: list[str]) -> "pa.Table":
        """Only `columns` of a table, as arrow: the others are not decoded, and no column is
        turned into Python objects (a list column of 200,000 rows took a second in pandas)."""
        import pyarrow.parquet as pq

        data = await self._storage.get(f"{table_name}.parquet", as_bytes=True)
        return pq.read_table(BytesIO(data), columns=columns)

    def child(self, name: str | None) -> ParquetTableProvider:
        return (
            self if name is None else RecordParquetTableProvider(storage=self._storage.child(name))
        )


def read_parquet_tables_by_records() -> None:
    """Have graphrag's pipeline open its parquet tables as RecordParquetTables (in this process)."""
    register_table_provider(TableType.Parquet, RecordParquetTableProvider)
