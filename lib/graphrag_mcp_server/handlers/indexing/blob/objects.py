"""A version's files by content, so that an update uploads, and a replica downloads, only the
content the container or the local copy lacks. Each version is a listing (versions/ID/files.json)
of its paths and their content.

A file that no update changes once written (LanceDB's, the prompts) is stored whole, once, as
objects/<sha256>. A parquet table, which graphrag writes anew on every update, (and a JSON record
of the version, such as manifest.json) is stored in pieces
cut at content-defined boundaries (FastCDC): its pages that did not change are the same bytes
(parquet_pages.py), so they cut into the same pieces. An upload gathers the pieces no earlier
version holds into packs (packs/VERSION-N, up to PACK_BYTES each, one blob each); a replica
rebuilds the table from the pieces its own copy holds and reads the rest as byte ranges of packs.
"""

import hashlib
import os
import shutil
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

OBJECTS = "objects"
PACKS = "packs"
LISTING = "files.json"
PIECE_SIZES = {"min_size": 2 * 1024, "avg_size": 8 * 1024, "max_size": 32 * 1024}
"""FastCDC's bounds: pieces of 8 KiB on average (a parquet page of parquet_pages is 8-32 KiB before
compression), so an edit's few changed pages cost a few pieces each."""
PACK_BYTES = 16 * 2**20
GAP_BYTES = 64 * 1024
"""Wanted pieces of one pack closer than this are read in one ranged request."""


class Piece(BaseModel, frozen=True):
    """One piece of a file stored in pieces: its content's sha256 and size, and where it lies in
    which pack."""

    sha256: str
    size: int
    pack: str
    offset: int


class Entry(BaseModel, frozen=True):
    """One file of a version: its content's sha256 and size, and the mtime every host gives it (the
    time of the version that first published this content at this path)."""

    sha256: str
    size: int
    mtime_ns: int
    pieces: tuple[Piece, ...] = ()
    """The file's pieces in order when it is stored in pieces; none when stored whole."""


class Listing(BaseModel):
    """A version's files (`output/...`, `root/...`) by content; written after all its objects and
    packs. Format 2 adds pieces (format 1 listings, whole objects only, are still read)."""

    format: Literal[1, 2] = 2
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


def in_pieces(name: str) -> bool:
    """Whether a version's file is stored in pieces: its parquet tables and JSON records (such as
    manifest.json, a line per document), which every update writes anew; LanceDB's files, never
    changed once written, are stored whole."""
    folder, _, file = name.rpartition("/")
    return folder == "output" and file.endswith((".parquet", ".json"))


def cut(data: bytes) -> list[tuple[str, int, int]]:
    """`data` cut into pieces at content-defined boundaries: (sha256, offset, size) each."""
    from fastcdc import fastcdc

    return [
        (chunk.hash, chunk.offset, chunk.length)
        for chunk in fastcdc(data, **PIECE_SIZES, hf=hashlib.sha256)
    ]


class Packer:
    """Pieces of a version's files: those a pack already holds taken from there, new ones gathered
    into packs named VERSION-N, each handed to `send` (pack name, bytes) once full or finished."""

    def __init__(
        self, version: str, held: Iterable[Piece], send: Callable[[str, bytes], None]
    ) -> None:
        self.version, self.send = version, send
        self.held = {piece.sha256: piece for piece in held}
        self.packs, self.sent_bytes = 0, 0
        self.pack = bytearray()

    def pieces(self, data: bytes) -> tuple[Piece, ...]:
        """`data`'s pieces, each new one added to the open pack."""
        pieces = []
        for sha256, offset, size in cut(data):
            piece = self.held.get(sha256)
            if piece is None:
                if len(self.pack) + size > PACK_BYTES:
                    self.finish()
                piece = Piece(sha256=sha256, size=size, pack=self.name, offset=len(self.pack))
                self.pack += data[offset : offset + size]
                self.held[sha256] = piece
            pieces.append(piece)
        return tuple(pieces)

    @property
    def name(self) -> str:
        return f"{self.version}-{self.packs}"

    def finish(self) -> None:
        """Send the open pack, if it holds anything."""
        if self.pack:
            self.send(self.name, bytes(self.pack))
            self.sent_bytes += len(self.pack)
            self.packs += 1
            self.pack = bytearray()


def held_pieces(*listings: "Listing | None") -> list[Piece]:
    """The pieces the listings' files are made of."""
    return [
        piece
        for listing in listings
        if listing is not None
        for entry in listing.files.values()
        for piece in entry.pieces
    ]


class Span(BaseModel):
    """One ranged read of a pack: its bytes [start, end) and the pieces they hold."""

    pack: str
    start: int
    end: int
    pieces: list[Piece]


def spans(pieces: Iterable[Piece]) -> list[Span]:
    """The ranged reads that fetch `pieces`: one per run of pieces of a pack with gaps under
    GAP_BYTES."""
    reads: list[Span] = []
    for piece in sorted(set(pieces), key=lambda piece: (piece.pack, piece.offset)):
        end = piece.offset + piece.size
        last = reads[-1] if reads else None
        if last is not None and last.pack == piece.pack and piece.offset - last.end < GAP_BYTES:
            last.end = max(last.end, end)
            last.pieces.append(piece)
        else:
            reads.append(Span(pack=piece.pack, start=piece.offset, end=end, pieces=[piece]))
    return reads


def local_pieces(local: Path | None) -> dict[str, tuple[int, int]]:
    """The pieces the local file `local` holds, cut as an upload cuts: sha256 -> (offset, size)."""
    data = local.read_bytes() if local is not None and local.is_file() else b""
    return {sha256: (offset, size) for sha256, offset, size in cut(data)}


def lacking(entry: Entry, own: dict[str, tuple[int, int]]) -> set[Piece]:
    """The pieces of `entry` that a local file holding `own` (local_pieces) does not hold."""
    return {piece for piece in entry.pieces if piece.sha256 not in own}


def assemble(
    entry: Entry,
    local: Path | None,
    own: dict[str, tuple[int, int]],
    fetched: dict[str, bytes],
    target: Path,
) -> bool:
    """Write at `target` the file of `entry`'s pieces, each from the local file `local` (holding
    `own`: local_pieces) or from `fetched`; False when the result is not the entry's content."""
    data = local.read_bytes() if own and local is not None else b""
    target.parent.mkdir(parents=True, exist_ok=True)
    check = hashlib.sha256()
    with target.open("wb") as out:
        for piece in entry.pieces:
            if piece.sha256 in own:
                offset, size = own[piece.sha256]
                part = data[offset : offset + size]
            else:
                part = fetched[piece.sha256]
            check.update(part)
            out.write(part)
    os.utime(target, ns=(entry.mtime_ns, entry.mtime_ns))
    return check.hexdigest() == entry.sha256


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
