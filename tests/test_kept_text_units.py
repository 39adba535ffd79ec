"""The workflow create_base_text_units_kept writes the rows graphrag's create_base_text_units
writes, chunking only the documents whose chunker input the previous version did not chunk."""

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from graphrag_mcp_server.config.index_root import load_index_config
from graphrag_mcp_server.handlers.indexing import kept_text_units
from graphrag_mcp_server.handlers.indexing.carry_over import fingerprints, work_carried_over
from graphrag_mcp_server.handlers.indexing.memos import CARRIED, CarriedOver, Step
from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion
from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

SMALL_CHUNKS = {"size": 60, "overlap": 10, "prepend_metadata": ["title"]}
"""Chunking that cuts each fixtures document into several units, each headed by its title."""


@pytest.fixture
def documents(built_index: tuple[Path, dict]) -> pd.DataFrame:
    """The fixtures index's documents, as graphrag's pipeline hands them to chunking."""
    stored = pd.read_parquet(built_index[0] / "output" / "documents.parquet")
    return stored[["id", "title", "text", "creation_date", "raw_data"]]


@pytest.fixture
def config(built_index: tuple[Path, dict]) -> Any:
    return load_index_config(built_index[0], with_models=False)


def _chunked(config: Any, **settings: Any) -> Any:
    return config.model_copy(
        update={"chunking": config.chunking.model_copy(update=settings)}, deep=True
    )


async def _text_units(
    workflow: Any,
    config: Any,
    documents: pd.DataFrame,
    carried: CarriedOver | None = None,
    ids: kept_text_units.UnitIds | None = None,
) -> pd.DataFrame:
    """The text_units table `workflow` writes from `documents`, in a pipeline context of its own
    (with the run's memos and kept unit ids in its state, as kept.py hands them)."""
    from graphrag.index.run.utils import create_run_context
    from graphrag_storage.memory_storage import MemoryStorage

    storage = MemoryStorage()
    tables = RecordParquetTableProvider(storage=storage)
    await tables.write_dataframe("documents", documents)
    handed = {CARRIED: carried, kept_text_units.STATE: ids}
    state = {} if carried is None else {"additional_context": handed}
    context = create_run_context(output_storage=storage, output_table_provider=tables, state=state)
    await workflow(config, context)
    return await tables.read_dataframe("text_units")


async def _graphrags(config: Any, documents: pd.DataFrame) -> pd.DataFrame:
    from graphrag.index.workflows import create_base_text_units

    return await _text_units(create_base_text_units.run_workflow, config, documents)


async def _version(
    path: Path, previous: Path | None, config: Any, documents: pd.DataFrame
) -> tuple[pd.DataFrame, int, int]:
    """A version's text units by the kept workflow, its chunks memo stored in `path` and taken
    from `previous`: (rows, documents chunked, documents carried)."""
    path.mkdir()
    kept = PreviousVersion(previous) if previous is not None else None
    with work_carried_over(kept, path, fingerprints(config)) as carried:
        rows = await _text_units(kept_text_units.run_workflow, config, documents, carried)
    return rows, carried[Step.CHUNKS].computed, carried[Step.CHUNKS].reused


@pytest.mark.parametrize("settings", [{}, SMALL_CHUNKS], ids=["configured", "small-titled"])
async def test_rows_equal_graphrags_fresh_and_carried(
    config: Any, documents: pd.DataFrame, tmp_path: Path, settings: dict
) -> None:
    """Fresh (every document chunked) and carried (none chunked): graphrag's rows, ids, columns,
    dtypes and order."""
    config = _chunked(config, **settings)
    expected = await _graphrags(config, documents)
    assert len(expected) >= len(documents) > 5
    if settings:  # several units a document, the title prepended to each
        assert len(expected) > 2 * len(documents)
        assert expected["text"].str.startswith("title: ").all()

    fresh, chunked, carried = await _version(tmp_path / "v1", None, config, documents)
    again, chunked_again, carried_again = await _version(
        tmp_path / "v2", tmp_path / "v1", config, documents
    )

    assert (chunked, carried) == (len(documents), 0)
    assert (chunked_again, carried_again) == (0, len(documents))
    pd.testing.assert_frame_equal(fresh, expected)
    pd.testing.assert_frame_equal(again, expected)


