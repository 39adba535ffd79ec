"""Serving over HTTP: the SDK's Starlette app, with its auth, Host/Origin checks and bounds, on uvicorn."""

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from starlette.types import ASGIApp, Scope

from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import ConfigError
from graphrag_mcp_server.server.access import check_bind, endpoint_url, transport_security
from graphrag_mcp_server.server.app import create_server
from graphrag_mcp_server.server.limits import (
    SESSION_HEADER,
    NoStreamWhenStateless,
    SessionLimits,
    SseTransportChecks,
    TokenInQueryRefusal,
    redact_access_log,
)


def http_app(server: Any, transport: str, settings: ServerSettings) -> ASGIApp:
    """The server's ASGI app for `transport`, bounded by the settings."""
    security = transport_security(settings)
    limits = {"total": settings.max_sessions, "per_client": settings.max_sessions_per_client,
              "retry_after": settings.session_idle_seconds}
    stateless = settings.workers > 1 or settings.stateless
    if transport == "streamable-http":
        app = server.streamable_http_app(
            stateless_http=stateless, max_request_body_size=settings.max_request_bytes,
            session_idle_timeout=settings.session_idle_seconds, max_sessions=settings.max_sessions,
            transport_security=security, host=settings.host,
        )
        if not stateless:
            manager = server.session_manager
            app = SessionLimits(app, _opens_a_session, lambda: manager._server_instances.keys(), **limits)  # noqa: SLF001 - the SDK counts its sessions only there
        else:  # stateless servers keep no sessions, and no streams
            app = NoStreamWhenStateless(app, "/mcp")
    else:
        app = server.sse_app(max_request_body_size=settings.max_request_bytes, transport_security=security,
                             host=settings.host)
        app = SseTransportChecks(SessionLimits(app, _opens_a_stream, None, **limits), security, ("/sse", "/messages/"))
    return TokenInQueryRefusal(app)


def _opens_a_session(scope: Scope) -> bool:
    """A streamable HTTP request without a session id (an initialize, when the SDK accepts it)."""
    return scope["method"] == "POST" and scope["path"] == "/mcp" and not any(
        name == SESSION_HEADER.encode() for name, _ in scope["headers"])


def _opens_a_stream(scope: Scope) -> bool:
    return scope["method"] == "GET" and scope["path"] == "/sse"


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
    sock = _listen(root, transport, settings)
    uvicorn.Server(_uvicorn_config(app, settings)).run(sockets=[sock])


def serve_workers(root: Path, settings: ServerSettings, watch: Path | None) -> None:
    """Serve streamable HTTP from `settings.workers` processes sharing one socket, each with its own loaded
    index (reloaded when the index changes on disk); with `watch`, one more process keeps the index current."""
    from uvicorn.supervisors import Multiprocess

    check_bind(settings)
    storage = settings.storage  # with blob storage this process alone follows it; the workers read the local copy
    worker_settings = settings.model_copy(update={"index_path": root, "read_only": True, "storage": None})
    http_app(create_server(root, worker_settings, transport="streamable-http"), "streamable-http", worker_settings)
    # ^ every check a worker makes at start, made once here: a refused setting stops the command, not each worker
    sock = _listen(root, "streamable-http", settings)
    settings = worker_settings.model_copy(update={"port": sock.getsockname()[1]})
    os.environ.update(settings_environment(settings))  # what each spawned worker's ServerSettings() reads
    config = _uvicorn_config("graphrag_mcp_server.server.http:worker_app", settings, factory=True,
                             workers=settings.workers)
    with _watcher(root, watch):
        if storage is not None:
            _follow_in_thread(root, settings.model_copy(update={"storage": storage}))
        Multiprocess(config, sockets=[sock]).run()


def worker_app() -> ASGIApp:
    """One worker's app (serve --workers), from the settings its parent put in the environment."""
    settings = ServerSettings()
    redact_access_log()
    return http_app(create_server(settings.index_path, settings, transport="streamable-http"), "streamable-http",
                    settings)


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

    return {f"GRAPHRAG_MCP_{name.upper()}": text(value) for name, value in settings if value is not None}


@contextmanager
def _watcher(root: Path, watch: Path | None) -> Iterator[None]:
    """With `watch`, `graphrag-mcp index WATCH --watch` beside the workers (its output on stderr)."""
    if watch is None:
        yield
        return
    command = [sys.executable, "-m", "graphrag_mcp_server.cli.main", "index", str(watch), "--index-path", str(root),
               "--watch"]
    process = subprocess.Popen(command, stdout=sys.stderr, stdin=subprocess.DEVNULL)
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _follow_in_thread(root: Path, settings: ServerSettings) -> None:
    """Keep the local copy on the blob container's current version from a thread of this process (the workers
    see each new version on disk, as they see the watcher's)."""
    import asyncio
    import threading

    from graphrag_mcp_server.handlers.indexing.blob_versions import BlobLocation
    from graphrag_mcp_server.handlers.indexing.replica import follow

    location = BlobLocation.parse(settings.storage or "")
    threading.Thread(target=asyncio.run, args=(follow(location, root, settings.storage_poll_seconds),),
                     name="blob-follower", daemon=True).start()


def _listen(root: Path, transport: str, settings: ServerSettings) -> socket.socket:
    """The bound socket, announced in one line on stderr."""
    sock = bind(settings.host, settings.port)
    local = endpoint_url(settings.model_copy(update={"port": sock.getsockname()[1], "public_url": None}), transport)
    public = f" (public URL {settings.public_url})" if settings.public_url else ""
    workers = f", {settings.workers} workers" if settings.workers > 1 else ""
    print(f"graphrag-mcp: serving {local}{public} over {transport}{workers}; index {root}; auth: {auth_mode(settings)}",
          file=sys.stderr, flush=True)
    return sock


def _uvicorn_config(app: ASGIApp | str, settings: ServerSettings, **options: Any) -> Any:
    import uvicorn

    config = uvicorn.Config(app, log_level=settings.log_level.lower(), timeout_graceful_shutdown=5, **options)
    redact_access_log()  # after uvicorn configured its loggers
    return config
