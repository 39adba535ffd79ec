"""Messages that fit the fault (issue 38): credential advice only for a refused key, a rate limit
named with its Retry-After (waited when it ends before the deadline), a failing provider said to be
worth a retry, an unreadable answer an error, a damaged report table not a traceback,
`init --api-base`, and llm_calls counting every request; through the CLI and a real MCP client,
against the fake provider on loopback."""

import asyncio
import json
import shutil
import time
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
import yaml

from conftest import CORPUS, run_cli
from fake_provider import REPORT_PROMPT, fake_provider
from mcp_client import IN_PROCESS, mcp_session
from test_cli_errors import assert_one_line_error
from test_faults import QUESTION, with_provider

BUILD_CREDENTIALS = "Check the key, base URL and model name"
SEARCH_CREDENTIALS = "Check the model settings and credentials"
RETRY = "a retry may succeed"
NO_RETRY = {
    "retry": {"type": "bounded_backoff", "max_retries": 0},
    "call_args": {"timeout": 60, "max_retries": 0},
}
"""A failure policy that gives up at the first failed call: the message is the fault's, with no
search deadline to race (a 6 s one ran out on a loaded 2-core host before the first call)."""

# fault -> what the message says, and what it must not say
MESSAGES = {
    "401": (["AuthenticationError (HTTP 401)", "Incorrect API key", SEARCH_CREDENTIALS], [RETRY]),
    "429": (
        ["RateLimitError (HTTP 429, Retry-After 1 s)", "rate limit was reached", "wait 1 s"],
        [SEARCH_CREDENTIALS, "credentials"],
    ),
    "500": (
        ["InternalServerError (HTTP 500)", "The provider failed, not the settings", RETRY],
        [SEARCH_CREDENTIALS, "credentials"],
    ),
    "close": (
        ["Connection error", "The provider failed, not the settings", RETRY],
        [SEARCH_CREDENTIALS, "credentials"],
    ),
}


@pytest.mark.slow  # 6-9 s a fault, CLI processes: the full suite runs it
@pytest.mark.parametrize("fault", list(MESSAGES))
def test_cli_search_message_fits_the_fault(copied_index: Path, fault: str) -> None:
    said, unsaid = MESSAGES[fault]
    with fake_provider(chat=fault) as provider:
        with_provider(copied_index, provider.url, policy=NO_RETRY)
        result = run_cli("query", QUESTION, "--type", "local", "--index-path", copied_index)
    assert_one_line_error(result, 1, "error: the model provider failed: ", *said)
    assert not any(words in result.stderr for words in unsaid), result.stderr


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
async def test_tool_errors_fit_the_fault(built_index: tuple[Path, dict], tmp_path: Path) -> None:
    """The same faults as tool errors, each on its own root, provider and session, at once."""
    async with AsyncExitStack() as stack:
        sessions = []
        for fault in MESSAGES:
            root = tmp_path / fault
            shutil.copytree(built_index[0], root, symlinks=True)
            provider = stack.enter_context(fake_provider(chat=fault))
            with_provider(root, provider.url)
            sessions.append(await stack.enter_async_context(mcp_session(root, IN_PROCESS)))
        results = await asyncio.gather(
            *(
                session.call_tool("local_search", {"query": QUESTION, "timeout_seconds": 6})
                for session in sessions
            )
        )
    for (fault, (said, unsaid)), result in zip(MESSAGES.items(), results, strict=True):
        message = result.content[0].text
        assert result.is_error and "tool local_search: the model provider failed: " in message, (
            fault,
            message,
        )
        assert all(words in message for words in said), (fault, message)
        assert not any(words in message for words in unsaid), (fault, message)
        assert message.endswith("The server keeps serving"), message


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_build_probe_names_a_rate_limit_and_its_retry_after(tmp_path: Path) -> None:
    """A 429 asking for 60 s before an index build: the check gives up at once naming the limit and
    the wait (it said "no answer within 30 s" after waiting 30 s), with no advice to check the
    key."""
    root = tmp_path / "index"
    assert run_cli("init", "--index-path", root, "--provider", "offline").code == 0
    with fake_provider(chat="429", retry_after="60") as provider:
        with_provider(root, provider.url)
        started = time.monotonic()
        result = run_cli("index", CORPUS, "--index-path", root)
        seconds = time.monotonic() - started
        assert_one_line_error(
            result,
            1,
            "before indexing started",
            "RateLimitError (HTTP 429, Retry-After 60 s)",
            "rate limit was reached: wait 60 s",
            "run the index again",
        )
        assert "no answer within" not in result.stderr and BUILD_CREDENTIALS not in result.stderr
        assert provider.count("chat") == 1 and seconds < 25, seconds


