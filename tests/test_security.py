"""Access control, probed as an attacker would: real `serve` subprocesses on loopback, real HTTP
clients.

Every refused request is followed by a normal search that must still answer, and by a check that
the index on disk is byte for byte what it was.
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import CORPUS, index_digest, run_cli
from graphrag_mcp_server.handlers.indexing.versions import PAUSE_AT
from mcp_client import INITIALIZE, RunningServer, running_server
from oauth_issuer import Issuer

pytestmark = pytest.mark.e2e  # HTTP servers in subprocesses

TOKEN = "test-token-0123456789abcdefXYZ"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
QUESTION = {"query": "Who designed Old Bessie?", "context_only": True}


@pytest.fixture(scope="module")
def site(
    built_index: tuple[Path, dict], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """A copy of the built index inside a data root of two documents, a hidden folder, a link to
    /etc, a folder of too many documents, and a folder outside the root."""
    base = tmp_path_factory.mktemp("site")
    data = base / "data"
    (data / "docs").mkdir(parents=True)
    for name in sorted(path.name for path in CORPUS.iterdir())[:2]:
        shutil.copy(CORPUS / name, data / "docs" / name)
    (data / ".secret").mkdir()
    (data / ".secret" / "keys.txt").write_text("Hidden Person keeps the keys.", encoding="utf-8")
    (data / "etc_link").symlink_to("/etc")
    (data / "many").mkdir()
    for number in range(7):
        (data / "many" / f"note_{number}.txt").write_text(
            f"Note {number} by Some Author.", encoding="utf-8"
        )
    root = data / "graphrag_index"
    shutil.copytree(built_index[0], root, symlinks=True)
    (base / "outside").mkdir()
    (base / "outside" / "private.txt").write_text(
        "Private Person has a private life.", encoding="utf-8"
    )
    return {"base": base, "data": data, "root": root}


SERVER_ENV = {
    "GRAPHRAG_MCP_AUTH_TOKEN": TOKEN,
    "GRAPHRAG_MCP_MAX_JOB_DOCUMENTS": "5",
    "GRAPHRAG_MCP_BUILD_WAIT_SECONDS": "0.5",
    "GRAPHRAG_MCP_LOG_LEVEL": "DEBUG",
    PAUSE_AT: "version-made",  # a build waits there, so a cancel finds it running
}


@pytest.fixture(scope="module")
def server(site: dict[str, Path]) -> Iterator[RunningServer]:
    """The index served over streamable HTTP with a bearer token; build_index may read `data`."""
    with running_server(
        site["root"], "streamable-http", "--data-path", str(site["data"]), env=SERVER_ENV
    ) as running:
        yield running


@asynccontextmanager
async def session(
    url: str, headers: dict[str, str] | None = AUTH, transport: str = "streamable-http"
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session sending `headers`."""
    if transport == "sse":
        async with (
            sse_client(url, headers=headers) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client
        return
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as client,
    ):
        await client.initialize()
        yield client


async def assert_still_serving(server: RunningServer, root: Path, digest: str) -> None:
    """A normal search answers and the index on disk is unchanged."""
    assert server.process.poll() is None, server.stderr()[-3000:]
    async with session(server.url) as client:
        result = await client.call_tool("local_search", QUESTION)
    assert not result.is_error, result.content
    assert any(
        entity["name"] == "OLD BESSIE"
        for entity in result.structured_content["context"]["entities"]
    )
    assert index_digest(root) == digest


def post(
    url: str, body: object = INITIALIZE, headers: dict[str, str] | None = None
) -> httpx2.Response:
    """One raw JSON-RPC POST."""
    return httpx2.post(
        url, content=json.dumps(body), headers={**MCP_HEADERS, **(headers or {})}, timeout=30
    )


