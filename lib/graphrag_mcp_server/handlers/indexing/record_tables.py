"""graphrag's parquet tables, read row by row through `DataFrame.to_dict("records")`.

graphrag's workflows stream their tables through `ParquetTable`, which loads the whole file and
then yields each row by `iterrows()` and `Series.to_dict()`: a pandas Series built and taken apart
per row, about 1.5 s of a one-document update at 1000 documents (every workflow reads its tables
this way). `to_dict("records")` gives the same dicts (values and types, checked on every table of
the benchmark and fixtures indexes) about 8 times faster. Registered under graphrag's own `parquet`
table type, so settings.yaml and graphrag's CLI see no difference. Its tables are written with
parquet_pages' options (pages that stay the same where rows did not change).

Within `written_tables_kept` (an update), a provider also keeps each table it writes as the Arrow
table its parquet holds, and reads that table back from memory: each workflow reads what the ones
before it wrote (the relationships five times), and decoding the parquet was most of a read. A
table read from memory is the frame the parquet read gives (`Table.to_pandas`, as pandas'
`read_parquet` makes it; checked by a test). Its file is then encoded and written by one thread
beside the pipeline, in the order written (pyarrow's encoding lets go of the GIL), and the block
ends when every file is written (the first failed write raised). A table that a later workflow of
the pipeline writes again (WRITTEN_AGAIN: the documents, the text units, the entities and the
relationships each have two versions in graphrag's pipeline) is held until that workflow has run,
and only its last version is written: encoding the first ones was a second of a one-document
update at 10,000 documents, on the cores the pipeline runs on. A full build keeps none: its peak
memory has a target (2 GiB at 10,000 documents).
"""

from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from graphrag_storage.tables.parquet_table import ParquetTable, _apply_transformer
from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider
from graphrag_storage.tables.table import RowTransformer, Table
from graphrag_storage.tables.table_provider_factory import register_table_provider
from graphrag_storage.tables.table_type import TableType

from graphrag_mcp_server.errors import IndexBuildError
from graphrag_mcp_server.handlers.indexing.local_files import LocalFileStorage
from graphrag_mcp_server.handlers.indexing.parquet_pages import (
    arrow_table,
    as_frame_stores,
    table_bytes,
    write_table,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from graphrag_storage.storage import Storage

# rows turned into dicts at a time, so a large table is never all dicts at once
ROWS_PER_BATCH = 1024

Names = list[str]
"""Names of tables or columns (the provider's `list` method hides the builtin in its class)."""
Written = dict[str, "pa.Table"]
"""The tables a provider wrote in this run, by name, as their parquet holds them."""


WRITTEN_AGAIN = {
    "documents": frozenset(["create_final_documents"]),
    "text_units": frozenset(["create_final_text_units"]),
    "entities": frozenset(["finalize_graph"]),
    "relationships": frozenset(["finalize_graph"]),
}
"""Tables that an earlier step of graphrag's pipeline writes and these workflows (graphrag's names)
write again: the documents before its first workflow, the text units before their final
columns, the extracted graph before it is finalized."""


class FileWrites:
    """Parquet files encoded and written by one thread, in the order asked; a table that one of
    the pipeline's workflows still to run writes again (WRITTEN_AGAIN) held until they have run,
    and then only its last version written."""

    def __init__(self, workflows: "Sequence[str]") -> None:
        """`workflows`: graphrag's names of the pipeline's workflows, in order."""
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="table-writes")
        self._pending: list[tuple[Path, Future[None]]] = []
        self._to_run = list(workflows)
        self._held: dict[Path, pa.Table] = {}

    def write(self, path: Path, table: "pa.Table") -> None:
        """Write `table` to `path` (parquet_pages' options) after the writes asked before; held
        while a workflow still to run writes it again."""
        if self._written_again(path):
            self._held[path] = table
            return
        self._held.pop(path, None)
        self._submit(path, table)

    def workflow_ended(self, name: str) -> None:
        """Workflow `name` (graphrag's name) has run: the tables held for it are written."""
        if name in self._to_run:
            del self._to_run[: self._to_run.index(name) + 1]
        for path in [path for path in self._held if not self._written_again(path)]:
            self._submit(path, self._held.pop(path))

    def _written_again(self, path: Path) -> bool:
        return not WRITTEN_AGAIN.get(path.stem, frozenset()).isdisjoint(self._to_run)

    def _submit(self, path: Path, table: "pa.Table") -> None:
        self._pending.append((path, self._thread.submit(write_table, table, path)))

    def wait(self) -> None:
        """Every write done (those still held first); the first failed write raised as an
        IndexBuildError naming its file and cause (a full disk, a folder gone)."""
        import pyarrow as pa

        for path in list(self._held):
            self._submit(path, self._held.pop(path))
        try:
            for path, write in self._pending:
                try:
                    write.result()
                except (OSError, pa.ArrowException) as error:
                    msg = f"indexing failed writing {path}: {error}"
                    raise IndexBuildError(msg) from error
        finally:
            self._thread.shutdown(wait=True)


