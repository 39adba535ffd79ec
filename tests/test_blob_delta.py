"""Blob storage by delta (issue 40), against Azurite with real LanceDB: an edit uploads only the
content the container lacks, a replica downloads only what its version lacks, garbage collection
keeps content a kept version still lists, and a version's LanceDB files stay bounded."""

import asyncio
import json
import logging
import os
import shutil
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest

from azurite import Azurite
from conftest import CORPUS, run_cli
from test_scale_out import _container, _pointer, _published_copy

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

EDITED = "05_the_january_gale_of_1999.txt"
versions_logger = "graphrag_mcp_server.handlers.indexing.blob.versions"


def _edit(documents: Path, round_: int) -> None:
    """One document of `documents` changed by a sentence of its own."""
    path = documents / EDITED
    path.write_text(
        path.read_text(encoding="utf-8")
        + f"\nIn spring {2000 + round_} the harbour master Ilse Varga logged {round_} repairs.\n",
        encoding="utf-8",
    )


def _listing(azurite: Azurite, location: str, version: str) -> dict[str, dict]:
    prefix = location.removeprefix("az://").split("/", 1)[1]
    blob = f"{prefix}/versions/{version}/files.json"
    return json.loads(_container(azurite, location).download_blob(blob).readall())["files"]


def _objects(azurite: Azurite, location: str) -> dict[str, int]:
    """The container's content objects: sha256 -> size."""
    prefix = location.removeprefix("az://").split("/", 1)[1] + "/objects/"
    return {
        blob.name.removeprefix(prefix): blob.size
        for blob in _container(azurite, location).list_blobs(name_starts_with=prefix)
    }


def _packs(azurite: Azurite, location: str) -> dict[str, int]:
    """The container's packs: name -> size."""
    prefix = location.removeprefix("az://").split("/", 1)[1] + "/packs/"
    return {
        blob.name.removeprefix(prefix): blob.size
        for blob in _container(azurite, location).list_blobs(name_starts_with=prefix)
    }


def _follow(azurite: Azurite, location: str, root: Path) -> Path:
    """One poll of a replica's follower over `root`; its current version."""
    from graphrag_mcp_server.handlers.indexing import versions
    from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
    from graphrag_mcp_server.handlers.indexing.blob.follower import follow

    with mock.patch.dict(os.environ, azurite.env()):
        asyncio.run(follow(BlobLocation.parse(location), root, 0.5, once=True))
    current = versions.current_version(root)
    assert current is not None
    return current


def _files(version: Path) -> dict[str, os.stat_result]:
    return {
        path.relative_to(version).as_posix(): path.stat()
        for path in version.rglob("*")
        if path.is_file() and ".root" not in path.relative_to(version).parts
    }