# --- authentication: static token -----------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-0123456789"},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": TOKEN},
    ],
    ids=["no-token", "wrong-token", "token-with-suffix", "basic-scheme", "no-scheme"],
)
async def test_requests_without_the_token_get_401(
    server: RunningServer, site: dict[str, Path], headers: dict[str, str]
) -> None:
    digest = index_digest(site["root"])
    response = post(server.url, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert response.json()["error"] == "invalid_token"
    await assert_still_serving(server, site["root"], digest)


async def test_token_in_the_query_string_is_not_accepted(
    server: RunningServer, site: dict[str, Path]
) -> None:
    digest = index_digest(site["root"])
    assert post(f"{server.url}?access_token={TOKEN}").status_code == 401
    await assert_still_serving(server, site["root"], digest)


async def test_the_token_is_never_logged(server: RunningServer, site: dict[str, Path]) -> None:
    digest = index_digest(site["root"])
    post(server.url, headers={"Authorization": "Bearer wrong-token-0123456789"})
    await assert_still_serving(server, site["root"], digest)  # with the right token, at DEBUG level
    log = server.stderr()
    assert "auth: bearer token" in log
    assert TOKEN not in log and "wrong-token-0123456789" not in log


async def test_foreign_host_header_is_refused_even_on_loopback(
    server: RunningServer, site: dict[str, Path]
) -> None:
    digest = index_digest(site["root"])
    assert post(server.url, headers={**AUTH, "Host": "evil.example"}).status_code == 421
    assert post(server.url, headers={**AUTH, "Origin": "http://evil.example"}).status_code == 403
    await assert_still_serving(server, site["root"], digest)


# --- build_index confinement ----------------------------------------------------------------------


async def _build_index_error(server: RunningServer, data_path: str) -> str:
    async with session(server.url) as client:
        result = await client.call_tool("build_index", {"data_path": data_path})
    assert result.is_error, result.structured_content
    return result.content[0].text


@pytest.mark.parametrize(
    ("data_path", "expected"),
    [
        ("/", "outside the folders this server may index"),
        ("/etc", "outside the folders this server may index"),
        ("..", "outside the folders this server may index"),
        ("../outside", "outside the folders this server may index"),
        ("docs/../../outside", "outside the folders this server may index"),
        ("etc_link", "outside the folders this server may index"),
        (".secret", "hidden folder"),
        ("docs/../.secret", "hidden folder"),
        ("graphrag_index", "index root"),
        ("graphrag_index/prompts", "index root"),
        ("many", "more than 5 documents"),
        ("missing", "does not exist"),
    ],
    ids=[
        "root",
        "etc",
        "parent",
        "sibling",
        "dotdot-inside",
        "symlink-escape",
        "hidden",
        "hidden-via-dotdot",
        "index-root",
        "index-prompts",
        "too-many",
        "missing",
    ],
)
async def test_build_index_stays_inside_the_data_roots(
    server: RunningServer, site: dict[str, Path], data_path: str, expected: str
) -> None:
    digest = index_digest(site["root"])
    started = time.monotonic()
    message = await _build_index_error(server, data_path)
    assert expected in message
    assert "Traceback" not in message
    assert time.monotonic() - started < 10  # refused up front, nothing walked
    await assert_still_serving(server, site["root"], digest)


async def test_absolute_paths_outside_the_root_are_refused(
    server: RunningServer, site: dict[str, Path]
) -> None:
    digest = index_digest(site["root"])
    assert "outside the folders" in await _build_index_error(server, str(site["base"] / "outside"))
    await assert_still_serving(server, site["root"], digest)


@pytest.mark.parametrize(
    "data_path", ["docs\x00/etc", "a" * 100_000, ""], ids=["nul", "overlong", "empty"]
)
async def test_malformed_data_paths_are_invalid_params(
    server: RunningServer, site: dict[str, Path], data_path: str
) -> None:
    digest = index_digest(site["root"])
    async with session(server.url) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("build_index", {"data_path": data_path})
    assert raised.value.error.code == -32602
    assert "data_path" in raised.value.error.message
    await assert_still_serving(server, site["root"], digest)


async def test_a_running_job_can_be_cancelled(server: RunningServer, site: dict[str, Path]) -> None:
    """The cancelled build never becomes the served version (a worker killed after its grace period
    may leave its partial folder in versions/, which the next run removes: the served version and
    its files are what stay). The build pauses once its version folder is made (PAUSE_AT), so
    the cancel reaches it mid-build however fast the machine."""
    served = (site["root"] / "output").resolve()
    served_digest = index_digest(served)
    async with session(server.url) as client:
        started = await client.call_tool("build_index", {"data_path": "docs", "mode": "full"})
        assert not started.is_error, started.content
        assert started.structured_content["state"] == "running"
        cancelled = await client.call_tool(
            "cancel_index_job", {"job_id": started.structured_content["job_id"]}
        )
        assert not cancelled.is_error, cancelled.content
        assert cancelled.structured_content["state"] == "cancelled"
        status = await client.call_tool("index_status", {})
        assert status.structured_content["state"] == "cancelled"
        again = await client.call_tool("cancel_index_job", {})
        assert again.is_error and "no index job is running" in again.content[0].text
        unknown = await client.call_tool("cancel_index_job", {"job_id": "nope"})
        assert unknown.is_error and "no index job 'nope'" in unknown.content[0].text
    assert (site["root"] / "output").resolve() == served and index_digest(served) == served_digest
    partial = [
        version for version in (site["root"] / "versions").iterdir() if version.resolve() != served
    ]
    assert all(
        not (version / "manifest.json").exists() for version in partial
    )  # never a complete version
    await assert_still_serving(server, site["root"], index_digest(site["root"]))


# --- bounded requests -----------------------------------------------------------------------------


async def test_overlong_query_is_invalid_params(
    server: RunningServer, site: dict[str, Path]
) -> None:
    digest = index_digest(site["root"])
    async with session(server.url) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("basic_search", {"query": "x" * 4001, "context_only": True})
        assert raised.value.error.code == -32602 and "query" in raised.value.error.message
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("analyze", {"topic": "y" * 4001})
        assert raised.value.error.code == -32602
    await assert_still_serving(server, site["root"], digest)


async def test_a_result_does_not_echo_the_query(
    server: RunningServer, site: dict[str, Path]
) -> None:
    digest = index_digest(site["root"])
    marker = "Zqxjvw " * 500  # 3,500 characters no document contains
    async with session(server.url) as client:
        result = await client.call_tool("basic_search", {"query": marker, "context_only": True})
    assert not result.is_error
    raw = result.model_dump_json()
    assert raw.count("Zqxjvw") == 0
    await assert_still_serving(server, site["root"], digest)


async def test_oversized_body_gets_413(server: RunningServer, site: dict[str, Path]) -> None:
    digest = index_digest(site["root"])
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "basic_search", "arguments": {"query": "x" * 2_000_000}},
    }
    assert post(server.url, call, AUTH).status_code == 413
    await assert_still_serving(server, site["root"], digest)


