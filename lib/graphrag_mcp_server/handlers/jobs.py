"""Index builds as background jobs: one at a time, off the event loop, observable while they run."""

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.results import IndexJob, IndexSummary, JobState


class JobBusyError(GraphRagMcpError):
    """A second index job was asked for while one runs."""


class JobProgress:
    """graphrag WorkflowCallbacks that record a job's progress and wake those who wait on it."""

    def __init__(self, job: IndexJob, loop: asyncio.AbstractEventLoop, changed: asyncio.Event) -> None:
        self._job, self._loop, self._changed = job, loop, changed

    def _update(self, **fields: Any) -> None:
        for name, value in fields.items():
            setattr(self._job, name, value)
        self._loop.call_soon_threadsafe(self._changed.set)

    def pipeline_start(self, names: list[str]) -> None:
        """The pipeline's workflows are known."""
        self._update(workflows_total=len(names))

    def workflow_start(self, name: str, instance: object) -> None:
        """A workflow began."""
        self._update(workflow=name)

    def workflow_end(self, name: str, instance: object) -> None:
        """A workflow ended."""
        self._update(workflows_done=self._job.workflows_done + 1)

    def pipeline_end(self, results: list[Any]) -> None:
        """The workflows that ran are the total (graphrag announces some it then skips)."""
        self._update(workflows_total=len(results))

    def progress(self, progress: Any) -> None:
        """Item-level progress inside a workflow is not recorded."""

    def pipeline_error(self, error: BaseException) -> None:
        """Errors are recorded when the build raises."""


BuildFn = Callable[[JobProgress], Awaitable[IndexSummary]]


class IndexJobs:
    """The server's index jobs; each runs in a worker thread with its own event loop."""

    def __init__(self) -> None:
        self._jobs: dict[str, IndexJob] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._changed: dict[str, asyncio.Event] = {}

    @property
    def running(self) -> IndexJob | None:
        """The job now running, if any."""
        return next((job for job in self._jobs.values() if job.state is JobState.RUNNING), None)

    @property
    def latest(self) -> IndexJob | None:
        """The job started last, if any."""
        return next(reversed(self._jobs.values()), None)

    def get(self, job_id: str) -> IndexJob:
        """The job with this id."""
        if job_id not in self._jobs:
            known = ", ".join(self._jobs) or "none yet"
            raise GraphRagMcpError(f"no index job {job_id!r} (known jobs: {known})")
        return self._jobs[job_id]

    def start(self, data_path: str, mode: str, build: BuildFn, on_end: Callable[[IndexJob], None]) -> IndexJob:
        """Start `build` in the background; refuse while another job runs."""
        if (running := self.running) is not None:
            msg = f"index job {running.job_id} is still running ({running.workflow or 'starting'}); check it with index_status"
            raise JobBusyError(msg)
        job = IndexJob(job_id=uuid.uuid4().hex[:12], data_path=data_path, mode=mode, started_at=datetime.now(UTC))
        changed = asyncio.Event()
        progress = JobProgress(job, asyncio.get_running_loop(), changed)
        self._jobs[job.job_id], self._changed[job.job_id] = job, changed
        self._tasks[job.job_id] = asyncio.create_task(self._run(job, build, progress, changed, on_end))
        return job

    async def _run(
        self, job: IndexJob, build: BuildFn, progress: JobProgress, changed: asyncio.Event, on_end: Callable[[IndexJob], None]
    ) -> None:
        try:
            job.summary = await asyncio.to_thread(asyncio.run, build(progress))
            job.state = JobState.SUCCEEDED
        except Exception as error:  # noqa: BLE001 - a failed build is reported on the job, not raised
            job.error = str(error) if isinstance(error, GraphRagMcpError) else f"{type(error).__name__}: {error}"
            job.state = JobState.FAILED
        finally:
            job.finished_at = datetime.now(UTC)
            on_end(job)
            changed.set()

    async def wait(self, job_id: str, timeout: float, on_change: Callable[[IndexJob], Awaitable[None]]) -> IndexJob:
        """Wait up to `timeout` seconds for the job to end, calling `on_change` at each step."""
        job, changed = self.get(job_id), self._changed[job_id]
        deadline = asyncio.get_running_loop().time() + timeout
        while job.state is JobState.RUNNING:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                break
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), remaining)
            except TimeoutError:
                break
            await on_change(job)
        if job.state is not JobState.RUNNING:
            await on_change(job)
        return job
