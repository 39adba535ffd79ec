"""The loaded index a server answers from: warmed in the background, reloaded when the disk
changes."""

import asyncio
import ctypes
import hashlib
import logging
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.config.index_root import SETTINGS_FILE
from graphrag_mcp_server.config.runtime import collector_paused
from graphrag_mcp_server.errors import GraphRagMcpError, IndexNotFoundError
from graphrag_mcp_server.handlers.indexing.blob.follower import (
    no_version_yet,
    pin_prompts,
    version_root_files,
)
from graphrag_mcp_server.handlers.indexing.blob.project_tables import blob_tables_signature
from graphrag_mcp_server.handlers.indexing.versions import OUTPUT, current_version, hold_version
from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.tables import REQUIRED_TABLES, IndexTables
from graphrag_mcp_server.providers import OFFLINE_TYPE

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    """One version of the index: its config and tables, never changed once loaded."""

    config: "GraphRagConfig"
    tables: IndexTables
    version: str
    loaded_at: datetime


PIN_TRIES = 3
"""Loads of the config tried when `output` switches during one (each switch is a whole version:
rare)."""


@collector_paused()  # a full collection would walk the objects made once more
def _load(root: Path) -> Snapshot:
    """Import graphrag, read settings.yaml and every table, and prepare graphrag's query objects for
    the default searches (blocking: run in a worker thread). The version is pinned once: its digest,
    config, prompts and tables all come from the folder `output` named before the config was read,
    and held (versions.hold_version: not pruned) while the snapshot or a search on it lives."""
    from graphrag_mcp_server.handlers.tables import load_tables

    config, output = _pinned_config(root)
    hold = hold_version(root, output)
    version = disk_version(root, config, output)
    tables = asyncio.run(load_tables(config, root))
    if hold is not None:
        tables.derived["version_hold"] = hold  # lives as long as the tables: searches hold them
    try:
        prepared(tables).warm()
        from graphrag_mcp_server.handlers.search.relationship_index import relationship_index

        relationship_index(prepared(tables))  # the local and DRIFT contexts' index
    except Exception as error:  # noqa: BLE001 - statistics and resources still serve; the searches report it
        logger.warning("index version %s loaded but not prepared for searches: %s", version, error)
    _import_search_path(config)
    return Snapshot(config, tables, version, datetime.now(UTC))


def _pinned_config(root: Path) -> tuple["GraphRagConfig", Path | None]:
    """The config and the version folder it reads, `output` resolved once before the config is read
    and found unchanged after (a replica's settings.yaml is read through `output`); read again if it
    switched meanwhile."""
    from graphrag_mcp_server.config.index_root import load_index_config

    for _ in range(PIN_TRIES):
        output = current_version(root)
        config = load_index_config(root, without_credentials=True)
        linked = (
            root / OUTPUT
        ).is_symlink() and config.output_storage.type == "file"  # load_index_config pins it
        if (
            not linked
            or output is None
            or Path(config.output_storage.base_dir or OUTPUT).resolve() == output
        ):
            return pin_prompts(config, root, output), output
    msg = (
        f"the index at {root} switched versions {PIN_TRIES} times while loading; the next request "
        "loads it"
    )
    raise GraphRagMcpError(msg)


def _import_search_path(config: "GraphRagConfig") -> None:
    """Import what the first search of a process needs beyond the tables: graphrag's engine factory
    and the vector store (LanceDB alone is ~1.3 s), and with the offline embedding its word
    frequencies, so that a server's first search after it starts, or after an update it was
    watching for, answers as fast as the next."""
    import graphrag.query.factory
    import graphrag.utils.api  # noqa: F401
    import graphrag_vectors.lancedb  # noqa: F401

    if any(model.type == OFFLINE_TYPE for model in config.embedding_models.values()):
        from graphrag_mcp_server.providers.offline.embedding import warm_up

        warm_up()


def disk_version(
    root: Path, config: "GraphRagConfig | None" = None, output: Path | None = None
) -> str:
    """A short digest of settings.yaml, the current version's directory (relative to the root), its
    table files and its vector store folder (which changes when a LanceDB table is removed or
    restored): the same on every host holding the same version of a blob container
    (follower.take_version). `output`: the version folder pinned (else `output` resolved now). With
    `config` (the one loaded) whose output is a blob container, the tables' ETags there too."""
    output = output or current_version(root)
    label = (
        output.relative_to(root.resolve())
        if output and output.is_relative_to(root.resolve())
        else output
    )
    tables = (
        [output / f"{name}.parquet" for name in REQUIRED_TABLES] + [output / "lancedb"]
        if output
        else []
    )
    files = [version_root_files(root, output) / SETTINGS_FILE, *tables]
    signature = [
        str(label),
        *(
            (path.name, path.stat().st_mtime_ns, path.stat().st_size)
            for path in files
            if path.exists()
        ),
    ]
    # a graphrag project's own blob output
    if config is not None and config.output_storage.type == "blob":
        signature.append(blob_tables_signature(config.output_storage))
    return hashlib.sha256(repr(signature).encode()).hexdigest()[:12]


