"""A version's files by content: each file's bytes stored once as objects/<sha256>, each version a
listing (versions/ID/files.json) of its paths and their content, so that an update uploads, and a
replica downloads, only the content the container or the local copy lacks."""

import hashlib
import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

OBJECTS = "objects"
LISTING = "files.json"


class Entry(BaseModel, frozen=True):
    """One file of a version: its content's sha256 and size, and the mtime every host gives it (the
    time of the version that first published this content at this path)."""

    sha256: str
    size: int
    mtime_ns: int


class Listing(BaseModel):
    """A version's files (`output/...`, `root/...`) by content; written after all its objects."""

    format: Literal[1] = 1
    published_at: datetime
    files: dict[str, Entry]


class Transfer(BaseModel):
    """What a version's upload or download moved, of all it holds."""

    files: int = 0
    bytes: int = 0
    moved_files: int = 0
    moved_bytes: int = 0

    def __str__(self) -> str:
        return (
            f"{self.moved_files} of {self.files} files, "
            f"{self.moved_bytes:,} of {self.bytes:,} bytes"
        )


def digest(path: Path) -> str:
    """The sha256 of a file's content (hex)."""
    with path.open("rb") as data:
        return hashlib.file_digest(data, "sha256").hexdigest()


def listing_of(files: dict[str, Path], previous: Listing | None, now: datetime) -> Listing:
    """The listing of a version's files (name in the version -> local path): a file whose content
    the previous version had at the same name keeps that entry's mtime, any other gets `now`."""
    entries, stamp = {}, int(now.timestamp()) * 10**9
    for name, path in files.items():
        sha256, size = digest(path), path.stat().st_size
        before = previous.files.get(name) if previous else None
        same = before is not None and before.sha256 == sha256 and before.size == size
        mtime_ns = before.mtime_ns if before is not None and same else stamp
        entries[name] = Entry(sha256=sha256, size=size, mtime_ns=mtime_ns)
    return Listing(published_at=now, files=entries)


def reuse_local(entry: Entry, local: Path | None, target: Path) -> bool:
    """Put at `target` the local file `local` when it holds `entry`'s content: hard-linked when it
    already has the entry's mtime (files are never changed in place), else copied (a local read,
    not a download); False when it does not hold that content."""
    if local is None or not local.is_file() or local.stat().st_size != entry.size:
        return False
    if digest(local) != entry.sha256:
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    if local.stat().st_mtime_ns == entry.mtime_ns:
        try:
            os.link(local, target)
            return True
        except OSError:  # another file system, or links refused
            pass
    shutil.copyfile(local, target)
    os.utime(target, ns=(entry.mtime_ns, entry.mtime_ns))
    return True
