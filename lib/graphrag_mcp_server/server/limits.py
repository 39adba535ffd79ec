"""What the HTTP transports refuse before the SDK sees a request: too many sessions, tokens in URLs, and SSE
requests with a foreign Host or Origin (answered here, where the SDK's SSE transport raises after answering);
and uvicorn's access log without query strings."""

import hashlib
import logging
import math
from collections import defaultdict
from collections.abc import Callable, Collection
from urllib.parse import parse_qsl

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

SESSION_HEADER = "mcp-session-id"


def client_of(scope: Scope) -> str:
    """Who a request comes from, for counting its sessions: its address (uvicorn's, after trusted proxy headers)
    and who its credential names: a JWT's subject (unverified: only a session the SDK accepted stays counted,
    and a forged subject from another address counts apart) or a digest of any other credential. Clients
    behind one proxy with their own tokens count apart; one user's fresh tokens count together."""
    address = scope["client"][0] if scope.get("client") else ""
    credential = next((value for name, value in scope.get("headers", []) if name == b"authorization"), b"")
    return f"{address} {_subject(credential) or hashlib.sha256(credential).hexdigest()[:16]}"


def _subject(credential: bytes) -> str | None:
    """The `sub` (else `client_id`) of a bearer JWT, read without checking it (PyJWT with verification off);
    None for other tokens."""
    import jwt

    try:
        claims = jwt.decode(credential.partition(b" ")[2].strip(), options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    subject = claims.get("sub") or claims.get("client_id")
    return f"sub:{subject}" if isinstance(subject, str) else None


def jsonrpc_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """An HTTP error answered as the SDK answers one: a JSON-RPC error body without a request id."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class SessionLimits:
    """At most `per_client` open sessions of one client and `total` of all clients; past them 429 or 503,
    with Retry-After. `opens(scope)` says whether a request opens a session. Streamable HTTP: a session counts
    from its admission, then by the id the SDK answers with while `live()` holds it (the SDK closes idle ones);
    SSE (`live` None): a stream counts while its request lasts."""

    def __init__(self, app: ASGIApp, opens: Callable[[Scope], bool], live: Callable[[], Collection[str]] | None,
                 total: int, per_client: int, retry_after: float) -> None:
        self.app, self.opens, self.live = app, opens, live
        self.total, self.per_client, self.retry_after = total, per_client, str(max(1, math.ceil(retry_after)))
        self.held: defaultdict[str, set[object]] = defaultdict(set)
        """Per client: its admitted requests still running (SSE streams, openings not yet answered) and the ids
        of its sessions."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Admit or refuse a request that opens a session; pass everything else through."""
        if scope["type"] != "http" or not self.opens(scope):
            await self.app(scope, receive, send)
            return
        client = client_of(scope)
        if (refusal := self._refusal(client)) is not None:
            await refusal(scope, receive, send)
            return
        admitted = object()
        self.held[client].add(admitted)  # counted before the first await: a burst cannot overtake the limit
        try:
            await self.app(scope, receive, send if self.live is None else self._recording(client, send))
        finally:
            self.held[client].discard(admitted)
            if not self.held[client]:
                del self.held[client]

    def _refusal(self, client: str) -> Response | None:
        """429 past the client's limit, 503 past the server's; None to admit."""
        if self.live is not None:  # forget the sessions the SDK has closed
            live = set(self.live())
            for holder, held in list(self.held.items()):
                held.difference_update({item for item in held if isinstance(item, str) and item not in live})
                if not held:
                    del self.held[holder]
        if len(self.held.get(client, ())) >= self.per_client:
            logger.warning("refused a session: the client holds %d (GRAPHRAG_MCP_MAX_SESSIONS_PER_CLIENT)",
                           self.per_client)
            return self._response(429, f"Too many open sessions from this client ({self.per_client}): close one "
                                       f"(DELETE the session) or retry after {self.retry_after} s")
        if sum(len(held) for held in self.held.values()) >= self.total:
            logger.warning("refused a session: %d are open (GRAPHRAG_MCP_MAX_SESSIONS)", self.total)
            return self._response(503, f"Too many open sessions ({self.total}): retry after {self.retry_after} s")
        return None

    def _response(self, status: int, message: str) -> Response:
        return jsonrpc_error(status, message, {"Retry-After": self.retry_after})

    def _recording(self, client: str, send: Send) -> Send:
        """`send` that keeps the id of the session the SDK opens for `client` (that of a successful answer)."""
        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for name, value in message.get("headers", []):
                    if name.lower() == SESSION_HEADER.encode():
                        self.held[client].add(value.decode())
            await send(message)

        return recording_send


class TokenInQueryRefusal:
    """401 for a bearer token in the URL (`?access_token=`, RFC 6750 section 2.3): URLs end up in logs and
    browser histories; the hint says to send it in the Authorization header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a request with an access_token query parameter; pass everything else through."""
        query = scope.get("query_string", b"").decode("latin-1") if scope["type"] == "http" else ""
        if not any(name.lower() == "access_token" for name, _ in parse_qsl(query, keep_blank_values=True)):
            await self.app(scope, receive, send)
            return
        logger.warning("refused a request with a token in its URL")
        description = ("tokens in the URL are refused (URLs are logged): send it in the Authorization header, "
                       "as `Authorization: Bearer <token>`")
        headers = {"WWW-Authenticate": f'Bearer error="invalid_request", error_description="{description}"'}
        await JSONResponse({"error": "invalid_request", "error_description": description}, 401,
                           headers)(scope, receive, send)


class SseTransportChecks:
    """The SDK's Host, Origin and Content-Type checks for the SSE endpoints (`paths`), answered here: the SDK's
    SSE transport answers 421/403 too but then raises, which logs a traceback per refused request."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings, paths: tuple[str, ...]) -> None:
        self.app, self.paths = app, paths
        self.checks = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse an SSE request with a foreign Host or Origin in one log line (the SDK's warning)."""
        if scope["type"] == "http" and scope["path"].startswith(self.paths):
            refusal = await self.checks.validate_request(Request(scope, receive), is_post=scope["method"] == "POST")
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


class NoStreamWhenStateless:
    """405 for a GET on the MCP endpoint of stateless workers (`--workers N`): they keep no stream to push
    messages on, and the SDK's stateless transport held such a GET open for ever (`curl URL` hung)."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app, self.path = app, path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a GET on `path` at once; pass everything else through."""
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == self.path:
            message = ("this server runs several stateless workers and opens no event stream: send MCP requests as "
                       "JSON-RPC with POST (an MCP client does)")
            await jsonrpc_error(405, message, {"Allow": "POST, DELETE"})(scope, receive, send)
            return
        await self.app(scope, receive, send)


class QueryStringsRedacted(logging.Filter):
    """uvicorn's access log lines with every query string replaced by `?[redacted]`: a token or an SSE session id
    sent in a URL never reaches a log."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the path argument of an access log record (client, method, path, version, status)."""
        if isinstance(record.args, tuple) and len(record.args) >= 3 and "?" in str(record.args[2]):
            path = str(record.args[2]).split("?", 1)[0]
            record.args = (*record.args[:2], f"{path}?[redacted]", *record.args[3:])
        return True


def redact_access_log() -> None:
    """Keep query strings out of uvicorn's access log (in this process; once)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(existing, QueryStringsRedacted) for existing in access.filters):
        access.addFilter(QueryStringsRedacted())
