"""Every text unit's extraction as rows of one Arrow table stored in the version
(`extracted_rows.parquet`), so that an update merges extractions by delta.

graphrag merges all text units' extraction frames into entities and relationships on every run
(`_merge_entities`, `_merge_relationships`). An update that decoded each unit's stored extraction
(JSON) and merged it row by row in Python spent about 3 s of a one-document update at 10,000
documents there. Here the previous version's rows are read as one table, the rows of units that
are gone are left out, those of new units are added (the rest are slices of the stored table),
and the merge is made by Arrow's dictionary encoding and pandas' `factorize`: the same frames as
graphrag's (groups in order of first appearance, descriptions and units in the units' order,
weights summed by pandas). A unit's rows are found by
its extraction's memo key (its stripped text and the extraction settings), and used only while
the extraction model is the one they were made with.

An update stores its rows as changes to the base table of the version before (row_changes.py).
"""

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.row_changes import CHANGES, DROPPED, BaseRows
from graphrag_mcp_server.handlers.indexing.slices import taken
from graphrag_mcp_server.handlers.tables import READ_OPTIONS

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

logger = logging.getLogger(__name__)

FILE = "extracted_rows.parquet"
STATE = "extracted_rows"
"""The key of this run's ExtractedRows in the state graphrag hands its workflows."""
ENTITY, RELATIONSHIP = 0, 1
MERGES = {
    ENTITY: (("title", "type"), "frequency"),
    RELATIONSHIP: (("source", "target"), "weight"),
}
"""Each kind's group keys and total, as graphrag's merge makes them."""
NAMED_BY = {ENTITY: ("entity", ("title",)), RELATIONSHIP: ("relationship", ("source", "target"))}
"""What a summary is of (`summary_name`): each kind's word, and the columns that name its row."""
MODELS = b"models"
"""The schema metadata naming the extraction model's fingerprint (carry_over.fingerprints)."""
RENAMES = b"renames"
"""The schema metadata holding the entity titles the version renamed (name_variants.py)."""
STORED = ("key", "kind", "row", "first", "second", "description", "weight")
"""The stored columns: the unit's extraction key, ENTITY or RELATIONSHIP, the row's place in the
unit's frame, the two group keys (title and type, or source and target), description, weight."""
KEYS = ("first", "second")
"""The stored columns of a row's two group keys."""


@dataclass
class ExtractedRows:
    """The previous version's folder (None: a full build) and this version's, and the extraction
    model's fingerprint that stored rows must carry to be used."""

    previous: Path | None
    version: Path
    models: str
    _base: BaseRows | None = field(default=None, init=False, repr=False)

    def stored(self) -> "pa.Table | None":
        """The previous version's rows (its base's held rows, then those its changes add), when
        it stored them with this run's extraction model."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.previous / FILE if self.previous is not None else None
        if path is None or not path.is_file():
            return None
        base = pq.read_table(path, **READ_OPTIONS)
        changes = None
        if (path.parent / CHANGES).is_file():
            changes = pq.read_table(path.parent / CHANGES, **READ_OPTIONS)
        metadata = (changes if changes is not None else base).schema.metadata or {}
        tables = [table for table in (base, changes) if table is not None]
        if metadata.get(MODELS) != self.models.encode() or any(
            table.column_names != list(STORED) for table in tables
        ):
            return None
        held = np.ones(base.num_rows, dtype=bool)
        for start, stop in json.loads(metadata.get(DROPPED, b"[]")):
            held[start:stop] = False
        self._base = BaseRows(path, base["key"], held)
        parts = [
            self._base.rows(base),
            *([changes] if changes is not None and changes.num_rows else []),
        ]
        return pa.concat_tables(parts).replace_schema_metadata(metadata)

    def write(self, rows: "pa.Table", renames: bytes) -> None:
        """Store this run's rows (`in_order`) in the version, with the titles it renamed
        (name_variants.recorded): as changes to the base it read while they are few, else
        whole."""
        from graphrag_mcp_server.handlers.indexing.record_tables import write_table_file
        from graphrag_mcp_server.handlers.indexing.versions import link_file

        metadata = {MODELS: self.models.encode(), RENAMES: renames}
        table = rows.select(list(STORED))
        base, self._base = self._base, None  # its key column let go: the run's state outlives it
        changes = base.changes(table) if base is not None else None
        if base is None or changes is None:
            write_table_file(self.version / FILE, table.replace_schema_metadata(metadata))
            return
        added, dropped = changes
        link_file(base.path, self.version / FILE)
        metadata[DROPPED] = json.dumps(dropped).encode()
        write_table_file(self.version / CHANGES, added.replace_schema_metadata(metadata))


def _schema(positioned: bool) -> "pa.Schema":
    import pyarrow as pa

    fields = [
        ("key", pa.string()),
        ("kind", pa.int8()),
        ("row", pa.int32()),
        ("first", pa.string()),
        ("second", pa.string()),
        ("description", pa.string()),
        ("weight", pa.float64()),
    ]
    return pa.schema(fields + [("position", pa.int64())] if positioned else fields)


def carried_rows(
    stored: "pa.Table | None", keys: list[str]
) -> "tuple[pa.Table, set[str], pa.Table]":
    """The stored rows, each with the `position` in `keys` of its unit's key (null: gone, or a
    second stored copy of a text's rows; a key at two positions has its rows again for the
    second), the keys found, and the rows of keys no longer in `keys` (None stored: none of
    each). Keys are looked up once a unit (`_unit_runs`), not once a row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if stored is None:
        return _schema(True).empty_table(), set(), _schema(False).empty_table()
    stored = stored.cast(_schema(False))
    begins = pc.equal(stored["row"], 0)
    heads, lengths = _unit_runs(begins)
    head_keys = stored["key"].filter(begins).combine_chunks()  # chunk by chunk: no copy of all
    at = pc.fill_null(pc.index_in(head_keys, value_set=pa.array(keys, pa.string())), -1)
    at = at.to_numpy(zero_copy_only=False).astype(np.int64)
    present = at >= 0
    found = set(pc.unique(head_keys.filter(pa.array(present))).to_pylist())
    first = _first_copies(at, stored["kind"].to_numpy()[heads])
    positions = pa.array(np.repeat(at, lengths), pa.int64(), mask=np.repeat(~first, lengths))
    rows = [stored.append_column("position", positions)]
    rows += _again(rows[0], keys, np.where(first, at, -1), heads, lengths)
    return pa.concat_tables(rows), found, stored.filter(pa.array(np.repeat(~present, lengths)))


