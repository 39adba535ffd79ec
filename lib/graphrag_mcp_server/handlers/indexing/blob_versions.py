"""Index versions published to an Azure Blob Storage container, for replicas on hosts with no shared disk.

Layout under az://CONTAINER/PREFIX/::

    current.json          {"version": ID, "previous": ID, "switched_at": ...}: replaced only by a conditional
                          write (If-Match the ETag the indexer read when it started), so a reader sees one
                          whole version or the one before, never a mixture
    versions/ID/output/   a version's files (parquet tables, lancedb/, manifest.json, ...), written before the switch
    versions/ID/root/     the settings.yaml and prompts/ it was built and is searched with
    cache/                graphrag's LLM cache (each entry named by its content's hash, never changed once written)
    indexer.lock          the blob an indexer leases (renewed while it runs): one indexer at a time

The indexer and each replica keep a local copy (their --index-path) in the layout of versions.py: the indexer
builds there with every incremental step unchanged, then uploads; a replica (replica.py) downloads a new version
whole beside the one it serves and switches its `output` link in one step. current.json's version and previous
are never deleted; older versions once their files are older than the grace period (a replica reads a version
only while downloading it).
"""

import asyncio
import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from graphrag_mcp_server.config.index_root import SETTINGS_FILE
from graphrag_mcp_server.errors import ConfigError, GraphRagMcpError
from graphrag_mcp_server.handlers.indexing import versions

if TYPE_CHECKING:
    from azure.storage.blob import BlobLeaseClient, ContainerClient, ContentSettings
    from graphrag_storage import StorageConfig

logger = logging.getLogger(__name__)

POINTER = "current.json"
LEASE_BLOB = "indexer.lock"
ROOT_FILES = (SETTINGS_FILE, "prompts")
"""What of the index root travels with each version: the config and prompts its searches use."""
STAGING = ".download-"
"""The name of a version's folder while it downloads, before the version's id."""
TRANSFER_THREADS = 8
TABLES_CHECK_SECONDS = 2.0
"""How long the tables' ETags of a graphrag project with blob output are taken as unchanged."""
Result = TypeVar("Result")


class IndexerBusyError(GraphRagMcpError):
    """Another indexer holds the container's lease."""


class ContainerMissingError(GraphRagMcpError):
    """The location's container does not exist."""


class VersionConflictError(GraphRagMcpError):
    """The current version changed under an indexer that no longer held the lease."""


class BlobLocation(BaseModel, frozen=True):
    """Where an index lives in blob storage: az://CONTAINER[/PREFIX]."""

    container: str
    prefix: str = ""

    @classmethod
    def parse(cls, url: str) -> "BlobLocation":
        """The location of `url` (az://container/prefix); a malformed one is a ConfigError saying the form."""
        scheme, _, rest = url.partition("://")
        container, _, prefix = rest.partition("/")
        valid = (len(container) in range(3, 64) and container[0].isalnum() and container[-1].isalnum()
                 and all(c.islower() or c.isdigit() or c == "-" for c in container) and "--" not in container)
        if scheme not in {"az", "abfs"} or not valid:
            msg = (f"GRAPHRAG_MCP_STORAGE={url!r} is not a blob location: write az://CONTAINER/PREFIX, the container "
                   "3-63 lowercase letters, digits and single hyphens")
            raise ConfigError(msg)
        return cls(container=container, prefix=prefix.strip("/"))

    def __str__(self) -> str:
        return f"az://{self.container}/{self.prefix}".rstrip("/")

    def blob(self, *parts: str) -> str:
        """The name of a blob under the prefix."""
        return str(PurePosixPath(self.prefix, *parts)) if self.prefix else str(PurePosixPath(*parts))


class Pointer(BaseModel):
    """The content of current.json."""

    version: str
    previous: str | None = None
    switched_at: datetime


