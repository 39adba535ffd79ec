"""Who calls the server over HTTP: bearer tokens verified with the SDK's own machinery, and the
identity every per-client limit counts by.

`AuthSettings` and a `TokenVerifier` are checked by the SDK's bearer middleware (401 with
`WWW-Authenticate` when the token is missing or refused). Two verifiers: one static token
(constant-time comparison), or JWT access tokens of an OAuth 2.1 authorization server, checked
against its JWKS (signature, issuer, audience, expiry).
"""

import asyncio
import hashlib
import hmac
import logging
import time
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from starlette.types import Scope

from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import ConfigError
from graphrag_mcp_server.server.access import endpoint_url, is_loopback

logger = logging.getLogger(__name__)

ASYMMETRIC_ALGORITHMS = [
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
]
"""JWT signature algorithms accepted: public-key ones only (never `none`, never a shared HMAC
secret)."""

LEEWAY_SECONDS = 30
"""Clock skew allowed on a JWT's `exp`, `nbf` and `iat`."""

STATIC_CLIENT = "static-token"
"""The client id of the static token's callers."""


class StaticTokenVerifier(TokenVerifier):
    """Accepts exactly one bearer token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access, or None when it is not the configured one."""
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id=STATIC_CLIENT, scopes=[])


def identity_of(scope: Scope) -> str:
    """Who a request's caller is, decided after authentication, for every per-client limit: a JWT's
    subject (else its client id), a digest of the static token's value (the scheme is the SDK's to
    parse), or, only on a server without authentication, the peer address (uvicorn's, which trusts
    X-Forwarded-For only from GRAPHRAG_MCP_TRUSTED_PROXIES). A request the SDK refused (no user)
    counts by its address."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        token = user.access_token
        if token.client_id == STATIC_CLIENT:
            return f"token:{hashlib.sha256(token.token.encode()).hexdigest()[:16]}"
        return f"sub:{token.subject}" if token.subject else f"client:{token.client_id}"
    return f"address:{scope['client'][0]}" if scope.get("client") else "address:"


class JwtTokenVerifier(TokenVerifier):
    """JWT access tokens (RFC 9068) of one OAuth 2.1 issuer, verified with its published keys.
    Verification runs on the event loop (one signature check); only a fetch of the keys leaves it,
    as rarely as IssuerKeys allows."""

    def __init__(self, issuer: str, audience: str, jwks_url: str | None) -> None:
        self._issuer, self._audience = issuer, audience
        self._keys = IssuerKeys(issuer, jwks_url)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access, or None when its signature, issuer, audience or expiry is wrong."""
        import jwt

        try:
            claims = await self._decode(token)
        except (jwt.PyJWTError, OSError, ValueError, KeyError) as error:
            # PyJWT never quotes it
            logger.info("access token refused: %s: %.200s", type(error).__name__, error)
            return None
        except Exception as error:  # noqa: BLE001 - whatever a malformed token breaks, it is refused (401), never a 500
            logger.warning("access token refused: %s while verifying it", type(error).__name__)
            return None
        scopes = claims.get("scope", claims.get("scp", []))
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or claims.get("sub", "")),
            scopes=scopes.split() if isinstance(scopes, str) else [str(scope) for scope in scopes],
            expires_at=int(claims["exp"])
            + LEEWAY_SECONDS,  # the SDK refuses past expires_at, without leeway
            resource=self._audience,
            subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
            claims={"iss": claims["iss"]},
        )

    async def _decode(self, token: str) -> dict[str, Any]:
        import jwt

        header = jwt.get_unverified_header(token)
        key = await self._keys.key(header.get("kid"))
        if key is None:
            raise jwt.InvalidKeyError(
                f"no signing key of the issuer has kid {str(header.get('kid'))[:64]!r}"
            )
        algorithm = header.get("alg")
        if not _fits(algorithm, key):
            msg = (
                f"the token's algorithm {algorithm} does not fit its key (kid {key.key_id}, type "
                f"{key.key_type})"
            )
            raise jwt.InvalidAlgorithmError(msg)
        return jwt.decode(
            token,
            key.key,
            algorithms=ASYMMETRIC_ALGORITHMS,
            audience=self._audience,
            issuer=self._issuer,
            options={"require": ["exp", "iss", "aud"]},
            leeway=LEEWAY_SECONDS,
        )


