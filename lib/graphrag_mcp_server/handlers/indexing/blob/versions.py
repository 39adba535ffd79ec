"""The version protocol of a blob location: current.json read and switched by a conditional
write, a version's files uploaded and downloaded whole, the LLM cache synced, old versions
collected (the layout is in this package's docstring)."""

import json
import logging
import os
import shutil
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from graphrag_mcp_server.config.index_root import SETTINGS_FILE
from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing import versions as local
from graphrag_mcp_server.handlers.indexing.blob import objects
from graphrag_mcp_server.handlers.indexing.blob.client import (
    BlobLocation,
    container_client,
    storage_errors,
)

if TYPE_CHECKING:
    from azure.storage.blob import BlobProperties, ContentSettings

logger = logging.getLogger(__name__)

POINTER = "current.json"
ROOT_FILES = (SETTINGS_FILE, "prompts")
"""What of the index root travels with each version: the config and prompts its searches use."""
STAGING = ".download-"
"""The name of a version's folder while it downloads, before the version's id."""
TRANSFER_THREADS = 8
Item = TypeVar("Item")


class ContainerMissingError(GraphRagMcpError):
    """The location's container does not exist."""


class VersionConflictError(GraphRagMcpError):
    """The current version changed under an indexer that no longer held the lease."""


class Pointer(BaseModel):
    """The content of current.json."""

    version: str
    previous: str | None = None
    switched_at: datetime


