"""vector_delta without an index build: a real LanceDB table in a previous version, graphrag's
LanceDB store in the new one, and the delta between them."""

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from graphrag_mcp_server.handlers.indexing import vector_delta, vector_rows
from graphrag_mcp_server.handlers.indexing.memos import input_hash

if TYPE_CHECKING:
    import pyarrow as pa

TABLE = "entity_description"
TEXTS = {"a": "alpha", "b": "beta", "c": "gamma"}


def store(db: Path) -> "object":
    """graphrag's LanceDB vector store for TABLE in `db` (4-wide vectors)."""
    from graphrag_vectors.lancedb import LanceDBVectorStore

    return LanceDBVectorStore(db_uri=str(db), index_name=TABLE, vector_size=4)


def previous_db(folder: Path) -> Path:
    """A previous version's LanceDB folder whose table holds a, b, c (vector: the row's
    position)."""
    from graphrag_vectors.vector_store import VectorStoreDocument

    previous = store(folder)
    previous.connect()
    previous.create_index()
    previous.load_documents(
        [
            VectorStoreDocument(id=identity, vector=[float(n), 0.0, 0.0, 1.0])
            for n, identity in enumerate(TEXTS)
        ]
    )
    return folder


def held(db: Path) -> dict[str, list[float]]:
    """id -> vector of TABLE in `db`, read back through LanceDB."""
    import lancedb

    rows = lancedb.connect(str(db)).open_table(TABLE).to_arrow().to_pylist()
    return {row["id"]: list(row["vector"]) for row in rows}


def rows_of(texts: dict[str, str]) -> "pa.Table":
    """Rows (id -> text) as vector_rows.embedded_rows gives them."""
    import pyarrow as pa

    return pa.table(
        {
            "id": pa.array(list(texts), pa.large_string()),
            "text": pa.array(list(texts.values()), pa.large_string()),
        }
    )


def delta(previous: Path, recorded: dict[str, str], now: dict[str, str], target: Path) -> object:
    """_copy_of_previous for rows `now` (id -> text) against the previous rows `recorded` (id ->
    text)."""
    writes = vector_delta.VectorWrites(
        previous, {TABLE: vector_rows.digests(rows_of(recorded), None, None)}
    )
    writes.now[TABLE] = vector_rows.digests(rows_of(now), None, None)
    return vector_delta._copy_of_previous(writes, TABLE, rows_of(now), store(target))


def test_delta_keeps_unchanged_rows_and_deletes_stale_ones(tmp_path: Path) -> None:
    previous = previous_db(tmp_path / "v1" / "lancedb")
    before = held(previous)
    now = {"a": "alpha", "b": "beta, edited", "d": "delta"}  # a kept, b changed, c gone, d new
    found = delta(previous, TEXTS, now, tmp_path / "v2" / "lancedb")
    assert found is not None
    changed, stale = found
    assert changed["id"].to_pylist() == ["b", "d"]
    assert stale == ["b", "c"]
    assert held(tmp_path / "v2" / "lancedb") == {
        "a": before["a"]
    }  # the unchanged row, vector untouched
    assert held(previous) == before  # the previous version's table as it was


def test_table_not_holding_its_recorded_ids_is_written_in_full(tmp_path: Path) -> None:
    previous = previous_db(tmp_path / "v1" / "lancedb")
    recorded = {**TEXTS, "x": "a row the table lost"}
    target = tmp_path / "v2" / "lancedb"
    assert delta(previous, recorded, TEXTS, target) is None
    assert not (target / f"{TABLE}.lance").exists()  # graphrag's full write starts from nothing


def test_store_shared_by_the_versions_is_written_in_full(tmp_path: Path) -> None:
    previous = previous_db(tmp_path / "lancedb")
    assert delta(previous, TEXTS, TEXTS, previous) is None
    assert set(held(previous)) == set(TEXTS)


@pytest.mark.parametrize(("models", "rows"), [("m1", 3), ("m2", 0)])
def test_recorded_rows_count_only_under_the_same_models(
    tmp_path: Path, models: str, rows: int
) -> None:
    recorded = {TABLE: vector_rows.digests(rows_of(TEXTS), None, None)}
    vector_rows.write(recorded, tmp_path / vector_rows.ROWS, "m1")
    held = vector_rows.read(tmp_path, models)
    assert (held[TABLE].to_pydict() if rows else held) == (
        {"id": list(TEXTS), "text": [input_hash(text) for text in TEXTS.values()]} if rows else {}
    )


@pytest.mark.parametrize("name", ["text_unit_text", "entity_description", "community_full_content"])
def test_rows_are_read_by_column_as_graphrag_reads_them(tmp_path: Path, name: str) -> None:
    """embedded_rows gives each row's id and embedded text as graphrag's step reads them (whole
    rows through the table and its row transformer), nulls included."""
    import asyncio

    import pandas as pd
    from graphrag.index.workflows.generate_text_embeddings import EMBEDDING_FIELDS
    from graphrag_storage.file_storage import FileStorage
    from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider

    from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

    field = EMBEDDING_FIELDS[name]
    frame = pd.DataFrame(
        {
            "id": ["r1", "r2", "r3", "r4"],
            "title": ["ALPHA", "BETA", None, ""],
            "description": ["first", None, "third", ""],
            "text": ["one", "two", None, ""],
            "full_content": ["# A", "# B", None, ""],
            "text_unit_ids": [["u1"], ["u1", "u2"], [], []],
        }
    )
    storage = FileStorage(base_dir=str(tmp_path))
    embed = field.embed_column

    async def whole_and_by_column() -> tuple[list[dict], list[list[dict]]]:
        await ParquetTableProvider(storage=storage).write_dataframe(field.table_name, frame)
        table = ParquetTableProvider(storage=storage).open(
            field.table_name, truncate=False, transformer=field.row_transform
        )
        async with table:
            whole = [{"id": row["id"], embed: row.get(embed) or ""} async for row in table]
        by_column = [
            await vector_rows.embedded_rows(provider(storage=storage), field)
            for provider in (ParquetTableProvider, RecordParquetTableProvider)
        ]
        return whole, [*by_column, vector_rows.previous_rows(tmp_path, field)]

    whole, by_column = asyncio.run(whole_and_by_column())
    assert len(whole) == 4
    for rows in by_column:
        assert vector_rows.as_dicts(rows, "id", embed) == whole


def test_only_rows_whose_text_changed_are_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row whose text equals the previous version's carries its recorded digest: of 1,000 rows,
    one edited and one new, two are hashed, and every digest is the one hashing all would give."""
    texts = {f"id{n}": f"text {n}" for n in range(1000)}
    previous = rows_of(texts)
    now = rows_of({**texts, "id7": "text 7, edited", "new": "a new text"})
    everything = vector_rows.digests(now, None, None)
    recorded = vector_rows.digests(previous, None, None)
    hashed: list[object] = []

    def counted(*parts: object) -> str:
        hashed.append(parts)
        return input_hash(*parts)

    monkeypatch.setattr(vector_rows, "input_hash", counted)
    found = vector_rows.digests(now, previous, recorded)
    assert hashed == [("text 7, edited",), ("a new text",)]
    assert found.equals(everything)


def test_a_previous_table_without_rows_carries_no_digest() -> None:
    """Rows compared with a previous version whose table has no rows are all hashed (the previous
    texts are taken as slices: none to slice)."""
    empty = rows_of({})
    now = rows_of({"a": "alpha", "b": "beta"})
    assert vector_rows.digests(now, empty, empty).equals(vector_rows.digests(now, None, None))
