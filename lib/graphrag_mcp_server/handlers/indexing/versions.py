"""Index versions: each run writes a new version beside the current one and switches in one step.

Layout of an index root::

    output -> versions/<id>     symlink, replaced atomically (os.replace) when a run succeeds
    versions/<id>/              parquet tables, lancedb/, stats.json, manifest.json
                                (read-only once complete)
    cache/                      graphrag's LLM cache, shared by all versions
    .holds/<id>.lock            shared-locked by each process reading version <id>
                                (not pruned meanwhile)

A run killed at any point leaves `output` on the previous, complete version; the partial version
is removed by the next run. The previous version is kept, and any older one a reader still holds. A
version is sealed (write bits off) before it becomes current, so a tool writing through `output`
(graphrag's own `graphrag index` on this root) is refused instead of changing what is served.
"""

import fcntl
import json
import logging
import os
import shutil
import signal
import stat
import threading
import time
import uuid
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import BaseModel

from graphrag_mcp_server.config.index_root import LEGACY_OUTPUT, served_output
from graphrag_mcp_server.errors import GraphRagMcpError

logger = logging.getLogger(__name__)

OUTPUT = "output"
VERSIONS = "versions"
HOLDS = ".holds"
"""Shared-locked by each process whose loaded snapshot reads a version (VersionHold)."""
MANIFEST = "manifest.json"
LOCK = ".index.lock"


class IndexBusyError(GraphRagMcpError):
    """Another index run holds the root's lock."""


class DocumentChanges(BaseModel):
    """How the documents differ from the previous version (by content hash, not title)."""

    added: list[str] = []
    updated: list[str] = []
    deleted: list[str] = []
    renamed: list[str] = []

    @property
    def any(self) -> bool:
        """True when anything changed."""
        return bool(self.added or self.updated or self.deleted or self.renamed)


def current_version(root: Path) -> Path | None:
    """The directory `output` points to (or `output` itself in a root from before versions;
    `versions/legacy` after a takeover killed before `output` was linked)."""
    return served_output(root)


def graphrag_output(root: Path) -> Path | None:
    """`output` when it is a folder written by `graphrag index` (not yet a link to a version); the
    next run moves it to `legacy_version(root)`."""
    output = root / OUTPUT
    return output if output.is_dir() and not output.is_symlink() else None


def legacy_version(root: Path) -> Path:
    """Where a `graphrag index` output folder is kept (until the run after) once a version replaces
    it."""
    return root / LEGACY_OUTPUT


def read_manifest(version: Path | None) -> dict[str, str] | None:
    """title -> content id of a version's documents; None when it has no manifest."""
    if version is None or not (version / MANIFEST).exists():
        return None
    manifest: dict[str, str] = json.loads((version / MANIFEST).read_text(encoding="utf-8"))
    return manifest


def diff(previous: dict[str, str] | None, current: dict[str, str]) -> DocumentChanges:
    """Added, updated (same title, new content), deleted and renamed (same content, new title)
    documents."""
    previous = previous or {}
    gone = {title: content for title, content in previous.items() if title not in current}
    new = {title: content for title, content in current.items() if title not in previous}
    moved_contents = set(gone.values()) & set(new.values())
    return DocumentChanges(
        added=sorted(title for title, content in new.items() if content not in moved_contents),
        updated=sorted(t for t, c in current.items() if t in previous and previous[t] != c),
        deleted=sorted(title for title, content in gone.items() if content not in moved_contents),
        renamed=sorted(title for title, content in new.items() if content in moved_contents),
    )


@contextmanager
def index_lock(root: Path) -> Iterator[None]:
    """Hold the root's index lock for the block; refuse if another run holds it."""
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(root / LOCK, timeout=0)  # one try: flock on POSIX, msvcrt's lock on Windows
    try:
        lock.acquire()
    except Timeout:
        msg = f"another index run is updating {root}; wait for it to finish"
        raise IndexBusyError(msg) from None
    try:
        yield
    finally:
        lock.release()


def new_version(root: Path) -> Path:
    """An empty directory for the next version (invisible to readers until `switch_to`)."""
    version = root / VERSIONS / f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    version.mkdir(parents=True)
    return version


CRASH_AT = "GRAPHRAG_MCP_TEST_CRASH_AT"
"""Test hook: a run whose environment names one of its step boundaries here is killed there
(SIGKILL), as a power cut would kill it (tests/test_crash_safety.py); unset, `crash_point` costs one
dictionary lookup."""
PAUSE_AT = "GRAPHRAG_MCP_TEST_PAUSE_AT"
"""Test hook: a run pauses at the step boundary named here until a SIGTERM or SIGINT reaches it
(at most PAUSE_SECONDS), so that a test's cancel finds it there however slow the machine
(tests/test_security.py, tests/test_build_worker.py)."""
PAUSE_SECONDS = 120.0
SIGNALLED = threading.Event()
"""Set when a SIGTERM or SIGINT reaches an index run (the worker's handlers, signals_held): it ends
a PAUSE_AT pause even where the signal does not stop the run (held, or come too late)."""