_WRITES: ContextVar[FileWrites | None] = ContextVar("table_writes", default=None)


@contextmanager
def written_tables_kept(workflows: "Sequence[str]" = ()) -> Iterator[FileWrites]:
    """Within the block, providers made keep the tables they write, read them from memory and
    write their files beside the pipeline of `workflows` (graphrag's names; the FileWrites
    yielded is told as each ends); the block ends once every file is written."""
    writes = FileWrites(workflows)
    token = _WRITES.set(writes)
    try:
        yield writes
    except BaseException:
        _quietly(writes)  # the block's own error is the one to raise
        raise
    else:
        writes.wait()
    finally:
        _WRITES.reset(token)


def _quietly(writes: FileWrites) -> None:
    """Every write done, their errors left unraised."""
    with suppress(IndexBuildError):
        writes.wait()


def write_table_file(path: Path, table: "pa.Table") -> None:
    """Write `table` to `path` with parquet_pages' options: by the block's thread within
    `written_tables_kept`, else now."""
    writes = _WRITES.get()
    if writes is None:
        write_table(table, path)
    else:
        writes.write(path, table)


class RecordParquetTable(ParquetTable):
    """graphrag's ParquetTable, its rows made by `to_dict("records")` a batch at a time, read from
    and written to its provider's `written` tables too (None: none kept)."""

    def __init__(
        self,
        storage: "Storage",
        table_name: str,
        transformer: RowTransformer | None = None,
        truncate: bool = True,
        written: Written | None = None,
    ) -> None:
        super().__init__(storage, table_name, transformer, truncate=truncate)
        self._written = written

    async def _aiter_impl(self) -> AsyncIterator[Any]:
        if self._df is None:
            self._df = await _read(self._storage, self._written, self._table_name)
        frame = pd.DataFrame() if self._df is None else self._df
        for start in range(0, len(frame), ROWS_PER_BATCH):
            for row in frame.iloc[start : start + ROWS_PER_BATCH].to_dict("records"):
                yield _apply_transformer(self._transformer, row)

    async def length(self) -> int:
        """The table's rows (0 when it does not exist), read once."""
        if self._df is None:
            self._df = await _read(self._storage, self._written, self._table_name)
        return 0 if self._df is None else len(self._df)

    async def close(self) -> None:
        """graphrag's close (the rows written, appended to the table unless truncating), its file
        written by parquet_pages."""
        if self._write_rows:
            frame = pd.DataFrame(self._write_rows)
            if (
                not self._truncate
                and (existing := await _read(self._storage, self._written, self._table_name))
                is not None
            ):
                frame = pd.concat([existing, frame], ignore_index=True)
            await _write(self._storage, self._written, self._table_name, frame)
            self._write_rows = []
        self._df = None


async def _read(storage: "Storage", written: Written | None, name: str) -> pd.DataFrame | None:
    """Table `name` as pandas' `read_parquet` gives it: from `written` when kept there, else from
    its file (None: no such table)."""
    if written is not None and name in written:
        return written[name].to_pandas()
    if not await storage.has(f"{name}.parquet"):
        return None
    return pd.read_parquet(BytesIO(await storage.get(f"{name}.parquet", as_bytes=True)))


