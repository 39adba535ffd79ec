"""An update stores its extraction rows as changes to the base of the version before: the base
linked, only the rows of new units written, and every version read back as the rows it used."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphrag_mcp_server.handlers.indexing import row_changes
from graphrag_mcp_server.handlers.indexing.extracted_rows import (
    FILE,
    ExtractedRows,
    carried_rows,
    in_order,
    unit_rows,
)
from graphrag_mcp_server.handlers.indexing.row_changes import CHANGES, DROPPED

MODELS = "model-fingerprint"


def _extraction(unit: int) -> str:
    """A unit's extraction frames as JSON: two people and the relationship between them."""
    people = [f"P{unit}", f"Q{unit}"]
    data = [[person, "PERSON", f"{person} spoke in unit {unit}.", "x"] for person in people]
    return json.dumps(
        [
            {"columns": ["title", "type", "description", "source_id"], "data": data},
            {
                "columns": ["source", "target", "description", "source_id", "weight"],
                "data": [[*people, f"met in unit {unit}", "x", 1.0]],
            },
        ]
    )


def _update(folder: Path, version: str, previous: str | None, units: list[int]) -> pa.Table:
    """One run as kept_extraction.py makes it: the previous version's rows carried by key, the
    units it did not hold extracted, this version's rows stored. Returns the rows it stored."""
    (folder / version).mkdir()
    stored_rows = ExtractedRows(folder / previous if previous else None, folder / version, MODELS)
    keys = [f"unit-{unit}" for unit in units]
    kept, covered, _ = carried_rows(stored_rows.stored(), keys)
    new = unit_rows(
        [
            (position, key, _extraction(unit))
            for position, (key, unit) in enumerate(zip(keys, units, strict=True))
            if key not in covered
        ]
    )
    rows = in_order([kept, new])
    stored_rows.write(rows, b"{}")
    return rows


def _read_back(folder: Path, version: str, next_version: str) -> pa.Table:
    """The rows the next run reads from `version`."""
    table = ExtractedRows(folder / version, folder / next_version, MODELS).stored()
    assert table is not None
    return table


def _runs_by_key(table: pa.Table) -> dict[str, list[tuple]]:
    """Each unit key's rows (kind, row, keys, description, weight), once a unit."""
    runs: dict[str, list[tuple]] = {}
    for row in table.select(["key", "kind", "row", "first", "second", "description"]).to_pylist():
        values = tuple(row.values())[1:]
        if values not in runs.setdefault(row["key"], []):
            runs[row["key"]].append(values)
    return runs


def test_an_update_links_the_base_and_stores_only_the_units_it_adds(tmp_path: Path) -> None:
    """An update's rows are the base of the version before, linked, and a changes file holding
    the rows of its new units and the base rows of units gone; every version reads back as the
    rows it stored, and a unit gone and back is stored once."""
    _update(tmp_path, "v1", None, list(range(40)))
    assert not (tmp_path / "v1" / CHANGES).exists()
    base = (tmp_path / "v1" / FILE).stat().st_ino

    rows = _update(tmp_path, "v2", "v1", [*range(1, 40), 40])  # unit 0 gone, unit 40 new
    assert (tmp_path / "v2" / FILE).stat().st_ino == base
    changes = pq.read_table(tmp_path / "v2" / CHANGES)
    assert set(changes["key"].to_pylist()) == {"unit-40"}
    assert json.loads(changes.schema.metadata[DROPPED]) == [[0, 2], [80, 81]]
    assert _runs_by_key(_read_back(tmp_path, "v2", "v3")) == _runs_by_key(rows)

    rows = _update(tmp_path, "v3", "v2", [0, *range(2, 41)])  # unit 0 back, unit 1 gone
    assert (tmp_path / "v3" / FILE).stat().st_ino == base
    changes = pq.read_table(tmp_path / "v3" / CHANGES)
    assert set(changes["key"].to_pylist()) == {"unit-0", "unit-40"}
    read = _read_back(tmp_path, "v3", "v4")
    assert read.num_rows == rows.num_rows == 40 * 3
    assert _runs_by_key(read) == _runs_by_key(rows)


def test_changes_past_the_compact_share_write_a_whole_base(tmp_path: Path) -> None:
    """Changes holding more than COMPACT_SHARE of the base's rows are written as a new base, which
    the next update links in its turn."""
    _update(tmp_path, "v1", None, list(range(40)))
    rows = _update(tmp_path, "v2", "v1", list(range(11, 40)))  # 33 of 120 rows left out
    assert not (tmp_path / "v2" / CHANGES).exists()
    rebased = (tmp_path / "v2" / FILE).stat().st_ino
    assert rebased != (tmp_path / "v1" / FILE).stat().st_ino
    assert pq.read_table(tmp_path / "v2" / FILE).num_rows == rows.num_rows == 29 * 3
    _update(tmp_path, "v3", "v2", [*range(11, 40), 50])
    assert (tmp_path / "v3" / FILE).stat().st_ino == rebased


def test_a_base_of_many_runs_is_filtered_not_sliced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held base rows in more runs than MAX_SLICES are read as one filtered table, the same rows."""
    _update(tmp_path, "v1", None, list(range(40)))
    rows = _update(tmp_path, "v2", "v1", [unit for unit in range(40) if unit % 5])
    assert (tmp_path / "v2" / CHANGES).exists()
    sliced = _read_back(tmp_path, "v2", "v3")
    monkeypatch.setattr(row_changes, "MAX_SLICES", 2)
    filtered = _read_back(tmp_path, "v2", "v3")
    assert filtered.equals(sliced)
    assert filtered.column("key").num_chunks == 1 < sliced.column("key").num_chunks
    assert _runs_by_key(filtered) == _runs_by_key(rows)


def test_changes_made_with_another_model_are_not_used(tmp_path: Path) -> None:
    """A version whose rows were made with another extraction model gives no rows to carry."""
    _update(tmp_path, "v1", None, list(range(40)))
    _update(tmp_path, "v2", "v1", [*range(40), 40])
    other = ExtractedRows(tmp_path / "v2", tmp_path / "v3", "another-model")
    assert other.stored() is None
