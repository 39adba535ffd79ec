"""How a version stores its memos (carry_over.py): `carried_over.parquet`, a row per result (its
step, the hash of its input, the result as JSON or a float32 vector, the models' fingerprint, what
it is of), and `carried_over_changes.parquet` beside it.

A cold build writes the whole table. An update links the base table of the version before (a hard
link: no byte written, no piece uploaded to blob storage) and writes only its changes: the rows it
adds and the base rows it drops. Once the changes pass COMPACT_SHARE of the base, the whole table is
written again as the new base.
"""

import json
from collections.abc import Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Memo, Step
from graphrag_mcp_server.handlers.indexing.parquet_pages import PAGE_OPTIONS, write_streamed
from graphrag_mcp_server.handlers.indexing.versions import link_file

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
    add), by step, and what the next version needs to store its own as changes: the base's path and
    the step and key of each of its rows (`_composite`)."""

    results: dict[Step, "StoredResults"]
    base: Path
    base_keys: "pa.Array"
    base_sizes: "np.ndarray"


class StoredResults(Mapping[str, Any]):
    """One step's results as the previous version stored them: key -> its row of the stored table.
    Its results become Python values (JSON text, float32 arrays) all at once, when the first is
    asked for (one conversion of the column, not one per row); a row carried over is written again
    from the table itself (`write`), so an update does not turn each of hundreds of thousands of
    stored results into a Python object and back to store them."""

    def __init__(
        self,
        table: "pa.Table",
        base_rows: int | None = None,
        dropped: AbstractSet[str] = frozenset(),
    ) -> None:
        """`table`: the step's rows, the base table's first (`base_rows` of them; None: no base,
        as in tests), those of the changes after; `dropped`: keys of base rows the changes drop
        (left in the table, not results)."""
        self.table, self.base_rows = table, base_rows
        self.rows = {
            key: row
            for row, key in enumerate(table["key"].to_pylist())
            if key not in dropped or not self.in_base(row)
        }
        self._results: list[Any] | None = None
        self._keys_by_identity: dict[str, str] | None = None

    def in_base(self, row: int) -> bool:
        """Whether `row` is a row of the base table."""
        return self.base_rows is not None and row < self.base_rows

    def keys_of(self, identities: list[str]) -> list[str | None]:
        """The key of the stored result named by each identity (Memo.name), or None."""
        if self._keys_by_identity is None:
            self._keys_by_identity = {
                identity: key
                for identity, key in zip(
                    self.table["identity"].to_pylist(), self.table["key"].to_pylist(), strict=True
                )
                if identity is not None
            }
        return list(map(self._keys_by_identity.get, identities))

    def __getitem__(self, key: str) -> Any:
        row = self.rows[key]
        return self._converted_results()[row]

    def many(self, keys: list[str]) -> list[Any]:
        """The stored result of each key, None for one not stored (one lookup a key, no call)."""
        results = self._converted_results()
        return [None if row is None else results[row] for row in map(self.rows.get, keys)]

    def _converted_results(self) -> list[Any]:
        if self._results is None:
            self._results = self._converted()
        return self._results

    def _converted(self) -> list[Any]:
        results = self.table["result"]
        if results.null_count < len(results):
            texts: list[Any] = results.to_pylist()
            return texts
        vectors = self.table["vector"].to_numpy(zero_copy_only=False)
        return [None if vector is None else vector.astype("float32") for vector in vectors]

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


SCHEMA_FIELDS = (
    ("step", "large_string"),
    ("key", "large_string"),
    ("result", "large_string"),
    ("vector", "list<float>"),
    ("models", "large_string"),
    ("identity", "large_string"),
)
"""The stored table's columns: a vector result in `vector`, any other as JSON in `result`; what a
result is of in `identity` where its step names it (Memo.name; absent from tables stored before
it was added, read as nulls)."""


def _schema() -> "pa.Schema":
    import pyarrow as pa

    types = {"large_string": pa.large_string(), "list<float>": pa.list_(pa.float32())}
    return pa.schema([(name, types[kind]) for name, kind in SCHEMA_FIELDS])


def write(
    carried: CarriedOver, version: Path, models: dict[Step, str], stored: Stored | None
) -> None:
    """Store the results this run used in `version`: as changes to `stored`'s base (the results
    of the version before) while they are few enough, else as a whole table."""
    changes = _changes(carried, models, stored) if stored is not None else None
    if stored is None or changes is None:
        _write_whole(carried, version / TABLE, models)
    else:
        link_file(stored.base, version / TABLE)
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
    in their stored form (`_stored_form`); and the base rows this version no longer holds
    (`_composite` strings)."""

    again: dict[Step, list[int]]
    computed: dict[Step, list[tuple[str, Any]]]
    dropped: "pa.Array"