def container_client(location: BlobLocation) -> "ContainerClient":
    """A client of the location's container, with credentials from the usual Azure environment variables:
    AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_ACCOUNT_KEY (and
    AZURE_STORAGE_ENDPOINT for an endpoint of your own, such as Azurite), or the account name alone with the
    identity azure-identity finds (managed identity, az login)."""
    if connection := os.environ.get("AZURE_STORAGE_CONNECTION_STRING"):
        return _container(location.container, connection_string=connection)
    if account := os.environ.get("AZURE_STORAGE_ACCOUNT_NAME"):
        key = os.environ.get("AZURE_STORAGE_ACCOUNT_KEY")
        return _container(location.container,
                          endpoint=os.environ.get("AZURE_STORAGE_ENDPOINT") or f"https://{account}.blob.core.windows.net",
                          key={"account_name": account, "account_key": key} if key else None)
    msg = (f"{location} needs storage credentials: set AZURE_STORAGE_CONNECTION_STRING, or "
           "AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_ACCOUNT_KEY (or a managed identity)")
    raise ConfigError(msg)


def _container(name: str, *, connection_string: str | None = None, endpoint: str | None = None,
               key: dict[str, str] | None = None) -> "ContainerClient":
    """A container client from a connection string, or from an endpoint with an account key (else the identity
    azure-identity finds), its failed calls retried within bounds."""
    from azure.storage.blob import BlobServiceClient

    if connection_string:
        return BlobServiceClient.from_connection_string(connection_string, **_bounded_retries()).get_container_client(name)
    if key is None:
        from azure.identity import DefaultAzureCredential

        credential: object = DefaultAzureCredential()
    else:
        credential = key
    return BlobServiceClient(endpoint or "", credential=credential, **_bounded_retries()).get_container_client(name)


def _bounded_retries() -> dict[str, object]:
    """Two retries of a failed storage call, ~1.5 s apart (the SDK's default waits 15 s, then more, per call: a
    replica polling every 2 s, or a command facing a wrong endpoint, waited minutes); a failed run is run again."""
    from azure.storage.blob import ExponentialRetry

    return {"retry_policy": ExponentialRetry(initial_backoff=0.5, increment_base=1, retry_total=2,
                                             random_jitter_range=0.5), "connection_timeout": 10}


@contextmanager
def storage_errors(action: str, location: BlobLocation) -> Iterator[None]:
    """A refused or unreachable storage account, or a failed storage call, as one error naming it."""
    from azure.core.exceptions import AzureError, HttpResponseError, ServiceRequestError

    try:
        yield
    except HttpResponseError as error:
        reason = getattr(error.error_code, "value", error.error_code) or error.reason or str(error).splitlines()[0]
        if error.status_code in (401, 403):
            raise ConfigError(f"{location}: the storage account refused the credentials while {action} ({reason}); "
                              "check the AZURE_STORAGE_* settings, and the identity's access to the container") from None
        raise GraphRagMcpError(f"{location}: storage failed while {action}: {reason}") from None
    except ServiceRequestError as error:
        raise ConfigError(f"{location}: the storage account is unreachable while {action} ({error}); "
                          "check AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ENDPOINT") from None
    except AzureError as error:
        raise GraphRagMcpError(f"{location}: storage failed while {action}: {str(error).splitlines()[0]}") from None
    except OSError as error:  # the local copy's disk
        raise GraphRagMcpError(f"{location}: the local copy failed while {action}: {error}") from None


