"""A memo base's key columns (memo_table.KEY_COLUMNS) in one file beside it, read by every update.

The base is cut in many small row groups (parquet_pages.py: 1,143 at 10,000 documents) so that an
update reads a result with its group only. Reading its keys then decodes a page a column a group,
and pyarrow's zstd makes a decompression context for each page (~20 us): at 10,000 documents the
keys read in 0.48 s from the base and in 0.05 s from this file of few large row groups. The file is
written with the base (a cold build, a compaction) and hard-linked with it into each update's
version; a base without it (stored before it was added) has its keys read from the base.
"""

from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.versions import link_file
from graphrag_mcp_server.handlers.tables import READ_OPTIONS

if TYPE_CHECKING:
    import pyarrow as pa

KEYS = "carried_over_keys.parquet"
BASE_BYTES = b"base_bytes"
"""The file's metadata: the size of the base it was written from, checked with its row count
before its keys are taken for the base's."""


GROUP_ROWS = 65536
"""The keys file's rows a row group: four groups at 10,000 documents, one batch held at a time."""


def write(base: Path, columns: list[str]) -> None:
    """Write the key `columns` of the memo base at `base` beside it, a row group at a time (the
    keys whole are ~70 MiB at 10,000 documents, read at the end of a build)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = pq.ParquetFile(base, memory_map=READ_OPTIONS["memory_map"])
    fields = [file.schema_arrow.field(name) for name in columns]
    metadata = {BASE_BYTES: str(base.stat().st_size).encode()}
    with pq.ParquetWriter(
        base.with_name(KEYS),
        pa.schema(fields, metadata=metadata),
        compression="zstd",
        use_dictionary=["step", "models"],
        write_statistics=False,
    ) as writer:
        for batch in file.iter_batches(GROUP_ROWS, columns=columns, use_threads=False):
            writer.write_batch(batch, row_group_size=GROUP_ROWS)


def link(base: Path, target: Path) -> None:
    """Link the keys of the base at `base` beside `target`, where that base is linked; nothing
    where the base has none."""
    keys = base.with_name(KEYS)
    if keys.exists():
        link_file(keys, target.with_name(KEYS))


def read(base: Path, rows: int, columns: list[str]) -> "pa.Table | None":
    """The key `columns` of the base at `base` of `rows` rows, from the file beside it; None where
    there is none, or one that is not that base's (another size or row count), holds other
    columns (written before they changed) or is unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = base.with_name(KEYS)
    if not path.exists():
        return None
    try:
        keys = pq.read_table(path, **READ_OPTIONS)
        written_from = (keys.schema.metadata or {}).get(BASE_BYTES)
        if keys.num_rows != rows or written_from != str(base.stat().st_size).encode():
            return None
        if keys.column_names != columns:
            return None
    except (OSError, pa.ArrowException):
        return None
    return keys.replace_schema_metadata(None)
