"""What the HTTP transports refuse before the SDK handles a request: a foreign Host or Origin
(cheaply, before authentication), tokens in URLs, too many sessions or tool calls of one caller
(after authentication: who a caller is comes from tokens.identity_of), SSE messages that are no
JSON-RPC message; and uvicorn's access log without query strings."""

import logging
import math
import re
from collections import defaultdict
from collections.abc import Callable, Collection
from urllib.parse import parse_qsl

import anyio
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphrag_mcp_server.server.tokens import identity_of

logger = logging.getLogger(__name__)

SESSION_HEADER = "mcp-session-id"
QUOTED_CHARS = 80
"""How much of a refused header value a log line quotes."""


def quoted(value: str | None) -> str:
    """`value` for a log line: its first QUOTED_CHARS characters, quoted, with its length when
    cut."""
    if value is None:
        return "none"
    cut = f"... ({len(value)} characters)" if len(value) > QUOTED_CHARS else ""
    return f"{value[:QUOTED_CHARS]!r}{cut}"


def jsonrpc_error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """An HTTP error answered as the SDK answers one: a JSON-RPC error body without a request id."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


class SessionLimits:
    """At most `per_client` open sessions of one client and `total` of all clients; past them 429 or
    503, with Retry-After. `opens(scope)` says whether a request opens a session. Streamable HTTP: a
    session counts from its admission, then by the id the SDK answers with while `live()` holds it
    (the SDK closes idle ones); SSE (`live` None): a stream counts while its request lasts. A client
    is its verified identity."""

    def __init__(
        self,
        app: ASGIApp,
        opens: Callable[[Scope], bool],
        live: Callable[[], Collection[str]] | None,
        total: int,
        per_client: int,
        retry_after: float,
    ) -> None:
        self.app, self.opens, self.live = app, opens, live
        self.total, self.per_client, self.retry_after = (
            total,
            per_client,
            str(max(1, math.ceil(retry_after))),
        )
        self.held: defaultdict[str, set[object]] = defaultdict(set)
        """Per client: its admitted requests still running (SSE streams, openings not yet answered)
        and the ids of its sessions."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Admit or refuse a request that opens a session; pass everything else through."""
        if scope["type"] != "http" or not self.opens(scope):
            await self.app(scope, receive, send)
            return
        # behind the SDK's authentication (http.inside_auth): callers are verified
        client = identity_of(scope)
        if (refusal := self._refusal(client)) is not None:
            await refusal(scope, receive, send)
            return
        admitted = object()
        # counted before the first await: a burst cannot overtake the limit
        self.held[client].add(admitted)
        try:
            await self.app(
                scope, receive, send if self.live is None else self._recording(client, send)
            )
        finally:
            self.held[client].discard(admitted)
            if not self.held[client]:
                del self.held[client]

    def _refusal(self, client: str) -> Response | None:
        """429 past the client's limit, 503 past the server's; None to admit."""
        if self.live is not None:  # forget the sessions the SDK has closed
            live = set(self.live())
            for holder, held in list(self.held.items()):
                held.difference_update(
                    {item for item in held if isinstance(item, str) and item not in live}
                )
                if not held:
                    del self.held[holder]
        if len(self.held.get(client, ())) >= self.per_client:
            logger.warning(
                "refused a session: the client holds %d (GRAPHRAG_MCP_MAX_SESSIONS_PER_CLIENT)",
                self.per_client,
            )
            return self._response(
                429,
                f"Too many open sessions from this client ({self.per_client}): close one "
                f"(DELETE the session) or retry after {self.retry_after} s",
            )
        if sum(len(held) for held in self.held.values()) >= self.total:
            logger.warning("refused a session: %d are open (GRAPHRAG_MCP_MAX_SESSIONS)", self.total)
            return self._response(
                503, f"Too many open sessions ({self.total}): retry after {self.retry_after} s"
            )
        return None

    def _response(self, status: int, message: str) -> Response:
        return jsonrpc_error(status, message, {"Retry-After": self.retry_after})

    def _recording(self, client: str, send: Send) -> Send:
        """`send` that keeps the id of the session the SDK opens for `client` (that of a successful
        answer)."""

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for name, value in message.get("headers", []):
                    if name.lower() == SESSION_HEADER.encode():
                        self.held[client].add(value.decode())
            await send(message)

        return recording_send


class TokenInQueryRefusal:
    """401 for a bearer token in the URL (`?access_token=`, RFC 6750 section 2.3): URLs end up in
    logs and browser histories; the hint says to send it in the Authorization header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a request with an access_token query parameter; pass everything else through."""
        query = scope.get("query_string", b"").decode("latin-1") if scope["type"] == "http" else ""
        if not any(
            name.lower() == "access_token" for name, _ in parse_qsl(query, keep_blank_values=True)
        ):
            await self.app(scope, receive, send)
            return
        logger.warning("refused a request with a token in its URL")
        description = (
            "tokens in the URL are refused (URLs are logged): send it in the Authorization header, "
            "as `Authorization: Bearer <token>`"
        )
        headers = {
            "WWW-Authenticate": f'Bearer error="invalid_request", error_description="{description}"'
        }
        await JSONResponse(
            {"error": "invalid_request", "error_description": description}, 401, headers
        )(scope, receive, send)