class BlobIndex:
    """The index versions of one blob location: the pointer, the versions' files, the cache, the lease."""

    def __init__(self, location: BlobLocation) -> None:
        self.location = location
        self.container = container_client(location)

    def create_container(self) -> None:
        """Create the container if it does not exist."""
        from azure.core.exceptions import ResourceExistsError

        try:
            self.container.create_container()
        except ResourceExistsError:
            pass

    def pointer(self) -> tuple[Pointer | None, str | None]:
        """current.json and its ETag; (None, None) before the first version."""
        from azure.core.exceptions import ResourceNotFoundError

        from pydantic import ValidationError

        try:
            download = self.container.download_blob(self.location.blob(POINTER))
        except ResourceNotFoundError as error:
            if error.error_code == "ContainerNotFound":
                msg = (f"{self.location}: the container {self.location.container} does not exist (deleted, or not "
                       "created yet); the indexer creates it and publishes a version: run graphrag-mcp index "
                       f"DATA_PATH --storage {self.location} on the indexer host")
                raise ContainerMissingError(msg) from None
            return None, None
        try:
            return Pointer.model_validate_json(download.readall()), download.properties.etag
        except ValidationError as error:
            msg = (f"{self.location}: {POINTER} is malformed ({error.errors()[0]['msg']}); the indexer writes a whole "
                   f"one at its next publish: run graphrag-mcp index DATA_PATH --storage {self.location}")
            raise GraphRagMcpError(msg) from None

    def switch(self, version: str, previous: Pointer | None, etag: str | None) -> Pointer:
        """Make `version` current by one conditional write: only if current.json is still what the indexer read
        (its ETag), or still absent; else VersionConflictError (another indexer switched meanwhile)."""
        from azure.core import MatchConditions
        from azure.core.exceptions import ResourceExistsError, ResourceModifiedError

        pointer = Pointer(version=version, previous=previous.version if previous else None,
                          switched_at=datetime.now(UTC))
        condition = ({"etag": etag, "match_condition": MatchConditions.IfNotModified} if etag
                     else {"match_condition": MatchConditions.IfMissing})
        try:
            self.container.upload_blob(self.location.blob(POINTER), pointer.model_dump_json(), overwrite=True,
                                       content_settings=_json_content(), **condition)
        except (ResourceModifiedError, ResourceExistsError):
            msg = (f"{self.location}: the current version changed while this indexer ran (its lease had lapsed); "
                   "nothing was switched: run the index command again")
            raise VersionConflictError(msg) from None
        return pointer

    def upload_version(self, root: Path, version: Path) -> int:
        """Upload a built version's files and the root files it goes with; the number of files."""
        files = [(path, self.location.blob(versions.VERSIONS, version.name, "output",
                                          path.relative_to(version).as_posix())) for path in _files(version)]
        for name in ROOT_FILES:
            files += [(path, self.location.blob(versions.VERSIONS, version.name, "root", path.relative_to(root).as_posix()))
                      for path in _files(root / name)]
        self._upload(files)
        return len(files)

    def upload_cache(self, root: Path) -> int:
        """Upload the local cache entries the container does not hold; their number."""
        present = {blob.name for blob in self.container.list_blobs(name_starts_with=self.location.blob("cache") + "/")}
        files = [(path, blob) for path in _files(root / "cache")
                 if (blob := self.location.blob("cache", path.relative_to(root / "cache").as_posix())) not in present]
        self._upload(files)
        return len(files)

    def download_cache(self, root: Path) -> int:
        """Download the cache entries the local copy lacks; their number."""
        prefix = self.location.blob("cache") + "/"
        wanted = [(blob.name, root / "cache" / blob.name[len(prefix):])
                  for blob in self.container.list_blobs(name_starts_with=prefix)]
        missing = [(name, path) for name, path in wanted if not path.exists()]
        self._download(missing)
        return len(missing)

    def download(self, root: Path, version: str) -> Path:
        """Download `version` whole into a staging folder of the local copy (beside what it serves): its `output`
        and its `root` files, every file with the version's time, so each host's copy of a version has the same
        index_version; the staging folder."""
        prefix = self.location.blob(versions.VERSIONS, version) + "/"
        blobs = list(self.container.list_blobs(name_starts_with=prefix))
        if not any(blob.name == prefix + "output/" + versions.MANIFEST for blob in blobs):
            msg = f"{self.location}: version {version} is named current but its files are missing"
            raise GraphRagMcpError(msg)
        staging = root / versions.VERSIONS / f"{STAGING}{version}-{uuid.uuid4().hex[:6]}"
        try:
            self._download([(blob.name, staging / blob.name[len(prefix):]) for blob in blobs])
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        stamp = max(blob.last_modified for blob in blobs).timestamp()
        for path in [staging, *staging.rglob("*")]:
            os.utime(path, (stamp, stamp))
        return staging

    def fetch(self, root: Path, version: str) -> Path:
        """The indexer's copy of `version`: downloaded, its settings.yaml and prompts replacing the root's where
        they differ, then the local `output` switched to it in one step."""
        staging = self.download(root, version)
        stamp = (staging / "output" / versions.MANIFEST).stat().st_mtime
        manifest = read_manifest(staging / "output", self.location, version)
        _replace_root_files(root, staging / "root", stamp)
        target = root / versions.VERSIONS / version
        if target.exists():
            versions.discard(target)
        (staging / "output").rename(target)
        shutil.rmtree(staging)
        versions.switch_to(root, target, manifest)
        return target

    def collect_garbage(self, keep: set[str], grace_seconds: float) -> list[str]:
        """Delete the versions not in `keep` whose newest file is older than the grace period (left by earlier
        switches, or by an indexer killed before its switch); the versions deleted."""
        prefix = self.location.blob(versions.VERSIONS) + "/"
        newest: dict[str, datetime] = {}
        names: dict[str, list[str]] = {}
        for blob in self.container.list_blobs(name_starts_with=prefix):
            version = blob.name[len(prefix):].split("/", 1)[0]
            names.setdefault(version, []).append(blob.name)
            newest[version] = max(newest.get(version, blob.last_modified), blob.last_modified)
        cutoff = datetime.now(UTC) - timedelta(seconds=grace_seconds)
        old = [version for version in names if version not in keep and newest[version] < cutoff]
        for version in old:
            for start in range(0, len(names[version]), 256):
                self.container.delete_blobs(*names[version][start:start + 256])
        return old

    @contextmanager
    def indexer_lease(self, seconds: int = 15, wait_seconds: float = 0) -> Iterator["BlobLeaseClient"]:
        """Hold the container's indexer lease for the block, renewed every third of its term; another indexer's
        lease is waited for up to `wait_seconds`, then IndexerBusyError. A killed indexer's lease lapses after
        `seconds`."""
        from azure.core.exceptions import ResourceExistsError

        lock = self.container.get_blob_client(self.location.blob(LEASE_BLOB))
        try:
            lock.upload_blob(b"", overwrite=False)
        except ResourceExistsError:
            pass
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                lease = lock.acquire_lease(lease_duration=seconds)
                break
            except ResourceExistsError:  # 409: leased by another indexer
                if time.monotonic() >= deadline:
                    msg = (f"another indexer is updating {self.location} (it holds the indexer lease); wait for it "
                           f"to finish, or pass --wait SECONDS. A stopped indexer's lease lapses within {seconds} s")
                    raise IndexerBusyError(msg) from None
                time.sleep(1)
        stop = threading.Event()
        renewer = threading.Thread(target=_keep_renewing, args=(lease, seconds / 3, stop), daemon=True)
        renewer.start()
        try:
            yield lease
        finally:
            stop.set()
            renewer.join()
            try:
                lease.release()
            except Exception as error:  # noqa: BLE001 - a lapsed lease needs no release
                logger.debug("indexer lease not released: %s", error)

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


