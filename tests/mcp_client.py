"""Real MCP client sessions against `graphrag-mcp serve`: stdio subprocess, streamable HTTP, SSE,
and the same server in this process (`in-process`) for tests whose subject is not the transport."""

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from mcp.client._memory import InMemoryTransport
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import cli_env

TRANSPORTS = ("stdio", "streamable-http", "sse")
IN_PROCESS = "in-process"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
"""A raw client's initialize request (id 1), for tests that speak JSON-RPC themselves."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, server: "RunningServer", timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited with {server.process.returncode}: {server.stderr()}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"server did not listen on {port}")


@dataclass
class RunningServer:
    """A `graphrag-mcp serve` subprocess on an HTTP transport."""

    process: subprocess.Popen
    port: int
    url: str
    errors: IO[str]

    def stderr(self) -> str:
        """What the server has written so far: its log on stderr, and uvicorn's access log (on
        stdout)."""
        self.errors.flush()
        self.errors.seek(0)
        return self.errors.read()


@contextmanager
def running_server(
    root: Path,
    transport: str = "streamable-http",
    *args: str,
    env: dict[str, str] | None = None,
    host: str = "127.0.0.1",
) -> Iterator[RunningServer]:
    """`graphrag-mcp serve --transport TRANSPORT ARGS...` over `root` on a free port of `host`."""
    port = _free_port()
    with tempfile.TemporaryFile("w+") as errors:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphrag_mcp_server",
                "serve",
                "--index-path",
                str(root),
                "--transport",
                transport,
                "--host",
                host,
                "--port",
                str(port),
                *args,
            ],
            env={**cli_env(), **(env or {})},
            stdout=errors,
            stderr=errors,
            text=True,
        )
        running = RunningServer(
            server,
            port,
            f"http://127.0.0.1:{port}/{'mcp' if transport == 'streamable-http' else 'sse'}",
            errors,
        )
        try:
            _wait_for_port(port, running)
            yield running
        finally:
            server.terminate()
            server.wait(timeout=30)


@contextmanager
def _environment(env: dict[str, str] | None) -> Iterator[None]:
    """The process environment of a served subprocess (`cli_env` plus `env`) for the duration of the
    block. What the block's code added stays, as its imports do: LiteLLM's import points tiktoken at
    its bundled encodings (TIKTOKEN_CACHE_DIR) once a process, and an encoding loaded later without
    it would be downloaded."""
    saved, entered = dict(os.environ), {**cli_env(), **(env or {})}
    os.environ.clear()
    os.environ.update(entered)
    try:
        yield
    finally:
        added = {key: value for key, value in os.environ.items() if key not in entered}
        os.environ.clear()
        os.environ.update({**saved, **added})


@asynccontextmanager
async def _in_process(
    root: Path, env: dict[str, str] | None, watch: Path | None, data_path: Path | None
) -> AsyncIterator[tuple]:
    """The server `graphrag-mcp serve` makes, run in this process over the SDK's in-memory
    transport."""
    from graphrag_mcp_server.config.settings import ServerSettings
    from graphrag_mcp_server.server.app import create_server

    with _environment(env):
        settings = ServerSettings()
        if data_path is not None:
            settings = settings.model_copy(update={"data_roots": [data_path.resolve()]})
        async with InMemoryTransport(create_server(root, settings, watch)) as streams:
            yield streams[0], streams[1]


@asynccontextmanager
async def _streams(
    root: Path, transport: str, env: dict[str, str] | None, args: list[str]
) -> AsyncIterator[tuple]:
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "graphrag_mcp_server", "serve", "--index-path", str(root), *args],
            env={**cli_env(), "PYTHONFAULTHANDLER": "1", **(env or {})},
        )
        with tempfile.TemporaryFile("w+") as errors:
            try:
                async with stdio_client(params, errlog=errors) as (read, write):
                    yield read, write
            except BaseException:
                errors.seek(0)
                print(f"server stderr:\n{errors.read()[-60000:]}", file=sys.stderr)
                raise
        return
    with running_server(root, transport, *args, env=env) as server:
        url = server.url
        client = streamable_http_client(url) if transport == "streamable-http" else sse_client(url)
        async with client as streams:
            yield streams[0], streams[1]


@asynccontextmanager
async def mcp_session(
    root: Path,
    transport: str = "stdio",
    env: dict[str, str] | None = None,
    watch: Path | None = None,
    data_path: Path | None = None,
    **session_options: object,
) -> AsyncIterator[ClientSession]:
    """An initialized client session with `graphrag-mcp serve` over `root` (watching `watch`;
    build_index allowed under `data_path`), on `transport` (or `IN_PROCESS`)."""
    args = [
        *(["--watch", str(watch)] if watch else []),
        *(["--data-path", str(data_path)] if data_path else []),
    ]
    streams = (
        _in_process(root, env, watch, data_path)
        if transport == IN_PROCESS
        else _streams(root, transport, env, args)
    )
    async with streams as (read, write), ClientSession(read, write, **session_options) as session:
        await session.initialize()
        yield session