def crash_point(boundary: str) -> None:
    """A named step boundary of an index run, where the CRASH_AT test hook kills the process and
    the PAUSE_AT one pauses it."""
    if os.environ.get(CRASH_AT) == boundary:
        os.kill(os.getpid(), signal.SIGKILL)
    if os.environ.get(PAUSE_AT) == boundary:
        # polled, not SIGNALLED.wait(): a handler's set() would deadlock on the lock wait() holds
        deadline = time.monotonic() + PAUSE_SECONDS
        while not SIGNALLED.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)  # a signal handler that raises interrupts the sleep


@contextmanager
def signals_held() -> Iterator[None]:
    """SIGTERM and SIGINT wait until the block ends: a cancel lands before a switch or after it,
    never inside it (where it would leave a version written whole but never served). Python runs
    signal handlers on the main thread only, so elsewhere the block runs as it is; a signal mask
    would not do, as another thread (LanceDB's, graphrag's) would take the signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: set[int] = set()

    def hold(signum: int, frame: object) -> None:
        held.add(signum)
        SIGNALLED.set()

    previous = {number: signal.signal(number, hold) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        for signum in sorted(held):
            signal.raise_signal(signum)


def switch_to(root: Path, version: Path, manifest: dict[str, str]) -> None:
    """Make `version` current in one atomic step, then keep only it and the one before. Killed at
    any point, the root still serves a whole version: the previous one until the link is replaced,
    this one after (a graphrag output folder moved aside is read where it lies until `output` links
    a version). A SIGTERM or SIGINT is held until the switch ends."""
    with signals_held():
        _switch(root, version, manifest)


def _switch(root: Path, version: Path, manifest: dict[str, str]) -> None:
    (version / MANIFEST).write_text(
        json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8"
    )
    crash_point("switch:manifest-written")
    output = root / OUTPUT
    previous = current_version(root)
    if (folder := graphrag_output(root)) is not None:  # a root from before versions: make it one
        previous = legacy_version(root)
        folder.rename(previous)
        crash_point("switch:legacy-moved")
    _seal(version)
    crash_point("switch:sealed")
    for stale in root.glob(f".{OUTPUT}.*"):  # links a run killed before replacing `output` left
        stale.unlink(missing_ok=True)
    link = root / f".{OUTPUT}.{uuid.uuid4().hex[:6]}"
    link.symlink_to(version.relative_to(root))
    crash_point("switch:linked")
    os.replace(link, output)
    crash_point("switch:switched")
    _prune(root, keep={version, previous})


def _prune(root: Path, keep: set[Path | None]) -> None:
    """Remove every version but those in `keep` and those a process holds (older ones and the
    leftovers of killed runs)."""
    for version in (root / VERSIONS).iterdir():
        if version.resolve() not in {path.resolve() for path in keep if path is not None}:
            remove_unheld(root, version)


class VersionHold:
    """A shared lock on `.holds/<version>.lock` while this object lives: the version is not removed
    under it (released when the last reference goes: a replaced snapshot once its running searches
    end)."""

    def __init__(self, root: Path, version: Path) -> None:
        (root / HOLDS).mkdir(exist_ok=True)
        descriptor = os.open(root / HOLDS / f"{version.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(descriptor, fcntl.LOCK_SH)
        self.version = version
        weakref.finalize(self, os.close, descriptor)


def hold_version(root: Path, version: Path | None) -> VersionHold | None:
    """A hold on `version` while a reader (a loaded snapshot and its searches) uses it; None where
    there is no version to hold (a graphrag project's own output/) or the root cannot be written (a
    read-only mount)."""
    if version is None or version.parent != (root / VERSIONS).resolve():
        return None
    try:
        return VersionHold(root, version)
    except OSError as error:
        logger.warning(
            "version %s read without a hold (not protected from pruning): %s", version.name, error
        )
        return None


def remove_unheld(root: Path, version: Path) -> bool:
    """Remove `version` unless a process holds it (a try for its lock, not a wait)."""
    lock = root / HOLDS / f"{version.name}.lock"
    lock.parent.mkdir(exist_ok=True)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return False
    try:
        discard(version)
        lock.unlink(missing_ok=True)
    finally:
        os.close(descriptor)
    return True


def discard(version: Path) -> None:
    """Remove a version (one that failed to build, or a sealed one no longer kept)."""
    for folder, _, _ in os.walk(version):
        _set_write(Path(folder), allowed=True)
    shutil.rmtree(version, ignore_errors=True)


def linked_copy(source: Path, target: Path) -> None:
    """`source`'s tree at `target`, each file hard-linked (copied where links are refused), folders
    writable: for data that is never changed in place (LanceDB's files), a copy that costs no data
    written."""

    shutil.copytree(source, target, copy_function=link_file)
    for folder, _, _ in os.walk(target):
        _set_write(Path(folder), allowed=True)


def link_file(source: str | Path, target: str | Path) -> None:
    """`source` at `target` as a hard link (a copy where links are refused): for a file that is
    never changed in place."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _seal(version: Path) -> None:
    """Take the write bits off every file and folder of a complete version."""
    for folder, _, files in os.walk(version, topdown=False):
        for name in files:
            _set_write(Path(folder) / name, allowed=False)
        _set_write(Path(folder), allowed=False)


def _set_write(path: Path, allowed: bool) -> None:
    if path.is_symlink():
        return
    mode = stat.S_IMODE(path.lstat().st_mode)
    path.chmod(
        mode | stat.S_IWUSR if allowed else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    )