def kept_versions(pointer: Pointer | None, *local: Path | None) -> set[str]:
    """What garbage collection never deletes, however old: the versions current.json names (current and previous:
    replicas may still be reading the previous) and the indexer's local ones."""
    named = {pointer.version, pointer.previous} if pointer is not None else set()
    return {version for version in named if version} | {path.name for path in local if path is not None}


def _each(work: Callable[[Result], None], items: list[Result]) -> None:
    """`work` on every item, a few at a time (blob calls wait on the network, not the CPU)."""
    if len(items) <= 1:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(TRANSFER_THREADS) as pool:
        list(pool.map(work, items))


def _keep_renewing(lease: "BlobLeaseClient", every: float, stop: threading.Event) -> None:
    while not stop.wait(every):
        try:
            lease.renew()
        except Exception as error:  # noqa: BLE001 - the switch's If-Match still refuses a lapsed indexer
            logger.warning("indexer lease not renewed: %s", error)


def _files(path: Path) -> list[Path]:
    """The files under `path` (itself when it is one), links followed."""
    if path.is_file():
        return [path]
    return sorted(file for file in path.rglob("*") if file.is_file()) if path.is_dir() else []


def _replace_root_files(root: Path, downloaded: Path, stamp: float) -> None:
    """Each downloaded root file that differs from the root's replaces it (one rename each); all get `stamp`."""
    for path in _files(downloaded):
        target = root / path.relative_to(downloaded)
        if not (target.is_file() and target.read_bytes() == path.read_bytes()):
            target.parent.mkdir(parents=True, exist_ok=True)
            path.replace(target)
        os.utime(target, (stamp, stamp))


