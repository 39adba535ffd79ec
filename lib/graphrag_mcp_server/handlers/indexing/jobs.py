"""Index builds as background jobs: one at a time, in a worker process, observable while they
run."""

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing.documents import Limits
from graphrag_mcp_server.handlers.indexing.tuning import TuneOptions
from graphrag_mcp_server.handlers.results import IndexJob, IndexSummary, JobState, TunedPrompts


class JobBusyError(GraphRagMcpError):
    """A second index job was asked for while one runs."""


class IndexJobs:
    """The server's index jobs; each runs `indexing.worker` in a child process."""

    def __init__(self) -> None:
        self._jobs: dict[str, IndexJob] = {}
        self._tasks: dict[
            str, asyncio.Task[None]
        ] = {}  # strong references: asyncio keeps only weak ones
        self._changed: dict[str, asyncio.Event] = {}
        self._workers: dict[str, asyncio.subprocess.Process] = {}
        self._warm_for: Path | None = None
        self._spare: asyncio.Task[asyncio.subprocess.Process] | None = None

    def keep_warm(self, root: Path) -> None:
        """From now on keep a worker started ahead, waiting with graphrag imported (about 5 s saved
        per job) and what `root`'s model reads first loaded (worker.py)."""
        self._warm_for = root
        self._start_spare()

    def _start_spare(self) -> None:
        if self._warm_for is not None and self._spare is None:
            self._spare = asyncio.create_task(_spawn_worker(self._warm_for))

    async def stop_warm(self) -> None:
        """Stop keeping a worker ahead and end the waiting one (it also ends when this process
        goes)."""
        self._warm_for = None
        if (worker := await self._take_spare()) is not None:
            worker.kill()
            await worker.wait()

    async def _take_spare(self) -> asyncio.subprocess.Process | None:
        """The worker started ahead, if one is still alive; it is no longer the spare."""
        spare, self._spare = self._spare, None
        worker = await spare if spare is not None else None
        return worker if worker is not None and worker.returncode is None else None

    async def _take_worker(self) -> asyncio.subprocess.Process:
        return await self._take_spare() or await _spawn_worker()

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

    def start(
        self,
        root: Path,
        data_path: Path,
        mode: str,
        on_end: Callable[[IndexJob], None],
        limits: Limits | None = None,
        tune: TuneOptions | None = None,
        queued: IndexJob | None = None,
    ) -> IndexJob:
        """Start a build of `data_path` into `root` (with `tune`: a prompt tuning from its
        documents, mode `tune`) in a worker process, as the `queued` job if one is given; refuse
        while another job runs."""
        if (running := self.running) is not None:
            msg = (
                f"index job {running.job_id} is still running "
                f"({running.workflow or 'starting'}); check it with index_status"
            )
            raise JobBusyError(msg)
        job = queued or self.queue(data_path, mode)
        job.state, job.started_at = JobState.RUNNING, datetime.now(UTC)
        changed = self._changed[job.job_id]
        self._tasks[job.job_id] = asyncio.create_task(
            self._run(job, root, changed, on_end, limits, tune)
        )
        return job

    def queue(self, data_path: Path, mode: str) -> IndexJob:
        """A job known to index_status before it starts (documents written within the settle
        window join it); `start` runs it."""
        job = IndexJob(
            job_id=uuid.uuid4().hex[:12],
            state=JobState.QUEUED,
            data_path=str(data_path),
            mode=mode,
            started_at=datetime.now(UTC),
        )
        self._jobs[job.job_id], self._changed[job.job_id] = job, asyncio.Event()
        return job

    def fail_queued(self, job: IndexJob, error: str) -> None:
        """End a queued job that could not start (its folder or config refused), telling its
        waiters."""
        job.state, job.error, job.finished_at = JobState.FAILED, error, datetime.now(UTC)
        self._changed[job.job_id].set()

    async def cancel(self, job_id: str | None) -> IndexJob:
        """Stop a running job (the running one when no id is given): its worker is killed, and the
        half-written version is never switched to (the next run removes it). A job that had
        switched to its version, or written its tuned prompts, when the cancel reached it ends as
        it would have; an error says so."""
        job = self.get(job_id) if job_id is not None else self.running
        if job is None:
            raise GraphRagMcpError("no index job is running")
        if job.state is not JobState.RUNNING:
            raise GraphRagMcpError(f"index job {job.job_id} is not running: it {job.state.value}")
        job.state = JobState.CANCELLED
        if (worker := self._workers.get(job.job_id)) is not None:
            await _stop(worker)
        await asyncio.shield(self._tasks[job.job_id])
        if job.state is not JobState.CANCELLED:
            msg = (
                f"index job {job.job_id} ended before the cancel reached it: it {job.state.value} "
                "(see index_status)"
            )
            raise GraphRagMcpError(msg)
        return job

    async def _run(
        self,
        job: IndexJob,
        root: Path,
        changed: asyncio.Event,
        on_end: Callable[[IndexJob], None],
        limits: Limits | None,
        tune: TuneOptions | None,
    ) -> None:
        try:
            worker = self._workers[job.job_id] = await self._take_worker()
            if job.state is JobState.CANCELLED:
                await _stop(worker)
            assert worker.stdin is not None and worker.stdout is not None
            order = {
                "root": str(root),
                "data_path": job.data_path,
                "mode": job.mode,
                "limits": asdict(limits) if limits else None,
                "tune": tune.model_dump() if tune else None,
            }
            worker.stdin.write(json.dumps(order).encode() + b"\n")
            await worker.stdin.drain()
            worker.stdin.close()
            async for line in worker.stdout:
                _apply(job, line)
                changed.set()
            await worker.wait()
            published = job.summary is not None or job.tuned is not None
            if job.state is JobState.CANCELLED and published:
                job.state = JobState.RUNNING  # published before the cancel reached the worker
            if job.state is JobState.CANCELLED:
                job.error = "cancelled with cancel_index_job; the index is unchanged"
            elif job.summary is None and job.tuned is None and job.error is None:
                job.error = (
                    f"the index worker ended with exit code {worker.returncode} and no result"
                )
            if job.state is JobState.RUNNING:
                job.state = JobState.SUCCEEDED if job.error is None else JobState.FAILED
        except Exception as error:  # noqa: BLE001 - a failed build is reported on the job
            if job.state is JobState.RUNNING:
                job.error, job.state = f"{type(error).__name__}: {error}", JobState.FAILED
        finally:
            self._workers.pop(job.job_id, None)
            job.finished_at = datetime.now(UTC)
            on_end(job)
            changed.set()
            # after the build, not beside it: on 2 cores its imports slowed the build by ~0.5 s
            self._start_spare()

    async def wait(
        self, job_id: str, timeout: float, on_change: Callable[[IndexJob], Awaitable[None]]
    ) -> IndexJob:
        """Wait up to `timeout` seconds for the job to end, calling `on_change` at each step."""
        job, changed = self.get(job_id), self._changed[job_id]
        deadline = asyncio.get_running_loop().time() + timeout
        while job.state in (JobState.QUEUED, JobState.RUNNING):
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                break
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), remaining)
            except TimeoutError:
                break
            await on_change(job)
        if job.state not in (JobState.QUEUED, JobState.RUNNING):
            await on_change(job)
        return job