def _unit_runs(begins: "pa.ChunkedArray") -> "tuple[np.ndarray, np.ndarray]":
    """Where each unit's rows of a kind begin in the stored rows, and how many they are, from
    which rows are numbered 0 (`begins`): a unit's rows of a kind are stored together, numbered
    from 0 (`unit_rows`, `in_order`)."""
    import numpy as np

    heads = np.flatnonzero(begins.to_numpy())
    return heads, np.diff(heads, append=len(begins))


def _first_copies(at: "np.ndarray", kinds: "np.ndarray") -> "np.ndarray":
    """Which units' runs (their keys' positions `at`, -1: gone) are the first stored of their key
    and kind: a text in two documents has its rows stored once for each, and carried once."""
    import numpy as np

    first = np.zeros(len(at), dtype=bool)
    placed = np.flatnonzero(at >= 0)
    _, firsts = np.unique(at[placed] * 2 + kinds[placed], return_index=True)
    first[placed[firsts]] = True
    return first


def _again(
    rows: "pa.Table",
    keys: list[str],
    at: "np.ndarray",
    heads: "np.ndarray",
    lengths: "np.ndarray",
) -> list["pa.Table"]:
    """The rows of each key at a second position in `keys` (the same text again), taken from its
    first position's carried runs (`at`: each run's position, -1 none) and placed at the second."""
    import numpy as np
    import pyarrow as pa

    carried = set(at[at >= 0].tolist())
    first: dict[str, int] = {}
    again = []
    for position, key in enumerate(keys):
        if first.setdefault(key, position) != position and first[key] in carried:
            runs = np.flatnonzero(at == first[key])
            taken = np.concatenate([np.arange(heads[r], heads[r] + lengths[r]) for r in runs])
            copy = rows.take(pa.array(taken, pa.int64()))
            column = pa.repeat(pa.scalar(position, pa.int64()), copy.num_rows)
            again.append(copy.set_column(copy.num_columns - 1, "position", column))
    return again


