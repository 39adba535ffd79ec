"""Writes indexed at the cost of the change: the writes of one settle window share one queued
incremental job; and each client's bytes per minute are bounded."""

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path

from graphrag_mcp_server.handlers.indexing.jobs import IndexJobs, JobBusyError
from graphrag_mcp_server.handlers.indexing.written import DocumentRefusedError
from graphrag_mcp_server.handlers.results import IndexJob

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60.0


class WriteBatches:
    """The job each write joins: the one queued while writes keep coming within `settle_seconds`
    of each other (write_settle_seconds); it starts once they stop and no other job runs."""

    def __init__(
        self,
        jobs: IndexJobs,
        folder: Path,
        settle_seconds: float,
        start: Callable[[IndexJob], Awaitable[object]],
    ) -> None:
        self._jobs, self._folder, self._settle, self._start = jobs, folder, settle_seconds, start
        self._pending: IndexJob | None = None
        self._written = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()  # strong references

    def join(self) -> IndexJob:
        """The queued job that will index the write just made (a new one if none is queued)."""
        if self._pending is None:
            self._pending = self._jobs.queue(self._folder, "incremental")
            task = asyncio.create_task(self._run(self._pending))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._written.set()
        return self._pending

    async def _run(self, job: IndexJob) -> None:
        while self._written.is_set():  # settle: until no write came for settle_seconds
            self._written.clear()
            try:
                await asyncio.wait_for(self._written.wait(), self._settle)
            except TimeoutError:
                break
        while True:
            while self._jobs.running is not None:  # a build_index or the watcher's job goes first
                await asyncio.sleep(0.2)
            if self._pending is job:  # later writes queue the next job: this one reads the folder
                self._pending = None
            try:
                await self._start(job)
                return
            except JobBusyError:
                continue
            except Exception as error:  # noqa: BLE001 - the refusal is reported on the job
                logger.warning(
                    "index job %s for written documents not started: %s", job.job_id, error
                )
                self._jobs.fail_queued(job, str(error))
                return


class WriteAllowance:
    """Bytes of documents each client (its identity) may write in any minute."""

    def __init__(self, bytes_per_minute: int) -> None:
        self.limit = bytes_per_minute
        self._spent: dict[str, deque[tuple[float, int]]] = {}

    def charge(self, identity: str, size: int) -> None:
        """Count `size` bytes written by `identity`; refused when they pass its minute's limit."""
        now = time.monotonic()
        spent = self._spent.setdefault(identity, deque())
        while spent and spent[0][0] <= now - WINDOW_SECONDS:
            spent.popleft()
        total = sum(size for _, size in spent)
        if total + size > self.limit:
            wait = WINDOW_SECONDS - (now - spent[0][0]) if spent else WINDOW_SECONDS
            if not spent:
                del self._spent[identity]
            msg = (
                f"this client wrote {total} bytes of documents in the last minute and {size} more "
                f"would pass the limit of {self.limit} (GRAPHRAG_MCP_WRITE_BYTES_PER_MINUTE); try "
                f"again in {wait:.0f} s"
            )
            raise DocumentRefusedError(msg)
        spent.append((now, size))

    def refund(self, identity: str, size: int) -> None:
        """Take back the last charge of `size` bytes: the write it paid for was refused."""
        spent = self._spent.get(identity)
        if spent and spent[-1][1] == size:
            spent.pop()
