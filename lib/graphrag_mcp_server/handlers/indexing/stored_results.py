"""One step's results as a version stored them (memo_table.py): converted to Python values only
when taken (by Arrow, those taken together at once), and stored again by their rows, which the
step remembers as it hands them out (no key looked up again to store them)."""

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memo_forms import FORM_COLUMNS
from graphrag_mcp_server.handlers.indexing.memos import decode_all

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


class StoredResults(Mapping[str, Any]):
    """One step's results as the previous version stored them: key -> its row of the stored table.
    Results are converted to Python values only when taken, those taken together at once
    (`taken`: one Arrow take, JSON texts decoded as one array); a row carried over is written again
    from the table itself (memo_table.write), so an update does not turn each of hundreds of
    thousands of stored results into a Python object and back to store them. Its keys are indexed
    once, when first looked up (a hash join by Arrow hashed the whole step again on each call: 50
    ms for one key among 214,000)."""

    def __init__(
        self,
        table: "pa.Table",
        base_rows: int | None = None,
        dropped: "pa.Array | None" = None,
        base_positions: "np.ndarray | None" = None,
        forms: "Callable[[np.ndarray], pa.Table] | None" = None,
    ) -> None:
        """`table`: the step's rows, the base table's first (`base_rows` of them, at
        `base_positions` of the base; None: no base, as in tests), those of the changes after;
        `dropped`: keys of base rows the changes drop (left in the table, not results); `forms`:
        the results (`result`, `vector`) of rows of `table`, where `table` holds only their keys
        and names (memo_forms.py; None: `table` holds them)."""
        self.table, self.base_rows, self.base_positions = table, base_rows, base_positions
        self._forms_of = forms or (lambda rows: _taken_rows(table.select(FORM_COLUMNS), rows))
        self._dropped = dropped
        self._rows: dict[str, int] | None = None
        self._keys_by_identity: dict[str, str] | None = None
        self._forms: pa.Array | None = None
        self._results: list[Any] | None = None
        self._taken: np.ndarray | None = None

    def rows_of(self, keys: list[str]) -> "np.ndarray":
        """The row of each key's stored result, -1 for a key not stored."""
        import numpy as np

        found = map(self._key_rows().get, keys, repeat(-1))
        return np.fromiter(found, dtype=np.int64, count=len(keys))

    def taken(
        self, keys: list[str], decode: Callable[[Any], Any], taking: bool = True
    ) -> tuple[list[str], list[Any]]:
        """The keys of `keys` stored here, and their results decoded by `decode`, found, read and
        converted at once (JSON texts decoded as one array); `taking`: stored again."""
        import numpy as np
        import pyarrow as pa

        rows = self.rows_of(keys)
        stored = rows >= 0
        fetched = _one_form(self._forms_of(rows[stored]))
        at = np.cumsum(stored) - 1  # each stored row's place among those fetched
        forms = fetched.take(pa.array(np.maximum(at, 0), mask=~stored))
        found = forms.is_valid()
        hits = found.to_numpy(zero_copy_only=False)
        self._taken_mask()[rows[hits]] |= taking
        if forms.null_count:
            keys, forms = list(compress(keys, hits)), forms.filter(found)
        return keys, _decoded(forms, decode)

    def kept_by_name(self, identities: "pa.Array") -> "np.ndarray":
        """Store again, undecoded, the result each identity names (Memo.name) where one is stored
        (the last row of a name, as in keys_of); whether each was. The stored names and
        `identities` are hashed together once (`_last_rows`): a step's every kind is looked up in
        one call (kept_summaries.py), not a hash of the step's 214,000 names a kind."""
        import numpy as np

        rows = _last_rows(self.table["identity"], identities)
        live = _live_keys(self.table, self.base_rows or 0, self._dropped).is_valid()
        found: np.ndarray = rows >= 0
        found[found] = live.to_numpy(zero_copy_only=False)[rows[found]]
        self._taken_mask()[rows[found]] = True
        return found

    def kept_except(self, keys: list[str]) -> int:
        """Store again, undecoded, every result but those of `keys`; how many were not taken or
        kept already. Matched by Arrow: the keys of the kept results are never computed."""
        import pyarrow as pa
        import pyarrow.compute as pc

        live = _live_keys(self.table, self.base_rows or 0, self._dropped)
        others = pc.invert(pc.is_in(live, value_set=pa.array(keys, live.type)))
        kept = pc.and_(live.is_valid(), others).to_numpy(zero_copy_only=False)
        taken = self._taken_mask()
        added = int((kept & ~taken).sum())
        taken |= kept
        return added

    def kept_named_except(self, prefix: str, names: "pa.Array", most: int) -> int | None:
        """Store again, undecoded, every result whose name (Memo.name) starts with `prefix` and is
        none of `names`; how many that is. None, with nothing stored, when they are more than
        `most`: matched by Arrow, no name looked up one by one."""
        import pyarrow.compute as pc

        identity = self.table["identity"].combine_chunks()
        live = _live_keys(self.table, self.base_rows or 0, self._dropped).is_valid()
        named = pc.fill_null(pc.starts_with(identity, prefix), False)
        others = pc.invert(pc.is_in(identity, value_set=names.cast(identity.type)))
        kept = pc.and_(pc.and_(live, named), others).to_numpy(zero_copy_only=False)
        count = int(kept.sum())
        if count > most:
            return None
        self._taken_mask()[kept] = True
        return count

    def _taken_mask(self) -> "np.ndarray":
        """Whether each row is stored again (taken or kept), made when first marked."""
        import numpy as np

        if self._taken is None:
            self._taken = np.zeros(self.table.num_rows, dtype=bool)
        return self._taken

    def carried_rows(self, kept: "Iterable[str]") -> "np.ndarray":
        """The rows of the results taken (`taken`) or kept by name or row (`kept_by_name`,
        `kept_except`) and of the keys `kept`, in order."""
        import numpy as np

        carried = np.zeros(self.table.num_rows, dtype=bool)
        if self._taken is not None:
            carried |= self._taken
        carried[self.rows_of(list(kept))] = True
        return np.flatnonzero(carried)

    def rows_stored(self, rows: "np.ndarray") -> "pa.Table":
        """The stored rows at `rows` of the table, each with its result (FORM_COLUMNS)."""
        held = [name for name in FORM_COLUMNS if name in self.table.column_names]
        light = _taken_rows(self.table.drop_columns(held), rows)
        forms = self._forms_of(rows)
        return light.append_column("result", forms["result"]).append_column(
            "vector", forms["vector"]
        )

    def keys_of(self, identities: list[str]) -> list[str | None]:
        """The key of the stored result named by each identity (Memo.name), or None."""
        if self._keys_by_identity is None and identities:
            self._keys_by_identity = {
                identity: key
                for identity, key in zip(
                    self.table["identity"].to_pylist(), self.table["key"].to_pylist(), strict=True
                )
                if identity is not None
            }
        return list(map((self._keys_by_identity or {}).get, identities))

    def __getitem__(self, key: str) -> Any:
        row = self._key_rows()[key]
        if self._results is None:
            self._results = _converted(self._stored_forms())
        return self._results[row]

    def _key_rows(self) -> dict[str, int]:
        """key -> row, of the rows that are results (not dropped)."""
        if self._rows is None:
            keys = _live_keys(self.table, self.base_rows or 0, self._dropped).to_pylist()
            self._rows = {key: row for row, key in enumerate(keys) if key is not None}
        return self._rows

    def _stored_forms(self) -> "pa.Array":
        """The stored forms, as one array: the JSON texts, or the vectors of a step that stores
        vectors."""
        if self._forms is None:
            import numpy as np

            self._forms = _one_form(self._forms_of(np.arange(self.table.num_rows)))
        return self._forms

    def __contains__(self, key: object) -> bool:
        return key in self._key_rows()

    def __iter__(self) -> Iterator[str]:
        return iter(self._key_rows())

    def __len__(self) -> int:
        return len(self._key_rows())


