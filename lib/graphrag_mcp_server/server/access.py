"""What the server lets through over HTTP and to build_index: no bind beyond loopback without
authentication, Host and Origin checks (DNS-rebinding protection), and the data roots build_index
is confined to. Who a caller is (token verification) is tokens.py's."""

import ipaddress
from pathlib import Path
from urllib.parse import urlsplit

from mcp.server.transport_security import TransportSecuritySettings

from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import ConfigError, GraphRagMcpError

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]


class AccessDeniedError(GraphRagMcpError):
    """A caller asked for something this server does not allow (a folder outside the data
    roots...)."""


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def endpoint_url(settings: ServerSettings, transport: str) -> str:
    """The URL of the MCP endpoint: public_url, else one built from the bound host and port."""
    if settings.public_url is not None:
        return settings.public_url
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"http://{host}:{settings.port}/{'mcp' if transport == 'streamable-http' else 'sse'}"


def check_bind(settings: ServerSettings) -> None:
    """Refuse an HTTP bind on a non-loopback address when no authentication is configured."""
    if (
        not is_loopback(settings.host)
        and settings.auth_token is None
        and settings.auth_issuer is None
    ):
        msg = (
            f"refusing to serve HTTP on {settings.host} without authentication: set "
            "GRAPHRAG_MCP_AUTH_TOKEN (a long random secret) or GRAPHRAG_MCP_AUTH_ISSUER (OAuth), "
            "or bind --host 127.0.0.1"
        )
        raise ConfigError(msg)


def transport_security(settings: ServerSettings) -> TransportSecuritySettings:
    """Host and Origin checks (DNS-rebinding protection), on for every bind: configured values, else
    the loopback names, the bound address and public_url's host."""
    hosts, origins = list(settings.allowed_hosts), list(settings.allowed_origins)
    public = urlsplit(settings.public_url) if settings.public_url else None
    if not hosts:
        hosts = [*LOOPBACK_HOSTS, *(f"{host}:*" for host in LOOPBACK_HOSTS)]
        if not is_loopback(settings.host) and settings.host not in ("0.0.0.0", "::"):
            bound = f"[{settings.host}]" if ":" in settings.host else settings.host
            hosts += [bound, f"{bound}:*"]
        if public is not None:
            hosts += [public.netloc, f"{public.hostname}:*"]
    if not origins:
        origins = [f"http://{host}:*" for host in LOOPBACK_HOSTS] + [
            f"http://{host}" for host in LOOPBACK_HOSTS
        ]
        if public is not None:
            origins.append(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def confined_data_path(data_path: str, roots: list[Path]) -> Path:
    """The folder `data_path` names, resolved (symlinks too), if it lies under one of `roots`.

    A relative path starts at the first root. Hidden folders under a root are refused too.
    """
    if not roots:
        msg = (
            "build_index is off on this server: it may index no folder. The operator allows "
            "folders with `graphrag-mcp serve --data-path DIR` (or --watch DIR) or "
            "GRAPHRAG_MCP_DATA_ROOTS"
        )
        raise AccessDeniedError(msg)
    path = Path(data_path)
    resolved = (path if path.is_absolute() else roots[0] / path).resolve()
    for root in (root.resolve() for root in roots):
        if resolved.is_relative_to(root):
            if any(part.startswith(".") for part in resolved.relative_to(root).parts):
                raise AccessDeniedError(
                    f"data path {data_path} is a hidden folder; hidden folders are never indexed"
                )
            return resolved
    allowed = ", ".join(str(root) for root in roots)
    raise AccessDeniedError(
        f"data path {data_path} is outside the folders this server may index ({allowed}); "
        "give a folder under one of them"
    )