class IndexState:
    """Keeps the current Snapshot warm; queries take the snapshot current when they start."""

    def __init__(self, root: Path, storage: str | None = None) -> None:
        self.root = root
        self.storage = storage
        """The blob location this root is a replica of (it builds nothing: no index means none
        published yet)."""
        self._current: Snapshot | None = None
        self._failed: tuple[str, Exception] | None = None
        self._lock = asyncio.Lock()
        self._warm_up: asyncio.Task[None] | None = None
        self.on_new_version: Callable[[], Coroutine[Any, Any, None]] | None = None
        """Called (in a task of its own) when a new version replaces the one served."""
        self._announcing: set[asyncio.Task[None]] = set()
        self._polling: asyncio.Task[None] | None = None
        self._pollers = 0

    def start_warm_up(self) -> None:
        """Import graphrag and load the tables in the background, so the first query finds them
        ready.

        Called by every session's lifespan (once per HTTP session): only the first call starts it.
        """
        if self._warm_up is None:
            self._warm_up = asyncio.create_task(self._try_load())

    def start_polling(self, every: float) -> None:
        """Look every `every` s whether the disk holds another version (an `index` run beside the
        server), and load it at once: listening clients hear of it without a request of theirs.
        One poll for every lifespan open at once (HTTP runs one per session); `stop_polling` ends
        it with the last."""
        self._pollers += 1
        if self._polling is None:
            self._polling = asyncio.create_task(self._poll(every))

    def stop_polling(self) -> None:
        """One lifespan ended: the poll stops with the last, so no task outlives its loop."""
        self._pollers -= 1
        if self._pollers == 0 and self._polling is not None:
            self._polling.cancel()
            self._polling = None

    async def _poll(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            loaded = self._polled_version()
            if loaded is None:
                continue
            try:
                on_disk = await asyncio.to_thread(disk_version, self.root)
                if on_disk != loaded and (self._failed or ("",))[0] != on_disk:
                    await self.snapshot()
            except Exception as error:  # noqa: BLE001 - the next request reports it
                logger.debug("index poll: %s", error)

    def _polled_version(self) -> str | None:
        """The loaded version a poll compares with the disk's (its id only: a snapshot held
        across the poll's sleep would keep a replaced version alive); None when nothing is to be
        polled: nothing loaded, or a graphrag project's blob output (its tables' ETags are a
        request each)."""
        current = self._current
        if current is None or current.config.output_storage.type == "blob":
            return None
        return current.version

    async def _try_load(self) -> None:
        """The first load (its snapshot not kept as the task's result, which would hold that
        version as long as the server runs)."""
        try:
            await self.snapshot()
        except Exception as error:  # noqa: BLE001 - a missing index is reported to the first query
            logger.info("index not loaded at start: %s", error)

    async def snapshot(self) -> Snapshot:
        """The current snapshot, reloaded first if the index on disk has changed."""
        if self._warm_up is not None and asyncio.current_task() is not self._warm_up:
            await asyncio.shield(self._warm_up)
        async with self._lock:
            try:
                return await self._current_on_disk()
            except IndexNotFoundError:
                if self.storage is None:
                    raise
                # a replica builds nothing: no index means no version published or followed yet
                raise GraphRagMcpError(no_version_yet(self.root, self.storage)) from None

    async def _current_on_disk(self) -> Snapshot:
        loaded = self._current.config if self._current is not None else None
        on_disk = await asyncio.to_thread(disk_version, self.root, loaded)
        # not re-read until its files change
        if self._failed is not None and self._failed[0] == on_disk:
            if self._current is None:
                raise self._failed[1]
            return self._current
        if self._current is None or self._current.version != on_disk:
            await self._reload(on_disk)
        if self._current is None:
            msg = (
                f"no index at {self.root}; build one with: graphrag-mcp index DATA_PATH "
                f"--index-path {self.root}"
            )
            raise IndexNotFoundError(msg)
        return self._current

    async def _reload(self, on_disk: str) -> None:
        """Load the disk's version; while one is loaded, a failed load keeps it serving. A failure
        is remembered with the version that caused it."""
        try:
            replaced, self._current = self._current, await asyncio.to_thread(_load, self.root)
            self._failed = None
            logger.info("loaded index version %s", self._current.version)
            if replaced is None:
                return
            weakref.finalize(replaced.tables, give_back_memory)
            # freed here, or when the last search on it ends: no cycle holds it (prepared.py), so
            # no full collection (0.5 s holding the interpreter at 10,000 documents) runs for it
            del replaced
            if self.on_new_version is not None:
                task = asyncio.create_task(self.on_new_version())
                self._announcing.add(task)
                task.add_done_callback(self._announcing.discard)
        except Exception as error:
            self._failed = (on_disk, error)
            if self._current is None:
                raise
            logger.warning(
                "index changed on disk but did not load (%s); still serving %s",
                error,
                self._current.version,
            )

    @property
    def current(self) -> Snapshot | None:
        """The snapshot loaded last, without checking the disk."""
        return self._current


def give_back_memory() -> None:
    """Return to the operating system what a replaced version's tables held, once they are freed
    (no search holds them): the Arrow pool's unused blocks and the C heap's free pages (glibc's
    `malloc_trim`; elsewhere the heap keeps them). Without it a server at 10,000 documents grew
    from 1,096 to 1,851 MiB with its first update and stayed there."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    if trim is not None:
        trim(0)