async def test_changed_text_or_settings_chunk_again(
    config: Any, documents: pd.DataFrame, tmp_path: Path
) -> None:
    """An edited document is chunked again, the others carried; a changed chunk size or prepended
    metadata chunks every document again. The rows stay graphrag's."""
    await _version(tmp_path / "v1", None, config, documents)
    edited = documents.copy()
    edited.loc[3, "text"] = edited.loc[3, "text"] + "\n\nA closing line added in an edit."
    rows, chunked, carried = await _version(tmp_path / "v2", tmp_path / "v1", config, edited)
    assert (chunked, carried) == (1, len(documents) - 1)
    pd.testing.assert_frame_equal(rows, await _graphrags(config, edited))

    smaller = _chunked(config, size=300)
    rows, chunked, carried = await _version(tmp_path / "v3", tmp_path / "v2", smaller, edited)
    assert (chunked, carried) == (len(documents), 0)
    pd.testing.assert_frame_equal(rows, await _graphrags(smaller, edited))

    titled = _chunked(smaller, prepend_metadata=["title"])
    renamed = edited.assign(title=edited["title"].where(edited.index != 5, "renamed.md"))
    await _version(tmp_path / "v4", tmp_path / "v3", titled, edited)
    rows, chunked, carried = await _version(tmp_path / "v5", tmp_path / "v4", titled, renamed)
    assert (chunked, carried) == (1, len(documents) - 1)  # its title is in its units
    pd.testing.assert_frame_equal(rows, await _graphrags(titled, renamed))


async def test_without_memos_it_is_graphrags_workflow(config: Any, documents: pd.DataFrame) -> None:
    """A run that hands no memos (graphrag's own `index`) gets graphrag's rows."""
    rows = await _text_units(kept_text_units.run_workflow, config, documents)
    pd.testing.assert_frame_equal(rows, await _graphrags(config, documents))


async def test_units_keep_their_ids_across_an_update(
    config: Any, documents: pd.DataFrame, tmp_path: Path
) -> None:
    """An update keeps each unit's id by its document's title and its position: an edited
    document's units keep theirs (graphrag's id is a hash of the text, so every entity naming
    one changed), a new document's get graphrag's hash, and text moved to a new title, whose
    hash a kept unit holds, gets an id of its own."""
    from graphrag.index.utils.hashing import gen_sha512_hash

    config = _chunked(config, size=60, overlap=10)  # several units a document, no title in them
    before = tmp_path / "before"
    before.mkdir()
    first = await _graphrags(config, documents)
    first.to_parquet(before / "text_units.parquet")
    documents.to_parquet(before / "documents.parquet")
    ids = kept_text_units.unit_ids_kept(PreviousVersion(before))
    assert ids is not None and len(ids.kept) == len(first)

    edited = documents.copy()
    edited.loc[3, "text"] = "An opening line added in an edit.\n\n" + edited.loc[3, "text"]
    moved = documents.iloc[[3]].assign(title="moved.md", id="moved")
    new = documents.iloc[[4]].assign(title="new.md", id="new", text="A note of its own.")
    now = pd.concat([edited, moved, new], ignore_index=True)
    (tmp_path / "v").mkdir()
    with work_carried_over(None, tmp_path / "v", fingerprints(config)) as carried:
        rows = await _text_units(kept_text_units.run_workflow, config, now, carried, ids)

    assert rows["id"].is_unique
    old_ids = first.groupby("document_id")["id"].apply(list)
    new_ids = rows.groupby("document_id")["id"].apply(list)
    for document in documents["id"]:
        kept = min(len(old_ids[document]), len(new_ids[document]))
        assert new_ids[document][:kept] == old_ids[document][:kept], document
    edited_texts = rows[rows["document_id"] == documents.loc[3, "id"]]["text"]
    assert not edited_texts.isin(first["text"]).all()  # the edit changed a unit's text
    assert new_ids["new"] == [
        gen_sha512_hash({"text": text}, ["text"])
        for text in rows[rows["document_id"] == "new"]["text"]
    ]
    moved_texts = rows[rows["document_id"] == "moved"]["text"]
    assert moved_texts.isin(first["text"]).all()  # the old text, whose hashes are kept ids
    assert not set(new_ids["moved"]) & set(first["id"])


