"""An index build in its own process, reporting progress and its result as JSON lines on stdout.

The server runs its index jobs here: LanceDB segfaults when one process writes a version while
another thread of the same process reads one, and a separate process also keeps the build's CPU
work off the server's interpreter.

A worker started ahead first imports graphrag, LanceDB and the tokenizer (about 5 s), and, for an
index root given as its argument whose models are the offline model, that model's word lists
(about 1 s of its first extraction); it then says `ready` and reads its job from stdin. One started
for a job already sent skips that (an unchanged folder then needs no graphrag pipeline at all: as
fast as the CLI's). The job is one JSON line ({"root",
"data_path", "mode", "limits"}, or with "tune": the options of a prompt tuning, which writes the
root's prompts); so a server can start one ahead and hand it the next job warm. End of input
before a job ends it quietly.

    python -m graphrag_mcp_server.handlers.indexing.worker [INDEX_ROOT]
"""

import asyncio
import json
import logging
import os
import select
import signal
import sys
import threading
from pathlib import Path
from typing import Any, NoReturn

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing.documents import Limits
from graphrag_mcp_server.handlers.indexing.versions import SIGNALLED

JOB_GRACE_SECONDS = 0.5
"""How long a starting worker waits for a job already sent before it warms up as a spare."""
OFFLINE_WARM_UP = "loading the offline model's word lists"
"""The step a worker started ahead for an offline index reports while it loads that model."""
PROMPTS_WRITTEN = threading.Event()
"""Set once a tune job has written its prompts: a cancel from then on is too late."""


def _emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


class LineProgress:
    """graphrag WorkflowCallbacks that print each step as a JSON line."""

    def pipeline_start(self, names: list[str]) -> None:
        """Announce the workflows that will run (graphrag lists the input loader that build()
        skips)."""
        _emit(
            "pipeline_start", total=len([name for name in names if name != "load_input_documents"])
        )

    def workflow_start(self, name: str, instance: object) -> None:
        """A workflow began."""
        _emit("workflow_start", name=name)

    def workflow_end(self, name: str, instance: object) -> None:
        """A workflow ended."""
        _emit("workflow_end", name=name)

    def pipeline_end(self, results: list[Any]) -> None:
        """The workflows that ran."""
        _emit("pipeline_end", total=len(results))

    def progress(self, progress: Any) -> None:
        """Item-level progress is not reported."""

    def pipeline_error(self, error: BaseException) -> None:
        """Errors are reported when the build raises."""


async def _build(root: Path, data_path: Path, mode: str, limits: Limits | None) -> None:
    from graphrag_mcp_server.handlers.indexing.build import (
        IndexMode,
        build,
        index_config,
        undone_unless_published,
    )

    _emit("step", name="comparing the documents with the served version")
    with undone_unless_published(root):
        config = index_config(root, data_path)
        summary = await build(
            config,
            root,
            IndexMode(mode),
            callbacks=[LineProgress()],
            limits=limits,
            notice=lambda message: print(f"graphrag-mcp: {message}", file=sys.stderr, flush=True),
        )
    _emit("summary", summary=summary.model_dump(mode="json"))


async def _tune(root: Path, data_path: Path, options: dict[str, Any]) -> None:
    from graphrag_mcp_server.handlers.indexing.tuning import (
        TuneOptions,
        tune_prompts,
        tuning_config,
        write_prompts,
    )
    from graphrag_mcp_server.handlers.indexing.versions import crash_point, signals_held

    config = tuning_config(root, data_path)
    result, tuned = await tune_prompts(
        config, root, TuneOptions(**options), on_stage=lambda stage: _emit("stage", name=stage)
    )
    with signals_held():  # a cancel lands before the prompts are written or after: never inside
        written = write_prompts(root, tuned, result)
        PROMPTS_WRITTEN.set()
    crash_point("prompts-written")
    _emit("tuned", tuned=written.model_dump(mode="json"))


def _warm_up(root: Path | None) -> None:
    """Import what every build needs, and load what `root`'s model reads first, so a job handed to
    a waiting worker starts at once."""
    from graphrag_mcp_server.config.runtime import prepare_models
    from graphrag_mcp_server.handlers.indexing.build import import_pipeline

    prepare_models()
    import_pipeline()
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    get_tokenizer()  # loads and keeps graphrag's default tiktoken encoding
    if root is not None and _uses_offline_model(root):
        from graphrag_mcp_server.providers.offline.extraction import warm_up

        _emit("step", name=OFFLINE_WARM_UP)
        warm_up()


def _uses_offline_model(root: Path) -> bool:
    """Whether `root`'s settings.yaml selects the offline model for every model (False without
    an index there or with a config the job will report)."""
    from graphrag_mcp_server.config.index_root import is_offline, load_index_config

    try:
        config = load_index_config(root, without_credentials=True, with_models=False)
    except GraphRagMcpError:
        return False
    return is_offline(config)


def _job_waiting() -> bool:
    """Whether a job is already on stdin (a worker started for it): then it runs without the
    warm-up, importing only what it needs (an unchanged folder: no graphrag pipeline at all)."""
    ready, _, _ = select.select([sys.stdin], [], [], JOB_GRACE_SECONDS)
    return bool(ready)


def _stop(signum: int, frame: object) -> None:
    """SIGTERM (cancel_index_job) unwinds the build, so the half-written version is removed."""
    SIGNALLED.set()
    raise KeyboardInterrupt


def _stop_unless_published(root: Path) -> None:
    """From now on SIGTERM stops the job only until it switches `root` to a new version, or writes
    its tuned prompts: a cancel that comes later is too late, and the job ends and reports as if
    none had come (the switch and the writing hold the signal: versions.signals_held)."""
    from graphrag_mcp_server.handlers.indexing.versions import current_version

    served = current_version(root)

    def stop(signum: int, frame: object) -> None:
        SIGNALLED.set()
        if current_version(root) == served and not PROMPTS_WRITTEN.is_set():
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)


def main() -> int:
    """Warm up, take one job from stdin, build; exit 0 on success (or no job) and 1 on failure."""
    signal.signal(signal.SIGTERM, _stop)
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    try:
        if not _job_waiting():  # a worker started ahead: imports now, the job starts at once
            _emit("step", name="importing graphrag")
            _warm_up(root)
        _emit("ready")
        line = sys.stdin.readline()
        if not line:
            return 0
        job = json.loads(line)
        _stop_unless_published(Path(job["root"]))
        limits = Limits(**job["limits"]) if job.get("limits") else None
        if job.get("tune") is not None:
            asyncio.run(_tune(Path(job["root"]), Path(job["data_path"]), job["tune"]))
        else:
            asyncio.run(_build(Path(job["root"]), Path(job["data_path"]), job["mode"], limits))
    except GraphRagMcpError as error:
        _emit("error", message=str(error))
        return 1
    except Exception as error:  # noqa: BLE001 - reported to the job, whatever it is
        _emit("error", message=f"{type(error).__name__}: {error}")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def exit_now(code: int) -> NoReturn:
    """Exit without the interpreter's teardown, its output and logs flushed first: the server
    waits for the worker's exit to end the job, and collecting a build's objects and stopping
    LanceDB's threads took 1.3 s after the result was told (1,000 documents). The build's files are
    closed and its version switched by then."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
