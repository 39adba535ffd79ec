"""Serving over HTTP: the SDK's Starlette app, with its auth, Host/Origin checks and bounds, on uvicorn."""

import socket
import sys
from pathlib import Path
from typing import Any

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import ConfigError
from graphrag_mcp_server.server.access import check_bind, endpoint_url, transport_security


class OpenStreamLimit:
    """At most `limit` SSE streams open at once; one more is answered 503 (the SDK bounds only
    streamable HTTP sessions)."""

    def __init__(self, app: ASGIApp, limit: int, path: str) -> None:
        self.app, self.limit, self.path, self.open = app, limit, path, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Count the streams on `path`; pass everything else through."""
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        if self.open >= self.limit:
            await PlainTextResponse("Too many open streams", status_code=503)(scope, receive, send)
            return
        self.open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1


def http_app(server: Any, transport: str, settings: ServerSettings) -> ASGIApp:
    """The server's ASGI app for `transport`, bounded by the settings."""
    security = transport_security(settings)
    if transport == "streamable-http":
        return server.streamable_http_app(
            max_request_body_size=settings.max_request_bytes, session_idle_timeout=settings.session_idle_seconds,
            max_sessions=settings.max_sessions, transport_security=security, host=settings.host,
        )
    app = server.sse_app(max_request_body_size=settings.max_request_bytes, transport_security=security,
                         host=settings.host)
    return OpenStreamLimit(app, settings.max_sessions, "/sse")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port; a taken port is one clear error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        msg = f"cannot listen on {host} port {port}: {error.strerror}; choose another port with --port"
        raise ConfigError(msg) from error
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def auth_mode(settings: ServerSettings) -> str:
    """How callers authenticate, in words."""
    if settings.auth_token is not None:
        return "bearer token"
    if settings.auth_issuer is not None:
        return f"OAuth (issuer {settings.auth_issuer})"
    return "none (loopback only)"


def serve_http(server: Any, root: Path, transport: str, settings: ServerSettings) -> None:
    """Serve `server` over `transport` until stopped; says where on stderr, in one line."""
    import uvicorn

    check_bind(settings)
    app = http_app(server, transport, settings)
    sock = bind(settings.host, settings.port)
    local = endpoint_url(settings.model_copy(update={"port": sock.getsockname()[1], "public_url": None}), transport)
    public = f" (public URL {settings.public_url})" if settings.public_url else ""
    print(f"graphrag-mcp: serving {local}{public} over {transport}; index {root}; auth: {auth_mode(settings)}",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level=settings.log_level.lower(), timeout_graceful_shutdown=5)
    uvicorn.Server(config).run(sockets=[sock])