class HostOriginChecks:
    """DNS-rebinding protection for every MCP endpoint, before authentication and before the SDK: a
    Host or Origin header not allowed is answered 421 / 403 with the SDK's texts and one short log
    line (the SDK logged the whole value through rich, about a second of CPU for a long one, and its
    SSE transport raised after answering). A `name:*` entry allows only a port of digits after
    `name:` (the SDK's allowed `localhost:80@evil.example`)."""

    def __init__(
        self, app: ASGIApp, security: TransportSecuritySettings, paths: tuple[str, ...]
    ) -> None:
        self.app, self.paths = app, paths
        self.hosts = _matcher(security.allowed_hosts)
        self.origins = _matcher(security.allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a request with a foreign Host or Origin; pass everything else through."""
        if scope["type"] == "http" and scope["path"].startswith(self.paths):
            headers = Headers(scope=scope)
            host, origin = headers.get("host"), headers.get("origin")
            if host is None or not self.hosts(host):
                logger.warning(
                    "refused a request: Host %s is not allowed (GRAPHRAG_MCP_ALLOWED_HOSTS)",
                    quoted(host),
                )
                await Response("Invalid Host header", status_code=421)(scope, receive, send)
                return
            if origin and not self.origins(origin):
                logger.warning(
                    "refused a request: Origin %s is not allowed (GRAPHRAG_MCP_ALLOWED_ORIGINS)",
                    quoted(origin),
                )
                await Response("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _matcher(allowed: list[str]) -> Callable[[str], bool]:
    """Whether a header value is one of `allowed`: exactly, or `name:*` as `name:` and a port of
    digits."""
    exact = set(allowed)
    wildcards = [re.escape(entry[:-1]) + r"[0-9]{1,5}" for entry in allowed if entry.endswith(":*")]
    pattern = re.compile("|".join(wildcards)) if wildcards else None
    return lambda value: (
        value in exact or (pattern is not None and pattern.fullmatch(value) is not None)
    )


class SseMessageChecks:
    """POSTs to an SSE session's message endpoint, behind authentication: a body that is no JSON-RPC
    message is answered 400 here with one log line (the SDK logged a traceback for each and handed
    the error to the session), and a message for a session that has just closed ends quietly (the
    SDK raised ClosedResourceError after answering 202)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a message's body before the SDK sees it; pass everything else through."""
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await _body(receive, self.max_bytes)
        if body is None:
            await Response("Request body too large", status_code=413)(scope, receive, send)
            return
        from mcp_types import jsonrpc_message_adapter
        from pydantic import ValidationError

        try:
            jsonrpc_message_adapter.validate_json(body, by_name=False)
        except ValidationError:
            logger.warning("refused an SSE message: not a JSON-RPC message (%d bytes)", len(body))
            await Response("Could not parse message", status_code=400)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            await self.app(scope, replay, send)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.info("an SSE message arrived as its session closed; dropped")


async def _body(receive: Receive, limit: int) -> bytes | None:
    """A request's whole body; None past `limit` bytes."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return bytes(body)
        body += message.get("body", b"")
        if len(body) > limit:
            return None
        if not message.get("more_body", False):
            return bytes(body)


class NoStreamWhenStateless:
    """405 for a GET on the MCP endpoint of stateless workers (`--workers N`): they keep no stream
    to push messages on, and the SDK's stateless transport held such a GET open for ever (`curl URL`
    hung)."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app, self.path = app, path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a GET on `path` at once; pass everything else through."""
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == self.path:
            message = (
                "this server runs several stateless workers and opens no event stream: send MCP "
                "requests as JSON-RPC with POST (an MCP client does)"
            )
            await jsonrpc_error(405, message, {"Allow": "POST, DELETE"})(scope, receive, send)
            return
        await self.app(scope, receive, send)


class QueryStringsRedacted(logging.Filter):
    """uvicorn's access log lines with every query string replaced by `?[redacted]`: a token or an
    SSE session id sent in a URL never reaches a log."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the path argument of an access log record (client, method, path, version,
        status)."""
        if isinstance(record.args, tuple) and len(record.args) >= 3 and "?" in str(record.args[2]):
            path = str(record.args[2]).split("?", 1)[0]
            record.args = (*record.args[:2], f"{path}?[redacted]", *record.args[3:])
        return True


def redact_access_log() -> None:
    """Keep query strings out of uvicorn's access log (in this process; once)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(existing, QueryStringsRedacted) for existing in access.filters):
        access.addFilter(QueryStringsRedacted())
