"""A replica's local copy of a blob container's versions: one whole version at a time, through
any error.

Layout of a replica's root (beside indexing/versions.py's)::

    output -> versions/<id>          switched in one step when a new version is down
    versions/<id>/.root/             the settings.yaml and prompts/ the version goes with
    settings.yaml -> output/.root/settings.yaml, prompts -> output/.root/prompts
                                     so one `output` switch moves tables, settings and prompts
    .holds/<id>.lock                 shared-locked by each process whose loaded snapshot reads
                                     <id> (versions.py)
    .follower.json                   the follower's last good poll and last error (get_statistics)

A version is removed only when it is neither current nor previous and no process holds it.
"""

import asyncio
import logging
import os
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing import versions as local
from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation, storage_errors
from graphrag_mcp_server.handlers.indexing.blob.versions import (
    ROOT_FILES,
    STAGING,
    BlobIndex,
    read_manifest,
)
from graphrag_mcp_server.handlers.results import ReplicaStatus

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

logger = logging.getLogger(__name__)

ROOT_COPY = ".root"
STATUS_FILE = ".follower.json"
BACKOFF_LIMIT_SECONDS = 30.0
"""The longest wait between two polls after failed ones (each failure doubles the wait from the
poll period)."""
LEFTOVER_SECONDS = 3600.0
"""A download folder untouched this long was left by a killed follower."""


def is_replica_copy(root: Path) -> bool:
    """True when `root` is laid out by take_version (its settings.yaml a link into `output`)."""
    return (root / ROOT_FILES[0]).is_symlink()


def version_root_files(root: Path, version: Path | None) -> Path:
    """Where the settings.yaml and prompts of `version` are: in it when the root links to them (a
    replica), else the root itself."""
    if version is not None and is_replica_copy(root) and (version / ROOT_COPY).is_dir():
        return version / ROOT_COPY
    return root


def pin_prompts(config: "GraphRagConfig", root: Path, version: Path | None) -> "GraphRagConfig":
    """The config reading its search prompts from `version`'s own copy (a replica), so that a
    search started after a switch still reads the prompts of the version its snapshot holds."""
    files = version_root_files(root, version)
    if files == root:
        return config
    sections = {}
    for name in ("local_search", "global_search", "drift_search", "basic_search"):
        section = getattr(config, name)
        pinned = {
            field: str(files / value)
            for field in type(section).model_fields
            if field.endswith("prompt")
            and isinstance(value := getattr(section, field), str)
            and not Path(value).is_absolute()
        }
        sections[name] = section.model_copy(update=pinned)
    return config.model_copy(update=sections)


def take_version(root: Path, staging: Path, location: BlobLocation, version: str) -> Path:
    """Make a downloaded version current: its root files moved into it, the `output` link switched
    in one step (tables, settings and prompts together), then versions no process holds pruned."""
    read_manifest(
        staging / "output", location, version
    )  # a malformed one is refused before the switch
    target = root / local.VERSIONS / version
    stamp = (staging / "output" / local.MANIFEST).stat().st_mtime
    if (
        target.exists()
    ):  # from before (a version switched back to): the same files, but perhaps held
        shutil.rmtree(staging)
        if not (target / ROOT_COPY).is_dir():
            raise GraphRagMcpError(
                f"{location}: the local copy of version {version} lacks its settings; "
                f"remove {target} and the replica downloads it again"
            )
    else:
        if (staging / "root").is_dir():
            (staging / "root").rename(staging / "output" / ROOT_COPY)
        os.utime(staging / "output", (stamp, stamp))
        (staging / "output").rename(target)
        shutil.rmtree(staging)
        local._seal(target)
    previous = local.current_version(root)
    _link(root / local.OUTPUT, target.relative_to(root))
    for name in ROOT_FILES:
        _link(root / name, Path(local.OUTPUT, ROOT_COPY, name))
    try:
        prune(root, keep={target, previous})
    except OSError as error:  # the switch is done; the next one prunes again
        logger.warning("versions not pruned in %s: %s", root, error)
    return target


def _link(path: Path, to: Path) -> None:
    """`path` made a link to `to` in one step (a folder or file there before is removed first)."""
    if path.is_symlink() and path.readlink() == to:
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    link = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}")
    link.symlink_to(to)
    os.replace(link, path)


def prune(root: Path, keep: set[Path | None]) -> list[str]:
    """Remove the versions not in `keep` that no process holds, and downloads a killed follower
    left; their names."""
    kept = {path.resolve() for path in keep if path is not None}
    removed = []
    for version in sorted((root / local.VERSIONS).iterdir()):
        if version.resolve() in kept:
            continue
        if version.name.startswith(STAGING):
            if time.time() - version.stat().st_ctime > LEFTOVER_SECONDS:
                local.discard(version)
            continue
        if local.remove_unheld(root, version):
            removed.append(version.name)
    return removed