def _one_form(forms: "pa.Table") -> "pa.Array":
    """The results of `forms` as one array: their JSON texts, or their vectors where the rows are
    a step's that stores vectors."""
    results = forms["result"]
    stored = results if results.null_count < len(results) else forms["vector"]
    return stored.combine_chunks()


def _taken_rows(table: "pa.Table", rows: "np.ndarray") -> "pa.Table":
    """`table`'s rows at `rows`, in their order."""
    import pyarrow as pa

    return table.take(pa.array(rows, pa.int64()))


def _live_keys(table: "pa.Table", base_rows: int, dropped: "pa.Array | None") -> "pa.Array":
    """The table's keys, null where a base row is dropped (`base_rows`: the base's rows first)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = table["key"].combine_chunks()
    if dropped is None or len(dropped) == 0 or base_rows == 0:
        return keys
    gone = np.zeros(len(keys), dtype=bool)
    gone[:base_rows] = pc.is_in(keys.slice(0, base_rows), value_set=dropped).to_numpy(
        zero_copy_only=False
    )
    return pc.if_else(pa.array(gone), pa.scalar(None, keys.type), keys)


def _last_rows(names: "pa.ChunkedArray", wanted: "pa.Array") -> "np.ndarray":
    """The last row of `names` holding each of `wanted`, -1 where none does (a null matches
    nothing). One dictionary encoding of both codes them alike, so the names are hashed once
    and never reversed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(wanted) == 0 or len(names) == 0:  # Arrow drops empty chunks: nothing to code
        return np.full(len(wanted), -1)
    both = pa.chunked_array([*names.chunks, wanted.cast(names.type)], names.type)
    encoded = pc.dictionary_encode(both).chunks  # one dictionary: the codes of all alike
    absent = len(encoded[-1].dictionary)  # a null's code
    codes = np.concatenate([pc.fill_null(chunk.indices, absent).to_numpy() for chunk in encoded])
    last = np.full(absent + 1, -1)
    np.maximum.at(last, codes[: len(names)], np.arange(len(names)))
    last[absent] = -1
    rows: np.ndarray = last[codes[len(names) :]]
    return rows


def _converted(forms: "pa.ChunkedArray | pa.Array") -> list[Any]:
    """Stored forms as Python values: JSON texts, or vectors as float32 arrays."""
    import pyarrow as pa

    if not pa.types.is_list(forms.type):
        texts: list[Any] = forms.to_pylist()
        return texts
    vectors = forms.to_numpy(zero_copy_only=False)
    return [None if vector is None else vector.astype("float32") for vector in vectors]


def _decoded(forms: "pa.Array", decode: Callable[[Any], Any]) -> list[Any]:
    """`decode` of each stored form (none null); JSON texts joined by Arrow into one array, decoded
    by one call."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if decode is not json.loads or pa.types.is_list(forms.type) or len(forms) == 0:
        return decode_all(decode, _converted(forms))
    one = pa.LargeListArray.from_arrays(pa.array([0, len(forms)], pa.int64()), forms)
    joined = pc.binary_join(one, pa.scalar(",", forms.type))[0].as_py()
    decoded: list[Any] = json.loads(f"[{joined}]")
    return decoded