@pytest.mark.slow  # about 8 s of CLI processes: the full suite runs it
def test_build_probe_keeps_credential_advice_for_a_refused_key(tmp_path: Path) -> None:
    root = tmp_path / "index"
    assert run_cli("init", "--index-path", root, "--provider", "offline").code == 0
    with fake_provider(chat="401") as provider:
        with_provider(root, provider.url)
        result = run_cli("index", CORPUS, "--index-path", root)
    assert_one_line_error(result, 1, "before indexing started", "HTTP 401", BUILD_CREDENTIALS)
    assert RETRY not in result.stderr


async def test_retry_after_is_waited_when_it_ends_before_the_deadline(copied_index: Path) -> None:
    """A policy whose own waits stop at 1 s (max_delay) still waits the 3 s a 429 asks, and then
    answers; a Retry-After of 60 s against a 10 s deadline answers at once, naming the limit and the
    wait."""
    policy = {
        "retry": {
            "type": "bounded_backoff",
            "max_retries": 3,
            "base_delay": 1.0,
            "max_delay": 1,
            "total_seconds": 60,
        },
        "call_args": {"timeout": 60, "max_retries": 0},
    }
    with fake_provider(answer="Mirela Voss keeps the harbour.", retry_after="3") as provider:
        with_provider(copied_index, provider.url, policy=policy)
        provider.fail_prompts(QUESTION, "429", times=1)
        async with mcp_session(copied_index, IN_PROCESS) as session:
            result = await session.call_tool(
                "local_search", {"query": QUESTION, "timeout_seconds": 20}
            )
            assert not result.is_error, result.content[0].text
            assert result.structured_content["answer"] == "Mirela Voss keeps the harbour."
            (_, asked), (_, answered) = provider.requests
            assert answered - asked >= 3, answered - asked  # cut to max_delay, it was 1 s
            assert result.structured_content["llm_calls"] == 2 == provider.count("chat")
            provider.retry_after, provider.modes["chat"] = "60", "429"
            started = time.monotonic()
            refused = await session.call_tool(
                "local_search", {"query": QUESTION, "timeout_seconds": 10}
            )
            seconds = time.monotonic() - started
    message = refused.content[0].text
    assert (
        refused.is_error
        and "RateLimitError (HTTP 429, Retry-After 60 s)" in message
        and "wait 60 s" in message
    )
    assert seconds < 8 and provider.count("chat") == 3, (seconds, provider.count("chat"))


