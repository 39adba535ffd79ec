"""A version is whole, or it is not published (issue 38): a provider that fails part of a build (a
real HTTP fake on loopback) gets a non-zero exit and a named gap, the version served before stays
served and whole, and the next healthy run computes exactly what is missing; through the CLI,
`index --watch` and an MCP session."""

import asyncio
import json
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import CORPUS, cli_env, run_cli
from fake_provider import EXTRACTION_PROMPT, REPORT_PROMPT, FakeProvider, fake_provider
from mcp_client import IN_PROCESS, mcp_session
from test_cli_errors import assert_one_line_error
from test_faults import with_provider

REPORT = json.dumps(
    {
        "title": "Kestlewick",
        "summary": "A harbour town.",
        "rating": 5.0,
        "rating_explanation": "r",
        "findings": [{"summary": "The harbour", "explanation": "Kestlewick keeps a harbour."}],
    }
)
FAST_RETRIES = {
    "call_args": {"timeout": 20, "max_retries": 0},
    "retry": {
        "type": "bounded_backoff",
        "max_retries": 1,
        "base_delay": 0.2,
        "max_delay": 1,
        "total_seconds": 10,
    },
}
"""One quick retry: what is tested is what a failure that outlasts the retries leaves, not the
waits."""
NEW_DOCUMENT = (
    "15_ferry_company.md",
    "# The ferry\n\nMirela Voss met Tomas Brenn at Kestlewick Harbour. Tomas Brenn "
    "runs the Kestlewick Ferry Company with Ada Quill.\n",
)
PROBE = "Reply with OK."
"""The one-token check of each model before a build (providers/probe.py)."""


@pytest.fixture(scope="module")
def provider() -> Iterator[FakeProvider]:
    """One provider for the module's roots (their settings name its address, so their stored work
    stays valid)."""
    with fake_provider(structured={REPORT_PROMPT: REPORT}, extracts_names=True) as fake:
        yield fake


def _root_for(provider: FakeProvider, root: Path) -> None:
    assert run_cli("init", "--index-path", root, "--provider", "offline").code == 0
    with_provider(root, provider.url, embedding=True, policy=FAST_RETRIES)