class IssuerKeys:
    """The issuer's signing keys by key id, fetched off the event loop one fetch at a time: again
    when they are KEYS_LIFESPAN old, and for a key id not among them at most once per
    KID_RETRY_SECONDS for that id and once per REFETCH_SECONDS in all. Tokens naming unknown ids
    therefore cost a dict lookup each, and at most FETCH_WAITERS requests naming an unknown id wait
    for a fetch (the others are refused at once)."""

    KEYS_LIFESPAN, REFETCH_SECONDS, KID_RETRY_SECONDS, FETCH_WAITERS = 300.0, 10.0, 60.0, 8

    def __init__(self, issuer: str, jwks_url: str | None) -> None:
        self._issuer, self._jwks_url = issuer, jwks_url
        self._keys: dict[str | None, Any] = {}
        self._fetched_at = -float("inf")
        self._tried: dict[str | None, float] = {}
        self._fetch: asyncio.Task[None] | None = None
        self._waiting = 0

    async def key(self, kid: str | None) -> Any:
        """The key named `kid` (None: the only key), fetching the key set when allowed; None when
        unknown. Keys past their lifespan are still used while a fetch renews them."""
        now = time.monotonic()
        since = now - self._fetched_at
        if since >= self.KEYS_LIFESPAN or (not self._keys and since >= self.REFETCH_SECONDS):
            self._start_fetch()
        if kid in self._keys:
            return self._keys[kid]
        # the first keys: every request waits for them
        if not self._keys and self._fetch is not None:
            await asyncio.shield(self._fetch)
        elif self._may_retry(kid, now) and self._waiting < self.FETCH_WAITERS:
            fetch = self._start_fetch()
            self._waiting += 1
            try:
                await asyncio.shield(fetch)
            finally:
                self._waiting -= 1
        return self._keys.get(kid)

    def _start_fetch(self) -> "asyncio.Task[None]":
        """The fetch of the keys under way, started if none is."""
        if self._fetch is None:
            self._fetch = asyncio.ensure_future(self._fetched())
        return self._fetch

    def _may_retry(self, kid: str | None, now: float) -> bool:
        """Whether an unknown key id may make the keys be fetched again now (and note that it
        did)."""
        if (
            now - self._fetched_at < self.REFETCH_SECONDS
            or now - self._tried.get(kid, -float("inf")) < self.KID_RETRY_SECONDS
        ):
            return False
        if len(self._tried) > 4096:  # forged ids never fill the memory
            self._tried.clear()
        self._tried[kid] = now
        return True

    async def _fetched(self) -> None:
        try:
            keys = await asyncio.to_thread(self._load)
            self._keys = {**keys, None: next(iter(keys.values()))} if len(keys) == 1 else keys
        except Exception as error:  # noqa: BLE001 - a failed fetch leaves the keys as they were; tokens are refused
            logger.warning(
                "cannot fetch the issuer's keys: %s: %.200s", type(error).__name__, error
            )
        finally:
            self._fetched_at, self._fetch = time.monotonic(), None

    def _load(self) -> dict[str | None, Any]:
        import httpx
        import jwt

        response = httpx.get(self._jwks_url or _discover_jwks_url(self._issuer), timeout=10)
        response.raise_for_status()
        try:
            keys = jwt.PyJWKSet.from_dict(response.json()).keys
        except jwt.PyJWTError as error:
            raise ValueError(str(error)) from error
        return {key.key_id: key for key in keys if key.public_key_use in ("sig", None)}


KEY_TYPES = {"RSA": ("RS", "PS"), "EC": ("ES",), "OKP": ("EdDSA",)}
"""The signature algorithms (by prefix) each JWK key type signs with."""


def _fits(algorithm: object, key: Any) -> bool:
    """Whether a token's `alg` header is one its key's type signs with (an RS256 header on an EC key
    is not)."""
    return isinstance(algorithm, str) and algorithm.startswith(KEY_TYPES.get(key.key_type, ()))


def _discover_jwks_url(issuer: str) -> str:
    """The `jwks_uri` of the issuer's OAuth (RFC 8414) or OpenID Connect metadata."""
    import httpx

    parts = urlsplit(issuer.rstrip("/"))
    base = f"{parts.scheme}://{parts.netloc}"
    candidates = [
        f"{base}/.well-known/oauth-authorization-server{parts.path}",
        f"{base}/.well-known/openid-configuration{parts.path}",
        f"{issuer.rstrip('/')}/.well-known/openid-configuration",
    ]
    for url in candidates:
        try:
            response = httpx.get(url, timeout=10)
            if response.status_code == 200 and "jwks_uri" in response.json():
                return str(response.json()["jwks_uri"])
        except (httpx.HTTPError, ValueError):
            continue
    msg = f"no jwks_uri in the metadata of issuer {issuer}; set GRAPHRAG_MCP_AUTH_JWKS_URL"
    raise OSError(msg)


def authentication(
    settings: ServerSettings, transport: str
) -> tuple[AuthSettings | None, TokenVerifier | None]:
    """The SDK's auth settings and token verifier for these settings; (None, None) when auth is
    off."""
    token, issuer = settings.auth_token, settings.auth_issuer
    if token is not None and issuer is not None:
        raise ConfigError(
            "set either GRAPHRAG_MCP_AUTH_TOKEN or GRAPHRAG_MCP_AUTH_ISSUER, not both"
        )
    if token is not None:
        if token.get_secret_value() != token.get_secret_value().strip():
            raise ConfigError(
                "GRAPHRAG_MCP_AUTH_TOKEN starts or ends with whitespace (or is only whitespace): "
                "set it to the token alone, e.g. the output of python -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'"
            )
        if any(character.isspace() for character in token.get_secret_value()):
            raise ConfigError(
                "GRAPHRAG_MCP_AUTH_TOKEN contains whitespace (a space or a line break inside it): "
                "no request could carry it; set it to the token alone, e.g. the output of python "
                "-c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        if len(token.get_secret_value()) < 16:
            raise ConfigError(
                "GRAPHRAG_MCP_AUTH_TOKEN is too short: use at least 16 random characters "
                "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')"
            )
        auth = AuthSettings.model_validate(
            {"issuer_url": endpoint_url(settings, transport), "resource_server_url": None}
        )
        return auth, StaticTokenVerifier(token.get_secret_value())
    if issuer is None:
        return None, None
    if settings.public_url is None and not is_loopback(settings.host):
        raise ConfigError(
            "OAuth needs the URL clients use for this server: set GRAPHRAG_MCP_PUBLIC_URL "
            "(e.g. https://mcp.example.com/mcp)"
        )
    resource = endpoint_url(settings, transport)
    auth = AuthSettings.model_validate(
        {
            "issuer_url": issuer,
            "resource_server_url": resource,
            "required_scopes": settings.auth_required_scopes or None,
            "validate_token_resource": False,
        }
    )
    return auth, JwtTokenVerifier(
        issuer, settings.auth_audience or resource, settings.auth_jwks_url
    )
