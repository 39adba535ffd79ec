"""Who may call the server over HTTP, from which Host and Origin, and which folders build_index may read.

Authentication uses the SDK's own machinery: `AuthSettings` and a `TokenVerifier`, checked by its
bearer middleware (401 with `WWW-Authenticate` when the token is missing or refused). Two
verifiers: one static token (constant-time comparison), or JWT access tokens of an OAuth 2.1
authorization server, checked against its JWKS (signature, issuer, audience, expiry).
"""

import asyncio
import hmac
import ipaddress
import logging
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import ConfigError, GraphRagMcpError

logger = logging.getLogger(__name__)

ASYMMETRIC_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
"""JWT signature algorithms accepted: public-key ones only (never `none`, never a shared HMAC secret)."""

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

LEEWAY_SECONDS = 30
"""Clock skew allowed on a JWT's `exp`, `nbf` and `iat`."""


class AccessDeniedError(GraphRagMcpError):
    """A caller asked for something this server does not allow (a folder outside the data roots...)."""


class StaticTokenVerifier(TokenVerifier):
    """Accepts exactly one bearer token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access, or None when it is not the configured one."""
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id="static-token", scopes=[])


class JwtTokenVerifier(TokenVerifier):
    """JWT access tokens (RFC 9068) of one OAuth 2.1 issuer, verified with its published keys."""

    def __init__(self, issuer: str, audience: str, jwks_url: str | None) -> None:
        self._issuer, self._audience, self._jwks_url = issuer, audience, jwks_url
        self._keys: Any = None  # jwt.PyJWKClient once the JWKS URL is known

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access, or None when its signature, issuer, audience or expiry is wrong."""
        import jwt

        try:
            claims = await asyncio.to_thread(self._decode, token)
        except (jwt.PyJWTError, OSError, ValueError, KeyError) as error:
            logger.info("access token refused: %s: %s", type(error).__name__, error)  # PyJWT never quotes the token
            return None
        except Exception as error:  # noqa: BLE001 - whatever a malformed token breaks, it is refused (401), never a 500
            logger.warning("access token refused: %s while verifying it", type(error).__name__)
            return None
        scopes = claims.get("scope", claims.get("scp", []))
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims.get("sub", "")),
            scopes=scopes.split() if isinstance(scopes, str) else [str(scope) for scope in scopes],
            expires_at=int(claims["exp"]) + LEEWAY_SECONDS,  # the SDK refuses past expires_at, without leeway
            resource=self._audience,
            subject=claims.get("sub"),
            claims={"iss": claims["iss"]},
        )

    def _decode(self, token: str) -> dict[str, Any]:
        import jwt

        key = self._key_set().get_signing_key_from_jwt(token)
        algorithm = jwt.get_unverified_header(token).get("alg")
        if not _fits(algorithm, key):
            msg = f"the token's algorithm {algorithm} does not fit its key (kid {key.key_id}, type {key.key_type})"
            raise jwt.InvalidAlgorithmError(msg)
        return jwt.decode(
            token, key.key, algorithms=ASYMMETRIC_ALGORITHMS, audience=self._audience, issuer=self._issuer,
            options={"require": ["exp", "iss", "aud"]}, leeway=LEEWAY_SECONDS,
        )

    def _key_set(self) -> Any:
        """The issuer's key set (PyJWKClient caches keys and refetches on an unknown key id)."""
        import jwt

        if self._keys is None:
            self._keys = jwt.PyJWKClient(self._jwks_url or _discover_jwks_url(self._issuer), lifespan=300, timeout=10)
        return self._keys


KEY_TYPES = {"RSA": ("RS", "PS"), "EC": ("ES",), "OKP": ("EdDSA",)}
"""The signature algorithms (by prefix) each JWK key type signs with."""


def _fits(algorithm: object, key: Any) -> bool:
    """Whether a token's `alg` header is one its key's type signs with (an RS256 header on an EC key is not)."""
    return isinstance(algorithm, str) and algorithm.startswith(KEY_TYPES.get(key.key_type, ()))