def no_version_yet(root: Path, location: str) -> str:
    """What a replica without a version answers: what the operator does (replicas build nothing),
    and why the follower has none yet when it failed."""
    status = read_status(root)
    why = (
        f"; the follower's last error: {status.last_error}"
        if status and status.consecutive_failures
        else ""
    )
    return (
        f"no index version from {location} on this replica yet (local copy {root}): the indexer "
        f"publishes one: run graphrag-mcp index DATA_PATH --storage {location} on the indexer "
        f"host{why}"
    )


def read_status(root: Path) -> ReplicaStatus | None:
    """What the follower of `root` last recorded (None when no follower ever ran there)."""
    try:
        return ReplicaStatus.model_validate_json((root / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _record(root: Path, status: ReplicaStatus) -> None:
    """Write the status in one step (readers in other processes see the old or the new one)."""
    partial = root / f".{STATUS_FILE}.{uuid.uuid4().hex[:6]}"
    try:
        root.mkdir(parents=True, exist_ok=True)
        partial.write_text(status.model_dump_json(), encoding="utf-8")
        os.replace(partial, root / STATUS_FILE)
    except OSError as error:
        logger.warning("follower status not recorded in %s: %s", root, error)


def next_wait(poll_seconds: float, failures: int) -> float:
    """The wait before the next poll: the poll period, doubled by each failure since the last good
    poll, up to BACKOFF_LIMIT_SECONDS (or the poll period when that is longer)."""
    return min(poll_seconds * 2.0 ** min(failures, 16), max(poll_seconds, BACKOFF_LIMIT_SECONDS))


async def follow(
    location: BlobLocation,
    root: Path,
    poll_seconds: float,
    switched: Callable[[str], Awaitable[None]] | None = None,
    once: bool = False,
) -> str | None:
    """Keep the local copy `root` on the current version of `location`: read current.json, download
    a new version whole beside the served one and switch to it, then await `switched(version)`. Any
    failure (storage, a malformed current.json or manifest.json, a missing container, the local
    disk) is recorded in .follower.json and the next poll waits longer (next_wait); the served
    version stays. With `once`: one poll, whose errors are raised; returns the version then current
    (None before the first)."""
    status = ReplicaStatus(location=str(location))
    index: BlobIndex | None = None
    while True:
        now = datetime.now(UTC)
        try:
            if index is None:
                index = await asyncio.to_thread(BlobIndex, location)
            version = await _poll(index, root, switched)
            status = status.model_copy(
                update={"version": version, "last_successful_poll": now, "consecutive_failures": 0}
            )
        except Exception as error:  # noqa: BLE001 - any failure: the served version stays
            if once:
                raise _one_line(error, location) from None
            status = status.model_copy(
                update={
                    "last_error": str(_one_line(error, location)),
                    "last_error_at": now,
                    "consecutive_failures": status.consecutive_failures + 1,
                }
            )
            logger.warning(
                "%s; still serving the version before (next try in %.1f s)",
                status.last_error,
                next_wait(poll_seconds, status.consecutive_failures),
            )
        _record(root, status)
        if once:
            return status.version
        await asyncio.sleep(next_wait(poll_seconds, status.consecutive_failures))


async def _poll(
    index: BlobIndex, root: Path, switched: Callable[[str], Awaitable[None]] | None
) -> str | None:
    """One poll: the version current.json names, downloaded and switched to if the local copy is
    not on it."""
    location = index.location
    with storage_errors(f"reading {location}", location):
        pointer, _ = await asyncio.to_thread(index.pointer)
        if pointer is None:
            return None
        served = local.current_version(root)
        if served is None or served.name != pointer.version:
            staging = await asyncio.to_thread(index.download, root, pointer.version)
            try:
                await asyncio.to_thread(take_version, root, staging, location, pointer.version)
            finally:
                if staging.exists():
                    await asyncio.to_thread(local.discard, staging)
            logger.info("%s: switched to version %s", location, pointer.version)
            if switched is not None:
                await switched(pointer.version)
    return pointer.version


def _one_line(error: Exception, location: BlobLocation) -> GraphRagMcpError:
    """`error` as one line naming the location (ours already are)."""
    if isinstance(error, GraphRagMcpError):
        return error
    reason = " ".join(str(error).split())[:300]
    return GraphRagMcpError(f"{location}: following failed: {type(error).__name__}: {reason}")
