"""Which files of a data folder are documents, in graphrag's order (documents.select_documents):
the listing's own paths and stamps, without a path object a file, and without listing a folder
whose documents all lie at its top a second time."""

import os
from pathlib import Path

import pytest

from graphrag_mcp_server.config.index_root import INPUT_FILE_PATTERN
from graphrag_mcp_server.handlers.indexing import documents
from graphrag_mcp_server.handlers.indexing.document_stamps import stamp
from graphrag_mcp_server.handlers.indexing.documents import select_documents


def _rglob_order(data: Path, files: list[str]) -> list[str]:
    """`files` in the order graphrag's FileStorage.find lists them (`Path.rglob("**/*")`)."""
    listed = [path.relative_to(data).as_posix() for path in data.rglob("**/*")]
    return sorted(files, key=listed.index)


def test_a_nested_folder_is_selected_in_graphrags_order(tmp_path: Path) -> None:
    data, root = tmp_path / "data", tmp_path / "data" / "index"
    (data / "notes" / "old").mkdir(parents=True)
    (data / ".git").mkdir()
    for name in ("b.txt", "a.md", "notes/c.txt", "notes/old/d.txt", ".git/e.txt", ".f.txt"):
        (data / name).write_text(f"The text of {name}.", encoding="utf-8")
    (data / "image.png").write_bytes(b"\x89PNG")
    (root / "output").mkdir(parents=True)
    (root / "output" / "g.txt").write_text("The index's own file.", encoding="utf-8")
    (data / "outside.txt").symlink_to(tmp_path / "elsewhere.txt")
    (tmp_path / "elsewhere.txt").write_text("Outside the folder.", encoding="utf-8")
    (data / "alias.txt").symlink_to(data / "b.txt")
    selection = select_documents(data, root, INPUT_FILE_PATTERN)
    expected = ["a.md", "alias.txt", "b.txt", "notes/c.txt", "notes/old/d.txt"]
    assert selection.files == _rglob_order(data, expected)
    assert dict(selection.skipped) == {
        "hidden": 2,
        "index_root": 1,
        "link_outside": 1,
        "other_type": 1,
    }
    assert selection.stamps == {file: stamp((data / file).stat()) for file in expected}
    assert selection.bytes == sum((data / file).stat().st_size for file in expected)


def test_a_flat_folder_is_listed_once_in_graphrags_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    names = [f"{word}.txt" for word in ("harbour", "ledger", "kiln", "nets", "gull", "pier")]
    for name in names:
        (data / name).write_text(f"The {name} document.", encoding="utf-8")
    expected = _rglob_order(data, names)

    def no_second_listing(self: Path, pattern: str) -> None:
        raise AssertionError(f"{self} listed again")

    monkeypatch.setattr(Path, "rglob", no_second_listing)
    selection = select_documents(data, tmp_path / "root", INPUT_FILE_PATTERN)
    assert selection.files == expected == [entry.name for entry in os.scandir(data)]


def test_files_not_at_the_top_are_ordered_by_graphrags_listing() -> None:
    top = ["z.txt", "sub", "a.txt"]
    assert documents.in_graphrag_order(Path("/nowhere"), ["a.txt", "z.txt"], top) == [
        "z.txt",
        "a.txt",
    ]