def _changes(carried: CarriedOver, models: dict[Step, str], stored: Stored) -> Changes | None:
    """This run's results as changes to `stored`'s base; None when the rows they add and drop
    hold more than COMPACT_SHARE of the base's bytes (`_sizes`), or when a step's results came
    from elsewhere than a stored table."""
    import pyarrow as pa
    import pyarrow.compute as pc

    in_base: list[str] = []
    again: dict[Step, list[int]] = {}
    computed: dict[Step, list[tuple[str, Any]]] = {}
    size = 0
    for step, memo in carried.items():
        carried_keys = memo.stored_form.keys() | memo.kept
        again[step] = []
        if carried_keys:
            previous = memo.previous
            if not isinstance(previous, StoredResults) or previous.base_rows is None:
                return None
            names = previous.table["identity"].to_pylist()
            for key in carried_keys:
                row = previous.rows[key]
                if previous.in_base(row) and memo.identities.get(key, names[row]) == names[row]:
                    in_base.append(f"{step.value}\x00{key}")
                else:
                    again[step].append(row)
            again[step].sort()
            size += int(_sizes(previous.table)[again[step]].sum())
        computed[step] = [
            (key, _stored_form(step, result))
            for key, result in memo.used.items()
            if key not in carried_keys
        ]
        size += sum(KEY_BYTES + _form_size(form) for _, form in computed[step])
    kept = pc.is_in(stored.base_keys, value_set=pa.array(in_base, pa.large_string()))
    size += int(stored.base_sizes[~kept.to_numpy(zero_copy_only=False)].sum())
    if size > COMPACT_SHARE * stored.base_sizes.sum():
        return None
    return Changes(again, computed, stored.base_keys.filter(pc.invert(kept)))


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
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    schema = _schema()
    with_dropped = schema.append(pa.field(DROPPED, pa.bool_()))
    with pq.ParquetWriter(table, with_dropped, **PAGE_OPTIONS) as writer:
        for step, memo in carried.items():
            parts: list[pa.Table] = []
            if changes.again[step]:
                previous = memo.previous
                assert isinstance(previous, StoredResults)
                again = previous.table.take(pa.array(changes.again[step])).cast(schema)
                parts.append(_named(again, memo.identities))
            computed = changes.computed[step]
            for span in _spans([_size(form) for _, form in computed]):
                parts.append(_rows(step, models[step], computed[span], [], memo.identities, schema))
            for part in parts:
                writer.write_table(part.append_column(DROPPED, pa.repeat(False, len(part))))
        ends = pc.split_pattern(changes.dropped, "\x00")
        nulls = pa.nulls(len(changes.dropped), pa.large_string())
        dropped = {
            "step": pc.list_element(ends, 0),
            "key": pc.list_element(ends, 1),
            "result": nulls,
            "vector": pa.nulls(len(changes.dropped), pa.list_(pa.float32())),
            "models": nulls,
            "identity": nulls,
            DROPPED: pa.repeat(True, len(changes.dropped)),
        }
        writer.write_table(pa.table(dropped).cast(with_dropped))


PART_ROWS, PART_BYTES = 2048, 4 * 2**20
"""Rows, and bytes of results, of the memo table made at a time: a 10,000-document build stores
~250,000 results (a version stored before extracted_rows.py also 10,000 extractions of ~13 KiB)."""


