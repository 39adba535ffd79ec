"""The server's index lifecycle and robustness: clean stdio, reloads, index jobs, provider
failures."""

import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml

from conftest import CORPUS, cli_env, run_cli
from mcp_client import IN_PROCESS, INITIALIZE, mcp_session

OPENING = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
"""A raw stdio client's first two messages: initialize (id 1), then initialized."""


def _small_corpus(folder: Path, count: int = 3) -> Path:
    folder.mkdir(parents=True)
    for name in sorted(p.name for p in CORPUS.iterdir())[:count]:
        shutil.copy(CORPUS / name, folder / name)
    return folder


@pytest.mark.e2e  # the stdio transport's own bytes
def test_stdio_writes_nothing_but_json_rpc_to_stdout(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """stdout carries JSON-RPC only; stderr this project's lines only: graphrag's records of a
    drift search go to logs/query.log, and its tqdm bars are not drawn (issue 43)."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    shutil.rmtree(root / "logs", ignore_errors=True)
    requests = [
        *OPENING,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "drift_search",
                "arguments": {"query": "Who is Ruth Calloway?", "follow_up_depth": 1},
            },
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "global_search", "arguments": {"query": "Themes?"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "local_search", "arguments": {"query": ""}},
        },
    ]
    server = subprocess.Popen(
        [sys.executable, "-m", "graphrag_mcp_server", "serve", "--index-path", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    replies = []
    try:
        for request in requests:
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            if "id" in request:
                line = server.stdout.readline()
                replies.append(json.loads(line))  # every stdout line is one JSON-RPC message
    finally:
        rest, errors = server.communicate(timeout=60)  # closes stdin: the server ends at EOF
    assert rest.strip() == ""
    graphrag_lines = re.compile(r"^[A-Z]+ graphrag(_llm)?[.:]", re.MULTILINE)
    assert not graphrag_lines.search(errors), errors[-3000:]
    assert "%|" not in errors and "it/s]" not in errors, errors[-3000:]  # no tqdm bar
    query_log = (root / "logs" / "query.log").read_text(encoding="utf-8")
    assert "graphrag.query" in query_log, query_log[-2000:]  # graphrag's records kept there
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    assert [reply["id"] for reply in replies] == [1, 2, 3, 4]
    assert "Ruth Calloway" in replies[1]["result"]["structuredContent"]["answer"]
    assert replies[3]["error"]["code"] == -32602 and "query" in replies[3]["error"]["message"]


@pytest.mark.e2e  # the stdio transport's own bytes
def test_stdio_stdout_stays_json_rpc_at_the_debug_level(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """At GRAPHRAG_MCP_LOG_LEVEL=DEBUG stdout still carries JSON-RPC only: LiteLLM's handler
    writes its records below WARNING to stdout, some while it is imported, and a client read
    them there as broken messages; they now go to stderr with this project's lines."""
    requests = [
        *OPENING,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "local_search", "arguments": {"query": "Who is Ruth Calloway?"}},
        },
    ]
    stderr_file = tmp_path / "stderr.txt"
    with stderr_file.open("w") as errors:
        server = subprocess.Popen(
            [sys.executable, "-m", "graphrag_mcp_server", "serve", "--index-path"]
            + [str(built_index[0])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**cli_env(), "GRAPHRAG_MCP_LOG_LEVEL": "DEBUG"},
        )
        lines = []
        try:
            for request in requests:
                server.stdin.write(json.dumps(request) + "\n")
                server.stdin.flush()
                if "id" in request:
                    lines.append(server.stdout.readline())
        finally:
            rest, _ = server.communicate(timeout=60)
    lines += rest.splitlines(keepends=True)
    not_json_rpc = [line for line in lines if not line.startswith('{"jsonrpc":"2.0"')]
    assert not not_json_rpc, not_json_rpc[:3]
    assert "Ruth Calloway" in json.loads(lines[1])["result"]["structuredContent"]["answer"]
    assert "DEBUG" in stderr_file.read_text(encoding="utf-8")


