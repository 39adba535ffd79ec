"""A version's stored results read back (memo_table.py, stored_results.py): the results taken are
found and converted together, and only they are; memo keys are the sha256 of canonical JSON."""

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from graphrag_mcp_server.handlers.indexing import stored_results
from graphrag_mcp_server.handlers.indexing.memo_table import _schema
from graphrag_mcp_server.handlers.indexing.memos import Memo, input_hash
from graphrag_mcp_server.handlers.indexing.stored_results import StoredResults


def _stored(rows: list[tuple[str, Any, str | None]]) -> pa.Table:
    """A step's stored rows: (key, JSON result, name)."""
    return pa.table(
        {
            "step": ["summary"] * len(rows),
            "key": [key for key, _, _ in rows],
            "result": [json.dumps(result) for _, result, _ in rows],
            "vector": [None] * len(rows),
            "models": ["m"] * len(rows),
            "identity": [name for _, _, name in rows],
            "size": [None] * len(rows),
        },
        schema=_schema(),
    )


BASE = [(f"k{number}", {"summary": number}, f"n{number}") for number in range(100)]
CHANGES = [("k1", {"summary": 1}, "renamed"), ("k100", {"summary": 100}, "n1")]
"""A base of 100 results, and changes that store k1 again under a new name and add k100 under
k1's old name (the changes drop the base's k1 and k2)."""


def _results() -> StoredResults:
    table = pa.concat_tables([_stored(BASE), _stored(CHANGES)])
    dropped = pa.array(["k1", "k2"], pa.large_string())
    return StoredResults(table, len(BASE), dropped, None)


def test_taken_results_are_found_and_decoded_together_and_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    results = _results()
    converted: list[int] = []
    every = stored_results._converted

    def counted(forms: Any) -> list[Any]:
        converted.append(len(forms))
        return every(forms)

    monkeypatch.setattr(stored_results, "_converted", counted)
    memo = Memo(previous=results, decode=json.loads)
    taken = memo.take_many(["k5", "k1", "k2", "k100", "k5", "missing"])
    assert taken == [{"summary": 5}, {"summary": 1}, None, {"summary": 100}, {"summary": 5}, None]
    assert converted == []  # JSON texts joined and decoded by one call, no row converted alone
    assert memo.taken == {"k5", "k1", "k100"} and memo.reused == 3
    assert list(results.carried_rows(["k7"])) == [5, 7, 100, 101]  # k5, k7, k1 and k100 again
    decoded: list[str] = []
    assert Memo(previous=_results(), decode=lambda text: decoded.append(text) or text).take_many(
        ["k3", "k4"]
    ) == [json.dumps({"summary": 3}), json.dumps({"summary": 4})]
    assert len(decoded) == 2  # the results taken, not the step's 102 rows


def test_a_name_finds_the_key_its_last_row_stores() -> None:
    results = _results()
    assert results.keys_of(["n1", "renamed", "n7", "unknown"]) == ["k100", "k1", "k7", None]
    assert "k2" not in results and "k1" in results and len(results) == 100
    assert results["k1"] == json.dumps({"summary": 1})


def test_no_stored_names_or_none_wanted_keep_nothing() -> None:
    empty = StoredResults(_stored([]), 0, None, None)  # another model's results: none of these
    assert Memo(previous=empty).keep_named(pa.array(["n1"], pa.large_string())).tolist() == [False]
    assert Memo(previous=empty).keep_named(pa.array([], pa.large_string())).tolist() == []
    none_wanted = Memo(previous=_results()).keep_named(pa.array([], pa.large_string()))
    assert none_wanted.tolist() == []


def test_results_kept_by_name_are_their_names_last_live_rows_and_are_stored_again() -> None:
    results = _results()
    memo = Memo(previous=results, decode=json.loads)
    names = pa.array(["n1", "renamed", "n2", "n7", "unknown", None], pa.large_string())
    assert memo.keep_named(names).tolist() == [True, True, False, True, False, False]
    assert memo.kept_named == 3 and memo.reused == 3 and not memo.kept and not memo.used
    assert list(results.carried_rows([])) == [7, 100, 101]  # k7, then k1 and k100 from changes
    by_key = Memo(previous=dict(zip(["k1", "k7"], "ab", strict=True)))
    by_key.previous_keys = lambda names: ["k1", None, "k7"]  # type: ignore[method-assign]
    assert by_key.keep_named(pa.array(["x", "y", "z"])).tolist() == [True, False, True]
    assert by_key.kept == {"k1", "k7"} and by_key.kept_named == 0


def test_only_the_rows_of_keys_this_run_named_are_compared_to_their_stored_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import numpy as np
    import pyarrow.compute as pc

    from graphrag_mcp_server.handlers.indexing import memo_table

    table = _stored(BASE)
    memo = Memo(identities={"k3": "n3", "k5": "other", "k200": "n200"})
    compared: list[int] = []
    equal = pc.equal
    monkeypatch.setattr(
        pc, "equal", lambda left, right: compared.append(len(left)) or equal(left, right)
    )
    same = memo_table._same_names(table, np.arange(len(BASE)), memo)
    assert np.flatnonzero(~same).tolist() == [5]  # k5 is named anew; k3 keeps its name
    assert compared == [2]  # k3's and k5's rows, not the step's 100


