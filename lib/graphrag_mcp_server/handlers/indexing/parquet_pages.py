"""How this project writes parquet tables: row groups and data pages cut where the rows' content
says, zstd-compressed, without dictionary pages or statistics.

graphrag writes every table whole on each update. Pages cut by size would all move when one row
is inserted; pages cut by content stay byte for byte the same away from the rows that changed, so
blob storage (blob/objects.py) stores and sends only the pieces of a table that an update changed.
pyarrow's content-defined pages resynchronise after a changed row only where rows are small: with
rows of several KiB (documents, text units, stored extractions) a change moved every page after
it, so rows are also grouped by content (`group_ends`): a row group starts fresh, and a changed
row changes only its own group. A dictionary page would renumber the values after a new one,
changing every page that uses them; statistics hold each page's smallest and largest value whole
(for a text column, two texts a page), which nothing here reads.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

PAGE_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "use_dictionary": False,
    "write_statistics": False,
    "use_content_defined_chunking": {"min_chunk_size": 8 * 1024, "max_chunk_size": 32 * 1024},
}
"""pyarrow.parquet's writer options for every table this project writes (pages of 8-32 KiB
before encoding: small enough that an edit changes a few percent of a table)."""

GROUP_BYTES = 128 * 1024
"""A row group's expected size before encoding: a row ends its group with a chance of its size
over this, decided by its key's hash."""
MIN_GROUP_BYTES, MAX_GROUP_BYTES = 32 * 1024, 1024 * 1024
"""No row group ends before MIN_GROUP_BYTES; one ends at MAX_GROUP_BYTES whatever its rows."""
KEY_COLUMNS = ("id", "key")
"""The column whose value names a row (graphrag's tables' `id`, carried_over's `key`); a table
with neither is grouped by its first column."""


def arrow_table(frame: "pd.DataFrame", index: bool | None = None) -> "pa.Table":
    """`frame` as the Arrow table its parquet holds (its index stored as pandas'
    `to_parquet(index=...)` does)."""
    import pyarrow as pa

    return _lists_as_objects(pa.Table.from_pandas(frame, preserve_index=index))


def as_frame_stores(table: "pa.Table") -> "pa.Table":
    """`table` as `arrow_table(table.to_pandas())` makes it, without the round trip through Python
    objects (a list column of 206,000 relationships took 0.4-1.1 s): the schema and pandas'
    metadata of one row's round trip, the row count its index's. The round trip itself where that
    row cannot tell (no rows, a list or a null it cannot type) or where pandas would change the
    values (integers with nulls become floats, a float's NaN a null)."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    def whole() -> "pa.Table":
        return arrow_table(table.to_pandas())

    def changed_by_pandas(column: "pa.ChunkedArray") -> bool:
        if pa.types.is_integer(column.type):
            return bool(column.null_count > 0)
        return pa.types.is_floating(column.type) and bool(pc.any(pc.is_nan(column)).as_py())

    if table.num_rows == 0 or any(map(changed_by_pandas, table.columns)):
        return whole()
    one = arrow_table(table.slice(0, 1).to_pandas())
    if [field.name for field in one.schema] != table.column_names or any(
        _untyped(field.type) for field in one.schema
    ):
        return whole()
    metadata = json.loads(one.schema.metadata[b"pandas"])
    ranges = [index for index in metadata["index_columns"] if isinstance(index, dict)]
    if len(ranges) != 1 or ranges[0].get("kind") != "range" or ranges[0].get("start") != 0:
        return whole()
    ranges[0]["stop"] = table.num_rows
    schema = one.schema.with_metadata({**one.schema.metadata, b"pandas": json.dumps(metadata)})
    return table.cast(schema).combine_chunks()  # the parquet writer pages chunked lists apart


def _untyped(kind: "pa.DataType") -> bool:
    """A type that one row's round trip could only guess: null, or a list of nulls."""
    import pyarrow as pa

    if pa.types.is_null(kind):
        return True
    return bool(pa.types.is_list(kind) and pa.types.is_null(kind.value_type))


