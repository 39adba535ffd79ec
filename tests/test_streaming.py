"""Streamed answers (issue 30): with a progress token, the answer's text arrives in
notifications/progress as the model writes it, then the whole result as without one;
`query --stream` prints it as it comes. Every model path streams: the offline model (word chunks), a
provider's server-sent events (tests/fake_provider.py), sampling (checked in
test_context_and_sampling, and over each transport in test_server, with `streamed`)."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp.client.session import ClientSession

from conftest import cli_env, run_cli
from fake_provider import fake_provider
from graphrag_mcp_server.server.progress import ANSWER_STARTS
from mcp_client import IN_PROCESS, mcp_session
from test_faults import with_provider

QUESTIONS = {
    "local": "Who designed Old Bessie?",
    "basic": "Who inspected the Kelling Point turbine in 1994?",
    "global": "What are the main themes?",
    "drift": "What did Ines Halloran study at Marrow Sands?",
}
WRITTEN = (
    "Tobias Arkwright designed Old Bessie, and the Harrowgate Tidal Cooperative ran her for "
    "decades."
)


async def streamed(
    session: ClientSession, tool: str, arguments: dict
) -> tuple[dict, list[str], list[float]]:
    """The tool's result, the answer's pieces its progress notifications carried, and when each
    arrived."""
    updates: list[tuple[float, str, float]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        updates.append((value, message or "", time.monotonic()))

    result = await session.call_tool(tool, arguments, progress_callback=progress)
    assert not result.is_error, result.content
    values = [value for value, _, _ in updates]
    assert values == sorted(set(values)), values  # progress only grows
    messages = [message for _, message, _ in updates]
    assert ANSWER_STARTS in messages, messages
    start = messages.index(ANSWER_STARTS) + 1
    return result.structured_content, messages[start:], [when for _, _, when in updates[start:]]


def _cost(result: dict) -> tuple:
    return (
        result["answer"],
        result["llm_calls"],
        result["prompt_tokens"],
        result["completion_tokens"],
    )


@pytest.mark.parametrize("search", list(QUESTIONS))
async def test_each_search_streams_its_answer_and_returns_the_same_result(
    built_index: tuple[Path, dict], search: str
) -> None:
    """The offline model's answer arrives word by word; joined, the pieces are the answer; the
    result (answer, sources, usage) equals the one a client without a progress token gets."""
    async with mcp_session(built_index[0], IN_PROCESS) as session:
        result, pieces, _ = await streamed(
            session, f"{search}_search", {"query": QUESTIONS[search]}
        )
        whole = await session.call_tool(f"{search}_search", {"query": QUESTIONS[search]})
    assert len(pieces) > 5 and "".join(pieces) == result["answer"]
    if (
        search != "drift"
    ):  # drift's follow-ups differ between two calls, streamed or not (21, 21, 22 model calls)
        assert _cost(result) == _cost(whole.structured_content)
        assert result["sources"] == whole.structured_content["sources"]


async def test_a_providers_server_sent_events_reach_the_client_as_they_come(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """A provider streaming one word every 0.15 s: each word reaches the client as its own
    notification, the first long before the result; the answer and its usage equal those of the same
    search without a progress token."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    with fake_provider(answer=WRITTEN, chunk_seconds=0.15) as provider:
        with_provider(root, provider.url)
        async with mcp_session(root, IN_PROCESS) as session:
            await session.call_tool(
                "get_statistics", {}
            )  # the index loaded: the timing is the search's
            started = time.monotonic()
            result, pieces, arrived = await streamed(
                session, "local_search", {"query": QUESTIONS["local"]}
            )
            finished = time.monotonic()
            whole = await session.call_tool("local_search", {"query": QUESTIONS["local"]})
    assert pieces == [word + " " for word in WRITTEN.split(" ")[:-1]] + [WRITTEN.split(" ")[-1]]
    assert result["answer"] == WRITTEN and _cost(result) == _cost(whole.structured_content)
    assert result["completion_tokens"] > 0
    assert (
        arrived[0] - started < (finished - started) / 2
    )  # the first word well before the whole answer


@pytest.mark.slow  # about 16 s of CLI processes: the full suite runs it
def test_query_stream_prints_the_answer_as_it_comes(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """`query --stream` prints what `query` prints, the answer's words as the provider sends
    them."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    with fake_provider(answer=WRITTEN) as provider:
        with_provider(root, provider.url)
        whole = run_cli("query", QUESTIONS["local"], "--type", "local", "--index-path", root)
        provider.chunk_seconds = 0.15  # the model now writes a word every 0.15 s
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphrag_mcp_server",
                "query",
                QUESTIONS["local"],
                "--type",
                "local",
                "--stream",
                "--index-path",
                str(root),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=cli_env(),
            bufsize=0,
        )
        first = process.stdout.read(
            len(WRITTEN.split(" ")[0])
        )  # unbuffered: what has been printed so far
        first_at = time.monotonic()
        rest, errors = process.communicate(timeout=120)
        ended_at = time.monotonic()
    assert whole.code == 0 and process.returncode == 0, errors
    assert (first + rest).decode() == whole.stdout and WRITTEN in whole.stdout
    assert (
        ended_at - first_at > 1.0
    )  # the first word was out while the model was still writing (12 more words)