@pytest.mark.parametrize(
    "uri", ["graphrag://communities/²", "graphrag://communities/abc", "graphrag://communities/-1"]
)
async def test_malformed_resource_ids_are_invalid_params(
    server: RunningServer, site: dict[str, Path], uri: str
) -> None:
    digest = index_digest(site["root"])
    async with session(server.url) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource(uri)
    assert raised.value.error.code == -32602
    await assert_still_serving(server, site["root"], digest)


# --- who may index, and what ----------------------------------------------------------------------


async def test_build_index_is_off_without_data_roots(site: dict[str, Path]) -> None:
    digest = index_digest(site["root"])
    with running_server(site["root"], env={"GRAPHRAG_MCP_AUTH_TOKEN": TOKEN}) as plain:
        message = await _build_index_error(plain, str(site["data"] / "docs"))
        assert "build_index is off on this server" in message and "--data-path" in message
        await assert_still_serving(plain, site["root"], digest)


async def test_read_only_server_has_no_index_tools(site: dict[str, Path]) -> None:
    digest = index_digest(site["root"])
    with running_server(
        site["root"],
        "streamable-http",
        "--read-only",
        "--data-path",
        str(site["data"]),
        env={"GRAPHRAG_MCP_AUTH_TOKEN": TOKEN},
    ) as read_only:
        async with session(read_only.url) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert not names & {"build_index", "cancel_index_job", "tune_prompts"}
            assert {"local_search", "get_statistics", "index_status"} <= names
            refused = await client.call_tool("build_index", {"data_path": "docs"})
            assert refused.is_error and "build_index" in refused.content[0].text
        await assert_still_serving(read_only, site["root"], digest)


def test_network_bind_without_authentication_is_refused(site: dict[str, Path]) -> None:
    result = run_cli(
        "serve",
        "--index-path",
        site["root"],
        "--transport",
        "streamable-http",
        "--host",
        "0.0.0.0",
        timeout=60,
    )
    assert result.code == 1
    assert result.stderr.strip().splitlines() == [
        "error: refusing to serve HTTP on 0.0.0.0 without authentication: set "
        "GRAPHRAG_MCP_AUTH_TOKEN (a long "
        "random secret) or GRAPHRAG_MCP_AUTH_ISSUER (OAuth), or bind --host 127.0.0.1"
    ]


async def test_network_bind_enforces_allowed_hosts_and_origins(site: dict[str, Path]) -> None:
    digest = index_digest(site["root"])
    env = {
        "GRAPHRAG_MCP_AUTH_TOKEN": TOKEN,
        "GRAPHRAG_MCP_ALLOWED_HOSTS": "mcp.example.test:*,127.0.0.1:*",
        "GRAPHRAG_MCP_ALLOWED_ORIGINS": "https://app.example.test",
    }
    with running_server(site["root"], env=env, host="0.0.0.0") as exposed:
        assert "auth: bearer token" in exposed.stderr()
        assert post(exposed.url).status_code == 401
        assert post(exposed.url, headers={**AUTH, "Host": "evil.example"}).status_code == 421
        assert post(exposed.url, headers={**AUTH, "Host": "localhost:1"}).status_code == 421
        assert (
            post(exposed.url, headers={**AUTH, "Origin": "http://evil.example"}).status_code == 403
        )
        allowed = {
            **AUTH,
            "Host": f"mcp.example.test:{exposed.port}",
            "Origin": "https://app.example.test",
        }
        assert post(exposed.url, headers=allowed).status_code == 200
        await assert_still_serving(exposed, site["root"], digest)


