"""Who may call `serve` over HTTP, as a table: every case of docs/security.md#access-cases against
real servers.

Six servers (a static bearer token or OAuth JWTs, x streamable HTTP with one and with two workers,
and SSE), each sent every request case of its kind: tokens, JWTs, Host and Origin, paths, methods
and bodies, and floods of sessions. Each case asserts its status and body shape; after its cases,
each server is still serving and its log (at DEBUG, uvicorn's access log included) holds no
traceback and no secret. The settings a server must refuse at start are refused with one line and
exit code 1, with one worker and with two.
"""

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import os
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import run_cli
from graphrag_mcp_server.config.logs import REPEATS_PER_WINDOW
from mcp_client import INITIALIZE, RunningServer, running_server
from oauth_issuer import Issuer

pytestmark = pytest.mark.e2e  # HTTP servers in subprocesses

TOKEN = "matrix-token-0123456789abcdefXYZ"
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
PER_CLIENT, TOTAL = 3, 6
SERVER_ENV = {
    "GRAPHRAG_MCP_LOG_LEVEL": "DEBUG",
    "GRAPHRAG_MCP_MAX_SESSIONS": str(TOTAL),
    "GRAPHRAG_MCP_MAX_SESSIONS_PER_CLIENT": str(PER_CLIENT),
    "GRAPHRAG_MCP_SESSION_IDLE_SECONDS": "60",
    "GRAPHRAG_MCP_MAX_REQUEST_BYTES": "4096",
}
CASE_SECONDS = 30
CLIENT_B, CLIENT_C, CLIENT_D = "127.0.0.2", "127.0.0.3", "127.0.0.4"
"""Loopback source addresses of other connections. Who a client is is its verified identity, not its
address (docs/security.md#who-a-caller-is): OAuth servers' other clients carry tokens of other
subjects; a static token is one identity wherever it comes from."""


@dataclass(frozen=True)
class Server:
    """One served configuration."""

    auth: str  # "token" | "oauth"
    transport: str  # "streamable-http" | "sse"
    workers: int

    @property
    def name(self) -> str:
        """e.g. token-streamable-http-2w."""
        return f"{self.auth}-{self.transport}-{self.workers}w"


SERVERS = [
    Server(auth, transport, workers)
    for auth in ("token", "oauth")
    for transport, workers in (("streamable-http", 1), ("streamable-http", 2), ("sse", 1))
]


@dataclass
class Served:
    """A running server of a configuration, with its issuer and the secrets its log must never
    hold."""

    config: Server
    running: RunningServer
    issuer: Issuer
    secrets: set[str] = field(default_factory=set)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.running.port}"

    @property
    def opening_path(self) -> str:
        return "/mcp" if self.config.transport == "streamable-http" else "/sse"

    def valid_token(self) -> str:
        return TOKEN if self.config.auth == "token" else self.issuer.token(self.running.url)

    def bearer(self, token: str | None = None) -> dict[str, str]:
        token = self.valid_token() if token is None else token
        self.secrets.add(token)
        return {"Authorization": f"Bearer {token}"}

    def other(self, name: str) -> dict[str, str]:
        """The credential of another client: a token of subject `name` (OAuth); the same token
        (static token: one identity for every holder)."""
        return self.bearer(
            self.issuer.token(self.running.url, sub=name) if self.config.auth == "oauth" else None
        )


@dataclass(frozen=True)
class Case:
    """One request and what must come back: `expect` (status) and `shape` (of the body and
    headers)."""

    name: str
    expect: int
    shape: str
    headers: Callable[[Served], dict[str, str]] = lambda served: served.bearer()
    path: str | None = None  # default: the transport's opening path
    method: str | None = None  # default: POST (streamable) / GET (SSE)
    query: str = ""
    body: bytes | None = None  # default: an initialize request (streamable)
    auth: str | None = None  # only for servers of this auth
    transport: str | None = None  # only for servers of this transport
    workers: int | None = None  # only for servers of this many workers
    mcp_headers: bool = True  # send MCP's Content-Type and Accept (False: as a plain `curl` does)


def _jwt(served: Served, key: object, algorithm: str, kid: str, **claims: object) -> str:
    return jwt.encode(
        served.issuer.claims(served.running.url, **claims),
        key,
        algorithm=algorithm,
        headers={"kid": kid},
    )


def _tampered(served: Served) -> str:
    header, payload, signature = served.issuer.token(served.running.url).split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    forged = (
        base64.urlsafe_b64encode(json.dumps({**claims, "sub": "admin"}).encode())
        .rstrip(b"=")
        .decode()
    )
    return f"{header}.{forged}.{signature}"