def read_manifest(output: Path, location: BlobLocation, version: str) -> dict[str, str]:
    """A downloaded version's manifest.json (title -> content id); a malformed one is a one-line error."""
    try:
        manifest = json.loads((output / versions.MANIFEST).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        manifest = error
    if not isinstance(manifest, dict) or not all(isinstance(v, str) for v in manifest.values()):
        msg = (f"{location}: version {version}'s {versions.MANIFEST} is malformed; publish a new version: run "
               f"graphrag-mcp index DATA_PATH --storage {location} --full on the indexer host")
        raise GraphRagMcpError(msg)
    return manifest


def _json_content() -> "ContentSettings":
    from azure.storage.blob import ContentSettings

    return ContentSettings(content_type="application/json")


def create_container(location: BlobLocation) -> None:
    """Create the location's container if it does not exist (the credentials are checked on the way)."""
    with storage_errors(f"creating {location}", location):
        BlobIndex(location).create_container()


async def published_build(location: BlobLocation, root: Path, run: Callable[[], Awaitable[Result]],
                          grace_seconds: float, wait_seconds: float = 0) -> Result:
    """Run an index build over the local copy `root` as the one indexer of `location`: take the lease, bring the
    current version and the cache down where the local copy lacks them, `run` the build, upload the version it
    wrote and the new cache entries, switch current.json to it, and delete versions past the grace period."""
    with storage_errors(f"indexing into {location}", location):
        index = BlobIndex(location)
        await asyncio.to_thread(index.create_container)
        with index.indexer_lease(wait_seconds=wait_seconds):
            pointer, etag = await asyncio.to_thread(index.pointer)
            local = versions.current_version(root)
            if pointer is not None and (local is None or local.name != pointer.version):
                await asyncio.to_thread(index.fetch, root, pointer.version)
            await asyncio.to_thread(index.download_cache, root)
            result = await run()
            built = versions.current_version(root)
            if built is not None and (pointer is None or built.name != pointer.version):
                await asyncio.to_thread(index.upload_version, root, built)
                await asyncio.to_thread(index.upload_cache, root)
                pointer = await asyncio.to_thread(index.switch, built.name, pointer, etag)
                logger.info("%s: version %s is current", location, built.name)
            await asyncio.to_thread(index.collect_garbage, kept_versions(pointer, built, local), grace_seconds)
    return result


_checked_tables: dict[tuple[str | None, str | None, str | None], tuple[float, str, "ContainerClient"]] = {}


def blob_tables_signature(storage: "StorageConfig") -> str:
    """The ETags of the tables of an index whose settings.yaml puts graphrag's output in a blob container (a
    graphrag project served as it is), read at most every TABLES_CHECK_SECONDS: they change when graphrag writes.
    A failed read is logged and the last known signature kept (the loaded version goes on serving)."""
    from azure.core.exceptions import AzureError

    key = (storage.connection_string or storage.account_url, storage.container_name, storage.base_dir)
    checked = _checked_tables.get(key)
    if checked is not None and time.monotonic() - checked[0] < TABLES_CHECK_SECONDS:
        return checked[1]
    container = checked[2] if checked is not None else _container(
        storage.container_name or "", connection_string=storage.connection_string, endpoint=storage.account_url)
    prefix = f"{storage.base_dir.strip('/')}/" if storage.base_dir else ""
    try:
        signature = ",".join(f"{blob.name}:{blob.etag}" for blob in container.list_blobs(name_starts_with=prefix)
                             if blob.name.endswith(".parquet") and "/" not in blob.name[len(prefix):])
    except AzureError as error:
        logger.warning("cannot check the index tables in container %s: %s", storage.container_name,
                       str(error).splitlines()[0])
        signature = checked[1] if checked is not None else ""
    _checked_tables[key] = (time.monotonic(), signature, container)
    return signature