def test_an_edit_moves_only_changed_content_and_collection_keeps_shared_content(
    azurite: Azurite,
    built_index: tuple[Path, dict],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two one-document edits through `index --storage`: each uploads exactly the content no
    earlier version had (LanceDB files carried from the version before are not sent again; of the
    parquet tables, rewritten whole, only the pieces no earlier pack holds: fewer bytes than the
    files that changed, on tables this small); a replica following them links what its version
    already holds, puts the tables together from its own pieces and ranged reads of the new ones,
    and its files' mtimes equal a fresh replica's (one index_version on every host); collection
    with no grace deletes the oldest version, the content only it listed and a
    pack no version lists, and keeps what the kept versions share."""
    from graphrag_mcp_server.handlers.indexing.blob.objects import digest

    location = asyncio.run(_published_copy(azurite, built_index[0], tmp_path / "indexer"))
    first = _pointer(azurite, location)["version"]
    replica = tmp_path / "replica"
    served = _follow(azurite, location, replica)
    assert served.name == first
    documents = tmp_path / "documents"
    shutil.copytree(CORPUS, documents)
    env_grace = {"GRAPHRAG_MCP_STORAGE_GRACE_SECONDS": "0"}
    listings = {first: _listing(azurite, location, first)}
    stray = location.removeprefix("az://").split("/", 1)[1] + "/packs/killed-indexer-0"
    _container(azurite, location).upload_blob(stray, b"pieces of a version never switched to")
    for round_ in (1, 2):
        previous_listing = listings[served.name]
        held_before = _objects(azurite, location)
        _edit(documents, round_)
        result = run_cli(
            "index", documents, "--index-path", tmp_path / "indexer", "--storage", location,
            "--format", "json", env={**azurite.env(), **env_grace}, timeout=300,
        )  # fmt: skip
        assert result.code == 0, result.stderr
        version = _pointer(azurite, location)["version"]
        listing = listings[version] = _listing(azurite, location, version)
        whole = {entry["sha256"] for entry in listing.values() if not entry.get("pieces")}
        sent = set(_objects(azurite, location)) - set(held_before)
        assert sent == whole - set(held_before)  # nothing the container held was uploaded again
        tables = {name.split("/")[2] for name in listing if "/lancedb/" in name}
        carried = {  # each table's data files from before: linked, not written or sent again
            name.split("/")[2]
            for name, entry in listing.items()
            if "/data/" in name and entry["sha256"] in held_before
        }
        assert carried == tables and len(tables) >= 3, (carried, tables)
        pieces = [piece for entry in listing.values() for piece in entry.get("pieces", ())]
        assert {name for name, entry in listing.items() if entry.get("pieces")} == {
            name
            for name, entry in listing.items()
            if name.count("/") == 1
            and name.startswith("output/")
            and entry["size"]
            and name.endswith((".parquet", ".json"))
        }  # the tables and the version's JSON records, not LanceDB's files
        earlier = {
            piece["sha256"]: piece
            for name, kept in listings.items()
            if name != version
            for entry in kept.values()
            for piece in entry.get("pieces", ())
        }
        new_pieces = {p["sha256"]: p for p in pieces if p["pack"].startswith(version)}
        again = set(new_pieces) & set(earlier)  # a piece an earlier pack holds is not sent
        assert not again, [
            n for n, e in listing.items() for p in e.get("pieces", ()) if p["sha256"] in again
        ]
        assert all(p["sha256"] in new_pieces or p == earlier[p["sha256"]] for p in pieces)
        packs = _packs(azurite, location)
        assert sum(size for name, size in packs.items() if name.startswith(version)) == sum(
            p["size"] for p in new_pieces.values()
        )  # a new pack holds each new piece once, nothing else
        sent_bytes = sum(p["size"] for p in new_pieces.values()) + sum(
            entry["size"] for entry in listing.values() if entry["sha256"] in sent
        )
        changed = sum(
            entry["size"]
            for name, entry in listing.items()
            if previous_listing.get(name, {}).get("sha256") != entry["sha256"]
        )
        assert 0 < sent_bytes < changed, (sent_bytes, changed)

        before = _files(served)
        with caplog.at_level(logging.INFO, logger=versions_logger):
            served = _follow(azurite, location, replica)
        moved = next(r.args[2] for r in caplog.records if "downloaded" in r.getMessage())
        caplog.clear()
        assert 0 < moved.moved_bytes < changed, moved
        assert served.name == version
        now = _files(served)
        assert set(now) == {name.removeprefix("output/") for name in listing if "output/" in name}
        linked = {
            name for name, stat in now.items() if stat.st_ino == before.get(name, stat).st_ino
        }
        linked = {name for name in linked if name in before}
        same = {
            name.removeprefix("output/")
            for name, entry in listing.items()
            if name.startswith("output/")
            and name in previous_listing
            and previous_listing[name]["sha256"] == entry["sha256"]
        }
        assert linked == same and linked  # unchanged files linked, the others put together
        for name, stat in now.items():
            entry = listing[f"output/{name}"]
            assert digest(served / name) == entry["sha256"]
            assert stat.st_mtime_ns == entry["mtime_ns"]

    fresh = _follow(azurite, location, tmp_path / "fresh-replica")
    assert {name: stat.st_mtime_ns for name, stat in _files(fresh).items()} == {
        name: stat.st_mtime_ns for name, stat in _files(served).items()
    }
    held = _objects(azurite, location)
    kept = {
        blob.name.split("/versions/")[1].split("/")[0]
        for blob in _container(azurite, location).list_blobs()
        if "/versions/" in blob.name
    }
    assert first not in kept and len(kept) == 2  # current and previous

    def whole(version: str) -> set[str]:
        return {e["sha256"] for e in listings[version].values() if not e.get("pieces")}

    def packs(version: str) -> set[str]:
        return {p["pack"] for e in listings[version].values() for p in e.get("pieces", ())}

    listed = set().union(*(whole(version) for version in kept))
    only_first = whole(first) - listed
    shared = whole(first) & listed
    assert set(held) == listed  # nothing a kept version lists is gone, nothing else is left
    assert only_first and shared and not only_first & set(held)
    packed = set().union(*(packs(version) for version in kept))
    assert set(_packs(azurite, location)) == packed  # the stray pack is gone, no other
    assert packs(first) & packed  # the cold build's pack still holds pieces of kept versions
    stats = run_cli(
        "stats", "--index-path", tmp_path / "third-replica", "--storage", location,
        "--format", "json", env=azurite.env(),
    )  # fmt: skip
    assert stats.code == 0 and stats.json()["documents"] == 11, stats.stderr


def test_an_old_layout_version_is_still_downloaded_whole(
    azurite: Azurite, built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """A version published before listings (its files under versions/ID/output and /root) is
    downloaded and served, and the next publish over it uploads every file's content once."""
    location = asyncio.run(_published_copy(azurite, built_index[0], tmp_path / "indexer"))
    pointer = _pointer(azurite, location)
    container = _container(azurite, location)
    prefix = location.removeprefix("az://").split("/", 1)[1]
    for name in _listing(azurite, location, pointer["version"]):
        part, _, rest = name.partition("/")
        local = tmp_path / "indexer" / ("output" if part == "output" else "") / rest
        container.upload_blob(f"{prefix}/versions/old/{name}", local.read_bytes())
    container.upload_blob(
        f"{prefix}/current.json", json.dumps({**pointer, "version": "old"}), overwrite=True
    )
    stats = run_cli(
        "stats", "--index-path", tmp_path / "replica", "--storage", location,
        "--format", "json", env=azurite.env(),
    )  # fmt: skip
    assert stats.code == 0 and stats.json()["documents"] == 11, stats.stderr
    assert (tmp_path / "replica" / "versions" / "old" / "manifest.json").is_file()


def _lance_files(version: Path) -> dict[str, dict[str, int]]:
    """Per LanceDB table of a version: how many files of each kind it holds."""
    return {
        table.name: {
            kind: sum(1 for path in (table / kind).rglob("*") if path.suffix != ".json")
            for kind in ("data", "_deletions", "_versions", "_transactions")
        }
        for table in (version / "lancedb").iterdir()
    }


def test_a_full_build_leaves_each_lancedb_table_in_one_data_file(
    built_index: tuple[Path, dict],
) -> None:
    """graphrag writes a vector table in batches, a data file each; the full build compacts them,
    so that the first updates do not rewrite (and upload) the whole table and its index."""
    from graphrag_mcp_server.handlers.indexing import versions

    version = versions.current_version(built_index[0])
    assert version is not None
    tables = _lance_files(version)
    assert tables and all(kinds["data"] == 1 for kinds in tables.values()), tables
    assert all(kinds["_versions"] == 1 for kinds in tables.values()), tables


def test_a_versions_lancedb_files_stay_bounded_over_updates(copied_index: Path) -> None:
    """Twelve one-document updates: each version's LanceDB tables hold one manifest and at most
    one transaction, at most COMPACT_FRAGMENTS data files (then compacted), a deletion file for at
    most each data file; the version's file count after the last update is no higher than the
    highest before it, and the previous version's files are never changed."""
    from graphrag_mcp_server.handlers.indexing import versions
    from graphrag_mcp_server.handlers.indexing.vector_delta import COMPACT_FRAGMENTS

    documents = copied_index.parent / "documents"
    shutil.copytree(CORPUS, documents)
    counts = []
    for round_ in range(1, 13):
        previous = versions.current_version(copied_index)
        assert previous is not None
        sealed = {name: (stat.st_ino, stat.st_mtime_ns) for name, stat in _files(previous).items()}
        _edit(documents, round_)
        result = run_cli("index", documents, "--index-path", copied_index, "--format", "json")
        assert result.code == 0, result.stderr
        version = versions.current_version(copied_index)
        assert version is not None and version != previous
        tables = _lance_files(version)
        for name, kinds in tables.items():
            assert kinds["_versions"] == 1 and kinds["_transactions"] <= 1, (name, kinds)
            assert kinds["data"] <= COMPACT_FRAGMENTS + 1, (name, kinds)
            assert kinds["_deletions"] <= kinds["data"], (name, kinds)
        counts.append(len(_files(version)))
        if previous.exists():
            after = {n: (s.st_ino, s.st_mtime_ns) for n, s in _files(previous).items()}
            assert after == sealed
    print("version files after each update:", counts)
    assert counts[-1] <= max(counts[:-1]) and max(counts) < counts[0] + 12 * 2, counts


def test_an_edit_undone_sends_no_piece_again(azurite: Azurite, tmp_path: Path) -> None:
    """A table that goes back to the content of a version before the previous one (an edit
    undone) is made of that version's pieces: its upload sends no pack."""
    from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
    from graphrag_mcp_server.handlers.indexing.blob.versions import BlobIndex

    rows = [f"row {number}: " + "words of a text unit " * 40 for number in range(400)]
    contents = {"v1": rows, "v2": [*rows[:200], "an edited row", *rows[201:]], "v3": rows}
    location = azurite.new_location()
    moved, previous = {}, None
    with mock.patch.dict(os.environ, azurite.env()):
        index = BlobIndex(BlobLocation.parse(location))
        index.create_container()
        for name, texts in contents.items():
            version = tmp_path / name
            version.mkdir()
            pd.DataFrame({"text": texts}).to_parquet(version / "text_units.parquet")
            moved[name] = index.upload_version(tmp_path, version, previous).moved_bytes
            previous = name
    assert moved["v1"] > 0 and moved["v2"] > 0
    assert moved["v3"] == 0, moved