def _hs256_with_public_key(served: Served) -> str:
    """The classic confusion: HS256, keyed with the issuer's public key (PEM) as the shared secret
    (signed by hand: PyJWT refuses a PEM key as an HMAC secret)."""
    public = served.issuer.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )

    def encoded(part: bytes) -> bytes:
        return base64.urlsafe_b64encode(part).rstrip(b"=")

    header = encoded(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
    content = encoded(json.dumps(served.issuer.claims(served.running.url)).encode())
    signature = encoded(hmac.new(public, header + b"." + content, hashlib.sha256).digest())
    return b".".join((header, content, signature)).decode()


def _bearer(make: Callable[[Served], str]) -> Callable[[Served], dict[str, str]]:
    return lambda served: served.bearer(make(served))


CASES = [
    # -- tokens (static token servers) and malformed credentials (both) --
    Case("valid-credential", 200, "opened"),
    Case("no-authorization", 401, "invalid_token", headers=lambda served: {}),
    Case(
        "wrong-token", 401, "invalid_token", _bearer(lambda served: "wrong-token-0123456789abcdef")
    ),
    Case(
        "token-with-suffix", 401, "invalid_token", _bearer(lambda served: f"{TOKEN}x"), auth="token"
    ),
    Case("token-prefix", 401, "invalid_token", _bearer(lambda served: TOKEN[:-1]), auth="token"),
    Case("token-padded", 401, "invalid_token", _bearer(lambda served: f" {TOKEN}"), auth="token"),
    Case("empty-bearer", 401, "invalid_token", headers=lambda served: {"Authorization": "Bearer"}),
    Case(
        "basic-scheme",
        401,
        "invalid_token",
        headers=lambda served: {"Authorization": f"Basic {TOKEN}"},
    ),
    Case("no-scheme", 401, "invalid_token", headers=lambda served: {"Authorization": TOKEN}),
    Case(
        "lowercase-scheme",
        200,
        "opened",
        headers=lambda served: {"Authorization": f"bearer {served.valid_token()}"},
    ),
    Case(
        "mixed-case-scheme",
        200,
        "opened",
        headers=lambda served: {"Authorization": f"bEARER {served.valid_token()}"},
    ),
    Case("long-token", 401, "invalid_token", _bearer(lambda served: "x" * 8000)),
    Case(
        "token-in-query",
        401,
        "invalid_request",
        headers=lambda served: {},
        query=f"access_token={TOKEN}",
    ),
    Case("token-in-query-and-header", 401, "invalid_request", query=f"access_token={TOKEN}"),
    # -- JWT access tokens (OAuth servers) --
    Case(
        "expired-within-leeway",
        200,
        "opened",
        _bearer(lambda served: served.issuer.token(served.running.url, exp=int(time.time()) - 10)),
        auth="oauth",
    ),
    Case(
        "expired",
        401,
        "invalid_token",
        _bearer(lambda served: served.issuer.token(served.running.url, exp=int(time.time()) - 120)),
        auth="oauth",
    ),
    Case(
        "not-yet-valid",
        401,
        "invalid_token",
        _bearer(lambda served: served.issuer.token(served.running.url, nbf=int(time.time()) + 600)),
        auth="oauth",
    ),
    Case(
        "no-expiry",
        401,
        "invalid_token",
        _bearer(lambda served: served.issuer.token(served.running.url, exp=None)),
        auth="oauth",
    ),
    Case(
        "wrong-audience",
        401,
        "invalid_token",
        _bearer(lambda served: served.issuer.token("https://other.example/mcp")),
        auth="oauth",
    ),
    Case(
        "wrong-issuer",
        401,
        "invalid_token",
        _bearer(lambda served: served.issuer.token(served.running.url, iss="https://evil.example")),
        auth="oauth",
    ),
    Case(
        "no-scope",
        403,
        "insufficient_scope",
        _bearer(lambda served: served.issuer.token(served.running.url, scope="other:scope")),
        auth="oauth",
    ),
    Case(
        "alg-none",
        401,
        "invalid_token",
        _bearer(lambda served: _jwt(served, None, "none", "k1")),
        auth="oauth",
    ),
    Case(
        "rs256-on-ec-key",
        401,
        "invalid_token",
        _bearer(lambda served: _jwt(served, served.issuer.key, "RS256", "k2")),
        auth="oauth",
    ),
    Case(
        "es256-on-rsa-key",
        401,
        "invalid_token",
        _bearer(lambda served: _jwt(served, served.issuer.ec_key, "ES256", "k1")),
        auth="oauth",
    ),
    Case(
        "hs256-with-public-key", 401, "invalid_token", _bearer(_hs256_with_public_key), auth="oauth"
    ),
    Case(
        "es256-valid-ec-key",
        200,
        "opened",
        _bearer(lambda served: _jwt(served, served.issuer.ec_key, "ES256", "k2")),
        auth="oauth",
    ),
    Case(
        "unknown-kid",
        401,
        "invalid_token",
        _bearer(lambda served: _jwt(served, served.issuer.key, "RS256", "k9")),
        auth="oauth",
    ),
    Case("tampered-payload", 401, "invalid_token", _bearer(_tampered), auth="oauth"),
    Case("garbage-jwt", 401, "invalid_token", _bearer(lambda served: "abc.def.ghi"), auth="oauth"),
    # -- Host and Origin --
    Case("foreign-host", 421, "text", lambda served: {**served.bearer(), "Host": "evil.example"}),
    Case(
        "foreign-host-port",
        421,
        "text",
        lambda served: {**served.bearer(), "Host": "evil.example:80"},
    ),
    Case(
        "loopback-host-other-port",
        200,
        "opened",
        lambda served: {**served.bearer(), "Host": "localhost:1"},
    ),
    Case(
        "host-port-not-digits",
        421,
        "text",
        lambda served: {**served.bearer(), "Host": "localhost:80@evil.example"},
    ),
    Case(
        "foreign-origin",
        403,
        "text",
        lambda served: {**served.bearer(), "Origin": "http://evil.example"},
    ),
    Case("null-origin", 403, "text", lambda served: {**served.bearer(), "Origin": "null"}),
    Case(
        "loopback-origin",
        200,
        "opened",
        lambda served: {**served.bearer(), "Origin": "http://localhost:5173"},
    ),
    # -- paths, methods, bodies --
    Case("unknown-path", 404, "any", path="/admin"),
    Case("traversal-path", 404, "any", path="/mcp/../../etc/passwd"),
    Case("wrong-method", 405, "any", method="PUT"),
    Case(
        "oversized-body",
        413,
        "any",
        body=b'{"jsonrpc": "2.0", "pad": "' + b"x" * 8192 + b'"}',
        transport="streamable-http",
    ),
    Case("not-json-body", 400, "any", body=b"not json", transport="streamable-http"),
    Case(
        "messages-without-session",
        400,
        "any",
        path="/messages/",
        method="POST",
        body=b"{}",
        transport="sse",
    ),
    Case(
        "plain-get",
        400,
        "any",
        method="GET",
        transport="streamable-http",
        workers=1,
        mcp_headers=False,
    ),
    Case(
        "plain-get-stateless",
        405,
        "any",
        method="GET",
        transport="streamable-http",
        workers=2,
        mcp_headers=False,
    ),
    Case(
        "protected-resource-metadata",
        200,
        "metadata",
        headers=lambda served: {},
        path="/.well-known/oauth-protected-resource/mcp",
        method="GET",
        auth="oauth",
        transport="streamable-http",
    ),
]


def cases_for(config: Server) -> list[Case]:
    """The request cases that apply to a configuration."""
    return [
        case
        for case in CASES
        if case.auth in (None, config.auth)
        and case.transport in (None, config.transport)
        and case.workers in (None, config.workers)
    ]


@asynccontextmanager
async def request(
    served: Served, case: Case, client: httpx2.AsyncClient
) -> AsyncIterator[httpx2.Response]:
    """The case's request, its response open (an SSE stream is not read past its headers)."""
    sse = served.config.transport == "sse"
    method = case.method or ("GET" if sse else "POST")
    body = (
        case.body
        if case.body is not None
        else (None if method == "GET" else json.dumps(INITIALIZE).encode())
    )
    url = f"{served.base}{case.path or served.opening_path}{'?' + case.query if case.query else ''}"
    headers = {**(MCP_HEADERS if case.mcp_headers else {}), **case.headers(served)}
    async with client.stream(method, url, headers=headers, content=body) as response:
        if "text/event-stream" not in response.headers.get("content-type", "") or not sse:
            await response.aread()
        yield response


def problems(served: Served, case: Case, response: httpx2.Response) -> list[str]:
    """How a response differs from the case's status and shape."""
    found = []
    if response.status_code != case.expect:
        found.append(f"status {response.status_code}, expected {case.expect}")
    authenticate = response.headers.get("www-authenticate", "")
    body = {} if case.shape in ("opened", "text", "any") else _json(response)
    if case.shape == "opened":
        if served.config.transport == "sse":
            found += (
                []
                if "text/event-stream" in response.headers.get("content-type", "")
                else ["no event stream"]
            )
        elif served.config.workers == 1 and "mcp-session-id" not in response.headers:
            found.append("no mcp-session-id")
    elif case.shape in ("invalid_token", "invalid_request", "insufficient_scope"):
        if body.get("error") != case.shape or not authenticate.startswith("Bearer "):
            found.append(
                f"body {body} / WWW-Authenticate {authenticate!r}, expected error {case.shape}"
            )
    elif case.shape == "text" and not response.text.startswith("Invalid "):
        found.append(f"body {response.text[:200]!r}, expected the SDK's Invalid Host/Origin text")
    elif case.shape == "metadata" and body.get("resource") != served.running.url:
        found.append(f"metadata {body}")
    return found


def _json(response: httpx2.Response) -> dict:
    try:
        return response.json()
    except ValueError:
        return {"not-json": response.text[:200]}


@pytest.fixture(scope="module")
def site(built_index: tuple[Path, dict], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the fixtures index (the servers only read it)."""
    import shutil

    root = tmp_path_factory.mktemp("matrix") / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    return root


def _env(config: Server, issuer: Issuer) -> dict[str, str]:
    auth = (
        {"GRAPHRAG_MCP_AUTH_TOKEN": TOKEN}
        if config.auth == "token"
        else {
            "GRAPHRAG_MCP_AUTH_ISSUER": issuer.url,
            "GRAPHRAG_MCP_AUTH_REQUIRED_SCOPES": "graphrag:read",
        }
    )
    return {**SERVER_ENV, **auth}


@pytest.fixture
def served(request: pytest.FixtureRequest, site: Path) -> Iterator[Served]:
    """The configuration's server (and its issuer), stopped after its cases."""
    config: Server = request.param
    issuer = Issuer()
    workers = ["--workers", "2"] if config.workers > 1 else []
    try:
        with running_server(site, config.transport, *workers, env=_env(config, issuer)) as running:
            yield Served(config, running, issuer, {TOKEN})
    finally:
        issuer.http.shutdown()


@pytest.mark.parametrize("served", SERVERS, ids=[config.name for config in SERVERS], indirect=True)
async def test_access_cases(served: Served) -> None:
    """Every request case of the configuration, then its floods; then a real client session still
    works and the log holds no traceback and no secret."""
    failures = []
    async with httpx2.AsyncClient(timeout=30) as client:
        for case in cases_for(served.config):
            try:
                async with asyncio.timeout(CASE_SECONDS), request(served, case, client) as response:
                    failures += [
                        f"{case.name}: {problem}" for problem in problems(served, case, response)
                    ]
                    if session := response.headers.get(
                        "mcp-session-id"
                    ):  # give the client's session back
                        await client.delete(
                            f"{served.base}/mcp",
                            headers={**served.bearer(), "mcp-session-id": session},
                        )
            except (TimeoutError, httpx2.HTTPError) as error:
                failures.append(f"{case.name}: {type(error).__name__}: {error}")
    async with asyncio.timeout(CASE_SECONDS * 3):
        failures += [
            f"{name}: {problem}"
            for name, problem in await FLOODS[served.config.transport, served.config.workers](
                served
            )
        ]
    await _still_serving(served)
    log = served.running.stderr()
    failures += ["log: no access line of the token-in-query case, redacted"] * (
        "/mcp?[redacted]" not in log and "/sse?[redacted]" not in log
    )
    failures += ["log: a traceback"] * ("Traceback" in log) + [
        f"log: a secret ({secret[:12]}...)"
        for secret in served.secrets
        if secret.strip() and secret in log
    ]
    assert not failures, "\n".join(failures) + f"\n--- log tail ---\n{log[-3000:]}"


async def _still_serving(served: Served) -> None:
    """A real SDK client session initializes and searches; opened again for up to 10 s while the
    server refuses it as busy (429, 503): the streams a flood just closed count until the server
    notices their end, later on a loaded machine."""
    assert served.running.process.poll() is None, served.running.stderr()[-3000:]
    deadline = time.monotonic() + 10
    while True:
        try:
            async with _session(served, served.bearer()) as client:
                result = await client.call_tool(
                    "local_search", {"query": "Who designed Old Bessie?", "context_only": True}
                )
            break
        except httpx2.HTTPStatusError as error:
            if error.response.status_code not in (429, 503) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
    assert not result.is_error, result.content


@asynccontextmanager
async def _session(
    served: Served, headers: dict[str, str], local_address: str | None = None
) -> AsyncIterator[ClientSession]:
    if served.config.transport == "sse":

        def factory(
            headers: dict | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(
                headers=headers,
                timeout=timeout,
                auth=auth,
                transport=httpx2.AsyncHTTPTransport(local_address=local_address),
            )

        async with (
            sse_client(served.running.url, headers=headers, httpx_client_factory=factory) as (
                read,
                write,
            ),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client
        return
    transport = httpx2.AsyncHTTPTransport(local_address=local_address)
    async with (
        httpx2.AsyncClient(
            headers=headers, timeout=httpx2.Timeout(30, read=120), transport=transport
        ) as http,
        streamable_http_client(served.running.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as client,
    ):
        await client.initialize()
        yield client


def _client(address: str | None = None) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(
        timeout=30, transport=httpx2.AsyncHTTPTransport(local_address=address)
    )


async def _open(
    served: Served, client: httpx2.AsyncClient, headers: dict[str, str] | None = None
) -> httpx2.Response:
    return await client.post(
        served.running.url,
        content=json.dumps(INITIALIZE),
        headers={**MCP_HEADERS, **(headers or served.bearer())},
    )


async def _until_admitted(open_once: Callable[[], Awaitable[httpx2.Response]]) -> httpx2.Response:
    """`open_once()` again while the server is full, for up to 5 s: a place another client just gave
    back is freed when the server has seen it go (a DELETE answered, a stream's end noticed)."""
    deadline = time.monotonic() + 5
    while (response := await open_once()).status_code == 503 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return response


def _refused(response: httpx2.Response, status: int) -> list[str]:
    """Problems of a refusal that must be `status`, JSON-RPC shaped, with Retry-After."""
    found = (
        []
        if response.status_code == status
        else [f"status {response.status_code}, expected {status}"]
    )
    if "retry-after" not in response.headers or "error" not in _json(response):
        found.append(
            f"no Retry-After or JSON-RPC error: {dict(response.headers)} {response.text[:200]}"
        )
    return found


async def _flood_sessions(served: Served) -> list[tuple[str, str]]:
    """One client floods (40 initializes at once): PER_CLIENT open, the rest 429; the same
    credential from another address counts with it; another client (OAuth: another subject) still
    opens one and searches meanwhile; past TOTAL, 503; closing sessions frees places."""
    failures: list[tuple[str, str]] = []
    async with _client() as a, _client(CLIENT_B) as b, _client(CLIENT_C) as c:
        flood = await asyncio.gather(*(_open(served, a) for _ in range(40)))
        statuses = sorted(response.status_code for response in flood)
        if statuses != [200] * PER_CLIENT + [429] * (40 - PER_CLIENT):
            failures.append(("flood-one-client", f"statuses {statuses}"))
        failures += [
            ("flood-one-client", problem)
            for problem in _refused(
                next((response for response in flood if response.status_code != 200), flood[0]), 429
            )
        ]
        failures += [
            ("flood-same-credential-elsewhere", problem)
            for problem in _refused(await _open(served, b), 429)
        ]
        held: list[httpx2.Response] = []
        if served.config.auth == "oauth":
            try:
                async with _session(served, served.other("user-d"), CLIENT_D) as other:
                    await other.call_tool("get_statistics", {})
            except Exception as error:  # noqa: BLE001 - reported as the case's failure
                failures.append(
                    ("flood-other-client-initializes", f"{type(error).__name__}: {error}")
                )
            held = [
                await _until_admitted(lambda: _open(served, b, served.other("user-b")))
                for _ in range(TOTAL - PER_CLIENT)
            ]
            if [response.status_code for response in held] != [200] * (TOTAL - PER_CLIENT):
                failures.append(
                    ("flood-fill-server", f"statuses {[response.status_code for response in held]}")
                )
            failures += [
                ("flood-server-full", problem)
                for problem in _refused(await _open(served, c, served.other("user-c")), 503)
            ]
        for response in [*flood, *held]:
            if session := response.headers.get("mcp-session-id"):
                await a.delete(
                    served.running.url, headers={**served.bearer(), "mcp-session-id": session}
                )
        if (after := await _until_admitted(lambda: _open(served, c))).status_code != 200:
            failures.append(("flood-places-freed", f"status {after.status_code}"))
        elif session := after.headers.get("mcp-session-id"):
            await c.delete(
                served.running.url, headers={**served.bearer(), "mcp-session-id": session}
            )
    return failures


async def _flood_stateless(served: Served) -> list[tuple[str, str]]:
    """Stateless workers hold no sessions: 40 initializes at once all answer, and another client
    still searches."""
    async with _client() as a:
        statuses = sorted(
            response.status_code
            for response in await asyncio.gather(*(_open(served, a) for _ in range(40)))
        )
    failures = [] if statuses == [200] * 40 else [("flood-stateless", f"statuses {statuses}")]
    try:
        async with _session(served, served.bearer(), CLIENT_D) as other:
            await other.call_tool("get_statistics", {})
    except Exception as error:  # noqa: BLE001 - reported as the case's failure
        failures.append(("flood-other-client-initializes", f"{type(error).__name__}: {error}"))
    return failures


async def _flood_streams(served: Served) -> list[tuple[str, str]]:
    """SSE: one client holding PER_CLIENT streams gets 429 for one more, from any address; another
    client's (OAuth: another subject's) session still works; past TOTAL streams, 503."""
    failures: list[tuple[str, str]] = []
    async with (
        AsyncExitStack() as streams,
        _client() as a,
        _client(CLIENT_B) as b,
        _client(CLIENT_C) as c,
    ):

        async def hold(client: httpx2.AsyncClient, headers: dict[str, str]) -> httpx2.Response:
            return await streams.enter_async_context(
                client.stream("GET", served.running.url, headers={**MCP_HEADERS, **headers})
            )

        held = [await hold(a, served.bearer()) for _ in range(PER_CLIENT)]
        if [response.status_code for response in held] != [200] * PER_CLIENT:
            failures.append(
                ("flood-one-client", f"statuses {[response.status_code for response in held]}")
            )
        for client, case in ((a, "flood-one-client"), (b, "flood-same-credential-elsewhere")):
            failures += [
                (case, problem)
                for problem in await _refused_stream(client, served, served.bearer(), 429)
            ]
        if served.config.auth == "oauth":
            try:
                async with _session(served, served.other("user-d"), CLIENT_D) as other:
                    await other.call_tool("get_statistics", {})
            except Exception as error:  # noqa: BLE001 - reported as the case's failure
                failures.append(
                    ("flood-other-client-initializes", f"{type(error).__name__}: {error}")
                )
            others = [
                await _until_admitted(lambda: hold(b, served.other("user-b")))
                for _ in range(TOTAL - PER_CLIENT)
            ]
            if [response.status_code for response in others] != [200] * (TOTAL - PER_CLIENT):
                failures.append(
                    (
                        "flood-fill-server",
                        f"statuses {[response.status_code for response in others]}",
                    )
                )
            failures += [
                ("flood-server-full", problem)
                for problem in await _refused_stream(c, served, served.other("user-c"), 503)
            ]
    return failures


async def _refused_stream(
    client: httpx2.AsyncClient, served: Served, headers: dict[str, str], status: int
) -> list[str]:
    """Problems of an SSE stream that must be refused with `status`."""
    async with client.stream(
        "GET", served.running.url, headers={**MCP_HEADERS, **headers}
    ) as response:
        if response.status_code == 200:  # an event stream: it never ends
            return [f"status 200, expected {status}"]
        await response.aread()
        return _refused(response, status)


FLOODS = {
    ("streamable-http", 1): _flood_sessions,
    ("streamable-http", 2): _flood_stateless,
    ("sse", 1): _flood_streams,
}


# -- settings a server refuses at start: the same line and exit code with one worker and with two --

SHORT = "short-token"
REFUSED_SETTINGS = {
    "short-token": (
        {"GRAPHRAG_MCP_AUTH_TOKEN": SHORT},
        [],
        "error: GRAPHRAG_MCP_AUTH_TOKEN is too short",
    ),
    "whitespace-token": (
        {"GRAPHRAG_MCP_AUTH_TOKEN": " " * 24},
        [],
        "error: GRAPHRAG_MCP_AUTH_TOKEN starts or ends with whitespace",
    ),
    "padded-token": (
        {"GRAPHRAG_MCP_AUTH_TOKEN": f" {TOKEN} "},
        [],
        "error: GRAPHRAG_MCP_AUTH_TOKEN starts or ends with whitespace",
    ),
    "newline-token": (
        {"GRAPHRAG_MCP_AUTH_TOKEN": f"{TOKEN}\n{TOKEN}"},
        [],
        "error: GRAPHRAG_MCP_AUTH_TOKEN contains whitespace",
    ),
    "token-and-issuer": (
        {"GRAPHRAG_MCP_AUTH_TOKEN": TOKEN, "GRAPHRAG_MCP_AUTH_ISSUER": "https://issuer.example"},
        [],
        "error: set either GRAPHRAG_MCP_AUTH_TOKEN or GRAPHRAG_MCP_AUTH_ISSUER, not both",
    ),
    "oauth-on-network-without-public-url": (
        {"GRAPHRAG_MCP_AUTH_ISSUER": "https://issuer.example"},
        ["--host", "0.0.0.0"],
        "error: OAuth needs the URL clients use",
    ),
    "network-without-auth": (
        {},
        ["--host", "0.0.0.0"],
        "error: refusing to serve HTTP on 0.0.0.0 without auth",
    ),
}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("setting", REFUSED_SETTINGS)
def test_refused_settings_stop_the_command(site: Path, setting: str, workers: int) -> None:
    """One line on stderr, exit code 1, no traceback and no secret; with two workers, before any
    worker starts."""
    env, args, line = REFUSED_SETTINGS[setting]
    result = run_cli(
        "serve",
        "--index-path",
        site,
        "--transport",
        "streamable-http",
        "--port",
        "0",
        "--workers",
        str(workers),
        *args,
        timeout=60,
        env=env,
    )
    assert result.code == 1, result.stderr[-2000:]
    assert [text for text in result.stderr.strip().splitlines() if text] == [result.stderr.strip()]
    assert result.stderr.startswith(line), result.stderr
    assert "Traceback" not in result.stderr and TOKEN not in result.stderr


def test_sse_with_two_workers_is_refused(site: Path) -> None:
    """SSE keeps sessions in one process: `--workers 2` with it is refused in one line."""
    result = run_cli(
        "serve",
        "--index-path",
        site,
        "--transport",
        "sse",
        "--port",
        "0",
        "--workers",
        "2",
        timeout=60,
        env={"GRAPHRAG_MCP_AUTH_TOKEN": TOKEN},
    )
    assert result.code == 1
    assert result.stderr.strip() == (
        "error: --workers 2 needs --transport streamable-http (sessions of sse live in one process)"
    )


def test_docs_list_every_access_case() -> None:
    """docs/security.md names every case of this table, every flood case and every refused
    setting."""
    docs = (Path(__file__).parents[1] / "docs" / "security.md").read_text(encoding="utf-8")
    floods = (
        "flood-one-client",
        "flood-same-credential-elsewhere",
        "flood-other-client-initializes",
        "flood-fill-server",
        "flood-server-full",
        "flood-places-freed",
        "flood-stateless",
    )
    names = [case.name for case in CASES] + list(floods) + list(REFUSED_SETTINGS)
    assert len(names) == len(set(names))
    assert [name for name in names if f"`{name}`" not in docs] == []
    requests = sum(len(cases_for(config)) for config in SERVERS)
    assert (
        requests + 2 * len(REFUSED_SETTINGS) + 1 >= 60
    )  # the bound: at least 60 access cases run


# -- issue 41: limits one caller cannot game, refusals that cost nothing ---------------------------

QUESTION = {"query": "Who designed Old Bessie?", "context_only": True}
RATIO_BOUND = 3.0
"""A victim's search under a flood takes at most this many times its time alone, measured in the
same run."""
CALLS_RUNNING, CALLS_QUEUED = 1, 4
LIMITS_ENV = {
    **SERVER_ENV,
    "GRAPHRAG_MCP_LOG_LEVEL": "INFO",
    "GRAPHRAG_MCP_MAX_CALLS_PER_CLIENT": str(CALLS_RUNNING),
    "GRAPHRAG_MCP_MAX_QUEUED_CALLS_PER_CLIENT": str(CALLS_QUEUED),
}
PEER_BOUND = 1.5
"""A refused request costs the server at most this many times the CPU of a request that carries no
credentials (the cheapest refusal), measured in the same rounds. CPU time, not a victim's latency:
only the server's own work counts, whatever else loads the machine."""
PEER_REQUESTS = 600
"""Refused requests per flood when their CPU is measured: enough clock ticks (10 ms each) to
count."""
ROUNDS = 5
"""Alone-then-flooded rounds a latency test measures; its ratio is their median."""


@pytest.fixture(scope="module")
def oauth_http(site: Path) -> Iterator[Served]:
    """An OAuth server over streamable HTTP, one worker, with small per-client call limits."""
    issuer = Issuer()
    env = {
        **LIMITS_ENV,
        "GRAPHRAG_MCP_AUTH_ISSUER": issuer.url,
        "GRAPHRAG_MCP_AUTH_REQUIRED_SCOPES": "graphrag:read",
    }
    try:
        with running_server(site, "streamable-http", env=env) as running:
            yield Served(Server("oauth", "streamable-http", 1), running, issuer, set())
    finally:
        issuer.http.shutdown()


@pytest.fixture(scope="module")
def token_sse(site: Path) -> Iterator[Served]:
    """A static token server over SSE."""
    issuer = Issuer()
    try:
        with running_server(
            site, "sse", env={**LIMITS_ENV, "GRAPHRAG_MCP_AUTH_TOKEN": TOKEN}
        ) as running:
            yield Served(Server("token", "sse", 1), running, issuer, {TOKEN})
    finally:
        issuer.http.shutdown()


def _cpu_seconds(running: RunningServer) -> float:
    """The CPU time (user and system, every thread) the server process has used so far."""
    fields = Path(f"/proc/{running.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _search_seconds(client: ClientSession, calls: int = 3) -> float:
    """The median time of `calls` context-only searches, one after another."""
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await client.call_tool("local_search", QUESTION)
        times.append(time.perf_counter() - start)
        assert not result.is_error, result.content
    return sorted(times)[len(times) // 2]


Flood = Callable[[asyncio.Event], Awaitable[object]]


async def _ratio_under(flood: Flood, victim: ClientSession, name: str) -> float:
    """The median over ROUNDS rounds of the victim's search time while `flood` runs (until told
    to stop) over its time alone just before, so load from other tests on the machine weighs on
    both sides of each round."""
    await _search_seconds(victim, 1)  # warm: the first search of a session loads what it needs
    ratios = []
    for _ in range(ROUNDS):
        alone = await _search_seconds(victim)
        stop = asyncio.Event()
        flooding = asyncio.create_task(flood(stop))
        try:
            await asyncio.sleep(0.3)  # the flood under way
            ratios.append(await _search_seconds(victim) / alone)
        finally:
            stop.set()
            await flooding
    print(f"{name}: ratios {', '.join(f'{ratio:.2f}' for ratio in ratios)}")
    return statistics.median(ratios)


async def _repeat(
    send: Callable[[], Awaitable[object]], stop: asyncio.Event, at_once: int, most: int
) -> list:
    """`send()` from `at_once` loops until `stop` (at most `most` sends in all); what each
    returned."""
    results: list = []

    async def loop() -> None:
        while not stop.is_set() and len(results) < most:
            try:
                results.append(await send())
            except (httpx2.HTTPError, MCPError) as error:
                results.append(error)

    await asyncio.gather(*(loop() for _ in range(at_once)))
    return results


@pytest.mark.parametrize("trusted", [False, True], ids=["no-trusted-proxy", "trusted-proxy"])
async def test_forwarded_for_counts_only_from_a_trusted_proxy(site: Path, trusted: bool) -> None:
    """Without authentication a client is its address: X-Forwarded-For changes it only when the peer
    is a proxy named in GRAPHRAG_MCP_TRUSTED_PROXIES (none by default), so one client cannot pose as
    many."""
    env = {**SERVER_ENV, **({"GRAPHRAG_MCP_TRUSTED_PROXIES": "127.0.0.1"} if trusted else {})}
    with running_server(site, "streamable-http", env=env) as running:
        async with _client() as client:
            statuses = [
                (
                    await client.post(
                        running.url,
                        content=json.dumps(INITIALIZE),
                        headers={**MCP_HEADERS, "X-Forwarded-For": f"10.9.0.{number}"},
                    )
                ).status_code
                for number in range(5)
            ]
    assert statuses == ([200] * 5 if trusted else [200] * PER_CLIENT + [429] * (5 - PER_CLIENT))


async def test_bearer_spellings_and_addresses_are_one_token_holder(site: Path) -> None:
    """A static token is one identity whatever the scheme's case, the source address or
    X-Forwarded-For."""
    spellings = ["Bearer", "bearer", "BEARER", "bEARER", "BeArEr", "beaRER"]
    with running_server(
        site, "streamable-http", env={**SERVER_ENV, "GRAPHRAG_MCP_AUTH_TOKEN": TOKEN}
    ) as running:
        statuses = []
        for number, scheme in enumerate(spellings * 2):
            async with _client(f"127.0.0.{2 + number}") as client:
                statuses.append(
                    (
                        await client.post(
                            running.url,
                            content=json.dumps(INITIALIZE),
                            headers={
                                **MCP_HEADERS,
                                "Authorization": f"{scheme} {TOKEN}",
                                "X-Forwarded-For": f"10.9.0.{number}",
                            },
                        )
                    ).status_code
                )
    assert statuses == [200] * PER_CLIENT + [429] * (len(statuses) - PER_CLIENT)


async def test_forged_jwt_flood_costs_what_a_tokenless_one_costs(oauth_http: Served) -> None:
    """Hundreds of tokens naming unknown keys (each a JWKS refetch before) take no session place and
    cost a lookup each: the key set is not fetched again for them, a valid client still opens
    sessions (never 503), and the server spends on each at most PEER_BOUND times the CPU it spends
    on a request that carries no token at all (measured in alternating rounds)."""
    served = oauth_http
    tokens = itertools.cycle(
        _jwt(served, served.issuer.key, "RS256", f"kid-{time.monotonic_ns()}") for _ in range(50)
    )
    headers = {"forged tokens": lambda: f"Bearer {next(tokens)}", "no token": lambda: "Basic bm8="}
    async with _client(CLIENT_B) as flooder, _client() as opener:

        async def flood(header: Callable[[], str], stop: asyncio.Event) -> list:
            return await _repeat(
                lambda: _open(served, flooder, {"Authorization": header()}),
                stop,
                at_once=16,
                most=PEER_REQUESTS,
            )

        async def cpu_per_request(header: Callable[[], str]) -> float:
            before = _cpu_seconds(served.running)
            refused = await flood(header, asyncio.Event())
            assert {getattr(response, "status_code", None) for response in refused} == {401}
            return (_cpu_seconds(served.running) - before) / len(refused)

        await cpu_per_request(headers["forged tokens"])  # warm: PyJWT's import, the first keys
        fetched_before, started = served.issuer.key_set_requests, time.monotonic()
        costs: dict[str, list[float]] = {name: [] for name in headers}
        for round_number in range(ROUNDS):
            order = list(headers) if round_number % 2 == 0 else list(reversed(headers))
            for name in order:
                costs[name].append(await cpu_per_request(headers[name]))
        stop = asyncio.Event()
        flooding = asyncio.create_task(flood(headers["forged tokens"], stop))
        opened = await _open(served, opener, served.other("late-comer"))
        stop.set()
        refused = await flooding
        fetches = served.issuer.key_set_requests - fetched_before
        seconds = time.monotonic() - started
    assert opened.status_code == 200, opened.text
    assert {getattr(response, "status_code", None) for response in refused} == {401}
    # the server may fetch again once per IssuerKeys.REFETCH_SECONDS (10 s) for unknown ids
    assert fetches <= 1 + seconds / 10, (fetches, seconds)
    in_rounds = zip(costs["forged tokens"], costs["no token"], strict=True)
    assert statistics.median(forged / plain for forged, plain in in_rounds) <= PEER_BOUND, costs


async def test_one_sessions_concurrent_calls_are_capped(oauth_http: Served) -> None:
    """One session's calls beyond CALLS_RUNNING + CALLS_QUEUED are refused at once with a JSON-RPC
    error; while it keeps its turns full, another client's search stays within RATIO_BOUND of its
    time alone."""
    served = oauth_http
    async with (
        _session(served, served.other("greedy")) as greedy,
        _session(served, served.other("victim")) as victim,
    ):
        burst = await asyncio.gather(
            *(greedy.call_tool("local_search", QUESTION) for _ in range(16)), return_exceptions=True
        )
        refused = [outcome for outcome in burst if isinstance(outcome, MCPError)]
        # calls that finish while the burst arrives free their turns: at most the excess over the
        # bound is refused
        assert 1 <= len(refused) <= 16 - CALLS_RUNNING - CALLS_QUEUED, burst
        assert all("too many tool calls at once" in str(error) for error in refused)
        assert all(
            not outcome.is_error for outcome in burst if not isinstance(outcome, BaseException)
        )

        async def flood(stop: asyncio.Event) -> list:
            return await _repeat(
                lambda: greedy.call_tool("local_search", QUESTION),
                stop,
                at_once=CALLS_RUNNING + CALLS_QUEUED,
                most=200,
            )

        assert await _ratio_under(flood, victim, "one-session-concurrent-calls") <= RATIO_BOUND


async def test_long_host_on_sse_is_refused_cheaply(token_sse: Served) -> None:
    """Unauthenticated SSE requests with an 8,000-character Host are answered 421 in one short log
    line each: another client's search stays within RATIO_BOUND of its time alone, and the log grows
    by little."""
    served = token_sse
    log_before = len(served.running.stderr())
    async with _client(CLIENT_B) as flooder:

        async def flood(stop: asyncio.Event) -> list:
            return await _repeat(
                lambda: flooder.get(served.running.url, headers={"Host": "h" * 8000}),
                stop,
                at_once=8,
                most=200,
            )

        async with _session(served, served.bearer()) as victim:
            ratio = await _ratio_under(flood, victim, "long-host-sse")
        statuses = {
            response.status_code
            for response in await flood(asyncio.Event())
            if isinstance(response, httpx2.Response)
        }
    grown = served.running.stderr()[log_before:]
    refusals = [line for line in grown.splitlines() if "Host 'hhhh" in line]
    assert statuses == {421}
    assert refusals and max(len(line) for line in refusals) < 300 and "Traceback" not in grown
    assert ratio <= RATIO_BOUND


async def test_malformed_sse_messages_are_refused_quietly(token_sse: Served) -> None:
    """Bodies that are no JSON-RPC message get 400 with one log line each (no traceback), the
    session goes on, and a message to a session that has just closed raises nothing."""
    served = token_sse
    async with (
        _client() as client,
        client.stream(
            "GET", served.running.url, headers={**MCP_HEADERS, **served.bearer()}
        ) as stream,
    ):
        lines = stream.aiter_lines()
        endpoint = next(
            line for line in [await anext(lines) for _ in range(2)] if line.startswith("data:")
        )
        messages = f"{served.base}{endpoint.removeprefix('data:').strip()}"
        bodies = [
            b"not json",
            b"{}",
            b'{"jsonrpc": "2.0"}',
            b"[1, 2]",
            b'{"jsonrpc": "2.0", "id": 1}',
        ] * 8
        statuses = [
            (
                await client.post(
                    messages, content=body, headers={**MCP_HEADERS, **served.bearer()}
                )
            ).status_code
            for body in bodies
        ]
    async with _client() as client:  # the stream above has closed: a message to its session
        late = await client.post(
            messages, content=json.dumps(INITIALIZE), headers={**MCP_HEADERS, **served.bearer()}
        )
    async with _session(served, served.bearer()) as still:
        assert not (await still.call_tool("local_search", QUESTION)).is_error
    log = served.running.stderr()
    assert statuses == [400] * len(bodies)
    assert late.status_code in (202, 404)
    assert "Traceback" not in log and "ClosedResourceError" not in log
    assert (
        0 < log.count("refused an SSE message: not a JSON-RPC message") <= REPEATS_PER_WINDOW
    )  # the rest dropped


async def test_unfinished_headers_are_closed(site: Path) -> None:
    """A connection that never finishes its request's headers is closed after
    GRAPHRAG_MCP_HEADER_TIMEOUT_SECONDS."""
    env = {**SERVER_ENV, "GRAPHRAG_MCP_HEADER_TIMEOUT_SECONDS": "1"}
    with running_server(site, "streamable-http", env=env) as running:
        connections = [await asyncio.open_connection("127.0.0.1", running.port) for _ in range(10)]
        for _, writer in connections:
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        async with asyncio.timeout(10):
            ends = [await reader.read() for reader, _ in connections]
        async with _client() as client:
            opened = await client.post(
                running.url, content=json.dumps(INITIALIZE), headers=MCP_HEADERS
            )
    assert ends == [b""] * 10
    assert opened.status_code == 200


def test_killed_workers_parent_frees_the_port(site: Path) -> None:
    """SIGKILL of `serve --workers 2` ends its workers too: the port is free again within
    seconds."""
    import os
    import signal
    import socket

    with running_server(
        site, "streamable-http", "--workers", "2", env={"GRAPHRAG_MCP_AUTH_TOKEN": TOKEN}
    ) as running:
        assert (
            httpx2.post(
                running.url,
                content=json.dumps(INITIALIZE),
                timeout=60,
                headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"},
            ).status_code
            == 200
        )
        os.kill(running.process.pid, signal.SIGKILL)
        deadline, free = time.monotonic() + 15, False
        while not free and time.monotonic() < deadline:
            time.sleep(0.2)
            with socket.socket() as probe:
                free = probe.connect_ex(("127.0.0.1", running.port)) != 0
    assert free, "a worker still listens on the port after its parent was killed"
