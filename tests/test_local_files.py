"""LocalFileStorage (handlers/indexing/local_files.py) reads, writes and finds what graphrag's
FileStorage does."""

import asyncio
import re
import shutil
from datetime import datetime
from pathlib import Path

from graphrag_storage import StorageConfig, create_storage
from graphrag_storage.file_storage import FileStorage

from conftest import CORPUS
from graphrag_mcp_server.config.index_root import load_index_config
from graphrag_mcp_server.handlers.indexing.build import index_config
from graphrag_mcp_server.handlers.indexing.local_files import (
    LocalFileStorage,
    use_local_file_storage,
)
from graphrag_mcp_server.handlers.indexing.readers import CorpusReader
from test_corpus_coverage import write_mixed_folder


def test_documents_of_every_format_read_as_through_graphrags_storage(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_mixed_folder(data)
    for document in CORPUS.glob("*"):
        shutil.copy(document, data / document.name)
    (data / "latin-1.txt").write_bytes(
        "Ren\xe9e Aubert of the Caf\xe9 Lumi\xe8re".encode("latin-1")
    )
    config = index_config(tmp_path / "root", data, offline=True)
    paths = sorted(str(path.relative_to(data)) for path in data.rglob("*") if path.is_file())

    def read(storage_class: type[FileStorage]) -> tuple[list[dict], dict[str, str]]:
        reader = CorpusReader(config, storage_class(base_dir=str(data), encoding="utf-8"))
        return asyncio.run(reader.read(paths)), reader.unreadable

    rows, unreadable = read(LocalFileStorage)
    assert (rows, unreadable) == read(FileStorage)
    assert len(rows) > len(list(CORPUS.glob("*"))) + 5, (
        "the fixtures and the mixed formats were read"
    )
    assert {"locked.pdf", "broken.docx", "latin-1.txt"} <= set(unreadable), unreadable


def test_writes_reads_and_lookups_match_graphrags_file_storage(tmp_path: Path) -> None:
    def exercise(storage: FileStorage) -> list:
        async def steps() -> list:
            child = storage.child("cache")
            await storage.set("notes.txt", "Ærø harbour", encoding="utf-8")
            await storage.set("table.bin", b"\x00\x01parquet")
            await child.set("entry", '{"result": 1}')
            return [
                await storage.get("notes.txt"),
                await storage.get("table.bin", as_bytes=True),
                await storage.get("notes.txt", as_bytes=True, encoding="utf-8"),
                await storage.get("missing.txt"),
                await storage.has("notes.txt"),
                await storage.has("missing.txt"),
                await child.get("entry"),
                await child.has("entry"),
                await storage.get_creation_date("notes.txt"),
                sorted(storage.find(re.compile(r".*"))),
                sorted(storage.keys()),
                type(child).__name__,
            ]

        return asyncio.run(steps())

    theirs = exercise(FileStorage(base_dir=str(tmp_path / "theirs")))
    ours = exercise(LocalFileStorage(base_dir=str(tmp_path / "ours")))
    created = [ours.pop(8), theirs.pop(8)]  # the clock's second may turn between the two
    assert ours[:-1] == theirs[:-1]
    stamps = [datetime.strptime(date, "%Y-%m-%d %H:%M:%S %z") for date in created]
    assert abs((stamps[0] - stamps[1]).total_seconds()) < 30, created
    assert ours[0] == "Ærø harbour" and ours[3] is None and ours[6] == '{"result": 1}'
    assert (ours[-1], theirs[-1]) == ("LocalFileStorage", "FileStorage"), (
        "a child reads the same way as its parent"
    )


def test_graphrags_file_storages_are_local_once_registered(tmp_path: Path) -> None:
    use_local_file_storage()
    storage = create_storage(StorageConfig(type="file", base_dir=str(tmp_path / "cache")))
    assert isinstance(storage, LocalFileStorage)
    root = tmp_path / "root"
    index_config(root, CORPUS, offline=True)
    assert load_index_config(root, with_models=False).cache.storage.type == "file", (
        "what the index's cache uses"
    )