async def _write(
    storage: "Storage", written: Written | None, name: str, frame: pd.DataFrame
) -> None:
    """Write table `name` with parquet_pages' options; when kept in `written` (unless None) and
    local, by the thread of `written_tables_kept`."""
    await _write_table(storage, written, name, arrow_table(frame))


async def _write_table(
    storage: "Storage", written: Written | None, name: str, table: "pa.Table"
) -> None:
    """`_write` of a table already in the form a frame's is stored in (parquet_pages)."""
    if written is None or not isinstance(storage, LocalFileStorage):
        await storage.set(f"{name}.parquet", table_bytes(table))
    else:
        write_table_file(storage.path_of(f"{name}.parquet"), table)
    if written is not None:
        written[name] = table


class RecordParquetTableProvider(ParquetTableProvider):
    """graphrag's ParquetTableProvider opening RecordParquetTables, writing with parquet_pages'
    options; within `written_tables_kept`, reading what it wrote from memory."""

    def __init__(self, storage: "Storage", **kwargs: Any) -> None:
        super().__init__(storage, **kwargs)
        self._written: Written | None = {} if _WRITES.get() is not None else None

    def open(
        self, table_name: str, transformer: RowTransformer | None = None, truncate: bool = True
    ) -> Table:
        return RecordParquetTable(
            self._storage, table_name, transformer, truncate=truncate, written=self._written
        )

    def _kept(self, table_name: str) -> "pa.Table | None":
        """The table as this run wrote it, when kept (None: not written, or none kept)."""
        return None if self._written is None else self._written.get(table_name)

    async def read_dataframe(self, table_name: str) -> pd.DataFrame:
        if (kept := self._kept(table_name)) is not None:
            return kept.to_pandas()
        return await super().read_dataframe(table_name)

    async def write_dataframe(self, table_name: str, df: pd.DataFrame) -> None:
        await _write(self._storage, self._written, table_name, df)

    async def write_arrow(self, table_name: str, table: "pa.Table") -> None:
        """Write an Arrow table as `write_dataframe(table_name, table.to_pandas())` would, the same
        file, without the round trip through pandas (parquet_pages.as_frame_stores)."""
        await _write_table(self._storage, self._written, table_name, as_frame_stores(table))

    async def has(self, table_name: str) -> bool:
        return self._kept(table_name) is not None or await super().has(table_name)

    def list(self) -> "Names":
        return sorted(set(super().list()) | set(self._written or ()))

    async def read_columns(self, table_name: str, columns: "Names") -> "pa.Table":
        """Only `columns` of a table, as arrow: the others are not decoded, and no column is
        turned into Python objects (a list column of 200,000 rows took a second in pandas)."""
        import pyarrow.parquet as pq

        if (kept := self._kept(table_name)) is not None:
            return kept.select(columns)
        data = await self._storage.get(f"{table_name}.parquet", as_bytes=True)
        return pq.read_table(BytesIO(data), columns=columns)

    def child(self, name: str | None) -> ParquetTableProvider:
        return (
            self if name is None else RecordParquetTableProvider(storage=self._storage.child(name))
        )


def read_parquet_tables_by_records() -> None:
    """Have graphrag's pipeline open its parquet tables as RecordParquetTables (in this process)."""
    register_table_provider(TableType.Parquet, RecordParquetTableProvider)


def columns_provider(context: Any) -> RecordParquetTableProvider | None:
    """The run's table provider when a kept workflow may write its table from the tables' columns:
    an update (the run hands its memos) whose tables are RecordParquetTables; None when graphrag's
    own workflow runs (a full build, another table provider)."""
    from graphrag_mcp_server.handlers.indexing.memos import CARRIED, run_state

    tables = context.output_table_provider
    if run_state(context, CARRIED) is None or not isinstance(tables, RecordParquetTableProvider):
        return None
    return tables
