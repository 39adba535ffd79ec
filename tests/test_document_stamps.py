"""An update reads only the text files that changed since the served version read them
(document_stamps.py, issue 40): the others' documents come from that version, equal to what a
read gives, and anything that could change a document reads it again."""

import asyncio
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import CORPUS, run_cli
from graphrag_mcp_server.handlers.indexing import document_stamps, versions
from graphrag_mcp_server.handlers.indexing.build import (
    IndexMode,
    build,
    index_config,
    read_documents,
)

pytestmark = pytest.mark.slow  # each test builds an index of its own

DOCUMENT = "02_building_old_bessie.txt"


def _read(root: Path, data: Path, current: bool = True) -> tuple[pd.DataFrame, int]:
    """The documents table an update of `root` from `data` starts from (`current`: with the
    served version to take from), and how many files it read."""
    config = index_config(root, data)
    served = versions.current_version(root) if current else None
    documents, selection = asyncio.run(read_documents(config, root, current=served))
    return documents, selection.read


@pytest.fixture
def indexed(tmp_path: Path) -> tuple[Path, Path]:
    """An index root built offline from a private copy of the fixtures corpus, and that copy."""
    root, data = tmp_path / "root", tmp_path / "data"
    shutil.copytree(CORPUS, data)
    start = Path.cwd()
    try:
        asyncio.run(build(index_config(root, data, offline=True), root, IndexMode.FULL))
    finally:
        os.chdir(start)  # graphrag's config loader changes into the index root
    return root, data


def test_unchanged_files_are_taken_from_the_version_and_equal_a_read(
    indexed: tuple[Path, Path],
) -> None:
    root, data = indexed
    read_all, read = _read(root, data, current=False)
    assert read == len(read_all) == len(list(data.iterdir()))
    taken, read = _read(root, data)
    assert read == 0
    pd.testing.assert_frame_equal(taken, read_all)


def test_what_could_change_a_document_reads_it_again(indexed: tuple[Path, Path]) -> None:
    root, data = indexed
    path = data / DOCUMENT
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    # same size, modification time set back: the status-change time still moved
    path.write_text(text.replace("Bessie", "Bassie"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    (data / "13_new.txt").write_text("Mara Quell founded the Quell Ropeworks.\n", encoding="utf-8")
    documents, read = _read(root, data)
    assert read == 2
    by_title = documents.set_index("title")["text"]
    assert "Bassie" in by_title[DOCUMENT] and "Bessie" not in by_title[DOCUMENT]
    assert "Quell Ropeworks" in by_title["13_new.txt"]


def test_other_input_settings_or_a_damaged_record_read_every_file(
    indexed: tuple[Path, Path],
) -> None:
    root, data = indexed
    files = len(list(data.iterdir()))
    moved = data.rename(data.parent / "moved")
    assert _read(root, moved)[1] == files  # another data folder
    moved.rename(data)
    settings = root / "settings.yaml"
    written = settings.read_text(encoding="utf-8")
    settings.write_text(
        written.replace("input:\n", "input:\n  encoding: latin-1\n"), encoding="utf-8"
    )
    assert _read(root, data)[1] == files  # another encoding
    settings.write_text(written, encoding="utf-8")
    assert _read(root, data)[1] == 0
    version = versions.current_version(root)
    assert version is not None
    version.chmod(0o755)  # published versions are read-only
    (version / document_stamps.STAMPS).write_text('{"reading": \n["x", 1]\n', encoding="utf-8")
    assert _read(root, data)[1] == files


def test_an_update_reports_the_files_it_read(tmp_path: Path) -> None:
    """`index` twice from the same folder reads nothing the second time; an edit reads one file,
    and the update's documents table holds its new text."""
    root, data = tmp_path / "root", tmp_path / "data"
    shutil.copytree(CORPUS, data)

    def index() -> dict:
        printed = run_cli("index", data, "--index-path", root, "--offline", "--format", "json")
        assert printed.code == 0, printed.stderr
        summary: dict = json.loads(printed.stdout)
        return summary

    assert index()["documents_read"] == len(list(data.iterdir()))
    assert index()["documents_read"] == 0
    with (data / DOCUMENT).open("a", encoding="utf-8") as file:
        file.write("Old Bessie was repaired in 1920 by the Kelling Point foundry.\n")
    summary = index()
    assert (summary["documents_read"], summary["documents_updated"]) == (1, 1)
    documents = pd.read_parquet(root / "output" / "documents.parquet").set_index("title")
    assert documents.loc[DOCUMENT, "text"] == (data / DOCUMENT).read_text(encoding="utf-8")


def test_files_whose_status_changed_but_not_their_text_are_read_once(tmp_path: Path) -> None:
    """A `chmod` moves every file's status-change time: the next update reads them all, finds
    nothing changed and publishes nothing, but records their stamps; later updates read none of
    them again, the one that publishes a version included."""
    root, data = tmp_path / "root", tmp_path / "data"
    shutil.copytree(CORPUS, data)
    files = len(list(data.iterdir()))

    def read() -> int:
        printed = run_cli("index", data, "--index-path", root, "--offline", "--format", "json")
        assert printed.code == 0, printed.stderr
        documents_read: int = json.loads(printed.stdout)["documents_read"]
        return documents_read

    assert read() == files
    served = versions.current_version(root)
    for path in data.iterdir():
        path.chmod(0o600)
    assert read() == files
    assert read() == 0
    assert versions.current_version(root) == served
    with (data / DOCUMENT).open("a", encoding="utf-8") as file:
        file.write("Old Bessie was repainted in 1931.\n")
    assert read() == 1
