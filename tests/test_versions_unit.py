"""versions without an index build: switch_to, _prune, discard and linked_copy on small folders,
and a failure injected at every step of a switch (each crash_point boundary, and the file
operations between them)."""

import os
import signal
from pathlib import Path

import pytest

from graphrag_mcp_server.handlers.indexing import versions

BOUNDARIES = [
    "switch:manifest-written",
    "switch:legacy-moved",
    "switch:sealed",
    "switch:linked",
    "switch:switched",
]


class Injected(RuntimeError):
    """The failure a test injects into switch_to."""


def made_version(root: Path, marker: str) -> Path:
    """A new version holding one table whose text is `marker`."""
    version = versions.new_version(root)
    (version / "entities.parquet").write_text(marker)
    (version / "lancedb").mkdir()
    (version / "lancedb" / "rows.lance").write_text(marker)
    return version


def graphrag_root(root: Path) -> Path:
    """A root as `graphrag index` leaves it: a plain output/ folder with its tables and no
    manifest."""
    (root / "output").mkdir(parents=True)
    (root / "output" / "entities.parquet").write_text("graphrag")
    return root


def served(root: Path) -> str:
    """The marker of the table the root serves; the served folder must be whole (versions carry a
    manifest)."""
    current = versions.current_version(root)
    assert current is not None and current.is_dir()
    if current.parent == (root / versions.VERSIONS).resolve() and current.name != "legacy":
        assert versions.read_manifest(current) is not None
    return (current / "entities.parquet").read_text()


def test_switch_serves_the_new_version_sealed_and_keeps_the_previous(tmp_path: Path) -> None:
    first = made_version(tmp_path, "one")
    versions.switch_to(tmp_path, first, {"a.txt": "1"})
    assert served(tmp_path) == "one" and (tmp_path / "output").is_symlink()
    assert not (first.stat().st_mode & 0o222)  # sealed: no write bit on the version folder
    second = made_version(tmp_path, "two")
    versions.switch_to(tmp_path, second, {"a.txt": "2"})
    third = made_version(tmp_path, "three")
    versions.switch_to(tmp_path, third, {"a.txt": "3"})
    assert served(tmp_path) == "three"
    assert sorted(path.name for path in (tmp_path / "versions").iterdir()) == sorted(
        [second.name, third.name]
    )
    assert versions.read_manifest(third) == {"a.txt": "3"}


def test_prune_spares_held_versions(tmp_path: Path) -> None:
    kept, held, stale = (made_version(tmp_path, name) for name in ("kept", "held", "stale"))
    hold = versions.hold_version(tmp_path, held.resolve())
    assert hold is not None
    versions._prune(tmp_path, keep={kept, None})
    assert kept.is_dir() and held.is_dir() and not stale.exists()
    del hold
    versions._prune(tmp_path, keep={kept})
    assert not held.exists()


def test_discard_removes_a_sealed_version(tmp_path: Path) -> None:
    version = made_version(tmp_path, "sealed")
    versions._seal(version)
    versions.discard(version)
    assert not version.exists()


def test_linked_copy_shares_files_and_leaves_folders_writable(tmp_path: Path) -> None:
    version = made_version(tmp_path, "source")
    versions._seal(version)
    copy = tmp_path / "copy"
    versions.linked_copy(version / "lancedb", copy)
    assert (copy / "rows.lance").read_text() == "source"
    assert (copy / "rows.lance").stat().st_ino == (version / "lancedb" / "rows.lance").stat().st_ino
    assert copy.stat().st_mode & 0o200
    (copy / "new.lance").write_text("added")  # a new file in the copy, none in the source
    assert not (version / "lancedb" / "new.lance").exists()


def failing_at(monkeypatch: pytest.MonkeyPatch, boundary: str) -> None:
    def crash_point(name: str) -> None:
        if name == boundary:
            raise Injected(name)

    monkeypatch.setattr(versions, "crash_point", crash_point)