@pytest.mark.e2e  # a stdio server process and a signal
def test_ctrl_c_ends_a_stdio_server_at_once(built_index: tuple[Path, dict]) -> None:
    """Ctrl-C (SIGINT) in the terminal that started `serve`: exit code 130 within seconds, one line
    on stderr."""
    root, _ = built_index
    server = subprocess.Popen(
        [sys.executable, "-m", "graphrag_mcp_server", "serve", "--index-path", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    try:
        server.stdin.write(json.dumps(INITIALIZE) + "\n")
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1  # serving, its stdin still open
        server.send_signal(signal.SIGINT)
        code = server.wait(timeout=10)
    finally:
        server.kill()
    assert code == 130
    assert server.stderr.read().strip().splitlines()[-1] == "graphrag-mcp: interrupted"


@pytest.mark.slow
async def test_rebuilt_index_is_picked_up_without_restart(tmp_path: Path) -> None:
    data = _small_corpus(tmp_path / "data")
    root = tmp_path / "index"
    assert run_cli("index", data, "--index-path", root, "--offline").code == 0
    async with mcp_session(root, IN_PROCESS) as session:
        before = (await session.call_tool("get_statistics", {})).structured_content
        assert before["documents"] == 3
        question = {"query": "Who is Beatrix Fenn?"}
        assert (
            "Beatrix Fenn"
            not in (await session.call_tool("basic_search", question)).structured_content["answer"]
        )

        shutil.copy(CORPUS / "08_newspaper_profile_2012.txt", data)
        rebuilt = await asyncio.to_thread(
            run_cli, "index", data, "--index-path", root, "--full", "--offline"
        )
        assert rebuilt.code == 0, rebuilt.stderr

        after = (await session.call_tool("get_statistics", {})).structured_content
        assert after["documents"] == 4 and after["index_version"] != before["index_version"]
        answer = (await session.call_tool("basic_search", question)).structured_content
        assert "Beatrix Fenn" in answer["answer"]
        assert "08_newspaper_profile_2012.txt" in {
            source["document"] for source in answer["sources"]
        }


@pytest.mark.e2e  # a stdio server and its build worker
async def test_build_index_reports_progress_and_runs_one_job_at_a_time(tmp_path: Path) -> None:
    data = _small_corpus(tmp_path / "data", count=4)
    root = tmp_path / "index"
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with mcp_session(
        root, env={"GRAPHRAG_MCP_BUILD_WAIT_SECONDS": "300"}, data_path=data
    ) as session:
        first = asyncio.create_task(
            session.call_tool(
                "build_index",
                {"data_path": str(data), "mode": "full"},
                progress_callback=on_progress,
            )
        )
        while not progress:  # the job has started once its first progress arrives
            await asyncio.sleep(0.1)
        second = await session.call_tool("build_index", {"data_path": str(data)})
        running = await session.call_tool("index_status", {})
        result = await first

        assert second.is_error and "is still running" in second.content[0].text
        job = result.structured_content
        assert running.structured_content["job_id"] == job["job_id"] in second.content[0].text
        assert running.structured_content["state"] == "running"
        assert job["state"] == "succeeded" and job["summary"]["documents"] == 4
        assert job["summary"]["entities"] > 0 and job["summary"]["llm_calls"] > 0
        assert job["workflows_done"] == job["workflows_total"] > 5
        assert progress[-1][0] == job["workflows_total"] and any(
            "extract_graph" in (m or "") for *_, m in progress
        )

        status = (
            await session.call_tool("index_status", {"job_id": job["job_id"]})
        ).structured_content
        assert status["state"] == "succeeded" and status["finished_at"]
        statistics = (await session.call_tool("get_statistics", {})).structured_content
        assert statistics["documents"] == 4 and statistics["last_job"]["job_id"] == job["job_id"]
        local = await session.call_tool(
            "local_search", {"query": "Who founded the Harrowgate Tidal Cooperative?"}
        )
        assert "Mirela Voss" in local.structured_content["answer"]


@pytest.mark.e2e  # a stdio server, its build worker and the CLI
async def test_a_no_op_build_index_is_as_fast_as_the_cli_and_says_what_it_does(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """build_index on the folder the index was built from changes nothing, in about the CLI's
    time (its worker, started for the job, skips graphrag's imports; issue 43: 5x the CLI's), and
    its progress says what it does before any workflow (issue 43: `workflow: null`)."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    messages: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    cli_seconds = []
    for _ in range(2):
        started = time.perf_counter()
        assert run_cli("index", CORPUS, "--index-path", root).code == 0
        cli_seconds.append(time.perf_counter() - started)
    async with mcp_session(root, data_path=CORPUS) as session:
        await session.call_tool("get_statistics", {})  # the server's own warm-up done
        started = time.perf_counter()
        result = await session.call_tool(
            "build_index", {"data_path": str(CORPUS)}, progress_callback=on_progress
        )
        tool_seconds = time.perf_counter() - started
    job = result.structured_content
    assert job["state"] == "succeeded" and job["summary"]["llm_calls"] == 0, job
    assert job["summary"]["documents_read"] == 0, job  # every file's stamp is the version's
    assert tool_seconds < 1.5 * min(cli_seconds), (tool_seconds, cli_seconds)
    assert any("comparing the documents" in message for message in messages), messages


@pytest.mark.e2e  # a stdio server and its build worker
async def test_build_index_returns_running_job_after_the_wait_bound(tmp_path: Path) -> None:
    data = _small_corpus(tmp_path / "data")
    async with mcp_session(
        tmp_path / "index", env={"GRAPHRAG_MCP_BUILD_WAIT_SECONDS": "0.2"}, data_path=data
    ) as session:
        started = (
            await session.call_tool("build_index", {"data_path": str(data)})
        ).structured_content
        assert started["state"] == "running"
        while (status := (await session.call_tool("index_status", {})).structured_content)[
            "state"
        ] == "running":
            await asyncio.sleep(0.5)
        assert status["job_id"] == started["job_id"] and status["state"] == "succeeded"
        assert status["summary"]["documents"] == 3


class _RejectingProvider(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that refuses every key."""

    def do_POST(self) -> None:
        body = json.dumps(
            {
                "error": {
                    "message": "Incorrect API key provided: sk-test",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def rejecting_provider() -> str:
    server = HTTPServer(("127.0.0.1", 0), _RejectingProvider)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


async def test_provider_failure_is_a_tool_error_and_the_server_survives(
    built_index: tuple[Path, dict], tmp_path: Path, rejecting_provider: str
) -> None:
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root)
    settings = yaml.safe_load((root / "settings.yaml").read_text())
    settings["completion_models"]["default_completion_model"] = {
        "model_provider": "openai",
        "model": "gpt-4o-mini",
        "api_key": "sk-test",
        "api_base": rejecting_provider,
    }
    (root / "settings.yaml").write_text(yaml.safe_dump(settings))
    async with mcp_session(root, IN_PROCESS) as session:
        failed = await session.call_tool("local_search", {"query": "Who is Mirela Voss?"})
        assert failed.is_error
        message = failed.content[0].text
        assert (
            "model provider failed" in message
            and "AuthenticationError" in message
            and "Incorrect API key" in message
        )
        swallowed = await session.call_tool("global_search", {"query": "What are the main themes?"})
        assert (
            swallowed.is_error
        )  # graphrag catches its map calls' errors: the server still reports them
        assert (
            "model provider failed" in swallowed.content[0].text
            and "Incorrect API key" in swallowed.content[0].text
        )
        statistics = await session.call_tool("get_statistics", {})
        assert not statistics.is_error and statistics.structured_content["documents"] == 11