def _parts(step: Step, memo: Memo, made_with: str, schema: "pa.Schema") -> Iterator["pa.Table"]:
    """A step's rows to store, a part at a time (`_spans`): those carried over, then those
    computed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    carried_keys = memo.stored_form.keys() | memo.kept
    stored_again: list[tuple[str, Any]] = []
    if isinstance(memo.previous, StoredResults):
        stored = memo.previous.table
        rows = np.array(sorted(memo.previous.rows[key] for key in carried_keys), dtype=np.int64)
        sizes = pc.fill_null(pc.binary_length(stored["result"]), 0).to_numpy()[rows]
        for span in _spans(sizes.tolist()):
            again = stored.take(pa.array(rows[span])).cast(schema)
            yield _named(again, memo.identities) if memo.identities else again
    else:
        stored_again = [(key, memo.previous[key]) for key in carried_keys]
    computed = [(key, result) for key, result in memo.used.items() if key not in carried_keys]
    for span in _spans([_size(result) for _, result in stored_again]):
        yield _rows(step, made_with, stored_again[span], [], memo.identities, schema)
    for span in _spans([_size(result) for _, result in computed]):
        yield _rows(step, made_with, [], computed[span], memo.identities, schema)


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
    return pa.table(
        {
            "step": [step.value] * len(keys),
            "key": keys,
            "result": empty if vectors else results,
            "vector": results if vectors else empty,
            "models": [made_with] * len(keys),
            "identity": [identities.get(key) for key in keys],
        },
        schema=schema,
    )


def read(version: Path | None, models: dict[Step, str]) -> Stored | None:
    """A version's stored results made under each step's same models; None when it has no
    readable table. Each step's rows are a slice of the base and one of the changes (the dropped
    base rows left in place), so nothing is copied."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if version is None:
        return None
    try:
        base = _readable(pq.read_table(version / TABLE))
        added, dropped = _changes_of(version)
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None
    results = {}
    for step, made_with in models.items():
        rows = _rows_where(base, step.value, made_with)
        table = pa.concat_tables([rows, _rows_where(added, step.value, made_with)])
        results[step] = StoredResults(table, len(rows), dropped.get(step.value, set()))
    return Stored(results, version / TABLE, _composite(base), _sizes(base))


def stored_rows(version: Path) -> "pa.Table":
    """The results `version` stores, as one table: its base without the rows its changes drop,
    then the rows they add."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    base = _readable(pq.read_table(version / TABLE))
    added, dropped = _changes_of(version)
    gone = pa.array(
        [f"{step}\x00{key}" for step, keys in dropped.items() for key in keys], pa.large_string()
    )
    return pa.concat_tables([base.filter(pc.invert(pc.is_in(_composite(base), gone))), added])


def _changes_of(version: Path) -> "tuple[pa.Table, dict[str, set[str]]]":
    """The rows `version`'s changes add, and the keys of the base rows they drop by step (none
    without a changes table)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not (version / CHANGES).exists():
        return _empty(), {}
    changes = pq.read_table(version / CHANGES)
    dropped: dict[str, set[str]] = {}
    gone = changes.filter(changes[DROPPED]).select(["step", "key"])
    for step, key in zip(gone["step"].to_pylist(), gone["key"].to_pylist(), strict=True):
        dropped.setdefault(step, set()).add(key)
    return _readable(changes.filter(pc.invert(changes[DROPPED]))), dropped


DROPPED = "dropped"
"""The changes table's column: whether a row drops the base's row of its step and key."""


def _readable(table: "pa.Table") -> "pa.Table":
    """A stored table in this module's schema (tables stored before results were named have no
    `identity`: read as nulls)."""
    import pyarrow as pa

    if "identity" not in table.column_names:
        table = table.append_column("identity", pa.nulls(len(table), pa.large_string()))
    return table.select([name for name, _ in SCHEMA_FIELDS]).cast(_schema())


def _empty() -> "pa.Table":
    """A table of no rows with one empty chunk a column (pyarrow's kernels crash on a column of
    no chunks, as a file of no rows reads)."""
    import pyarrow as pa

    schema = _schema()
    return pa.table([pa.array([], field.type) for field in schema], schema=schema)


def _composite(table: "pa.Table") -> "pa.Array":
    """Each row's step and key, as one string: what the changes drop rows by."""
    import pyarrow as pa
    import pyarrow.compute as pc

    between = pa.scalar("\x00", pa.large_string())
    return pc.binary_join_element_wise(table["step"], table["key"], between).combine_chunks()


def _rows_where(table: "pa.Table", step: str, made_with: str) -> "pa.Table":
    """The rows of one step made with `made_with`: a slice of the table (no copy) when they are
    together, as `_write` stores them."""
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return _empty()
    mask = pc.and_(pc.equal(table["step"], step), pc.equal(table["models"], made_with))
    rows = pc.indices_nonzero(mask)
    if len(rows) == 0:
        return _empty()
    first, last = rows[0].as_py(), rows[-1].as_py()
    if last - first + 1 == len(rows):
        return table.slice(first, len(rows))
    return table.take(rows)
