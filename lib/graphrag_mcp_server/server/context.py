"""What the tools, resources and prompts of one server share, and what they start: index jobs, the
watcher."""

import asyncio
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from graphrag_mcp_server.config.index_root import INPUT_FILE_PATTERN
from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
from graphrag_mcp_server.handlers.indexing.blob.follower import follow, read_status
from graphrag_mcp_server.handlers.indexing.build import IndexMode, index_config
from graphrag_mcp_server.handlers.indexing.documents import Limits, select_documents
from graphrag_mcp_server.handlers.indexing.jobs import IndexJobs
from graphrag_mcp_server.handlers.indexing.tuning import TuneOptions
from graphrag_mcp_server.handlers.results import (
    IndexJob,
    IndexStatistics,
    IndexSummary,
    JobState,
    OperationCost,
    SearchResult,
    ServerStatistics,
    TunedPrompts,
)
from graphrag_mcp_server.server.calls import STDIO
from graphrag_mcp_server.server.notices import ChangeNotices
from graphrag_mcp_server.server.state import IndexState
from graphrag_mcp_server.server.tokens import identity_of

logger = logging.getLogger(__name__)


@dataclass
class CostLedger:
    """Model usage since the server started, per operation kind."""

    totals: dict[str, OperationCost] = field(default_factory=dict)

    def add(self, kind: str, result: SearchResult | IndexSummary | TunedPrompts) -> None:
        """Count one operation of `kind` and what it spent."""
        self.totals.setdefault(kind, OperationCost()).add(result)


@dataclass
class ServerContext:
    """What the tools, resources and prompts share: the index root, its loaded state, its jobs."""

    root: Path
    settings: ServerSettings
    state: IndexState
    jobs: IndexJobs = field(default_factory=IndexJobs)
    costs: CostLedger = field(default_factory=CostLedger)
    started: float = field(default_factory=time.monotonic)
    watch: Path | None = None
    watcher: "asyncio.Task[None] | None" = None
    follower: "asyncio.Task[str | None] | None" = None
    notices: ChangeNotices = field(default_factory=ChangeNotices)
    data_roots: list[Path] = field(default_factory=list)
    """Folders build_index may index (resolved when the server starts: graphrag's loader changes the
    cwd)."""
    index_statistics: tuple[tuple[str, datetime], IndexStatistics] | None = None
    """The loaded version's statistics and which load they are of (version, loaded_at): counted
    once per load, not per get_statistics call (90 ms at 10,000 documents, and a client polling
    it took a core's share from an index job on 2 cores)."""

    def start_watching(self) -> None:
        """Keep the index current with the watched folder (once, though HTTP runs the lifespan per
        session)."""
        if self.watch is not None and self.watcher is None:
            self.watcher = asyncio.create_task(_watch(self, self.watch))

    def start_following(self) -> None:
        """With blob storage: keep the local copy on the container's current version, load each new
        version as soon as it is down, and tell the clients (once per process)."""
        if self.settings.storage is not None and self.follower is None:
            self.follower = asyncio.create_task(
                follow(
                    BlobLocation.parse(self.settings.storage),
                    self.root,
                    self.settings.storage_poll_seconds,
                    self._load,
                )
            )

    async def _load(self, version: str) -> None:
        try:
            await self.state.snapshot()
        except Exception as error:  # noqa: BLE001 - the snapshot keeps serving the version before
            logger.warning("version %s downloaded but not loaded: %s", version, error)


async def _watch(shared: ServerContext, folder: Path) -> None:
    """Run an incremental index job after each burst of changes in the watched folder."""
    from graphrag_mcp_server.handlers.indexing.watch import watch_folder

    async def update() -> bool:
        while shared.jobs.running is not None:  # a build_index job goes first
            await asyncio.sleep(0.5)
        job = await start_build(shared, folder, "incremental")
        job = await shared.jobs.wait(job.job_id, float("inf"), _ignore)
        logger.warning(
            "index update after changes in %s: %s%s",
            folder,
            job.state.value,
            f" ({job.error})" if job.error else "",
        )
        return job.state is JobState.SUCCEEDED

    shared.jobs.keep_warm(shared.root)
    try:
        await watch_folder(
            folder,
            shared.root,
            shared.settings.watch_settle_seconds,
            update,
            shared.settings.watch_retry_seconds,
        )
    finally:
        await shared.jobs.stop_warm()


async def _ignore(_: Any) -> None:
    """No progress to report for a watcher's job."""


def caller_identity(context: Any) -> str:
    """Who sent a tool call (an MCP Context): its HTTP request's verified identity; on stdio the one
    client there is."""
    request = (
        context.request_context.request
        if context is not None and context._request_context is not None
        else None
    )
    scope = getattr(request, "scope", None)
    return identity_of(scope) if isinstance(scope, dict) else STDIO


async def server_statistics(shared: ServerContext) -> ServerStatistics:
    """Statistics of the loaded index and of this server process."""
    from graphrag_mcp_server.handlers.explore.stats import statistics

    snapshot = await shared.state.snapshot()
    load = (snapshot.version, snapshot.loaded_at)
    if shared.index_statistics is None or shared.index_statistics[0] != load:
        counted = await asyncio.to_thread(statistics, snapshot.config, snapshot.tables)
        shared.index_statistics = (load, counted)
    index = shared.index_statistics[1]
    return ServerStatistics(
        **index.model_dump(),
        uptime_seconds=round(time.monotonic() - shared.started, 1),
        index_version=snapshot.version,
        loaded_at=snapshot.loaded_at,
        last_job=shared.jobs.latest,
        costs=shared.costs.totals,
        replica=await asyncio.to_thread(read_status, shared.root)
        if shared.settings.storage
        else None,
    )


async def start_build(
    shared: ServerContext,
    folder: Path,
    mode: str,
    limits: Limits | None = None,
    queued: IndexJob | None = None,
) -> IndexJob:
    """Start an index job over `folder` (as the `queued` job if given); the new version is loaded
    as soon as it succeeds.

    With `limits`, a folder over them is refused here, before a job starts.
    """
    # a bad folder or config fails the call
    config = await asyncio.to_thread(index_config, shared.root, folder)
    pattern = config.input.file_pattern or INPUT_FILE_PATTERN
    await asyncio.to_thread(select_documents, folder, shared.root, pattern, limits)

    def finished(job: IndexJob) -> None:
        if job.summary is not None:
            shared.costs.add("build_index", job.summary)
        if job.state is JobState.SUCCEEDED:  # load the new version now, not at the next request
            asyncio.get_running_loop().create_task(shared.state.snapshot())

    return shared.jobs.start(
        shared.root, folder, IndexMode(mode).value, finished, limits, queued=queued
    )


def start_tuning(shared: ServerContext, folder: Path, options: TuneOptions) -> IndexJob:
    """Start a prompt tuning from the documents of `folder` as a job (index_status and
    cancel_index_job see it)."""

    def finished(job: IndexJob) -> None:
        if job.tuned is not None:
            shared.costs.add("tune_prompts", job.tuned)

    return shared.jobs.start(shared.root, folder, "tune", finished, tune=options)
