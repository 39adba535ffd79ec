"""The index worker process and the LLM cache keys that make an update's unchanged content free."""

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, cli_env, run_cli
from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing.jobs import IndexJobs
from graphrag_mcp_server.handlers.indexing.versions import MANIFEST, PAUSE_AT, current_version
from graphrag_mcp_server.handlers.indexing.worker import OFFLINE_WARM_UP
from graphrag_mcp_server.handlers.results import JobState

WORKER = [sys.executable, "-m", "graphrag_mcp_server.handlers.indexing.worker"]
KEY_OF_ARGUMENTS = """
import sys
from graphrag.cache.cache_key_creator import cache_key_creator
requests = [
    {"model": "offline/extract", "temperature": 0,
     "messages": [{"role": "user", "content": prompt}]}
    for prompt in sys.argv[1:]
]
graphrags_own = [cache_key_creator(request) for request in requests]
from graphrag_mcp_server.config.runtime import prepare_models
prepare_models()
import graphrag_cache.cache_key
for request, own in zip(requests, graphrags_own):
    print(graphrag_cache.cache_key.hash_data.__name__, cache_key_creator(request), own)
"""


def _cache_keys(*prompts: str) -> list[list[str]]:
    """For each prompt, [the hasher graphrag uses, the cache key of a request with it, graphrag's
    own key of it], computed in one fresh process."""
    output = subprocess.run(
        [sys.executable, "-c", KEY_OF_ARGUMENTS, *prompts],
        capture_output=True,
        text=True,
        check=True,
        env=cli_env(),
    ).stdout
    return [line.split() for line in output.splitlines()]


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_cache_keys_are_graphrags_own_and_stable_between_processes() -> None:
    prompt = sorted(CORPUS.iterdir())[0].read_text(encoding="utf-8")
    (hasher, first, graphrags_own), (_, edited, _) = _cache_keys(
        prompt, prompt.replace("the", "a", 1)
    )
    [(_, again, _)] = _cache_keys(prompt)
    assert hasher == "hash_like_graphrag"
    assert first == graphrags_own, (
        "a cache filled by the graphrag CLI must be found, and the other way round"
    )
    assert first == again, (
        "a cache key must not change between runs, or no update would find its cache"
    )
    assert first != edited
    assert first.endswith("_v4")


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_a_waiting_worker_without_a_job_ends_cleanly(tmp_path) -> None:
    worker = subprocess.Popen(
        WORKER,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(),
        cwd=tmp_path,
    )
    warming, ready = worker.stdout.readline(), worker.stdout.readline()
    worker.stdin.close()
    assert worker.wait(timeout=60) == 0
    # no job waiting: it imports graphrag first, and says so (index_status shows the step)
    assert json.loads(warming) == {"event": "step", "name": "importing graphrag"}
    assert json.loads(ready) == {"event": "ready"}
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # two worker processes importing graphrag: the full suite runs it
def test_a_worker_started_ahead_loads_the_offline_models_word_lists(tmp_path) -> None:
    """Given an index root whose models are the offline model, a worker started ahead loads that
    model's word lists before it says `ready` (so the job's first extraction does not); given a
    root without an index, it only imports."""
    offline = tmp_path / "offline"
    assert run_cli("init", "--provider", "offline", "--index-path", offline).code == 0
    steps = {}
    for root in (offline, tmp_path / "no-index"):
        worker = subprocess.Popen(
            [*WORKER, str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=cli_env(),
        )
        events = [json.loads(worker.stdout.readline())]
        while events[-1]["event"] != "ready":
            events.append(json.loads(worker.stdout.readline()))
        worker.stdin.close()
        assert worker.wait(timeout=60) == 0
        steps[root.name] = [event.get("name") for event in events[:-1]]
    assert steps["offline"] == ["importing graphrag", OFFLINE_WARM_UP]
    assert steps["no-index"] == ["importing graphrag"]


@pytest.mark.slow
def test_a_worker_handed_a_job_builds_and_reports(tmp_path) -> None:
    root, data = tmp_path / "index", tmp_path / "data"
    data.mkdir()
    for document in sorted(CORPUS.iterdir())[:2]:
        (data / document.name).write_text(document.read_text(encoding="utf-8"), encoding="utf-8")
    job = json.dumps({"root": str(root), "data_path": str(data), "mode": "incremental"})
    done = subprocess.run(
        WORKER, input=job + "\n", capture_output=True, text=True, env=cli_env(), timeout=600
    )
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr[-3000:]
    assert events[0] == {"event": "ready"}
    started = [event for event in events if event["event"] == "workflow_start"]
    ended = [event for event in events if event["event"] == "workflow_end"]
    assert (
        len(started)
        == len(ended)
        == next(event["total"] for event in events if event["event"] == "pipeline_start")
    )
    summary = events[-1]["summary"]
    assert events[-1]["event"] == "summary"
    assert summary["documents"] == 2 and summary["documents_added"] == 2 and summary["entities"] > 0


@pytest.mark.slow  # a worker process builds an index: the full suite runs it
async def test_a_cancel_after_the_switch_is_too_late_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel that reaches the worker once its version is served does not undo it, nor call the
    job cancelled: the job succeeds with its summary, and the cancel is an error that says so.
    The build pauses just after its switch (PAUSE_AT), which is when the cancel is sent."""
    root, data = tmp_path / "index", tmp_path / "data"
    data.mkdir()
    shutil.copy(sorted(CORPUS.iterdir())[0], data)
    for name, value in {**cli_env(), PAUSE_AT: "switch:switched"}.items():
        monkeypatch.setenv(name, value)
    jobs = IndexJobs()
    job = jobs.start(root, data, "incremental", on_end=lambda job: None)
    while current_version(root) is None and job.state is JobState.RUNNING:
        await asyncio.sleep(0.05)
    served = current_version(root)
    assert served is not None, job.error
    with pytest.raises(GraphRagMcpError, match=f"index job {job.job_id} ended before the cancel"):
        await jobs.cancel(job.job_id)
    assert job.state is JobState.SUCCEEDED and job.error is None
    assert job.summary is not None and job.summary.documents == 1
    assert current_version(root) == served and (served / MANIFEST).is_file()


@pytest.mark.slow  # a worker process tunes prompts: the full suite runs it
async def test_a_cancel_after_the_prompts_are_written_is_too_late_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tune job that has written its prompts when the cancel reaches it is not called cancelled:
    it succeeds with what it wrote, and the cancel is an error that says so. The job pauses just
    after writing (PAUSE_AT), which is when the cancel is sent."""
    from graphrag_mcp_server.handlers.indexing.tuning import TuneOptions

    root, data = tmp_path / "index", tmp_path / "data"
    data.mkdir()
    for document in sorted(CORPUS.iterdir())[:2]:
        shutil.copy(document, data)
    assert run_cli("init", "--provider", "offline", "--index-path", root).code == 0
    for name, value in {**cli_env(), PAUSE_AT: "prompts-written"}.items():
        monkeypatch.setenv(name, value)
    prompt = root / "prompts" / "extract_graph.txt"
    jobs = IndexJobs()
    options = TuneOptions(domain="Tidal energy", limit=2, discover_entity_types=False)
    job = jobs.start(root, data, "tune", on_end=lambda job: None, tune=options)
    while not any(root.glob("prompts.bak-*")) and job.state is JobState.RUNNING:
        await asyncio.sleep(0.05)  # the backup is made first: the writing has begun
    assert any(root.glob("prompts.bak-*")), job.error
    with pytest.raises(GraphRagMcpError, match=f"index job {job.job_id} ended before the cancel"):
        await jobs.cancel(job.job_id)
    assert job.state is JobState.SUCCEEDED and job.error is None
    assert job.tuned is not None and job.tuned.written
    assert "Tidal energy" in prompt.read_text(encoding="utf-8")
