"""Which files of a data folder are documents: the same rule for `index`, `build_index` and the
watcher.

Never indexed: the index root (when it lies inside the data folder), hidden files and folders (a
name starting with '.': .git, .venv, editor state), and symbolic links whose target lies outside the
data folder. Links inside it are followed, each folder once. Of the rest, the files matching the
input's `file_pattern` are the documents.
"""

import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graphrag_mcp_server.errors import InputDataError
from graphrag_mcp_server.handlers.indexing.document_stamps import Stamp, stamp

INDEX_FOLDERS = ("output", "versions", "cache", "logs", "prompts")
"""What an index root holds of its own (a data folder may still live in it, as graphrag's
`input/`)."""


class SkipReason:
    """Why a file or folder of the data folder is not read (keys of `Selection.skipped`)."""

    HIDDEN = "hidden"
    INDEX_ROOT = "index_root"
    LINK_OUTSIDE = "link_outside"
    OTHER_TYPE = "other_type"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Limits:
    """Bounds on one run's documents; a folder over them is refused before anything is read."""

    max_documents: int
    max_bytes: int
    setting: str = "GRAPHRAG_MCP_MAX_JOB_DOCUMENTS / GRAPHRAG_MCP_MAX_JOB_BYTES"


@dataclass
class Selection:
    """The documents of a data folder (paths relative to it) and what was passed over."""

    files: list[str] = field(default_factory=list)
    bytes: int = 0
    stamps: dict[str, Stamp] = field(default_factory=dict)
    """Each file's stamp (document_stamps.py), taken from the listing's own stat."""
    read: int = 0
    """How many files were opened and read (the others: unchanged, taken from the last version)."""
    skipped: Counter[str] = field(default_factory=Counter)
    unreadable: dict[str, str] = field(default_factory=dict)
    """Files that matched but could not be read, with the reason."""


def skip_reason(path: Path, data_path: Path, index_root: Path) -> str | None:
    """Why `path` (under `data_path`, both resolved) is never a document, or None."""
    relative = path.relative_to(data_path)
    if any(part.startswith(".") for part in relative.parts):
        return SkipReason.HIDDEN
    return _placement(path.resolve(), path.is_symlink(), data_path, index_root)


def _placement(resolved: Path, link: bool, data_path: Path, index_root: Path) -> str | None:
    """Why a path resolving to `resolved` (`link`: through a symbolic link) is never a document."""
    if link and not resolved.is_relative_to(data_path):
        return SkipReason.LINK_OUTSIDE
    if resolved.is_relative_to(index_root) and not data_path.is_relative_to(index_root):
        return SkipReason.INDEX_ROOT
    return None


def select_documents(
    data_path: Path, index_root: Path, file_pattern: str, limits: Limits | None = None
) -> Selection:
    """The files of `data_path` to index, in graphrag's order; refuse a folder over `limits`."""
    data_path, index_root = data_path.resolve(), index_root.resolve()
    if data_path == index_root or any(
        data_path.is_relative_to(index_root / name) for name in INDEX_FOLDERS
    ):
        msg = (
            f"data path {data_path} is the index root or inside its own files; give the "
            "folder of your documents"
        )
        raise InputDataError(msg)
    walk = _Walk(data_path, index_root, re.compile(file_pattern))
    folders, seen, top = [data_path], set(), None
    while folders:
        folder = folders.pop()
        resolved = folder.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        try:
            listing = list(os.scandir(folder))
        except OSError:
            walk.selection.skipped[SkipReason.UNREADABLE] += 1
            continue
        top = [entry.name for entry in listing] if top is None else top
        holds_root = walk.holds_root(resolved)
        for entry in sorted(listing, key=lambda entry: entry.name, reverse=True):
            walk.consider(entry, resolved, holds_root, folders)
            if limits is not None:
                _check(walk.selection, data_path, limits)
    walk.selection.files = in_graphrag_order(data_path, walk.selection.files, top)
    return walk.selection