@pytest.fixture(scope="module")
def healthy(provider: FakeProvider, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixtures corpus indexed by the provider answering well: work/data and work/index."""
    provider.prompt_faults.clear()
    work = tmp_path_factory.mktemp("healthy")
    shutil.copytree(CORPUS, work / "data")
    _root_for(provider, work / "index")
    built = run_cli("index", work / "data", "--index-path", work / "index")
    assert built.code == 0, built.stderr[-3000:]
    return work


@pytest.fixture
def work(healthy: Path, provider: FakeProvider, tmp_path: Path) -> Path:
    """A copy of the healthy data and index, the provider answering well."""
    provider.prompt_faults.clear()
    provider.fail_after.clear()
    provider.modes.update(chat="ok", embeddings="ok")
    shutil.copytree(healthy, tmp_path / "work", symlinks=True)
    return tmp_path / "work"


def _served(root: Path) -> Path:
    return (root / "output").resolve()


def _statistics(root: Path) -> dict:
    """`stats --format json`, which exits 1 when it lists an error."""
    stats = run_cli("stats", "--index-path", root, "--format", "json")
    assert stats.code == (1 if _errors(stats.json()) else 0), stats.stderr
    return stats.json()


def _errors(statistics: dict) -> list[str]:
    return [issue["message"] for issue in statistics["issues"] if issue["severity"] == "error"]


def _sent_since(provider: FakeProvider, start: int) -> list[str]:
    """The chat prompts sent since `start`, the model checks left out."""
    return [prompt for prompt in provider.prompts[start:] if prompt != PROBE]


# (step, fault, a text of the chat prompts that fail (None: every embedding request after the model
# check), words of the error). The extraction of the new document, the summary of an entity it adds
# a description to, the reports of the communities it changes, the embeddings of its rows.
UPDATE_FAULTS = [
    (
        "extraction",
        "500",
        "Text: # The ferry",
        ["1 of 12 text units could not be extracted", "15_ferry_company.md", "HTTP 500"],
    ),
    ("extraction", "close", "Text: # The ferry", ["could not be extracted", "Connection error"]),
    ("summaries", "500", 'Entities: "MIRELA VOSS"', ["extract_graph", "HTTP 500"]),
    ("reports", "500", REPORT_PROMPT, ["communities have no report", "HTTP 500"]),
    ("reports", "not_json", REPORT_PROMPT, ["communities have no report", "could not be parsed"]),
    ("embeddings", "500", None, ["generate_text_embeddings", "HTTP 500"]),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("step", "fault", "failing", "words"),
    UPDATE_FAULTS,
    ids=[f"{step}-{fault}" for step, fault, *_ in UPDATE_FAULTS],
)
def test_an_update_with_provider_faults_is_not_published_and_the_next_run_repairs_it(
    work: Path, provider: FakeProvider, step: str, fault: str, failing: str, words: list[str]
) -> None:
    data, root = work / "data", work / "index"
    served = _served(root)
    (data / NEW_DOCUMENT[0]).write_text(NEW_DOCUMENT[1], encoding="utf-8")
    if failing is None:
        provider.fail_after["embeddings"] = (provider.count("embeddings") + 1, fault)
    else:
        provider.fail_prompts(failing, fault)
    start = len(provider.prompts)
    failed = run_cli("index", data, "--index-path", root)
    assert_one_line_error(failed, 1, *words)
    assert "error: " in failed.stderr.splitlines()[-1]
    sent = _sent_since(provider, start)
    failed_prompts = {prompt for prompt in sent if failing is not None and failing in prompt}
    assert failed_prompts or failing is None, sent
    assert _served(root) == served, "the incomplete version was published"
    before = _statistics(root)
    assert before["documents"] == 11 and _errors(before) == [], before["issues"]

    provider.prompt_faults.clear()
    provider.fail_after.clear()
    provider.modes["embeddings"] = "ok"
    start, embedded = len(provider.prompts), provider.count("embeddings")
    repaired = run_cli("index", data, "--index-path", root, "--format", "json")
    assert repaired.code == 0, repaired.stderr[-2000:]
    resent = _sent_since(provider, start)
    assert len(resent) == len(set(resent)), "a prompt was sent twice"
    assert failed_prompts <= set(resent), "a failed prompt was not asked again"
    assert not set(resent) & (set(sent) - failed_prompts), (
        "a prompt answered before was paid for again"
    )
    assert repaired.json()["llm_calls"] == len(resent) + 1  # + the one-token model check
    assert provider.count("embeddings") > embedded
    after = _statistics(root)
    assert after["documents"] == 12 and _errors(after) == [], after["issues"]
    assert after["community_reports"] == after["communities"]
    again = run_cli("index", data, "--index-path", root, "--format", "json")
    assert again.code == 0 and again.json()["llm_calls"] == 0, "a whole version was built again"


@pytest.mark.slow
def test_a_cold_build_whose_reports_fail_publishes_nothing_and_the_next_run_completes_it(
    provider: FakeProvider, tmp_path: Path
) -> None:
    provider.prompt_faults.clear()
    root = tmp_path / "index"
    _root_for(provider, root)
    fault = provider.fail_prompts(REPORT_PROMPT, "not_json")
    start = len(provider.prompts)
    # every report fails: more failures in a row than the breaker allows would stop the build
    # another way
    failed = run_cli(
        "index", CORPUS, "--index-path", root, env={"GRAPHRAG_MCP_PROVIDER_FAILURE_LIMIT": "100"}
    )
    provider.prompt_faults.remove(fault)
    assert_one_line_error(
        failed,
        1,
        "did not publish",
        "community reports (create_community_reports_kept stopped",
        "could not be parsed",
        "No version is served yet",
    )
    assert not (root / "output").exists() and not any((root / "versions").iterdir())
    assert (root / "settings.yaml").is_file(), "the user's settings were removed"
    missing = run_cli("stats", "--index-path", root)
    assert_one_line_error(missing, 1, "no index")
    sent = _sent_since(provider, start)
    failed_prompts = {prompt for prompt in sent if REPORT_PROMPT in prompt}
    assert failed_prompts

    start = len(provider.prompts)
    completed = run_cli("index", CORPUS, "--index-path", root, "--format", "json")
    assert completed.code == 0, completed.stderr[-2000:]
    resent = _sent_since(provider, start)
    assert len(resent) == len(set(resent)) and failed_prompts <= set(resent)
    [check] = (
        set(resent) - failed_prompts
    )  # no version records the extraction check passed: it is sent again
    assert EXTRACTION_PROMPT in check and check in sent
    statistics = _statistics(root)
    assert (
        statistics["community_reports"] == statistics["communities"] > 0
        and _errors(statistics) == []
    )


@pytest.mark.e2e  # index --watch, stopped by SIGINT
def test_a_watch_cycle_that_fails_is_retried_without_a_change(
    work: Path, provider: FakeProvider
) -> None:
    data, root = work / "data", work / "index"
    served = _served(root)
    env = {
        **cli_env(),
        "GRAPHRAG_MCP_WATCH_SETTLE_SECONDS": "0.5",
        "GRAPHRAG_MCP_WATCH_RETRY_SECONDS": "1",
    }
    watcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graphrag_mcp_server",
            "index",
            str(data),
            "--index-path",
            str(root),
            "--watch",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_line(watcher, "Watching")
        time.sleep(2)  # the notice comes just before the folder's observer starts
        provider.fail_prompts(REPORT_PROMPT, "500")
        (data / NEW_DOCUMENT[0]).write_text(NEW_DOCUMENT[1], encoding="utf-8")
        failure = _wait_for_line(watcher, "error: ")
        assert "communities have no report" in failure and "still watching" in failure
        assert _served(root) == served
        # no file changes from here on: the watcher retries by itself
        provider.prompt_faults.clear()
        deadline = time.monotonic() + 120
        while _served(root) == served:
            assert watcher.poll() is None and time.monotonic() < deadline, (
                "the failed update was never retried"
            )
            time.sleep(0.5)
    finally:
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=30)
    statistics = _statistics(root)
    assert statistics["documents"] == 12 and _errors(statistics) == []


def _wait_for_line(process: subprocess.Popen, text: str, timeout: float = 120) -> str:
    """The first line of the process's stderr containing `text`, waited for at most `timeout`
    seconds."""
    selector = selectors.DefaultSelector()
    selector.register(process.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        if selector.select(left) and text in (line := process.stderr.readline()):
            return line
        assert process.poll() is None, f"the process ended before printing {text!r}"
    raise AssertionError(f"no line with {text!r} within {timeout} s")


@pytest.mark.slow
async def test_build_index_reports_an_incomplete_version_as_failed(
    work: Path, provider: FakeProvider
) -> None:
    data, root = work / "data", work / "index"
    served = _served(root)
    (data / NEW_DOCUMENT[0]).write_text(NEW_DOCUMENT[1], encoding="utf-8")
    provider.fail_prompts(REPORT_PROMPT, "500")
    async with mcp_session(root, IN_PROCESS, data_path=work) as session:
        started = await session.call_tool("build_index", {"data_path": "data"})
        if started.is_error:  # the job ended within the call's wait
            error = started.content[0].text
        else:
            while (status := (await session.call_tool("index_status", {})).structured_content)[
                "state"
            ] == "running":
                await asyncio.sleep(0.5)
            assert status["state"] == "failed", status
            error = status["error"]
        # the call's error says "failed: " first; a job still running then tells it in its status
        assert "indexing did not publish" in error and "communities have no report" in error, error
        status = (await session.call_tool("index_status", {})).structured_content
        assert status["state"] == "failed", status
        statistics = (await session.call_tool("get_statistics", {})).structured_content
        assert statistics["documents"] == 11
        assert not [issue for issue in statistics["issues"] if issue["severity"] == "error"]
    assert _served(root) == served


@pytest.mark.slow
def test_stats_names_a_published_versions_gaps_and_the_next_index_fills_them(
    copied_index: Path,
) -> None:
    """A version published with gaps (as before this check existed): a report gone, an entity's
    vector gone."""
    import lancedb
    import pandas as pd

    served = (copied_index / "output").resolve()
    reports = pd.read_parquet(served / "community_reports.parquet")
    lost = reports.iloc[0]
    reports.iloc[1:].to_parquet(served / "community_reports.parquet", index=False)
    entity = pd.read_parquet(served / "entities.parquet", columns=["id"])["id"].iloc[0]
    lancedb.connect(served / "lancedb").open_table("entity_description").delete(f"id = '{entity}'")
    issues = _errors(_statistics(copied_index))
    assert f"1 of 7 communities have no report (community {lost['community']})" in " ".join(
        issues
    ), issues
    assert f"1 of 29 entities have no vector in entity_description ({entity})" in " ".join(
        issues
    ), issues
    assert all("graphrag-mcp index DATA_PATH" in issue for issue in issues)

    repaired = run_cli("index", CORPUS, "--index-path", copied_index, "--format", "json")
    assert repaired.code == 0, repaired.stderr[-2000:]
    assert "the served version is incomplete" in repaired.stderr
    summary = (
        repaired.json()
    )  # the lost report and vector were stored by the build that made them: no call
    assert (
        summary["llm_calls"] == summary["embedding_calls"] == 0
        and summary["computed"]["extraction"] == 0
    )
    assert (
        summary["carried_over"]["report"] == 7
        and summary["vectors_written"]["entity_description"] == 29
    )
    after = _statistics(copied_index)
    assert _errors(after) == [] and after["community_reports"] == 7
    again = run_cli("index", CORPUS, "--index-path", copied_index, "--format", "json")
    assert again.code == 0 and again.json()["seconds"] < 5 and "incomplete" not in again.stderr


@pytest.mark.slow
def test_changed_settings_redo_what_depends_on_them(copied_index: Path) -> None:
    settings = copied_index / "settings.yaml"
    text = settings.read_text(encoding="utf-8")
    types = "  entity_types: [organization,person,geo,event]\n"
    assert types in text
    settings.write_text(
        text.replace(types, "  entity_types: [person,vessel]\n", 1), encoding="utf-8"
    )
    [changed] = _statistics(copied_index)["issues"]
    assert (
        "entity types are person, vessel" in changed["message"] and changed["severity"] == "warning"
    )
    rebuilt = run_cli("index", CORPUS, "--index-path", copied_index, "--format", "json")
    assert rebuilt.code == 0, rebuilt.stderr[-2000:]
    assert "every text unit is extracted again" in rebuilt.stderr
    summary = rebuilt.json()
    assert summary["computed"]["extraction"] == 11 and summary["carried_over"]["extraction"] == 0
    assert summary["vectors_written"]["text_unit_text"] == 0, "text units were embedded again"
    assert _statistics(copied_index)["issues"] == []
    assert (
        run_cli("index", CORPUS, "--index-path", copied_index, "--format", "json").json()[
            "llm_calls"
        ]
        == 0
    )


@pytest.mark.slow
async def test_a_query_whose_vectors_do_not_fit_the_index_says_both_widths(
    copied_index: Path,
) -> None:
    with fake_provider(dimensions=256) as embeddings:
        with_provider(copied_index, embeddings.url, embedding=True, completion=False)
        assert (
            run_cli("index", CORPUS, "--index-path", copied_index).code == 0
        )  # every vector embedded at 256
        embeddings.dimensions = 64  # the model behind the same name changed
        query = run_cli(
            "query",
            "Who designed Old Bessie?",
            "--index-path",
            copied_index,
            "--type",
            "local",
            "--context-only",
        )
        words = [
            "query vectors of 64 numbers",
            "vectors of 256",
            "graphrag-mcp index DATA_PATH --full",
        ]
        assert_one_line_error(query, 1, *words)
        async with mcp_session(copied_index, IN_PROCESS) as session:
            answer = await session.call_tool(
                "basic_search", {"query": "Old Bessie", "context_only": True}
            )
            assert answer.is_error and all(word in answer.content[0].text for word in words)
        full = run_cli("index", CORPUS, "--index-path", copied_index, "--full")
        assert full.code == 0, full.stderr[-2000:]
        assert (
            run_cli(
                "query",
                "Who designed Old Bessie?",
                "--index-path",
                copied_index,
                "--type",
                "local",
                "--context-only",
            ).code
            == 0
        )


def test_a_first_run_that_fails_leaves_no_settings_behind(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    new_root, existing = tmp_path / "new", tmp_path / "existing"
    existing.mkdir()
    for root in (new_root, existing):
        failed = run_cli("index", empty, "--index-path", root)
        assert_one_line_error(failed, 1, "no documents in")
    assert not new_root.exists()
    assert list(existing.iterdir()) == []


@pytest.mark.slow
def test_a_changed_completion_model_answers_anew_and_the_old_models_cache_is_kept(
    work: Path, provider: FakeProvider
) -> None:
    """graphrag's cache keys leave the model out: each model gets its own cache folders
    (model_caches.py)."""
    data, root = work / "data", work / "index"
    settings = root / "settings.yaml"
    settings.write_text(
        settings.read_text(encoding="utf-8").replace("model: gpt-4.1-mini", "model: gpt-4.1"),
        encoding="utf-8",
    )
    start = len(provider.prompts)
    moved = run_cli("index", data, "--index-path", root, "--format", "json")
    assert moved.code == 0, moved.stderr[-2000:]
    assert "call openai/gpt-4.1 (was openai/gpt-4.1-mini)" in moved.stderr
    extractions = [prompt for prompt in _sent_since(provider, start) if EXTRACTION_PROMPT in prompt]
    assert len(extractions) >= 11, "the new model's answers came from the old model's cache"
    assert (root / "cache" / "extract_graph@openai_gpt-4.1-mini").is_dir()
    assert _statistics(root)["models"]["completion"] == ["openai/gpt-4.1"]

    settings.write_text(
        settings.read_text(encoding="utf-8").replace("model: gpt-4.1", "model: gpt-4.1-mini"),
        encoding="utf-8",
    )
    start = len(provider.prompts)
    back = run_cli("index", data, "--index-path", root, "--format", "json")
    assert back.code == 0, back.stderr[-2000:]
    again = [prompt for prompt in _sent_since(provider, start) if EXTRACTION_PROMPT in prompt]
    assert len(again) <= 1, "the first model's cache was lost"  # its extraction check, sent again