def in_order(parts: list["pa.Table"]) -> "pa.Table":
    """The rows of `parts` that have a position, ordered by kind, position and row: the order
    they are stored and merged in. Stored rows whose units kept their order are already in it,
    so the result is made of slices of the parts (no row copied) unless too many runs."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = pa.concat_tables(parts)
    position = pc.fill_null(rows["position"], -1).to_numpy()  # -1: a unit gone
    placed = np.flatnonzero(position >= 0)
    kind = rows["kind"].to_numpy(zero_copy_only=False)[placed]
    row = rows["row"].to_numpy(zero_copy_only=False)[placed]
    return taken(rows, placed[np.lexsort((row, position[placed], kind))])


def unit_rows(extractions: list[tuple[int, str, str]]) -> "pa.Table":
    """The rows of units' extractions: (position, key, extraction as JSON) each. A unit whose
    extraction found no entity gives none (as its extraction is not stored: tried again)."""
    import pyarrow as pa

    columns: list[list[Any]] = [[] for _ in _schema(True)]
    for position, key, text in extractions:
        for row in _rows(json.loads(text)):
            for column, value in zip(columns, (key, *row, position), strict=True):
                column.append(value)
    return pa.table(columns, schema=_schema(True))


def _rows(split: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    """One unit's extraction frames (`to_dict(orient="split")`) as rows: kind, row, the group
    keys (None when missing), description, weight."""
    if not split[0]["data"]:
        return
    for kind, frame in enumerate(split[:2]):
        columns = frame["columns"]
        first, second, description = (
            columns.index(name) for name in (*MERGES[kind][0], "description")
        )
        weight = columns.index("weight") if kind == RELATIONSHIP else None
        for row, values in enumerate(frame["data"]):
            yield (
                kind,
                row,
                _key(values[first]),
                _key(values[second]),
                values[description],
                values[weight] if weight is not None else None,
            )


def _key(value: Any) -> str | None:
    """A group key as stored: None for what pandas' groupby leaves out (None, NaN)."""
    return None if value is None or value != value else str(value)


def summary_name(identity: str | tuple[str, str]) -> str:
    """What a summary is of, as the memo names it: an entity's title or a relationship's ends."""
    if isinstance(identity, str):
        return f"entity\x00{identity}"
    return f"relationship\x00{identity[0]}\x00{identity[1]}"


def summary_names(table: "pa.Table", kind: int) -> "pa.Array":
    """`summary_name` of each row of a merged table of `kind` (extracted_rows.grouped, or the
    entities or relationships a version wrote), by whole columns, as large strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    prefix, columns = NAMED_BY[kind]
    named = pc.binary_join_element_wise(
        pa.scalar(prefix, pa.large_string()),
        *(table[column].cast(pa.large_string()) for column in columns),
        pa.scalar("\x00", pa.large_string()),
    )
    return named.combine_chunks()


def names(rows: "pa.Table") -> set[str]:
    """What the summaries of the rows' entities and relationships are of (`summary_name`)."""
    kinds = rows["kind"].to_pylist()
    firsts, seconds = rows["first"].to_pylist(), rows["second"].to_pylist()
    return {
        summary_name(first if kind == ENTITY else (first, second))
        for kind, first, second in zip(kinds, firsts, seconds, strict=True)
        if first is not None and second is not None
    }


def keyed_rows(
    rows: "pa.Table", kind: int
) -> "tuple[pa.Table, pa.DictionaryArray, pa.DictionaryArray, np.ndarray]":
    """The rows (`in_order`) of `kind` with both group keys (a slice of `rows`: no column copied
    but the keys), each key dictionary-encoded, and a code for each row's pair of keys (equal
    codes: equal pairs)."""
    import numpy as np
    import pyarrow.compute as pc

    kinds = rows["kind"].to_numpy(zero_copy_only=False)
    start, end = np.searchsorted(kinds, [kind, kind + 1])
    rows = rows.slice(int(start), int(end - start))
    if rows["first"].null_count or rows["second"].null_count:
        rows = rows.filter(pc.and_(pc.is_valid(rows["first"]), pc.is_valid(rows["second"])))
    first, second = (pc.dictionary_encode(rows[name].combine_chunks()) for name in KEYS)
    pair = first.indices.to_numpy(zero_copy_only=False).astype(np.int64) * (
        len(second.dictionary) + 1
    ) + second.indices.to_numpy(zero_copy_only=False)
    return rows, first, second, pair


@dataclass
class Merged:
    """graphrag's merge of one kind's rows (`grouped`): `table` holds each group's two keys, text
    unit ids and total (frequency or weight), groups in order of first appearance; `rows` lists
    each group's rows, in row order, in `descriptions`. A group's description list is made only
    when asked for (`lists`): most groups' summaries are carried over, and their lists unused."""

    table: "pa.Table"
    rows: "pa.ListArray"
    descriptions: "pa.ChunkedArray"

    def lists(self, groups: "np.ndarray") -> list[list[str]]:
        """The description lists of the groups at `groups`, as Python lists."""
        import pyarrow as pa

        listed: list[list[str]] = _listed(
            self.rows.take(pa.array(groups, pa.int64())), self.descriptions
        ).to_pylist()
        return listed

    def whole(self) -> "pa.Table":
        """`table` with each group's description list, in graphrag's column order."""
        return self.table.add_column(2, "description", _listed(self.rows, self.descriptions))