async def test_session_flood_locks_nobody_out_for_long(site: dict[str, Path]) -> None:
    digest = index_digest(site["root"])
    env = {
        "GRAPHRAG_MCP_AUTH_TOKEN": TOKEN,
        "GRAPHRAG_MCP_MAX_SESSIONS": "3",
        "GRAPHRAG_MCP_SESSION_IDLE_SECONDS": "2",
    }
    with running_server(site["root"], env=env) as limited:
        opened = [post(limited.url, headers=AUTH) for _ in range(3)]
        assert [response.status_code for response in opened] == [200, 200, 200]
        assert post(limited.url, headers=AUTH).status_code == 503
        deadline = time.monotonic() + 10  # the flood's idle sessions are closed after 2 s
        while (probe := post(limited.url, headers=AUTH)).status_code == 503:
            assert time.monotonic() < deadline, "idle sessions were not closed"
            await asyncio.sleep(0.2)
        ended = httpx2.delete(
            limited.url, headers={**AUTH, "mcp-session-id": probe.headers["mcp-session-id"]}
        )
        assert ended.status_code == 200  # the probe's session holds no place the next client needs
        await assert_still_serving(limited, site["root"], digest)


async def test_sse_needs_the_token_too(site: dict[str, Path]) -> None:
    digest = index_digest(site["root"])
    with running_server(site["root"], "sse", env={"GRAPHRAG_MCP_AUTH_TOKEN": TOKEN}) as sse:
        assert httpx2.get(sse.url, timeout=10).status_code == 401
        async with session(sse.url, transport="sse") as client:
            result = await client.call_tool("local_search", QUESTION)
            assert not result.is_error
        assert index_digest(site["root"]) == digest


# --- OAuth resource server: JWT access tokens checked against a JWKS on loopback ------------------


@pytest.fixture(scope="module")
def oauth(site: dict[str, Path]) -> Iterator[tuple[Issuer, RunningServer]]:
    """The index served as an OAuth resource server of a local issuer (JWKS found through its
    metadata)."""
    issuer = Issuer()
    env = {
        "GRAPHRAG_MCP_AUTH_ISSUER": issuer.url,
        "GRAPHRAG_MCP_AUTH_REQUIRED_SCOPES": "graphrag:read",
    }
    with running_server(site["root"], env=env) as server:
        yield issuer, server
    issuer.http.shutdown()


async def test_oauth_accepts_a_valid_access_token_and_publishes_its_metadata(
    oauth: tuple[Issuer, RunningServer], site: dict[str, Path]
) -> None:
    issuer, server = oauth
    metadata = httpx2.get(
        f"http://127.0.0.1:{server.port}/.well-known/oauth-protected-resource/mcp", timeout=10
    )
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == server.url
    assert metadata.json()["authorization_servers"] == [issuer.url]
    refused = post(server.url)
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["www-authenticate"]
    async with session(
        server.url, {"Authorization": f"Bearer {issuer.token(server.url)}"}
    ) as client:
        result = await client.call_tool("local_search", QUESTION)
    assert not result.is_error


def _foreign_key_token(issuer: Issuer, audience: str) -> str:
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    claims = {
        "iss": issuer.url,
        "aud": audience,
        "sub": "user-1",
        "exp": int(time.time()) + 600,
        "scope": "graphrag:read",
    }
    return jwt.encode(claims, other, algorithm="RS256", headers={"kid": "k1"})


def _unsigned_token(issuer: Issuer, audience: str) -> str:
    claims = {
        "iss": issuer.url,
        "aud": audience,
        "sub": "user-1",
        "exp": int(time.time()) + 600,
        "scope": "graphrag:read",
    }
    return jwt.encode(claims, None, algorithm="none", headers={"kid": "k1"})


