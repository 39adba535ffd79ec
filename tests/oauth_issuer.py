"""A local OAuth 2.1 authorization server for tests: an RSA key (kid k1, RS256) and an EC key (kid
k2, ES256), their JWKS and RFC 8414 metadata on loopback, and access tokens signed with either."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa


class Issuer:
    """An authorization server on a free loopback port (stop it with `http.shutdown()`)."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        rsa_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        ec_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec_key.public_key()))
        keys = [{**rsa_jwk, "kid": "k1", "alg": "RS256"}, {**ec_jwk, "kid": "k2", "alg": "ES256"}]
        documents: dict[str, bytes] = {"/jwks.json": json.dumps({"keys": keys}).encode()}
        self.key_set_requests = 0
        """How many times the key set (JWKS) was asked for."""
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                issuer.key_set_requests += self.path == "/jwks.json"
                body = documents.get(self.path)
                self.send_response(200 if body else 404)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(body or b"{}")

            def log_message(self, *args: object) -> None:
                """Quiet."""

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_port}"
        documents["/.well-known/oauth-authorization-server"] = json.dumps(
            {"issuer": self.url, "jwks_uri": f"{self.url}/jwks.json"}
        ).encode()
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def claims(self, audience: str, **claims: object) -> dict[str, object]:
        """An access token's claims for `audience`, with `claims` overriding the defaults (None
        leaves one out)."""
        now = int(time.time())
        body = {
            "iss": self.url,
            "aud": audience,
            "sub": "user-1",
            "client_id": "client-1",
            "iat": now,
            "exp": now + 600,
            "scope": "graphrag:read",
            **claims,
        }
        return {name: value for name, value in body.items() if value is not None}

    def token(self, audience: str, **claims: object) -> str:
        """A valid RS256 access token (kid k1) for `audience`, with these claims overriding the
        defaults."""
        return jwt.encode(
            self.claims(audience, **claims), self.key, algorithm="RS256", headers={"kid": "k1"}
        )
