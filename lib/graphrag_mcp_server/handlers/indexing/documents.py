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
    pattern, selection = re.compile(file_pattern), Selection()
    folders, seen = [data_path], set()
    while folders:
        folder = folders.pop()
        resolved = folder.resolve()
        if resolved in seen:
            continue
        seen.add(resolved)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name, reverse=True)
        except OSError:
            selection.skipped[SkipReason.UNREADABLE] += 1
            continue
        for entry in entries:
            _consider(entry, resolved, data_path, index_root, pattern, selection, folders)
            if limits is not None:
                _check(selection, data_path, limits)
    selection.files = in_graphrag_order(data_path, selection.files)
    return selection


def in_graphrag_order(data_path: Path, files: list[str]) -> list[str]:
    """`files` in the order graphrag's FileStorage.find lists them (`Path.rglob`, the file system's
    order), the rest by path. Entities and relationships are numbered in document order and those
    numbers are in the report prompts: in graphrag's order, an index of a folder equals the one
    `graphrag index` builds from it, and reuses every cached call of a `graphrag index` project."""
    listed = {
        path.relative_to(data_path).as_posix(): position
        for position, path in enumerate(data_path.rglob("**/*"))
    }
    return sorted(files, key=lambda file: (listed.get(file, len(listed)), file))


def _consider(
    entry: os.DirEntry[str],
    folder: Path,
    data_path: Path,
    index_root: Path,
    pattern: re.Pattern[str],
    selection: Selection,
    folders: list[Path],
) -> None:
    """Select or skip one entry of `folder` (resolved), from what its listing already knows: a
    path is resolved again only when it is a link."""
    path, link = Path(entry.path), entry.is_symlink()
    resolved = path.resolve() if link else folder / entry.name
    if entry.name.startswith("."):
        reason: str | None = SkipReason.HIDDEN
    else:
        reason = _placement(resolved, link, data_path, index_root)
    if reason is not None:
        selection.skipped[reason] += 1
    elif entry.is_dir():
        folders.append(path)
    elif not entry.is_file() or not os.access(path, os.R_OK):
        selection.skipped[SkipReason.UNREADABLE] += 1
        selection.unreadable[path.relative_to(data_path).as_posix()] = "no read permission"
    elif not pattern.search(str(path)):
        selection.skipped[SkipReason.OTHER_TYPE] += 1
    else:
        relative = path.relative_to(data_path).as_posix()
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