def _discover_jwks_url(issuer: str) -> str:
    """The `jwks_uri` of the issuer's OAuth (RFC 8414) or OpenID Connect metadata."""
    import httpx

    parts = urlsplit(issuer.rstrip("/"))
    base = f"{parts.scheme}://{parts.netloc}"
    candidates = [f"{base}/.well-known/oauth-authorization-server{parts.path}",
                  f"{base}/.well-known/openid-configuration{parts.path}",
                  f"{issuer.rstrip('/')}/.well-known/openid-configuration"]
    for url in candidates:
        try:
            response = httpx.get(url, timeout=10)
            if response.status_code == 200 and "jwks_uri" in response.json():
                return str(response.json()["jwks_uri"])
        except (httpx.HTTPError, ValueError):
            continue
    msg = f"no jwks_uri in the metadata of issuer {issuer}; set GRAPHRAG_MCP_AUTH_JWKS_URL"
    raise OSError(msg)


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


def authentication(settings: ServerSettings, transport: str) -> tuple[AuthSettings | None, TokenVerifier | None]:
    """The SDK's auth settings and token verifier for these settings; (None, None) when auth is off."""
    token, issuer = settings.auth_token, settings.auth_issuer
    if token is not None and issuer is not None:
        raise ConfigError("set either GRAPHRAG_MCP_AUTH_TOKEN or GRAPHRAG_MCP_AUTH_ISSUER, not both")
    if token is not None:
        if token.get_secret_value() != token.get_secret_value().strip():
            raise ConfigError("GRAPHRAG_MCP_AUTH_TOKEN starts or ends with whitespace (or is only whitespace): set it "
                              "to the token alone, e.g. the output of python -c 'import secrets; "
                              "print(secrets.token_urlsafe(32))'")
        if len(token.get_secret_value()) < 16:
            raise ConfigError("GRAPHRAG_MCP_AUTH_TOKEN is too short: use at least 16 random characters "
                              "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
        auth = AuthSettings.model_validate({"issuer_url": endpoint_url(settings, transport), "resource_server_url": None})
        return auth, StaticTokenVerifier(token.get_secret_value())
    if issuer is None:
        return None, None
    if settings.public_url is None and not is_loopback(settings.host):
        raise ConfigError("OAuth needs the URL clients use for this server: set GRAPHRAG_MCP_PUBLIC_URL "
                          "(e.g. https://mcp.example.com/mcp)")
    resource = endpoint_url(settings, transport)
    auth = AuthSettings.model_validate({
        "issuer_url": issuer, "resource_server_url": resource,
        "required_scopes": settings.auth_required_scopes or None, "validate_token_resource": False,
    })
    return auth, JwtTokenVerifier(issuer, settings.auth_audience or resource, settings.auth_jwks_url)


def check_bind(settings: ServerSettings) -> None:
    """Refuse an HTTP bind on a non-loopback address when no authentication is configured."""
    if not is_loopback(settings.host) and settings.auth_token is None and settings.auth_issuer is None:
        msg = (
            f"refusing to serve HTTP on {settings.host} without authentication: set GRAPHRAG_MCP_AUTH_TOKEN "
            "(a long random secret) or GRAPHRAG_MCP_AUTH_ISSUER (OAuth), or bind --host 127.0.0.1"
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
        origins = [f"http://{host}:*" for host in LOOPBACK_HOSTS] + [f"http://{host}" for host in LOOPBACK_HOSTS]
        if public is not None:
            origins.append(f"{public.scheme}://{public.netloc}")
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def confined_data_path(data_path: str, roots: list[Path]) -> Path:
    """The folder `data_path` names, resolved (symlinks too), if it lies under one of `roots`.

    A relative path starts at the first root. Hidden folders under a root are refused too.
    """
    if not roots:
        msg = ("build_index is off on this server: it may index no folder. The operator allows folders with "
               "`graphrag-mcp serve --data-path DIR` (or --watch DIR) or GRAPHRAG_MCP_DATA_ROOTS")
        raise AccessDeniedError(msg)
    path = Path(data_path)
    resolved = (path if path.is_absolute() else roots[0] / path).resolve()
    for root in (root.resolve() for root in roots):
        if resolved.is_relative_to(root):
            if any(part.startswith(".") for part in resolved.relative_to(root).parts):
                raise AccessDeniedError(f"data path {data_path} is a hidden folder; hidden folders are never indexed")
            return resolved
    allowed = ", ".join(str(root) for root in roots)
    raise AccessDeniedError(f"data path {data_path} is outside the folders this server may index ({allowed}); "
                            "give a folder under one of them")