@pytest.mark.parametrize(
    ("make_token", "status"),
    [
        (lambda issuer, audience: issuer.token(audience, exp=int(time.time()) - 120), 401),
        (lambda issuer, audience: issuer.token("https://other.example/mcp"), 401),
        (lambda issuer, audience: issuer.token(audience, iss="https://evil.example"), 401),
        (lambda issuer, audience: issuer.token(audience, exp=None), 401),
        (_foreign_key_token, 401),
        (_unsigned_token, 401),
        (lambda issuer, audience: "not-a-jwt", 401),
        (lambda issuer, audience: issuer.token(audience, scope="other:scope"), 403),
    ],
    ids=[
        "expired",
        "wrong-audience",
        "wrong-issuer",
        "no-expiry",
        "foreign-key",
        "alg-none",
        "garbage",
        "no-scope",
    ],
)
async def test_oauth_refuses_bad_access_tokens(
    oauth: tuple[Issuer, RunningServer], site: dict[str, Path], make_token, status: int
) -> None:
    issuer, server = oauth
    digest = index_digest(site["root"])
    token = make_token(issuer, server.url)
    response = post(server.url, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == status
    assert response.headers["www-authenticate"].startswith("Bearer ")
    assert token not in server.stderr()
    async with session(
        server.url, {"Authorization": f"Bearer {issuer.token(server.url)}"}
    ) as client:
        assert not (await client.call_tool("local_search", QUESTION)).is_error
    assert index_digest(site["root"]) == digest


# --- what gets indexed: the same for index, build_index and the watcher ---------------------------


def test_index_skips_the_index_root_hidden_folders_and_links_leaving_the_folder(
    tmp_path: Path,
) -> None:
    from graphrag_mcp_server.handlers.indexing.watch import is_document_change

    data = tmp_path / "notes"
    data.mkdir()
    for name in sorted(path.name for path in CORPUS.iterdir())[:3]:
        shutil.copy(CORPUS / name, data / name)
    (data / ".venv" / "lib").mkdir(parents=True)
    (data / ".venv" / "lib" / "LICENSE.txt").write_text(
        "Python Software Foundation License.", encoding="utf-8"
    )
    (data / ".draft.md").write_text("A Hidden Draft.", encoding="utf-8")
    (data / "hostname.txt").symlink_to("/etc/hostname")
    (data / "alias.txt").symlink_to(data / sorted(path.name for path in CORPUS.iterdir())[0])
    result = run_cli(
        "index", ".", "--offline", "--format", "json", cwd=data
    )  # the default root: ./graphrag_index
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["documents"] == 4  # three files and the link that stays inside
    assert summary["skipped"] == {"hidden": 2, "index_root": 1, "link_outside": 1}
    root = data / "graphrag_index"
    again = run_cli("index", ".", "--offline", "--format", "json", cwd=data)
    assert again.json()["skipped"] == {"hidden": 2, "index_root": 1, "link_outside": 1}
    assert (
        again.json()["documents_added"] == 0
    )  # the prompts of the root now inside it were not read
    for ignored in (
        data / ".venv" / "lib" / "LICENSE.txt",
        data / ".draft.md",
        data / "hostname.txt",
        root / "prompts" / "extract_graph.txt",
    ):
        assert not is_document_change(ignored, data, root), ignored
    assert is_document_change(data / "new_chapter.txt", data, root)


def test_storage_secrets_are_redacted_in_every_logger_at_debug() -> None:
    """With the server's logging at DEBUG, a SAS signature or account key logged by urllib3, the
    Azure SDK or anything else reaches stderr redacted, and a very long line is cut."""
    code = """
import logging
from graphrag_mcp_server.config.logs import plain_logs
plain_logs("DEBUG")
logging.getLogger("urllib3.connectionpool").debug('%s://%s:%s "%s %s %s" %s %s', "https",
    "acct.blob.core.windows.net", 443, "GET",
    "/c/v?sv=2022-11-02&se=2030&sig=LIVE%2Fsignature%3D&sr=c", "HTTP/1.1", 200, None)
logging.getLogger("azure.core.pipeline").debug("conn DefaultEndpointsProtocol=https;AccountName=a;"
    "AccountKey=S3cretKey+/==;EndpointSuffix=core.windows.net")
logging.getLogger("anything").warning("header Bearer abc.def.ghi seen")
logging.getLogger("anything").warning("x" * 9000)
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env={**os.environ}
    )
    lines = result.stderr.splitlines()
    assert result.returncode == 0, result.stderr
    assert "sig=[redacted]" in result.stderr and "AccountKey=[redacted]" in result.stderr, (
        result.stderr
    )
    assert not any(
        secret in result.stderr for secret in ("LIVE%2Fsignature", "S3cretKey", "abc.def.ghi")
    )
    assert len(lines) == 4 and max(len(line) for line in lines) < 2100
