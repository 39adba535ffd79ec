"""Serving over HTTP: the SDK's Starlette app, with its auth, Host/Origin checks and bounds, on
uvicorn."""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Scope
from uvicorn.protocols.http.h11_impl import H11Protocol

from graphrag_mcp_server.config.logs import plain_logs
from graphrag_mcp_server.config.replacements import private
from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import ConfigError
from graphrag_mcp_server.server.access import check_bind, endpoint_url, transport_security
from graphrag_mcp_server.server.app import create_server
from graphrag_mcp_server.server.limits import (
    SESSION_HEADER,
    HostOriginChecks,
    NoStreamWhenStateless,
    SessionLimits,
    SseMessageChecks,
    TokenInQueryRefusal,
    redact_access_log,
)


def http_app(server: Any, transport: str, settings: ServerSettings) -> ASGIApp:
    """The server's ASGI app for `transport`, bounded by the settings: Host/Origin checks in front
    of everything, session and stream counts (and SSE message checks) behind the SDK's
    authentication."""
    security = transport_security(settings)
    limits = partial(
        SessionLimits,
        total=settings.max_sessions,
        per_client=settings.max_sessions_per_client,
        retry_after=settings.session_idle_seconds,
    )
    stateless = settings.workers > 1 or settings.stateless
    if transport == "streamable-http":
        app = server.streamable_http_app(
            stateless_http=stateless,
            max_request_body_size=settings.max_request_bytes,
            session_idle_timeout=settings.session_idle_seconds,
            max_sessions=settings.max_sessions,
            transport_security=security,
            host=settings.host,
        )
        if stateless:  # stateless servers keep no sessions, and no streams
            app = NoStreamWhenStateless(app, "/mcp")
        else:
            instances = private(
                server.session_manager,
                "mcp.server.streamable_http_manager.StreamableHTTPSessionManager._server_instances",
            )
            inside_auth(
                app,
                "/mcp",
                lambda endpoint: limits(endpoint, _opens_a_session, instances.keys),
            )
        paths: tuple[str, ...] = ("/mcp",)
    else:
        app = server.sse_app(
            max_request_body_size=settings.max_request_bytes,
            transport_security=security,
            host=settings.host,
        )
        inside_auth(app, "/sse", lambda endpoint: limits(endpoint, _opens_a_stream, None))
        inside_auth(
            app,
            "/messages",
            lambda endpoint: SseMessageChecks(endpoint, settings.max_request_bytes),
        )
        paths = ("/sse", "/messages/")
    return TokenInQueryRefusal(HostOriginChecks(app, security, paths))


def inside_auth(app: Starlette, path: str, wrap: Callable[[ASGIApp], ASGIApp]) -> None:
    """Put `wrap` around the endpoint of `app`'s route at `path`, behind the SDK's authentication:
    what it adds sees only requests whose credential the SDK verified (scope["user"]), or every
    request without auth."""
    route = next(
        route for route in app.routes if isinstance(route, Route | Mount) and route.path == path
    )
    guard = route.app
    if isinstance(guard, RequireAuthMiddleware):
        guard.app = wrap(guard.app)
    else:
        route.app = wrap(guard)


def _opens_a_session(scope: Scope) -> bool:
    """A streamable HTTP request without a session id (an initialize, when the SDK accepts it)."""
    return (
        scope["method"] == "POST"
        and scope["path"] == "/mcp"
        and not any(name == SESSION_HEADER.encode() for name, _ in scope["headers"])
    )


def _opens_a_stream(scope: Scope) -> bool:
    return (scope["method"], scope["path"]) == ("GET", "/sse")


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to host:port, not yet listening; a taken port is one clear error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as error:
        sock.close()
        msg = (
            f"cannot listen on {host} port {port}: {error.strerror}; choose another port with "
            "--port"
        )
        raise ConfigError(msg) from error
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
    sock = _listen(root, transport, settings)
    uvicorn.Server(_uvicorn_config(app, settings)).run(sockets=[sock])


def serve_workers(root: Path, settings: ServerSettings, watch: Path | None) -> None:
    """Serve streamable HTTP from `settings.workers` processes sharing one socket, each with its own
    loaded index (reloaded when the index changes on disk); with `watch`, one more process keeps the
    index current."""
    from uvicorn.supervisors import Multiprocess

    check_bind(settings)
    # with blob storage this process alone follows it; the workers read the local copy
    storage = settings.storage
    worker_settings = settings.model_copy(
        update={"index_path": root, "read_only": True, "storage": None}
    )
    http_app(
        create_server(root, worker_settings, transport="streamable-http"),
        "streamable-http",
        worker_settings,
    )
    # ^ every check a worker makes at start, made once here: a refused setting stops the command,
    # not each worker
    sock = _listen(root, "streamable-http", settings)
    settings = worker_settings.model_copy(update={"port": sock.getsockname()[1]})
    # what each spawned worker's ServerSettings() reads
    os.environ.update(settings_environment(settings))
    os.environ[SUPERVISOR] = str(os.getpid())
    config = _uvicorn_config(
        "graphrag_mcp_server.server.http:worker_app",
        settings,
        factory=True,
        workers=settings.workers,
    )
    with _watcher(root, watch):
        if storage is not None:
            _follow_in_thread(root, settings.model_copy(update={"storage": storage}))
        Multiprocess(config, sockets=[sock]).run()