@pytest.mark.slow  # about 9 s of CLI processes: the full suite runs it
async def test_an_unreadable_answer_is_an_error_not_an_empty_answer(copied_index: Path) -> None:
    """HTTP 200 with a chat completion cut in half: the streamed answer (local) is an error, on the
    CLI and as a tool error; global's map step (JSON asked, not streamed) quotes what the provider
    wrote."""
    with fake_provider(chat="truncated") as provider:
        with_provider(copied_index, provider.url)
        result = run_cli("query", QUESTION, "--type", "local", "--index-path", copied_index)
        assert_one_line_error(
            result,
            1,
            "the model provider failed",
            "to the local search could not be read",
            "held no text",
            RETRY,
        )
        assert result.stdout == "" and provider.count("chat") == 1
        async with mcp_session(copied_index, IN_PROCESS) as session:
            local = await session.call_tool("local_search", {"query": QUESTION})
            assert local.is_error and "could not be read" in local.content[0].text
            global_ = await session.call_tool(
                "global_search", {"query": "What are the main themes?", "timeout_seconds": 6}
            )
    message = global_.content[0].text
    assert global_.is_error, message
    assert (
        "an answer that could not be parsed" in message
        and 'it answered: "{\\"id\\": \\"c1\\"' in message
    ), message
    assert "credentials" not in message


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
async def test_context_only_global_serves_without_the_report_vector_table(
    copied_index: Path,
) -> None:
    """community_full_content.lance deleted: context-only global ranks the reports by the question's
    words (it answered `internal error: AttributeError`), and says which table is missing and how to
    rebuild it; drift, which needs the table, names it."""
    table = copied_index / "output" / "lancedb" / "community_full_content.lance"
    shutil.rmtree(table)
    result = run_cli(
        "query",
        "What are the main themes?",
        "--type",
        "global",
        "--context-only",
        "--index-path",
        copied_index,
        "--format",
        "json",
    )
    assert result.code == 0, result.stderr
    assert result.json()["context_counts"]["reports"] > 0
    assert "community_full_content.lance is missing" in result.stderr and "--full" in result.stderr
    async with mcp_session(copied_index, IN_PROCESS) as session:
        served = await session.call_tool(
            "global_search", {"query": "harbour lease", "context_only": True}
        )
        assert not served.is_error, served.content[0].text
        reports = served.structured_content["context"]["reports"]
        assert reports and "lease" in (reports[0]["title"] + reports[0]["content"]).lower()
        drift = await session.call_tool("drift_search", {"query": QUESTION, "context_only": True})
        assert drift.is_error and "community_full_content.lance is missing" in drift.content[0].text
        assert "graphrag-mcp index" in drift.content[0].text and "--full" in drift.content[0].text


REPORT = {
    "title": "Kestlewick harbour",
    "summary": "Mirela Voss keeps the harbour of Kestlewick.",
    "rating": 5.0,
    "rating_explanation": "A small harbour.",
    "findings": [{"summary": "The keeper", "explanation": "Mirela Voss keeps the harbour."}],
}


@pytest.mark.slow
def test_init_api_base_points_both_models_at_a_server(tmp_path: Path) -> None:
    """`init --api-base URL` writes the URL for the completion and the embedding model; an index
    built and a question answered through it reach that server, and llm_calls count the requests it
    received."""
    root = tmp_path / "index"
    with fake_provider(
        dimensions=1536,
        answer="Mirela Voss keeps the harbour.",
        structured={REPORT_PROMPT: json.dumps(REPORT)},
    ) as provider:
        assert run_cli("init", "--index-path", root, "--api-base", provider.url).code == 0
        settings = yaml.safe_load((root / "settings.yaml").read_text())
        assert settings["completion_models"]["default_completion_model"]["api_base"] == provider.url
        assert settings["embedding_models"]["default_embedding_model"]["api_base"] == provider.url
        key = {"GRAPHRAG_API_KEY": "sk-test"}
        built = run_cli("index", CORPUS, "--index-path", root, "--format", "json", env=key)
        assert built.code == 0, built.stderr[-2000:]
        assert built.json()["community_reports"] > 0 and provider.count_prompts(REPORT_PROMPT) > 0
        assert provider.count("embeddings") > 0
        # every request counts, the one-token check and the extraction check before the build
        # included
        assert built.json()["llm_calls"] == provider.count("chat"), built.json()
        before = provider.count("chat")
        provider.fail_prompts(QUESTION, "500", times=1)  # retried once: two requests, both counted
        answer = run_cli(
            "query", QUESTION, "--type", "local", "--index-path", root, "--format", "json", env=key
        )
        assert answer.code == 0, answer.stderr[-2000:]
        assert answer.json()["answer"] == "Mirela Voss keeps the harbour."
        assert answer.json()["llm_calls"] == provider.count("chat") - before == 2
    refused = run_cli(
        "init",
        "--index-path",
        tmp_path / "offline",
        "--provider",
        "offline",
        "--api-base",
        "http://x",
    )
    assert_one_line_error(refused, 1, "--api-base", "offline")