def _lists_as_objects(table: "pa.Table") -> "pa.Table":
    """`table` with pandas' metadata naming each list column as a column of Python lists (numpy
    type `object`), as a frame of lists stores it: a column of Arrow lists (pd.ArrowDtype, kept so
    that a workflow turns no list into Python objects) is otherwise named by its Arrow type, which
    pandas' read_parquet cannot read back."""
    import json

    if b"pandas" not in (table.schema.metadata or {}):
        return table
    metadata = json.loads(table.schema.metadata[b"pandas"])
    columns = metadata.get("columns", [])
    arrow_lists = [
        column
        for column in columns
        if str(column.get("pandas_type", "")).startswith("list[")
        and str(column.get("numpy_type", "")).endswith("[pyarrow]")
    ]
    if not arrow_lists:
        return table
    for column in arrow_lists:
        column["numpy_type"] = "object"
    return table.replace_schema_metadata(
        {**table.schema.metadata, b"pandas": json.dumps(metadata).encode()}
    )


def table_bytes(table: "pa.Table") -> bytes:
    """`table` as parquet, cut as this module says."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    write_table(table, sink)
    data: bytes = sink.getvalue().to_pybytes()
    return data


def write_table(table: "pa.Table", where: "Path | pa.NativeFile") -> None:
    """Write `table` to `where` as parquet, cut as this module says."""
    import pyarrow.parquet as pq

    with pq.ParquetWriter(where, table.schema, **PAGE_OPTIONS) as writer:
        write_groups(writer, table)


def write_groups(writer: "pq.ParquetWriter", table: "pa.Table") -> None:
    """Write `table`'s rows as row groups cut by content (`group_ends`)."""
    if table.num_rows == 0:
        writer.write_table(table)
        return
    start = 0
    for end in group_ends(table):
        writer.write_table(table.slice(start, end - start), row_group_size=end - start)
        start = end


def write_streamed(writer: "pq.ParquetWriter", tables: "Iterable[pa.Table]") -> None:
    """Write the rows of `tables`, one after another, as row groups cut by content: the groups
    `write_groups` cuts from their concatenation, holding one table and the rows of an unfinished
    group at a time, not the whole."""
    import pyarrow as pa

    held: pa.Table | None = None
    for table in tables:
        joined = table if held is None else pa.concat_tables([held, table])
        start = 0
        for end in group_ends(joined)[:-1] if joined.num_rows else []:
            writer.write_table(joined.slice(start, end - start), row_group_size=end - start)
            start = end
        held = joined.slice(start)  # the last group ends only where the rows ran out
    if held is not None:
        write_groups(writer, held)


def group_ends(table: "pa.Table") -> list[int]:
    """Where each row group of `table` ends (exclusive row positions, the last its length).

    A row ends its group when its key's hash, as a fraction of 2**64, is under its size over
    GROUP_BYTES (once MIN_GROUP_BYTES are in the group), or when the group reaches MAX_GROUP_BYTES.
    Whether a row ends a group depends only on that row and the rows since the last end, so groups
    away from a changed row are the same rows as before."""
    import numpy as np

    sizes = _row_sizes(table)
    chance = _key_hashes(table) / 2.0**64
    natural = np.flatnonzero(chance < sizes / GROUP_BYTES)
    total = np.concatenate([[0.0], np.cumsum(sizes)])
    ends, start, rows = [], 0, table.num_rows
    while start < rows:
        filled = int(np.searchsorted(total, total[start] + MIN_GROUP_BYTES)) - 1
        candidate = int(np.searchsorted(natural, max(filled, start)))
        natural_end = int(natural[candidate]) + 1 if candidate < len(natural) else rows
        forced_end = max(int(np.searchsorted(total, total[start] + MAX_GROUP_BYTES)), start + 1)
        start = min(natural_end, forced_end, rows)
        ends.append(start)
    return ends