SUPERVISOR = "_GRAPHRAG_MCP_SUPERVISOR_PID"
"""The environment variable naming the process whose workers these are."""


def worker_app() -> ASGIApp:
    """One worker's app (serve --workers), from the settings its parent put in the environment; the
    worker ends when its parent does."""
    exit_with_parent(int(os.environ.get(SUPERVISOR, os.getppid())))
    settings = ServerSettings()
    HeaderTimeout.seconds = settings.header_timeout_seconds
    redact_access_log()
    plain_logs(settings.log_level)
    return http_app(
        create_server(settings.index_path, settings, transport="streamable-http"),
        "streamable-http",
        settings,
    )


def settings_environment(settings: ServerSettings) -> dict[str, str]:
    """`settings` as the GRAPHRAG_MCP_ environment variables that read back to the same values."""

    def text(value: Any) -> str:
        if isinstance(value, list):
            return ",".join(text(item) for item in value)
        if isinstance(value, SecretStr):
            return value.get_secret_value()
        if isinstance(value, Enum):
            return str(value.value)
        return str(value).lower() if isinstance(value, bool) else str(value)

    return {
        f"GRAPHRAG_MCP_{name.upper()}": text(value) for name, value in settings if value is not None
    }


@contextmanager
def _watcher(root: Path, watch: Path | None) -> Iterator[None]:
    """With `watch`, `graphrag-mcp index WATCH --watch` beside the workers (its output on
    stderr)."""
    if watch is None:
        yield
        return
    command = [
        sys.executable,
        "-m",
        "graphrag_mcp_server.cli.main",
        "index",
        str(watch),
        "--index-path",
        str(root),
        "--watch",
    ]
    process = subprocess.Popen(
        command, stdout=sys.stderr, stdin=subprocess.DEVNULL, preexec_fn=_terminated_with_parent
    )
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _follow_in_thread(root: Path, settings: ServerSettings) -> None:
    """Keep the local copy on the blob container's current version from a thread of this process
    (the workers see each new version on disk, as they see the watcher's)."""
    import asyncio
    import threading

    from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
    from graphrag_mcp_server.handlers.indexing.blob.follower import follow

    location = BlobLocation.parse(settings.storage or "")
    threading.Thread(
        target=asyncio.run,
        args=(follow(location, root, settings.storage_poll_seconds),),
        name="blob-follower",
        daemon=True,
    ).start()


def _listen(root: Path, transport: str, settings: ServerSettings) -> socket.socket:
    """The listening socket, announced in one line on stderr before it listens: whoever finds the
    port open can read where and how it serves."""
    sock = bind(settings.host, settings.port)
    local = endpoint_url(
        settings.model_copy(update={"port": sock.getsockname()[1], "public_url": None}), transport
    )
    public = f" (public URL {settings.public_url})" if settings.public_url else ""
    workers = f", {settings.workers} workers" if settings.workers > 1 else ""
    print(
        f"graphrag-mcp: serving {local}{public} over {transport}{workers}; index {root}; auth: "
        f"{auth_mode(settings)}",
        file=sys.stderr,
        flush=True,
    )
    sock.listen(2048)
    return sock


def _uvicorn_config(app: ASGIApp | str, settings: ServerSettings, **options: Any) -> Any:
    """uvicorn's settings: X-Forwarded-* believed only from the trusted proxies, at most
    max_connections, and a deadline on each request's headers."""
    import uvicorn

    HeaderTimeout.seconds = settings.header_timeout_seconds
    trusted = settings.trusted_proxies
    config = uvicorn.Config(
        app,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=5,
        http=HeaderTimeout,
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or [],
        limit_concurrency=settings.max_connections,
        **options,
    )
    redact_access_log()  # after uvicorn configured its loggers
    plain_logs(settings.log_level)
    return config


class HeaderTimeout(H11Protocol):
    """uvicorn's h11 protocol with a deadline on a request's headers: a connection that sends none
    (or only part of them) within `seconds` of opening or of its last answer is closed (uvicorn's
    keep-alive timer stops at the first byte, so a client sending one byte at a time held a
    connection for ever)."""

    seconds = 10.0

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._deadline = self.loop.call_later(self.seconds, self._late, self.cycle)

    def on_response_complete(self) -> None:
        finished = self.cycle  # uvicorn may start a pipelined request's cycle below
        super().on_response_complete()
        self._deadline.cancel()
        self._deadline = self.loop.call_later(self.seconds, self._late, finished)

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadline.cancel()
        super().connection_lost(exc)

    def _late(self, cycle: object) -> None:
        """Close the connection if no request arrived since the deadline was set."""
        if self.cycle is cycle and not self.transport.is_closing():
            self.transport.close()


def exit_with_parent(parent: int) -> None:
    """End this process (SIGTERM) when process `parent` dies, even by SIGKILL: a worker left behind
    kept serving the port with an old index and old settings. Linux: PR_SET_PDEATHSIG; elsewhere a
    thread watching the parent."""
    if sys.platform == "linux":
        _terminated_with_parent()
    else:

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    if os.getppid() != parent:  # it died before the request above
        os.kill(os.getpid(), signal.SIGTERM)


def _terminated_with_parent() -> None:
    """Linux: SIGTERM to this process when its parent dies (prctl PR_SET_PDEATHSIG); nothing
    elsewhere."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


PR_SET_PDEATHSIG = 1