def in_graphrag_order(data_path: Path, files: list[str], top: list[str] | None = None) -> list[str]:
    """`files` in the order graphrag's FileStorage.find lists them (`Path.rglob`, the file system's
    order), the rest by path. Entities and relationships are numbered in document order and those
    numbers are in the report prompts: in graphrag's order, an index of a folder equals the one
    `graphrag index` builds from it, and reuses every cached call of a `graphrag index` project.
    Files all at the folder's top are in the order of its listing `top` (the names `os.scandir`
    gave): rglob lists the top folder's entries first, in that order, so the folder is not listed
    again (a second walk of 10,000 files through pathlib)."""
    if top is not None and not any("/" in file for file in files):
        listed = {name: position for position, name in enumerate(top)}
    else:
        relative = _relative_to(data_path)
        listed = {
            relative(str(path)): position for position, path in enumerate(data_path.rglob("**/*"))
        }
    return sorted(files, key=lambda file: (listed.get(file, len(listed)), file))


def _relative_to(data_path: Path) -> "Callable[[str], str]":
    """A path under `data_path` (as a string) -> its path relative to it, with forward slashes
    (`PurePath.relative_to(data_path).as_posix()`, by slicing: a folder of 10,000 files made
    most of a listing's time in pathlib)."""
    start = len(os.path.join(str(data_path), ""))
    return lambda path: path[start:].replace(os.sep, "/")


class _Walk:
    """What the folder walk of `select_documents` has selected and skipped so far, and how it
    tells one entry from its listing: a path is made or resolved again only for a folder or a
    link."""

    def __init__(self, data_path: Path, index_root: Path, pattern: re.Pattern[str]) -> None:
        self.data_path, self.index_root, self.pattern = data_path, index_root, pattern
        self.root_outside = not data_path.is_relative_to(index_root)
        self.relative = _relative_to(data_path)
        self.selection = Selection()

    def holds_root(self, folder: Path) -> bool:
        """Whether an entry of `folder` (resolved) may be the index root or inside it."""
        return self.root_outside and (
            folder.is_relative_to(self.index_root) or folder == self.index_root.parent
        )

    def consider(
        self, entry: os.DirEntry[str], folder: Path, holds_root: bool, folders: list[Path]
    ) -> None:
        """Select or skip one entry of `folder` (resolved; `holds_root`: see `holds_root`)."""
        selection, link = self.selection, entry.is_symlink()
        if entry.name.startswith("."):
            reason: str | None = SkipReason.HIDDEN
        elif link:
            reason = _placement(Path(entry.path).resolve(), link, self.data_path, self.index_root)
        else:
            reason = (
                _placement(folder / entry.name, link, self.data_path, self.index_root)
                if holds_root
                else None
            )
        if reason is not None:
            selection.skipped[reason] += 1
        elif entry.is_dir():
            folders.append(Path(entry.path))
        elif not entry.is_file() or not os.access(entry.path, os.R_OK):
            selection.skipped[SkipReason.UNREADABLE] += 1
            selection.unreadable[self.relative(entry.path)] = "no read permission"
        elif not self.pattern.search(entry.path):
            selection.skipped[SkipReason.OTHER_TYPE] += 1
        else:
            relative = self.relative(entry.path)
            status = entry.stat()
            selection.files.append(relative)
            selection.bytes += status.st_size
            selection.stamps[relative] = stamp(status)


def _check(selection: Selection, data_path: Path, limits: Limits) -> None:
    if len(selection.files) > limits.max_documents:
        msg = (
            f"{data_path} holds more than {limits.max_documents:,} documents, the limit of "
            f"one index job ({limits.setting}); index a smaller folder"
        )
        raise InputDataError(msg)
    if selection.bytes > limits.max_bytes:
        msg = (
            f"{data_path} holds more than {limits.max_bytes:,} bytes of documents "
            f"({len(selection.files):,} documents so far), the limit of one index job "
            f"({limits.setting}); index a smaller folder"
        )
        raise InputDataError(msg)
