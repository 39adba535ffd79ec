"""`serve --workers N`: several processes answer streamable HTTP from one port, read-only, and
follow the index."""

import asyncio
import shutil
import time
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import CORPUS, run_cli
from mcp_client import running_server

pytestmark = pytest.mark.e2e  # serve --workers: worker processes

SESSIONS = 8


def _children(pid: int) -> list[str]:
    """Command lines of the process's children."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [Path(f"/proc/{child}/cmdline").read_text().replace("\0", " ") for child in children]


def _children_once_workers_started(pid: int, workers: int, seconds: float = 60) -> list[str]:
    """The server's children once `workers` worker processes are among them (or after `seconds`):
    its port accepts connections as soon as it is bound, before uvicorn has spawned the workers that
    serve it."""
    deadline = time.monotonic() + seconds
    children = _children(pid)
    while (
        sum("spawn_main" in child for child in children) < workers and time.monotonic() < deadline
    ):
        time.sleep(0.1)
        children = _children(pid)
    return children


async def _session_call(url: str, tool: str, arguments: dict) -> dict:
    """One fresh session (any worker may take it) calling one tool; its structured result."""
    async with (
        streamable_http_client(url) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        result = await session.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return result.structured_content


async def _statistics_when(url: str, documents: int, deadline: float) -> list[dict]:
    """get_statistics from SESSIONS sessions at once, once every one of them shows `documents`
    documents."""
    while True:
        seen = await asyncio.gather(
            *(_session_call(url, "get_statistics", {}) for _ in range(SESSIONS))
        )
        if (
            all(statistics["documents"] == documents for statistics in seen)
            or time.monotonic() > deadline
        ):
            return seen
        await asyncio.sleep(1)


async def _workers_answering(url: str, workers: int, deadline: float) -> set[str]:
    """The workers (their index's `loaded_at`) seen answering rounds of SESSIONS sessions at once,
    until `workers` of them are or the deadline passes: the kernel hands connections to whichever
    worker is ready, and a worker still starting takes none."""
    seen: set[str] = set()
    while len(seen) < workers and time.monotonic() < deadline:
        statistics = await asyncio.gather(
            *(_session_call(url, "get_statistics", {}) for _ in range(SESSIONS))
        )
        seen |= {answer["loaded_at"] for answer in statistics if answer["documents"] == 2}
    return seen


async def test_workers_answer_in_parallel_and_follow_the_watched_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("01_founding_of_the_cooperative.txt", "04_inspection_report_1994.md"):
        shutil.copy(CORPUS / name, data / name)
    root = tmp_path / "index"
    assert run_cli("index", data, "--index-path", root, "--offline").code == 0

    with running_server(root, "streamable-http", "--workers", "2", "--watch", str(data)) as server:
        assert "2 workers" in server.stderr().splitlines()[0]
        children = _children_once_workers_started(server.process.pid, 2)
        assert sum("spawn_main" in child for child in children) == 2, children  # the workers
        assert (
            sum(f"index {data} --index-path {root} --watch" in child for child in children) == 1
        ), children
        async with (
            streamable_http_client(server.url) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"local_search", "global_search", "get_statistics"} <= tools
        assert not tools & {
            "build_index",
            "cancel_index_job",
            "tune_prompts",
        }  # read-only: the watcher changes the index

        answers = await asyncio.gather(
            *(
                _session_call(
                    server.url, "local_search", {"query": "Who inspected the cooperative in 1994?"}
                )
                for _ in range(SESSIONS)
            )
        )
        assert all(answer["sources"] for answer in answers)
        assert len(await _workers_answering(server.url, 2, time.monotonic() + 60)) == 2, (
            "both workers answered"
        )

        shutil.copy(CORPUS / "08_newspaper_profile_2012.txt", data)
        after = await _statistics_when(server.url, 3, time.monotonic() + 240)
        assert {statistics["documents"] for statistics in after} == {3}, server.stderr()
        assert len({statistics["index_version"] for statistics in after}) == 1
        found = await asyncio.gather(
            *(
                _session_call(server.url, "basic_search", {"query": "Who is Beatrix Fenn?"})
                for _ in range(4)
            )
        )
        assert all(
            "08_newspaper_profile_2012.txt" in {s["document"] for s in answer["sources"]}
            for answer in found
        )


def test_workers_and_stateless_refuse_what_needs_one_process(
    built_index: tuple[Path, dict],
) -> None:
    root, _ = built_index
    for transport in ("stdio", "sse"):
        refused = run_cli(
            "serve", "--index-path", root, "--transport", transport, "--workers", "2", timeout=60
        )
        assert refused.code == 1
        assert refused.stderr.strip() == (
            "error: --workers 2 needs --transport streamable-http (sessions of "
            f"{transport} live in one process)"
        )
    sampling = run_cli(
        "serve",
        "--index-path",
        root,
        "--transport",
        "streamable-http",
        "--workers",
        "3",
        "--llm",
        "sampling",
        timeout=60,
    )
    assert sampling.code == 1
    assert sampling.stderr.strip().startswith("error: --llm sampling needs a session per client")
    stateless = run_cli(
        "serve", "--index-path", root, "--transport", "sse", "--stateless", timeout=60
    )
    assert stateless.code == 1 and stateless.stderr.strip() == (
        "error: --stateless needs --transport streamable-http (sessions of sse live in one process)"
    )
    sampling = run_cli(
        "serve",
        "--index-path",
        root,
        "--transport",
        "streamable-http",
        "--stateless",
        "--llm",
        "sampling",
        timeout=60,
    )
    assert sampling.code == 1
    assert (
        sampling.stderr.strip()
        == "error: --llm sampling needs a session per client: serve it without --stateless"
    )
    assert (
        run_cli("serve", "--index-path", root, "--workers", "0", timeout=60).code == 2
    )  # a usage error