def test_a_base_with_sizes_reads_its_results_only_by_the_row_groups_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base table stored with each row's size is read as keys, names and sizes; a result is
    read with its row group when taken, and a row stored again keeps its result and size."""
    import numpy as np
    import pyarrow.parquet as pq

    from graphrag_mcp_server.handlers.indexing import memo_table
    from graphrag_mcp_server.handlers.indexing.memos import Step

    base = memo_table._sized(_stored(BASE))
    with pq.ParquetWriter(tmp_path / memo_table.TABLE, base.schema) as writer:
        for start in range(0, len(BASE), 10):  # ten row groups of ten rows
            writer.write_table(base.slice(start, 10), row_group_size=10)
    groups: list[list[int]] = []
    read = pq.ParquetFile.read_row_groups
    monkeypatch.setattr(
        pq.ParquetFile,
        "read_row_groups",
        lambda file, wanted, **kwargs: groups.append(list(wanted)) or read(file, wanted, **kwargs),
    )
    stored = memo_table.read(tmp_path, {Step.SUMMARY: "m"})
    assert stored is not None and groups == []  # keys and names read, no result
    assert stored.base_sizes.tolist() == base["size"].to_pylist()
    results = stored.results[Step.SUMMARY]
    assert set(results.table.column_names) == set(memo_table.KEY_COLUMNS)
    memo = Memo(previous=results, decode=json.loads)
    assert memo.take_many(["k35", "missing", "k3"]) == [{"summary": 35}, None, {"summary": 3}]
    assert groups == [[0, 3]]  # the groups of k3 and k35 only
    assert memo.peek_many(["k55", "k3"]) == [{"summary": 55}, {"summary": 3}]
    assert groups[1:] == [[5]]  # k55's group (k3 was taken already)
    assert list(results.carried_rows([])) == [3, 35]  # a result peeked at is not stored again
    again = results.rows_stored(np.array([35, 3, 99]))
    expected = base.take([35, 3, 99])
    for name in ("key", "result", "size", "identity"):
        assert again[name].to_pylist() == expected[name].to_pylist()


def test_a_base_reads_its_keys_from_the_file_beside_it_when_that_file_is_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keys file written beside a base (memo_keys.py) is read instead of the base's own key
    columns, with the same keys; one left from another base (another size) is not."""
    import pyarrow.parquet as pq

    from graphrag_mcp_server.handlers.indexing import memo_keys, memo_table
    from graphrag_mcp_server.handlers.indexing.memos import Step

    base = memo_table._sized(_stored(BASE))
    path = tmp_path / memo_table.TABLE
    with pq.ParquetWriter(path, base.schema) as writer:
        for start in range(0, len(BASE), 10):
            writer.write_table(base.slice(start, 10), row_group_size=10)
    expected = memo_table.read(tmp_path, {Step.SUMMARY: "m"})
    memo_keys.write(path, memo_table.KEY_COLUMNS)
    assert pq.ParquetFile(tmp_path / memo_keys.KEYS).num_row_groups == 1
    columns_read: list[list[str] | None] = []
    read = pq.ParquetFile.read
    monkeypatch.setattr(
        pq.ParquetFile,
        "read",
        lambda file, columns=None, **kwargs: (
            columns_read.append(columns) or read(file, columns, **kwargs)
        ),
    )
    stored = memo_table.read(tmp_path, {Step.SUMMARY: "m"})
    assert stored is not None and expected is not None and columns_read == []
    assert stored.results[Step.SUMMARY].table.equals(expected.results[Step.SUMMARY].table)
    assert stored.base_sizes.tolist() == expected.base_sizes.tolist()
    assert memo_keys.read(path, len(BASE), ["step", "key"]) is None  # other columns: not taken
    path.unlink()  # another base in its place: the keys file beside it is not this base's
    pq.write_table(memo_table._sized(_stored(BASE[:50] * 2)), path)
    stored = memo_table.read(tmp_path, {Step.SUMMARY: "m"})
    assert columns_read == [memo_table.KEY_COLUMNS] and stored is not None
    assert stored.results[Step.SUMMARY].table["key"].to_pylist()[50:52] == ["k0", "k1"]


def test_a_base_stored_before_sizes_is_read_whole(tmp_path: Path) -> None:
    """A base table without sizes (stored before they were) is read with its results, its sizes
    computed from them; so is one with a row of no size."""
    import pyarrow.parquet as pq

    from graphrag_mcp_server.handlers.indexing import memo_table
    from graphrag_mcp_server.handlers.indexing.memos import Step

    pq.write_table(_stored(BASE).drop_columns(["size"]), tmp_path / memo_table.TABLE)
    stored = memo_table.read(tmp_path, {Step.SUMMARY: "m"})
    assert stored is not None
    assert stored.base_sizes.tolist() == memo_table._sized(_stored(BASE))["size"].to_pylist()
    results = stored.results[Step.SUMMARY]
    assert "result" in results.table.column_names
    assert Memo(previous=results, decode=json.loads).take_many(["k7"]) == [{"summary": 7}]
    pq.write_table(_stored(BASE), tmp_path / memo_table.TABLE)  # a size column of nulls
    stored = memo_table.read(tmp_path, {Step.SUMMARY: "m"})
    assert stored is not None and "result" in stored.results[Step.SUMMARY].table.column_names


@pytest.mark.parametrize(
    "parts",
    [
        (),
        ('plain text\nwith a "quote" and a tab\t',),
        ("Café Lumière", {"size": 1200, "encoding": "o200k"}, None),
        ("text", ["organization", "person"], "digest", 0, 1.5, True),
        ({"b": ["ü", 2], "a": None},),
        ("control \x01 character",),
    ],
)
def test_a_memo_key_is_the_sha256_of_canonical_json(parts: tuple[Any, ...]) -> None:
    canonical = json.dumps(parts, default=str, sort_keys=True, ensure_ascii=False)
    assert input_hash(*parts) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