async def _spawn_worker(warm_for: Path | None = None) -> asyncio.subprocess.Process:
    """A build worker process, importing graphrag (and what `warm_for`'s model reads first) until
    it is handed a job on stdin."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "graphrag_mcp_server.handlers.indexing.worker",
        *([str(warm_for)] if warm_for is not None else []),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def _stop(worker: asyncio.subprocess.Process, grace_seconds: float = 10) -> None:
    """End a worker: SIGTERM lets it remove its half-written version; SIGKILL if it does not end in
    time."""
    if worker.returncode is not None:
        return
    worker.terminate()
    try:
        await asyncio.wait_for(worker.wait(), grace_seconds)
    except TimeoutError:
        worker.kill()


def _apply(job: IndexJob, line: bytes) -> None:
    """Record one progress line of the build worker on the job (other output is ignored)."""
    try:
        event = json.loads(line)
    except ValueError:
        return
    match event.get("event"):
        case "pipeline_start" | "pipeline_end":
            job.workflows_total = event["total"]
        case "workflow_start":
            job.workflow = event["name"]
        case "workflow_end":
            job.workflows_done += 1
        case "summary":
            job.summary = IndexSummary.model_validate(event["summary"])
        case "step":  # before graphrag's workflows: what the worker is doing
            job.workflow = event["name"]
        case "stage":  # a prompt tuning's
            job.workflow, job.workflows_done = event["name"], job.workflows_done + 1
        case "tuned":
            job.tuned = TunedPrompts.model_validate(event["tuned"])
        case "error":
            job.error = event["message"]