def failing_call(monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    """The file operation `step` of switch_to raises, as a full disk or a refused link would."""

    def refused(*_: object, **__: object) -> None:
        raise Injected(step)

    target = {
        "rename": (Path, "rename"),
        "seal": (versions, "_seal"),
        "symlink": (Path, "symlink_to"),
        "replace": (versions.os, "replace"),
        "prune": (versions, "_prune"),
    }[step]
    monkeypatch.setattr(*target, refused)


STEPS = [("boundary", name) for name in BOUNDARIES] + [
    ("call", name) for name in ("rename", "seal", "symlink", "replace", "prune")
]


@pytest.mark.parametrize("takeover", [False, True], ids=["versions", "graphrag-output"])
@pytest.mark.parametrize(("kind", "step"), STEPS, ids=[f"{kind}-{step}" for kind, step in STEPS])
def test_failure_at_any_step_leaves_a_whole_version_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, takeover: bool, kind: str, step: str
) -> None:
    """Whatever step of a switch fails, the root serves the previous version or the new one,
    whole; the next run switches cleanly."""
    if takeover:
        graphrag_root(tmp_path)
        before = "graphrag"
    else:
        versions.switch_to(tmp_path, made_version(tmp_path, "before"), {"a.txt": "1"})
        before = "before"
    new = made_version(tmp_path, "new")
    with monkeypatch.context() as patched:
        (failing_at if kind == "boundary" else failing_call)(patched, step)
        try:
            versions.switch_to(tmp_path, new, {"a.txt": "2"})
        except Injected:
            failed = True
        else:
            failed = False
    assert failed == (
        takeover or step not in ("switch:legacy-moved", "rename")
    )  # only a takeover moves output
    switched = not failed or step in ("switch:switched", "prune")
    assert served(tmp_path) == ("new" if switched else before)
    following = made_version(tmp_path, "next")
    versions.switch_to(tmp_path, following, {"a.txt": "3"})
    assert served(tmp_path) == "next"
    assert not list(tmp_path.glob(".output.*"))
    assert versions.graphrag_output(tmp_path) is None


@pytest.mark.parametrize("boundary", [b for b in BOUNDARIES if b != "switch:legacy-moved"])
def test_a_sigterm_during_a_switch_lands_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, boundary: str
) -> None:
    """A cancel (SIGTERM) sent at any step of a switch is held until the switch ends: the new
    version is served whole, and the signal's handler runs once switch_to is done."""

    def cancelled(signum: int, frame: object) -> None:
        raise Injected(boundary)

    def sigterm_at(name: str) -> None:
        if name == boundary:
            os.kill(os.getpid(), signal.SIGTERM)

    versions.switch_to(tmp_path, made_version(tmp_path, "before"), {"a.txt": "1"})
    new = made_version(tmp_path, "new")
    monkeypatch.setattr(versions, "crash_point", sigterm_at)
    previous = signal.signal(signal.SIGTERM, cancelled)
    try:
        with pytest.raises(Injected):
            versions.switch_to(tmp_path, new, {"a.txt": "2"})
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert served(tmp_path) == "new" and versions.current_version(tmp_path) == new.resolve()


def test_index_lock_refuses_at_once_while_another_process_holds_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, filelock; lock = filelock.FileLock(sys.argv[1]); lock.acquire(); "
            "print('held', flush=True); sys.stdin.read()",
            str(tmp_path / versions.LOCK),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with (
            pytest.raises(
                versions.IndexBusyError,
                match="^another index run is updating .*; wait for it to finish$",
            ),
            versions.index_lock(tmp_path),
        ):
            pass
    finally:
        holder.communicate("")
    with (
        versions.index_lock(tmp_path),  # free again once the holder ended
        pytest.raises(versions.IndexBusyError),
        versions.index_lock(tmp_path),
    ):
        pass