class BlobIndex:
    """The index versions of one blob location: the pointer, the versions' files, the cache."""

    def __init__(self, location: BlobLocation) -> None:
        self.location = location
        self.container = container_client(location)

    def create_container(self) -> None:
        """Create the container if it does not exist."""
        from azure.core.exceptions import ResourceExistsError

        with suppress(ResourceExistsError):
            self.container.create_container()

    def pointer(self) -> tuple[Pointer | None, str | None]:
        """current.json and its ETag; (None, None) before the first version."""
        from azure.core.exceptions import ResourceNotFoundError
        from pydantic import ValidationError

        try:
            download = self.container.download_blob(self.location.blob(POINTER))
        except ResourceNotFoundError as error:
            if getattr(error, "error_code", None) == "ContainerNotFound":
                msg = (
                    f"{self.location}: the container {self.location.container} does not exist "
                    "(deleted, or not created yet); the indexer creates it and publishes a "
                    f"version: run graphrag-mcp index DATA_PATH --storage {self.location} on "
                    "the indexer host"
                )
                raise ContainerMissingError(msg) from None
            return None, None
        try:
            return Pointer.model_validate_json(download.readall()), download.properties.etag
        except ValidationError as error:
            msg = (
                f"{self.location}: {POINTER} is malformed ({error.errors()[0]['msg']}); the "
                "indexer writes a whole one at its next publish: run graphrag-mcp index "
                f"DATA_PATH --storage {self.location}"
            )
            raise GraphRagMcpError(msg) from None

    def switch(self, version: str, previous: Pointer | None, etag: str | None) -> Pointer:
        """Make `version` current by one conditional write: only if current.json is still what
        the indexer read (its ETag), or still absent; else VersionConflictError (another indexer
        switched meanwhile)."""
        from azure.core import MatchConditions
        from azure.core.exceptions import ResourceExistsError, ResourceModifiedError

        pointer = Pointer(
            version=version,
            previous=previous.version if previous else None,
            switched_at=datetime.now(UTC),
        )
        condition = (
            {"etag": etag, "match_condition": MatchConditions.IfNotModified}
            if etag
            else {"match_condition": MatchConditions.IfMissing}
        )
        try:
            self.container.upload_blob(
                self.location.blob(POINTER),
                pointer.model_dump_json(),
                overwrite=True,
                content_settings=_json_content(),
                **condition,
            )
        except (ResourceModifiedError, ResourceExistsError):
            msg = (
                f"{self.location}: the current version changed while this indexer ran (its "
                "lease had lapsed); nothing was switched: run the index command again"
            )
            raise VersionConflictError(msg) from None
        return pointer

    def upload_version(
        self, root: Path, version: Path, previous: str | None = None
    ) -> objects.Transfer:
        """Upload a built version: its parquet tables as pieces (those no listed version's packs
        hold, in new packs: an edit undone sends nothing again), the content of its other files
        (and of the root files it goes with) that the container's objects lack, then its listing;
        what it uploaded of all it holds. `previous`: the version it was built from, whose files'
        mtimes unchanged ones keep."""
        files = {f"output/{path.relative_to(version).as_posix()}": path for path in _files(version)}
        for name in ROOT_FILES:
            files |= {
                f"root/{path.relative_to(root).as_posix()}": path for path in _files(root / name)
            }
        before = self.listing(previous) if previous else None
        listing = objects.listing_of(files, before, datetime.now(UTC))
        stored = objects.held_pieces(before, *self._other_listings(previous))
        packer = objects.Packer(version.name, stored, self._upload_pack)
        for name, entry in listing.files.items():
            if objects.in_pieces(name):
                kept = before.files.get(name) if before else None
                pieces = (
                    kept.pieces
                    if kept is not None and kept.sha256 == entry.sha256 and kept.pieces
                    else packer.pieces(files[name].read_bytes())
                )
                listing.files[name] = entry.model_copy(update={"pieces": pieces})
        packer.finish()
        held = self._objects()
        missing = {
            entry.sha256: files[name]
            for name, entry in listing.files.items()
            if not entry.pieces and held.get(entry.sha256, (-1,))[0] != entry.size
        }
        self._upload([(path, self._object(sha256)) for sha256, path in missing.items()])
        self.container.upload_blob(
            self.location.blob(local.VERSIONS, version.name, objects.LISTING),
            listing.model_dump_json(),
            overwrite=True,
            content_settings=_json_content(),
        )
        return objects.Transfer(
            files=len(files),
            bytes=sum(entry.size for entry in listing.files.values()),
            moved_files=len(missing) + packer.packs,
            moved_bytes=sum(path.stat().st_size for path in missing.values()) + packer.sent_bytes,
        )

    def _upload_pack(self, name: str, data: bytes) -> None:
        self.container.upload_blob(self._pack(name), data, overwrite=True, max_concurrency=4)

    def listing(self, version: str) -> objects.Listing | None:
        """The listing of `version`; None for a version without one (published before listings,
        or not uploaded whole); a malformed one is a one-line error."""
        from azure.core.exceptions import ResourceNotFoundError
        from pydantic import ValidationError

        name = self.location.blob(local.VERSIONS, version, objects.LISTING)
        try:
            return objects.Listing.model_validate_json(self.container.download_blob(name).readall())
        except ResourceNotFoundError:
            return None
        except ValidationError:
            msg = (
                f"{self.location}: version {version}'s {objects.LISTING} is malformed; publish a "
                f"new version: run graphrag-mcp index DATA_PATH --storage {self.location} --full "
                "on the indexer host"
            )
            raise GraphRagMcpError(msg) from None

    def _other_listings(self, previous: str | None) -> list[objects.Listing | None]:
        """The listings of the container's versions but `previous`; a malformed one is skipped (its
        pieces are sent again, nothing is lost)."""
        listings = []
        for name in self._versions().keys() - {previous}:
            with suppress(GraphRagMcpError):
                listings.append(self.listing(name))
        return listings

    def _versions(self) -> dict[str, list["BlobProperties"]]:
        """The versions the container holds: name -> its blobs."""
        prefix = self.location.blob(local.VERSIONS) + "/"
        names: dict[str, list[BlobProperties]] = {}
        for blob in self.container.list_blobs(name_starts_with=prefix):
            names.setdefault(blob.name[len(prefix) :].split("/", 1)[0], []).append(blob)
        return names

    def _objects(self) -> dict[str, tuple[int, datetime]]:
        """The content the container holds: sha256 -> (size, last modified)."""
        prefix = self.location.blob(objects.OBJECTS) + "/"
        return {
            blob.name[len(prefix) :]: (blob.size, blob.last_modified)
            for blob in self.container.list_blobs(name_starts_with=prefix)
        }

    def _object(self, sha256: str) -> str:
        return self.location.blob(objects.OBJECTS, sha256)

    def _pack(self, name: str) -> str:
        return self.location.blob(objects.PACKS, name)

    def _packs(self) -> dict[str, datetime]:
        """The packs the container holds: name -> last modified."""
        prefix = self.location.blob(objects.PACKS) + "/"
        return {
            blob.name[len(prefix) :]: blob.last_modified
            for blob in self.container.list_blobs(name_starts_with=prefix)
        }

    def upload_cache(self, root: Path) -> int:
        """Upload the local cache entries the container does not hold; their number."""
        prefix = self.location.blob("cache") + "/"
        present = {blob.name for blob in self.container.list_blobs(name_starts_with=prefix)}
        files = [
            (path, blob)
            for path in _files(root / "cache")
            if (blob := self.location.blob("cache", path.relative_to(root / "cache").as_posix()))
            not in present
        ]
        self._upload(files)
        return len(files)

    def download_cache(self, root: Path) -> int:
        """Download the cache entries the local copy lacks; their number."""
        prefix = self.location.blob("cache") + "/"
        wanted = [
            (blob.name, root / "cache" / blob.name[len(prefix) :])
            for blob in self.container.list_blobs(name_starts_with=prefix)
        ]
        missing = [(name, path) for name, path in wanted if not path.exists()]
        self._download(missing)
        return len(missing)

    def download(self, root: Path, version: str) -> Path:
        """Download `version` into a staging folder of the local copy (beside what it serves): its
        `output` and its `root` files, the content the local copy holds at the same name (its
        current version, its root files) linked or copied from there, not downloaded; every file
        with the same mtime on every host, so each host's copy of a version has the same
        index_version; the staging folder."""
        staging = root / local.VERSIONS / f"{STAGING}{version}-{uuid.uuid4().hex[:6]}"
        try:
            listing = self.listing(version)
            if listing is None:  # published before listings: every file under the version
                self._download_whole(version, staging)
            else:
                moved = self._download_listed(root, version, listing, staging)
                logger.info("%s: version %s downloaded: %s", self.location, version, moved)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return staging

    def _download_listed(
        self, root: Path, version: str, listing: objects.Listing, staging: Path
    ) -> objects.Transfer:
        """The listed files into `staging`: from the local copy where it holds their content, else
        from the objects; the files fetched of all."""
        if f"output/{local.MANIFEST}" not in listing.files:
            msg = f"{self.location}: version {version} is named current but its files are missing"
            raise GraphRagMcpError(msg)
        held = {"output": local.current_version(root), "root": root}
        wanted: list[tuple[str, Path]] = []
        pieced: list[tuple[objects.Entry, Path | None, dict[str, tuple[int, int]], Path]] = []
        for name, entry in listing.files.items():
            part, _, rest = name.partition("/")
            if part not in held or ".." in PurePosixPath(rest).parts or not rest:
                msg = (
                    f"{self.location}: version {version}'s {objects.LISTING} names {name!r}, "
                    "outside a version; publish a new version: run graphrag-mcp index DATA_PATH "
                    f"--storage {self.location} --full on the indexer host"
                )
                raise GraphRagMcpError(msg)
            base = held[part]
            source = (base / rest).resolve() if base is not None else None
            if objects.reuse_local(entry, source, staging / name):
                continue
            if entry.pieces:
                pieced.append((entry, source, objects.local_pieces(source), staging / name))
            else:
                wanted.append((self._object(entry.sha256), staging / name))
        self._download(wanted)
        for _, path in wanted:
            mtime_ns = listing.files[path.relative_to(staging).as_posix()].mtime_ns
            os.utime(path, ns=(mtime_ns, mtime_ns))
        reads = objects.spans(
            {piece for entry, _, own, _ in pieced for piece in objects.lacking(entry, own)}
        )
        fetched = self._fetch_pieces(reads)
        for entry, source, own, target in pieced:
            if not objects.assemble(entry, source, own, fetched, target):
                msg = (
                    f"{self.location}: version {version}'s {target.relative_to(staging)} does not "
                    "match its listing once put together from its pieces; publish a new version: "
                    f"run graphrag-mcp index DATA_PATH --storage {self.location} --full on the "
                    "indexer host"
                )
                raise GraphRagMcpError(msg)
        stamp = listing.published_at.timestamp()
        for folder in [staging, *(path for path in staging.rglob("*") if path.is_dir())]:
            os.utime(folder, (stamp, stamp))
        return objects.Transfer(
            files=len(listing.files),
            bytes=sum(entry.size for entry in listing.files.values()),
            moved_files=len(wanted) + len(pieced),
            moved_bytes=sum(path.stat().st_size for _, path in wanted)
            + sum(span.end - span.start for span in reads),
        )

    def _fetch_pieces(self, reads: list[objects.Span]) -> dict[str, bytes]:
        """The content of the pieces of `reads` by sha256, each read a ranged read of a pack."""
        fetched: dict[str, bytes] = {}

        def fetch(span: objects.Span) -> None:
            data = self.container.download_blob(
                self._pack(span.pack), offset=span.start, length=span.end - span.start
            ).readall()
            for piece in span.pieces:
                begin = piece.offset - span.start
                fetched[piece.sha256] = data[begin : begin + piece.size]

        _each(fetch, reads)
        return fetched

    def _download_whole(self, version: str, staging: Path) -> None:
        """A version published before listings: every blob under it, each file and folder with the
        version's newest blob time."""
        prefix = self.location.blob(local.VERSIONS, version) + "/"
        blobs = list(self.container.list_blobs(name_starts_with=prefix))
        if not any(blob.name == prefix + "output/" + local.MANIFEST for blob in blobs):
            msg = f"{self.location}: version {version} is named current but its files are missing"
            raise GraphRagMcpError(msg)
        self._download([(blob.name, staging / blob.name[len(prefix) :]) for blob in blobs])
        stamp = max(blob.last_modified for blob in blobs).timestamp()
        for path in [staging, *staging.rglob("*")]:
            os.utime(path, (stamp, stamp))

    def fetch(self, root: Path, version: str) -> Path:
        """The indexer's copy of `version`: downloaded, its settings.yaml and prompts replacing
        the root's where they differ, then the local `output` switched to it in one step."""
        staging = self.download(root, version)
        stamp = (staging / "output" / local.MANIFEST).stat().st_mtime
        manifest = read_manifest(staging / "output", self.location, version)
        _replace_root_files(root, staging / "root", stamp)
        target = root / local.VERSIONS / version
        if target.exists():
            local.discard(target)
        (staging / "output").rename(target)
        shutil.rmtree(staging)
        local.switch_to(root, target, manifest)
        return target

    def collect_garbage(self, keep: set[str], grace_seconds: float) -> list[str]:
        """Delete the versions not in `keep` whose newest file is older than the grace period
        (left by earlier switches, or by an indexer killed before its switch), then the objects
        older than that which no remaining version lists; the versions deleted."""
        names = self._versions()
        cutoff = datetime.now(UTC) - timedelta(seconds=grace_seconds)
        old = [
            version
            for version, blobs in names.items()
            if version not in keep and max(blob.last_modified for blob in blobs) < cutoff
        ]
        for version in old:
            self._delete([blob.name for blob in names[version]])
        listed: set[str] = set()
        packed: set[str] = set()
        for version in names.keys() - set(old):
            try:
                listing = self.listing(version)
            except GraphRagMcpError as error:  # what it lists is unknown: no content is deleted
                logger.warning("content not collected: %s", error)
                return old
            files = listing.files.values() if listing else ()
            listed |= {entry.sha256 for entry in files if not entry.pieces}
            packed |= {piece.pack for entry in files for piece in entry.pieces}
        self._delete(
            [
                self._object(sha256)
                for sha256, (_, modified) in self._objects().items()
                if sha256 not in listed and modified < cutoff
            ]
            + [
                self._pack(pack)
                for pack, modified in self._packs().items()
                if pack not in packed and modified < cutoff
            ]
        )
        return old

    def _delete(self, blobs: list[str]) -> None:
        for start in range(0, len(blobs), 256):
            self.container.delete_blobs(*blobs[start : start + 256])

    def _upload(self, files: list[tuple[Path, str]]) -> None:
        def upload(item: tuple[Path, str]) -> None:
            path, name = item
            with path.open("rb") as data:
                self.container.upload_blob(name, data, overwrite=True, max_concurrency=2)

        _each(upload, files)

    def _download(self, blobs: list[tuple[str, Path]]) -> None:
        def download(item: tuple[str, Path]) -> None:
            name, path = item
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.part")
            with partial.open("wb") as data:
                self.container.download_blob(name, max_concurrency=2).readinto(data)
            partial.replace(path)

        _each(download, blobs)


