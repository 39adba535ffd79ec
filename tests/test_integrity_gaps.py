"""A version's table gaps (integrity.py): a document with text but no text unit is named, one
with blank text is not, and the texts are read only when some document has no text unit."""

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest

from graphrag_mcp_server.handlers import integrity

NO_VECTORS: Any = SimpleNamespace(vector_store=SimpleNamespace(type="none", db_uri=None))


def _version(folder: Path, documents: list[tuple[str, str, str]], chunked: list[str]) -> Path:
    """A version folder: documents (id, title, text), a text unit of each id in `chunked`, one
    community with its report."""
    ids, titles, texts = (list(column) for column in zip(*documents, strict=True))
    pd.DataFrame({"id": ids, "title": titles, "text": texts}).to_parquet(
        folder / "documents.parquet"
    )
    units = {"id": [f"u{owner}" for owner in chunked], "document_id": chunked}
    pd.DataFrame(units).to_parquet(folder / "text_units.parquet")
    pd.DataFrame({"community": [0]}).to_parquet(folder / "communities.parquet")
    pd.DataFrame({"community": [0], "id": ["r0"]}).to_parquet(folder / "community_reports.parquet")
    return folder


def _columns_read(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """The (file, columns) of every parquet read from now on."""
    read: list[tuple[str, list[str]]] = []
    every = pd.read_parquet

    def counted(path: Any, columns: list[str], **options: Any) -> pd.DataFrame:
        read.append((Path(path).name, list(columns)))
        return every(path, columns=columns, **options)

    monkeypatch.setattr(pd, "read_parquet", counted)
    return read


def test_a_document_with_text_and_no_text_unit_is_a_gap_a_blank_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = [("a", "a.txt", "Some text."), ("b", "b.txt", "  \n"), ("c", "c.txt", "More.")]
    version = _version(tmp_path, documents, ["a"])
    read = _columns_read(monkeypatch)
    gaps = integrity.version_gaps(NO_VECTORS, version)
    assert [(gap.what, gap.missing, gap.total, gap.which) for gap in gaps] == [
        ("documents with text have no text unit", 1, 2, ["c.txt"])
    ]
    assert ("documents.parquet", ["id", "title", "text"]) in read


def test_texts_are_not_read_when_every_document_has_a_text_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    version = _version(
        tmp_path, [("a", "a.txt", "Some text."), ("b", "b.txt", "More.")], ["a", "b"]
    )
    read = _columns_read(monkeypatch)
    assert integrity.version_gaps(NO_VECTORS, version) == []
    assert [columns for name, columns in read if name == "documents.parquet"] == [["id", "title"]]