async def _update(
    path: Path, previous: Path, config: Any, documents: pd.DataFrame, ids: Any
) -> tuple[pd.DataFrame, Any, int]:
    """An update's text units (ids kept by `ids`) and chunks memo, and how many stored chunks it
    decoded."""
    path.mkdir()
    decoded = 0

    def counted(stored: str) -> Any:
        nonlocal decoded
        decoded += 1
        return json.loads(stored)

    with work_carried_over(PreviousVersion(previous), path, fingerprints(config)) as carried:
        carried[Step.CHUNKS].decode = counted
        rows = await _text_units(kept_text_units.run_workflow, config, documents, carried, ids)
    return rows, carried[Step.CHUNKS], decoded


async def test_an_update_carries_unchanged_documents_units_undecoded(
    config: Any, documents: pd.DataFrame, tmp_path: Path
) -> None:
    """An update takes the units of unchanged documents from the previous version's table, without
    decoding their chunks or hashing their texts: the rows, ids and stored memos those decoded
    would give. An edited and a new document are chunked, a renamed one's chunks decoded (its
    units' ids follow titles); a removed one's memo is dropped."""
    from graphrag.index.utils.hashing import gen_sha512_hash

    config = _chunked(config, size=60, overlap=10)  # several units a document
    first = tmp_path / "v1"
    rows, _, _ = await _version(first, None, config, documents)
    rows.to_parquet(first / "text_units.parquet")
    documents.to_parquet(first / "documents.parquet")
    text = documents.loc[3, "text"] + "\n\nA closing line added in an edit."
    edited = documents.copy()
    edited.loc[3, ["id", "text"]] = [gen_sha512_hash({"text": text}, ["text"]), text]
    edited.loc[6, "title"] = "renamed.md"
    new = documents.iloc[[4]].assign(title="new.md", id="n", text="A note of its own.")
    now = pd.concat([edited.drop(index=5), new], ignore_index=True)
    now.loc[len(now) - 1, "id"] = gen_sha512_hash({"text": "A note of its own."}, ["text"])

    kept = kept_text_units.unit_ids_kept(PreviousVersion(first))
    assert kept is not None
    by_memos = kept_text_units.UnitIds(kept.units, kept.documents)  # no folder: chunks decoded
    expected, _, decoded_all = await _update(tmp_path / "a", first, config, now, by_memos)
    carried, memo, decoded = await _update(tmp_path / "b", first, config, now, kept)

    assert decoded_all == len(documents) - 2 and decoded == 1
    assert (memo.computed, memo.reused) == (2, len(documents) - 2)
    pd.testing.assert_frame_equal(carried, expected)
    _, again, _ = await _update(tmp_path / "c", tmp_path / "b", config, now, None)
    assert (again.computed, again.reused, len(again.previous)) == (0, len(now), len(now))
    carried.to_parquet(tmp_path / "b" / "text_units.parquet")
    now.to_parquet(tmp_path / "b" / "documents.parquet")
    ids = kept_text_units.unit_ids_kept(PreviousVersion(tmp_path / "b"))
    rows, all_kept, decoded = await _update(tmp_path / "d", tmp_path / "b", config, now, ids)
    assert (all_kept.computed, all_kept.reused, decoded) == (0, len(now), 0)
    pd.testing.assert_frame_equal(rows, carried)