def create_container(location: BlobLocation) -> None:
    """Create the location's container if it does not exist (the credentials are checked on the
    way)."""
    with storage_errors(f"creating {location}", location):
        BlobIndex(location).create_container()


def read_manifest(output: Path, location: BlobLocation, version: str) -> dict[str, str]:
    """A downloaded version's manifest.json (title -> content id); a malformed one is a one-line
    error."""
    try:
        manifest = json.loads((output / local.MANIFEST).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        manifest = error
    if not isinstance(manifest, dict) or not all(isinstance(v, str) for v in manifest.values()):
        msg = (
            f"{location}: version {version}'s {local.MANIFEST} is malformed; publish a new "
            f"version: run graphrag-mcp index DATA_PATH --storage {location} --full on the "
            "indexer host"
        )
        raise GraphRagMcpError(msg)
    return manifest


def _each(work: Callable[[Item], None], items: list[Item]) -> None:
    """`work` on every item, a few at a time (blob calls wait on the network, not the CPU)."""
    if len(items) <= 1:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(TRANSFER_THREADS) as pool:
        list(pool.map(work, items))


def _files(path: Path) -> list[Path]:
    """The files under `path` (itself when it is one), links followed."""
    if path.is_file():
        return [path]
    return sorted(file for file in path.rglob("*") if file.is_file()) if path.is_dir() else []


def _replace_root_files(root: Path, downloaded: Path, stamp: float) -> None:
    """Each downloaded root file that differs from the root's replaces it (one rename each); all
    get `stamp`."""
    for path in _files(downloaded):
        target = root / path.relative_to(downloaded)
        if not (target.is_file() and target.read_bytes() == path.read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
        os.utime(target, (stamp, stamp))


def _json_content() -> "ContentSettings":
    from azure.storage.blob import ContentSettings

    return ContentSettings(content_type="application/json")
