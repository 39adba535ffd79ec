"""How a version stores its memos (carry_over.py): `carried_over.parquet`, a row per result (its
step, the hash of its input, the result as JSON or a float32 vector, the models' fingerprint, what
it is of), and `carried_over_changes.parquet` beside it.

A cold build writes the whole table, and its keys beside it (memo_keys.py). An update links the
base table of the version before and its keys (hard links: no byte written, no piece uploaded to
blob storage) and writes only its changes: the rows it adds and the base rows it drops. Once the
changes pass COMPACT_SHARE of the base, the whole table is written again as the new base.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing import memo_keys
from graphrag_mcp_server.handlers.indexing.memo_forms import BaseForms, forms_in_order
from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Memo, Step
from graphrag_mcp_server.handlers.indexing.parquet_pages import (
    PAGE_OPTIONS,
    write_streamed,
)
from graphrag_mcp_server.handlers.indexing.stored_results import StoredResults
from graphrag_mcp_server.handlers.indexing.versions import link_file
from graphrag_mcp_server.handlers.tables import READ_OPTIONS

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

TABLE = "carried_over.parquet"
CHANGES = "carried_over_changes.parquet"
COMPACT_SHARE = 0.25
"""An update stores its results as the base table of the version before (hard-linked: no byte
written, no piece uploaded) and the rows changed since, while those (rows added, base rows
dropped) hold at most this share of the base's bytes (`_sizes`); past it, the whole table is
written again as the new base, so that every update does not read dropped rows. Writing the whole
table was 7 s of a one-document update at 10,000 documents."""


@dataclass
class Stored:
    """A version's stored results (its base table, less the rows its changes drop, plus those they
    add), by step, and what the next version needs to store its own as changes: the base's path,
    the step and key of each of its rows and their sizes (`_sizes`)."""

    results: dict[Step, "StoredResults"]
    base: Path
    base_keys: "pa.Table"
    base_sizes: "np.ndarray"


SCHEMA_FIELDS = (
    ("step", "large_string"),
    ("key", "large_string"),
    ("result", "large_string"),
    ("vector", "list<float>"),
    ("models", "large_string"),
    ("identity", "large_string"),
    ("size", "int64"),
)
"""The stored table's columns: a vector result in `vector`, any other as JSON in `result`; what a
result is of in `identity` where its step names it (Memo.name); the row's bytes (`_sizes`) in
`size`, so that an update reads a base's results only where it takes them (memo_forms.py).
`identity` and `size` are absent from tables stored before they were added: read as nulls."""
KEY_COLUMNS = ["step", "key", "models", "identity", "size"]
"""The columns read from a base table at once; its results (memo_forms.FORM_COLUMNS) on demand."""


def _schema() -> "pa.Schema":
    import pyarrow as pa

    types = {
        "large_string": pa.large_string(),
        "list<float>": pa.list_(pa.float32()),
        "int64": pa.int64(),
    }
    return pa.schema([(name, types[kind]) for name, kind in SCHEMA_FIELDS])


def write(
    carried: CarriedOver, version: Path, models: dict[Step, str], stored: Stored | None
) -> None:
    """Store the results this run used in `version`: as changes to `stored`'s base (the results
    of the version before) while they are few enough, else as a whole table."""
    changes = _changes(carried, models, stored) if stored is not None else None
    if stored is None or changes is None:
        _write_whole(carried, version / TABLE, models)
        memo_keys.write(version / TABLE, KEY_COLUMNS)
    else:
        link_file(stored.base, version / TABLE)
        memo_keys.link(stored.base, version / TABLE)
        _write_changes(carried, changes, version / CHANGES, models)


def _write_whole(carried: CarriedOver, table: Path, models: dict[Step, str]) -> None:
    """Store the results this run used: those carried over as rows of the previous table (in its
    order, so the pages that hold them stay the same), then those computed, vectors as float32
    arrays and the others as JSON; a part at a time (`_parts`, parquet_pages.write_streamed), so
    the table is never held whole beside the results it is made from."""
    import pyarrow.parquet as pq

    schema = _schema()
    with pq.ParquetWriter(table, schema, **PAGE_OPTIONS) as writer:
        for step, memo in carried.items():
            write_streamed(writer, _parts(step, memo, models[step], schema))


@dataclass
class Changes:
    """An update's results as changes to the base table of the version before: per step, the rows
    of the stored results to store again (not the base's, or named anew) and the results computed,
    in their stored form (`_stored_form`); and the step and key of each base row this version no
    longer holds."""

    again: dict[Step, "np.ndarray"]
    computed: dict[Step, list[tuple[str, Any]]]
    dropped: "pa.Table"


def _changes(carried: CarriedOver, models: dict[Step, str], stored: Stored) -> Changes | None:
    """This run's results as changes to `stored`'s base; None when the rows they add and drop
    hold more than COMPACT_SHARE of the base's bytes (`_sizes`), or when a step's results came
    from elsewhere than a stored table."""
    import numpy as np

    kept = np.zeros(len(stored.base_sizes), dtype=bool)
    again: dict[Step, np.ndarray] = {}
    computed: dict[Step, list[tuple[str, Any]]] = {}
    size = 0
    for step, memo in carried.items():
        again[step] = np.empty(0, dtype=np.int64)
        if memo.taken or memo.kept or memo.kept_named:
            previous = memo.previous
            if not isinstance(previous, StoredResults) or previous.base_rows is None:
                return None
            rows = previous.carried_rows(memo.kept)
            in_base = (rows < previous.base_rows) & _same_names(previous.table, rows, memo)
            assert previous.base_positions is not None
            kept[previous.base_positions[rows[in_base]]] = True
            again[step] = rows[~in_base]
            size += int(_sizes(previous.rows_stored(again[step])).sum())
        computed[step] = [(key, _stored_form(step, result)) for key, result in _computed(memo)]
        size += sum(KEY_BYTES + _form_size(form) for _, form in computed[step])
    size += int(stored.base_sizes[~kept].sum())
    if size > COMPACT_SHARE * stored.base_sizes.sum():
        return None
    return Changes(again, computed, stored.base_keys.filter(~kept))


def _same_names(table: "pa.Table", rows: "np.ndarray", memo: Memo) -> Any:
    """Whether each carried row of `table` keeps its stored name: this run names its key as
    stored, or not at all. Only the rows of keys this run named are compared (a step carries
    214,000 rows at 10,000 documents, an update names a few)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    same = np.ones(len(rows), dtype=bool)
    if not memo.identities:
        return same
    named = pa.array(list(memo.identities), pa.large_string())
    renamed = pc.is_in(table["key"], value_set=named).to_numpy(zero_copy_only=False)[rows]
    taken = pa.array(rows[renamed], pa.int64())
    found = pc.index_in(table["key"].take(taken), value_set=named)
    now = pa.array(list(memo.identities.values()), pa.large_string()).take(found)
    same[renamed] = pc.fill_null(pc.equal(now, table["identity"].take(taken)), False).to_numpy(
        zero_copy_only=False
    )
    return same


KEY_BYTES = 64
"""A stored row's bytes besides its result: its key (a sha256 in hex)."""


def _sizes(table: "pa.Table") -> "np.ndarray":
    """Each stored row's bytes: KEY_BYTES, its JSON result's, 4 a vector dimension."""
    import pyarrow.compute as pc

    texts = pc.fill_null(pc.binary_length(table["result"]), 0).to_numpy()
    vectors = pc.fill_null(pc.list_value_length(table["vector"]), 0).to_numpy()
    sizes: np.ndarray = KEY_BYTES + texts + 4 * vectors
    return sizes


def _stored_form(step: Step, result: Any) -> Any:
    """A computed result as the table stores it: a vector as a float32 array, any other result
    encoded as JSON (extractions are stored by extracted_rows.py)."""
    import numpy as np

    if step is Step.EMBEDDING:
        return np.asarray(result, np.float32)
    return json.dumps(result)


def _form_size(form: Any) -> int:
    """A stored form's bytes (`_sizes`): a JSON text's length, 4 a vector dimension."""
    return len(form) if isinstance(form, str) else 4 * len(form)


def _write_changes(
    carried: CarriedOver, changes: Changes, table: Path, models: dict[Step, str]
) -> None:
    """Store `changes`: the rows to store again and those computed, then a row for each base row
    dropped (its step and key, `dropped` true)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _schema()
    with_dropped = schema.append(pa.field(DROPPED, pa.bool_()))
    with pq.ParquetWriter(table, with_dropped, **PAGE_OPTIONS) as writer:
        for step, memo in carried.items():
            parts: list[pa.Table] = []
            if len(changes.again[step]):
                previous = memo.previous
                assert isinstance(previous, StoredResults)
                again = _stored_again(previous, changes.again[step])
                parts.append(_named(again, memo.identities))
            computed = changes.computed[step]
            for span in _spans([_size(form) for _, form in computed]):
                parts.append(_rows(step, models[step], computed[span], [], memo.identities, schema))
            for part in parts:
                writer.write_table(part.append_column(DROPPED, pa.repeat(False, len(part))))
        nulls = pa.nulls(len(changes.dropped), pa.large_string())
        dropped = {
            "step": changes.dropped["step"],
            "key": changes.dropped["key"],
            "result": nulls,
            "vector": pa.nulls(len(changes.dropped), pa.list_(pa.float32())),
            "models": nulls,
            "identity": nulls,
            "size": pa.nulls(len(changes.dropped), pa.int64()),
            DROPPED: pa.repeat(True, len(changes.dropped)),
        }
        writer.write_table(pa.table(dropped).cast(with_dropped))


PART_ROWS, PART_BYTES = 2048, 4 * 2**20
"""Rows, and bytes of results, of the memo table made at a time: a 10,000-document build stores
~250,000 results (a version stored before extracted_rows.py also 10,000 extractions of ~13 KiB)."""


def _parts(step: Step, memo: Memo, made_with: str, schema: "pa.Schema") -> Iterator["pa.Table"]:
    """A step's rows to store, a part at a time (`_spans`): those carried over, then those
    computed."""
    import pyarrow.compute as pc

    stored_again: list[tuple[str, Any]] = []
    if isinstance(memo.previous, StoredResults):
        stored = _stored_again(memo.previous, memo.previous.carried_rows(memo.kept))
        sizes = pc.fill_null(pc.binary_length(stored["result"]), 0).to_numpy()
        for span in _spans(sizes.tolist()):
            again = stored.slice(span.start, span.stop - span.start)
            yield _named(again, memo.identities) if memo.identities else again
    else:
        stored_again = [(key, memo.previous[key]) for key in memo.taken | memo.kept]
    computed = _computed(memo)
    for span in _spans([_size(result) for _, result in stored_again]):
        yield _rows(step, made_with, stored_again[span], [], memo.identities, schema)
    for span in _spans([_size(result) for _, result in computed]):
        yield _rows(step, made_with, [], computed[span], memo.identities, schema)


def _computed(memo: Memo) -> list[tuple[str, Any]]:
    """The results this run computed and did not carry over, in the order computed."""
    return [
        (key, memo.used[key])
        for key in memo.fresh
        if key not in memo.taken and key not in memo.kept
    ]


def _spans(sizes: list[int]) -> Iterator[slice]:
    """Consecutive spans of rows, each of at most PART_ROWS rows and PART_BYTES (but one row)."""
    start = total = 0
    for row, size in enumerate(sizes):
        if row > start and (row - start >= PART_ROWS or total + size > PART_BYTES):
            yield slice(start, row)
            start, total = row, 0
        total += size
    if start < len(sizes):
        yield slice(start, len(sizes))


def _size(result: Any) -> int:
    """A result's bytes as stored, where known before encoding (JSON text); 0 otherwise."""
    return len(result) if isinstance(result, str) else 0


def _named(rows: "pa.Table", identities: dict[str, str]) -> "pa.Table":
    """Carried rows with this run's names of their results (a name stored before is kept)."""
    import pyarrow as pa

    stored = rows["identity"].to_pylist()
    names = [
        identities.get(key, name) for key, name in zip(rows["key"].to_pylist(), stored, strict=True)
    ]
    column = rows.schema.get_field_index("identity")
    return rows.set_column(column, "identity", pa.array(names, pa.large_string()))


def _rows(
    step: Step,
    made_with: str,
    stored: list[tuple[str, Any]],
    computed: list[tuple[str, Any]],
    identities: dict[str, str],
    schema: "pa.Schema",
) -> "pa.Table":
    """Rows of results in their stored form (`stored`) or as computed (`computed`: vectors as
    float32 arrays, the others encoded as JSON), each with its name if it has
    one (`identities`)."""
    import pyarrow as pa

    keys = [key for key, _ in stored] + [key for key, _ in computed]
    vectors = step is Step.EMBEDDING
    results = [value for _, value in stored] + [_stored_form(step, value) for _, value in computed]
    empty = [None] * len(keys)
    rows = {
        "step": [step.value] * len(keys),
        "key": keys,
        "result": empty if vectors else results,
        "vector": results if vectors else empty,
        "models": [made_with] * len(keys),
        "identity": [identities.get(key) for key in keys],
        "size": empty,
    }
    return _sized(pa.table(rows, schema=schema))


def _stored_again(previous: StoredResults, rows: "np.ndarray") -> "pa.Table":
    """The rows at `rows` of a step's stored results, with their results, as this module stores
    them (its schema, each row's size)."""
    return _sized(_readable(previous.rows_stored(rows)))


def _sized(table: "pa.Table") -> "pa.Table":
    """Stored rows with each one's bytes (`_sizes`) in `size`."""
    import pyarrow as pa

    column = table.schema.get_field_index("size")
    return table.set_column(column, "size", pa.array(_sizes(table), pa.int64()))


def read(version: Path | None, models: dict[Step, str]) -> Stored | None:
    """A version's stored results made under each step's same models; None when it has no
    readable table. Each step's rows are a slice of the base and one of the changes (the dropped
    base rows left in place), so nothing is copied."""
    import pyarrow as pa

    if version is None:
        return None
    try:
        base, forms = _base(version / TABLE)
        added, dropped = _changes_of(version)
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None
    results = {}
    for step, made_with in models.items():
        rows, positions = _rows_where(base, step.value, made_with)
        changed = _rows_where(added, step.value, made_with)[0]
        gone = _dropped_keys(dropped, step.value)
        if forms is None:
            table = pa.concat_tables([rows, changed])
            results[step] = StoredResults(table, len(rows), gone, positions)
            continue
        table = pa.concat_tables([rows.select(KEY_COLUMNS), changed.select(KEY_COLUMNS)])
        taken = forms_in_order(forms, positions, changed)
        results[step] = StoredResults(table, len(rows), gone, positions, taken)
    sizes = _sizes(base) if forms is None else base["size"].to_numpy()
    return Stored(results, version / TABLE, base.select(["step", "key"]), sizes)


def _base(path: Path) -> "tuple[pa.Table, BaseForms | None]":
    """A base table's keys, names and sizes (KEY_COLUMNS), and its results to read by row group;
    a table stored before sizes were (or with a row of no size) read whole, its results in it and
    no BaseForms."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path, memory_map=READ_OPTIONS["memory_map"])  # its footer read once
    threads = READ_OPTIONS["use_threads"]
    if "size" in file.schema_arrow.names:
        keys = memo_keys.read(path, file.metadata.num_rows, KEY_COLUMNS)
        if keys is None:
            keys = file.read(columns=KEY_COLUMNS, use_threads=threads)
        if not keys["size"].null_count:
            fields = [_schema().field(name) for name in KEY_COLUMNS]
            return keys.cast(pa.schema(fields)), BaseForms.of(file)
    return _readable(file.read(use_threads=threads)), None


def stored_rows(version: Path) -> "pa.Table":
    """The results `version` stores, as one table: its base without the rows its changes drop,
    then the rows they add."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    base = _readable(pq.read_table(version / TABLE, **READ_OPTIONS))
    added, dropped = _changes_of(version)
    gone = pc.is_in(_composite(base), value_set=_composite(dropped))
    return pa.concat_tables([base.filter(pc.invert(gone)), added])


def _changes_of(version: Path) -> "tuple[pa.Table, pa.Table]":
    """The rows `version`'s changes add, and the step and key of each base row they drop (none
    without a changes table)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not (version / CHANGES).exists():
        return _empty(), _empty().select(["step", "key"])
    changes = pq.read_table(version / CHANGES, **READ_OPTIONS)
    gone = changes.filter(changes[DROPPED]).select(["step", "key"])
    return _readable(changes.filter(pc.invert(changes[DROPPED]))), gone


def _dropped_keys(dropped: "pa.Table", step: str) -> "pa.Array":
    """The keys of one step's dropped base rows."""
    import pyarrow.compute as pc

    keys = dropped.filter(pc.equal(dropped["step"], step))["key"]
    return keys.combine_chunks().cast("large_string")


DROPPED = "dropped"
"""The changes table's column: whether a row drops the base's row of its step and key."""


def _readable(table: "pa.Table") -> "pa.Table":
    """A stored table in this module's schema (tables stored before results were named have no
    `identity`: read as nulls)."""
    import pyarrow as pa

    if "identity" not in table.column_names:
        table = table.append_column("identity", pa.nulls(len(table), pa.large_string()))
    if "size" not in table.column_names:
        table = table.append_column("size", pa.nulls(len(table), pa.int64()))
    return table.select([name for name, _ in SCHEMA_FIELDS]).cast(_schema())


def _empty() -> "pa.Table":
    """A table of no rows with one empty chunk a column (pyarrow's kernels crash on a column of
    no chunks, as a file of no rows reads)."""
    import pyarrow as pa

    schema = _schema()
    return pa.table([pa.array([], field.type) for field in schema], schema=schema)


def _composite(table: "pa.Table") -> "pa.Array":
    """Each row's step and key, as one string (rows dropped from the base are named so)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    between = pa.scalar("\x00", pa.large_string())
    return pc.binary_join_element_wise(
        table["step"].cast(pa.large_string()), table["key"].cast(pa.large_string()), between
    ).combine_chunks()


def _rows_where(table: "pa.Table", step: str, made_with: str) -> "tuple[pa.Table, np.ndarray]":
    """The rows of one step made with `made_with`, and their positions in `table`: a slice of
    the table (no copy) when they are together, as `_write` stores them."""
    import numpy as np
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return _empty(), np.empty(0, dtype=np.int64)
    mask = pc.and_(pc.equal(table["step"], step), pc.equal(table["models"], made_with))
    rows = pc.indices_nonzero(mask).to_numpy()
    if len(rows) == 0:
        return _empty(), rows
    first, last = int(rows[0]), int(rows[-1])
    if last - first + 1 == len(rows):
        return table.slice(first, len(rows)), rows
    return table.take(rows), rows