def _row_sizes(table: "pa.Table") -> "np.ndarray":
    """Each row's bytes before encoding: its texts' lengths, and other columns' average."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    sizes = np.zeros(table.num_rows)
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            lengths = pc.fill_null(pc.binary_length(column), 0)
            sizes += lengths.to_numpy(zero_copy_only=False)
        else:
            sizes += column.nbytes / table.num_rows
    return sizes


def _key_hashes(table: "pa.Table") -> "np.ndarray":
    """A stable 64-bit hash of each row's key (`text_hashes`: the same in every process). Rows
    that share a key (extracted_rows' rows of one text unit) are told apart by their place among
    its rows. One hash for all of a unit's rows ended a group at all of them or at none, so groups
    ended almost only at MAX_GROUP_BYTES, and one row more shifted every group after it."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    name = next((name for name in KEY_COLUMNS if name in table.column_names), table.column_names[0])
    column = table.column(name)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = pa.array(map(str, column.to_pylist()), pa.large_string())
    hashes = text_hashes(column)
    codes, distinct = pd.factorize(hashes)
    if len(distinct) < len(hashes):  # a key on several rows: each row's place among them too
        place = pd.Series(codes).groupby(codes, sort=False).cumcount().to_numpy()
        both = pd.DataFrame({"key": hashes, "place": place})
        hashes = pd.util.hash_pandas_object(both, index=False).to_numpy()
    return hashes.astype(np.float64)


HASHED_BYTES = 1 << 22
"""Bytes of texts laid out side by side for one round of `text_hashes` (4 MiB, and 32 MiB of
places where texts differ in length)."""


def text_hashes(column: "pa.ChunkedArray | pa.Array") -> "np.ndarray":
    """A 64-bit hash of each text of `column` (null: as the empty text), from its UTF-8 bytes by
    numpy: the same in every process and on every machine, and no Python string made (pandas'
    hash_array of 205,710 relationship ids as Python strings held the interpreter 0.36 s)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):  # a table read back has a chunk a row group
        column = column.combine_chunks() if column.num_chunks else pa.array([], pa.large_string())
    column = column.cast(pa.large_string())
    if len(column) == 0:
        return np.zeros(0, dtype=np.uint64)
    _, offset_buffer, data = column.buffers()
    ends = np.frombuffer(offset_buffer, dtype=np.int64)[
        column.offset : column.offset + len(column) + 1
    ]
    offsets, lengths = ends[:-1], np.diff(ends)
    texts = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    lengths = np.where(column.is_valid().to_numpy(zero_copy_only=False), lengths, 0)
    rows = max(1, HASHED_BYTES // max(int(lengths.max()), 1))
    return np.concatenate(
        [
            _hashed(texts, offsets[start : start + rows], lengths[start : start + rows])
            for start in range(0, len(column), rows)
        ]
    )


LENGTH_RUNS = 16
"""At most this many lengths in a piece of texts: hashed one length at a time (keys), else laid
out at the longest's width (texts of any length)."""


def _hashed(texts: "np.ndarray", offsets: "np.ndarray", lengths: "np.ndarray") -> "np.ndarray":
    """The hashes of the texts that start at `offsets` in `texts` (bytes), each of `lengths`
    bytes: texts of one length at a time (`_of_length`) when they have few lengths."""
    import numpy as np

    length = int(lengths[0])
    if (lengths == length).all() and (np.diff(offsets) == length).all():  # ids, side by side
        laid = texts[offsets[0] : offsets[0] + len(offsets) * length] if length else texts[:0]
        return _of_length(laid.reshape(len(offsets), length), np.full(len(offsets), length))
    order = np.argsort(lengths, kind="stable")
    runs = np.split(order, np.flatnonzero(np.diff(lengths[order])) + 1)
    if len(runs) > LENGTH_RUNS:
        runs = [order]
    hashes = np.empty(len(offsets), dtype=np.uint64)
    for rows in runs:
        width = int(lengths[rows].max())
        places = offsets[rows][:, None] + np.arange(width)[None, :]
        inside = np.arange(width)[None, :] < lengths[rows][:, None]
        laid = np.zeros(places.shape, dtype=np.uint8)
        laid[inside] = texts[places[inside]]
        hashes[rows] = _of_length(laid, lengths[rows])
    return hashes


def _of_length(laid: "np.ndarray", lengths: "np.ndarray") -> "np.ndarray":
    """The hashes of texts laid out a row each (zeros after a text's end), of `lengths` bytes:
    each text's length mixed with its own 8-byte words (not the zeros of a longer row's width:
    a hash does not depend on the other texts), finished by splitmix64's finaliser."""
    import numpy as np

    width = laid.shape[1]
    padded = np.zeros((len(laid), -(-width // 8) * 8), dtype=np.uint8)
    padded[:, :width] = laid
    words = (lengths + 7) // 8
    uniform = bool((words == words[0]).all()) if len(words) else True
    hashes = (lengths.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    for at, word in enumerate(padded.view("<u8").T):
        mixed = (hashes ^ word) * np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(31)
        hashes = mixed if uniform else np.where(words > at, mixed, hashes)
    hashes ^= hashes >> np.uint64(30)
    hashes *= np.uint64(0xBF58476D1CE4E5B9)
    hashes ^= hashes >> np.uint64(27)
    hashes *= np.uint64(0x94D049BB133111EB)
    hashes ^= hashes >> np.uint64(31)
    return hashes
