"""One whole version per snapshot (issue 38), without blob storage: a snapshot is labelled with the
version whose tables it read though `output` switches while it loads; a replica's switch moves
tables, settings and prompts in one step; a version a loaded snapshot holds is not pruned, and is
once the snapshot is gone."""

import gc
import os
import shutil
from pathlib import Path

import pytest

from graphrag_mcp_server.config import index_root
from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing import versions
from graphrag_mcp_server.handlers.indexing.blob import follower
from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
from graphrag_mcp_server.handlers.indexing.blob.publish import kept_versions
from graphrag_mcp_server.handlers.indexing.blob.versions import Pointer
from graphrag_mcp_server.server import state

LOCATION = BlobLocation.parse("az://replica-test/team")


def _point(root: Path, version: Path) -> None:
    """Switch `output` to `version` as versions.switch_to does (one rename of a new link)."""
    link = root / ".output.test"
    link.symlink_to(version.relative_to(root))
    os.replace(link, root / "output")


@pytest.fixture
def two_versions(built_index: tuple[Path, dict], tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the fixtures index with a second version beside its current one (the same tables,
    linked)."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    first = versions.current_version(root)
    second = root / "versions" / "second"
    versions.linked_copy(first, second)
    return root, first, second


def _digest_at(root: Path, version: Path) -> str:
    """The digest a fresh reader computes with `output` on `version`."""
    before = versions.current_version(root)
    _point(root, version)
    try:
        return state.disk_version(root)
    finally:
        _point(root, before)


async def test_a_switch_after_the_config_is_read_does_not_relabel_the_snapshot(
    two_versions: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`output` switched right after the config pinned the first version: the snapshot reads the
    first version's tables under the first version's digest (not the second's), and the next
    request loads the second."""
    root, first, second = two_versions
    first_digest, second_digest = _digest_at(root, first), _digest_at(root, second)
    assert first_digest != second_digest
    read_config = index_root.load_index_config

    def then_switch(*args: object, **kwargs: object) -> object:
        config = read_config(*args, **kwargs)
        if versions.current_version(root) == first:
            _point(root, second)  # the switch lands between the config's pin and the digest
        return config

    monkeypatch.setattr(index_root, "load_index_config", then_switch)
    index = state.IndexState(root)
    loaded = await index.snapshot()
    assert loaded.version == first_digest
    assert Path(loaded.config.output_storage.base_dir).resolve() == first
    again = (
        await index.snapshot()
    )  # the disk is on the second version: loaded now, not at some later switch
    assert again.version == second_digest
    assert Path(again.config.output_storage.base_dir).resolve() == second


def test_a_switch_before_the_config_is_read_loads_the_new_version_whole(
    two_versions: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`output` switched after it was resolved but before the config was read: the load starts
    again on the version the config pinned, and labels it with that version's digest."""
    root, first, second = two_versions
    second_digest = _digest_at(root, second)
    resolved: list[Path | None] = []

    def resolve_then_switch(where: Path) -> Path | None:
        resolved.append(versions.current_version(where))
        if len(resolved) == 1:
            _point(root, second)
        return resolved[-1]

    monkeypatch.setattr(state, "current_version", resolve_then_switch)
    loaded = state._load(root)
    assert resolved[:2] == [first, second]
    assert loaded.version == second_digest
    assert Path(loaded.config.output_storage.base_dir).resolve() == second


def _staged(root: Path, built: Path, name: str) -> Path:
    """A version downloaded as BlobIndex.download leaves it: output/ (the fixtures version) and
    root/."""
    staging = root / "versions" / f".download-{name}-test"
    shutil.copytree(
        versions.current_version(built), staging / "output"
    )  # copied: the shared index stays as it is
    (staging / "root").mkdir()
    shutil.copy2(built / "settings.yaml", staging / "root" / "settings.yaml")
    shutil.copytree(built / "prompts", staging / "root" / "prompts")
    return staging


def test_a_replica_switch_moves_tables_settings_and_prompts_together(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """take_version links settings.yaml and prompts through `output`: one switch moves all three; a
    snapshot reads its prompts from its own version; a version it holds survives two switches, and
    goes once it is dropped."""
    root = tmp_path / "replica"
    (root / "versions").mkdir(parents=True)
    follower.take_version(root, _staged(root, built_index[0], "a"), LOCATION, "a")
    assert (root / "settings.yaml").readlink() == Path("output/.root/settings.yaml")
    assert (root / "prompts").readlink() == Path("output/.root/prompts")
    held = state._load(root)
    version_a = root / "versions" / "a"
    assert Path(held.config.local_search.prompt).is_relative_to(version_a / ".root")
    assert held.tables.derived["version_hold"].version == version_a

    follower.take_version(root, _staged(root, built_index[0], "b"), LOCATION, "b")
    follower.take_version(root, _staged(root, built_index[0], "c"), LOCATION, "c")
    assert {path.name for path in (root / "versions").iterdir()} == {
        "a",
        "b",
        "c",
    }  # a: held by the snapshot
    assert versions.current_version(root).name == "c"
    assert (root / "settings.yaml").resolve() == root / "versions" / "c" / ".root" / "settings.yaml"

    del held
    gc.collect()
    follower.take_version(root, _staged(root, built_index[0], "d"), LOCATION, "d")
    assert {path.name for path in (root / "versions").iterdir()} == {
        "c",
        "d",
    }  # current and previous


def test_a_malformed_manifest_is_refused_before_the_switch(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """A downloaded version whose manifest.json is not a title map leaves `output` where it was."""
    root = tmp_path / "replica"
    (root / "versions").mkdir(parents=True)
    follower.take_version(root, _staged(root, built_index[0], "a"), LOCATION, "a")
    staging = _staged(root, built_index[0], "b")
    (staging / "output" / "manifest.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(GraphRagMcpError, match="manifest.json is malformed"):
        follower.take_version(root, staging, LOCATION, "b")
    assert versions.current_version(root).name == "a"


def test_collection_keeps_what_the_pointer_names_and_the_follower_backs_off_within_bounds() -> None:
    """Garbage collection keeps current.json's version and previous (an indexer that published
    nothing deleted previous); a failing follower waits twice as long after each failure, up to its
    bound."""
    from datetime import UTC, datetime

    pointer = Pointer(version="v3", previous="v2", switched_at=datetime.now(UTC))
    assert kept_versions(pointer, Path("versions/v3")) == {"v3", "v2"}
    assert kept_versions(None, None) == set()
    assert [follower.next_wait(0.5, failures) for failures in range(8)] == [
        0.5,
        1,
        2,
        4,
        8,
        16,
        30,
        30,
    ]
    assert follower.next_wait(60, 3) == 60  # a poll period over the bound is kept


def test_a_local_version_a_snapshot_holds_survives_two_updates(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """versions.switch_to keeps the current and previous versions and any older one a loaded
    snapshot holds (a long search across two quick updates), and removes it at the first switch
    after it is dropped."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    first = versions.current_version(root)
    held = state._load(root)
    assert held.tables.derived["version_hold"].version == first
    manifest = versions.read_manifest(first)
    for _ in range(2):
        versions.switch_to(root, _copy_of(first, versions.new_version(root)), manifest)
    assert first.is_dir() and len(list((root / "versions").iterdir())) == 3
    del held
    gc.collect()
    versions.switch_to(root, _copy_of(first, versions.new_version(root)), manifest)
    assert not first.exists() and len(list((root / "versions").iterdir())) == 2


def _copy_of(version: Path, target: Path) -> Path:
    shutil.copytree(version, target, dirs_exist_ok=True)
    return target