def _listed(rows: "pa.ListArray", values: "pa.ChunkedArray") -> "pa.ListArray":
    """Lists of `values`, each holding the values at the places one list of `rows` holds."""
    import pyarrow as pa
    import pyarrow.compute as pc

    offsets = pc.subtract(rows.offsets, rows.offsets[0])
    places = rows.flatten().to_numpy(zero_copy_only=False)
    return pa.ListArray.from_arrays(offsets, _taken(values, places))


def _taken(values: "pa.ChunkedArray", places: "np.ndarray") -> "pa.Array":
    """`values.take(places)`, taken chunk by chunk: Arrow's take on a chunked array joins its
    chunks first (`in_order` leaves the rows in many), copying every value to take a few."""
    import numpy as np
    import pyarrow as pa

    if len(places) == 0:
        return pa.array([], values.type)
    bounds = np.cumsum([0] + [len(chunk) for chunk in values.chunks])
    chunk_of = np.searchsorted(bounds, places, side="right") - 1
    order = np.argsort(chunk_of, kind="stable")
    chunks, starts = np.unique(chunk_of[order], return_index=True)
    ends = [*starts[1:].tolist(), len(order)]
    parts = [
        values.chunks[chunk].take(pa.array(places[order[start:end]] - bounds[chunk]))
        for chunk, start, end in zip(chunks.tolist(), starts.tolist(), ends, strict=True)
    ]
    return pa.concat_arrays(parts).take(pa.array(np.argsort(order)))


def grouped(
    rows: "pa.Table", units: "pa.Array", kind: int, titles: "pa.Array | None" = None
) -> Merged:
    """graphrag's `_merge_entities` (ENTITY) or `_merge_relationships` (RELATIONSHIP) of the rows
    (`in_order`; `position` indexing `units`, the text unit ids), made by whole columns: groups in
    order of first appearance, each group's unit ids a list in row order, weights summed by
    pandas; rows with a missing key left out. With `titles`, only the groups whose two keys are
    both among them (graphrag's `filter_orphan_relationships`, by each key's dictionary entry)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    (first_name, second_name), total = MERGES[kind]
    rows, first, second, pair = keyed_rows(rows, kind)
    codes, uniques = pd.factorize(pair)  # numbered in order of first appearance
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(uniques))
    heads = order[np.cumsum(counts) - counts]  # each group's first row
    ends = [key.indices.to_numpy(zero_copy_only=False)[heads] for key in (first, second)]
    kept = np.ones(len(uniques), dtype=bool)
    if titles is not None:
        for key, at in zip((first, second), ends, strict=True):
            kept &= pc.is_in(key.dictionary, value_set=titles).to_numpy(zero_copy_only=False)[at]
        if dropped := int((~kept).sum()):
            logger.warning("Dropped %d relationship(s) referencing non-existent entities.", dropped)
            order = order[kept[codes[order]]]
    offsets = pa.array(np.concatenate(([0], np.cumsum(counts[kept]))), pa.int32())
    positions = rows["position"].to_numpy(zero_copy_only=False)[order]
    columns = {
        name: key.dictionary.take(pa.array(at[kept]))
        for name, key, at in zip((first_name, second_name), (first, second), ends, strict=True)
    }
    columns["text_unit_ids"] = pa.ListArray.from_arrays(offsets, units.take(pa.array(positions)))
    if total == "weight":  # summed by pandas, as graphrag's groupby sums them
        weights = pd.Series(rows["weight"].to_numpy(zero_copy_only=False), dtype="float64")
        summed = weights.groupby(codes, sort=True).sum().to_numpy()
        columns["weight"] = pa.array(summed[kept], pa.float64())
    else:
        columns["frequency"] = pa.array(counts[kept], pa.int64())
    return Merged(
        pa.table(columns),
        pa.ListArray.from_arrays(offsets, pa.array(order, pa.int64())),
        rows["description"],
    )


def merged(rows: "pa.Table", units: list[str], kind: int) -> "pd.DataFrame":
    """`grouped` as the frame graphrag's merge makes, for a list of text unit ids."""
    import pyarrow as pa

    return graphrag_frame(grouped(rows, pa.array(units, pa.string()), kind))


def graphrag_frame(groups: Merged) -> "pd.DataFrame":
    """Merged groups as the frame graphrag's merge makes: strings and lists as Python objects,
    counts int64, weights float64."""
    import pandas as pd

    table = groups.whole()
    return pd.DataFrame(
        {
            name: table[name].to_numpy()
            if name in ("weight", "frequency")
            else table[name].to_pylist()
            for name in table.column_names
        }
    )
