"""Real MCP client sessions against `graphrag-mcp serve`: stdio subprocess, streamable HTTP, SSE."""

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from conftest import cli_env

TRANSPORTS = ("stdio", "streamable-http", "sse")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"server exited with {server.returncode}: {server.stderr.read() if server.stderr else ''}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"server did not listen on {port}")


@asynccontextmanager
async def http_server(root: Path, transport: str, env: dict[str, str] | None = None) -> AsyncIterator[str]:
    """`graphrag-mcp serve` over an HTTP transport in a subprocess; yields its URL."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "graphrag_mcp_server", "serve", "--index-path", str(root),
         "--transport", transport, "--port", str(port)],
        env={**cli_env(), **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for_port(port, server)
        yield f"http://127.0.0.1:{port}/{'mcp' if transport == 'streamable-http' else 'sse'}"
    finally:
        server.terminate()
        server.wait(timeout=30)


@asynccontextmanager
async def _streams(root: Path, transport: str, env: dict[str, str] | None, watch: Path | None) -> AsyncIterator[tuple]:
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "graphrag_mcp_server", "serve", "--index-path", str(root),
                  *(["--watch", str(watch)] if watch else [])],
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
    async with http_server(root, transport, env) as url:
        client = streamable_http_client(url) if transport == "streamable-http" else sse_client(url)
        async with client as streams:
            yield streams[0], streams[1]


@asynccontextmanager
async def mcp_session(
    root: Path, transport: str = "stdio", env: dict[str, str] | None = None, watch: Path | None = None,
    **session_options: object,
) -> AsyncIterator[ClientSession]:
    """An initialized client session with `graphrag-mcp serve` over `root` (watching `watch`), on `transport`."""
    async with _streams(root, transport, env, watch) as (read, write), ClientSession(read, write, **session_options) as session:
        await session.initialize()
        yield session
