"""The server's own settings (GRAPHRAG_MCP_ prefix, .env); the index's config is graphrag's
settings.yaml."""

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class AnswerModel(StrEnum):
    """Who writes the searches' answers: the index's completion model, or each client's own through
    MCP sampling."""

    INDEX = "index"
    SAMPLING = "sampling"


CommaList = Annotated[list[str], NoDecode]
"""A list read from the environment as comma-separated values (`a,b,c`)."""


class ServerSettings(BaseSettings):
    """Settings of graphrag-mcp itself, read from the environment and ./.env."""

    model_config = SettingsConfigDict(env_prefix="GRAPHRAG_MCP_", env_file=".env", extra="ignore")

    index_path: Path = Path("graphrag_index")
    """Index root: settings.yaml, prompts/, output/ (parquet tables and LanceDB), cache/, logs/."""

    storage: str | None = None
    """Blob location of the index (az://CONTAINER/PREFIX; credentials from AZURE_STORAGE_*): `index`
    publishes each version there, `serve` follows it, and index_path is then each host's local copy
    (docs/deployment.md)."""

    storage_poll_seconds: float = Field(default=2.0, gt=0)
    """With storage: how often a server reads the current version's pointer."""

    index_poll_seconds: float = Field(default=2.0, gt=0)
    """How often a server looks whether the index on disk changed (an `index` run beside it), to
    load it and tell listening clients without waiting for a request."""

    storage_grace_seconds: float = Field(default=600.0, ge=0)
    """With storage: how long a version neither current nor previous stays before an indexer deletes
    it."""

    stateless: bool = False
    """Streamable HTTP without sessions: any replica answers any request (no sampling)."""

    log_level: str = "WARNING"
    """Level of the server's own log lines, written to stderr."""

    host: str = "127.0.0.1"
    """Address the HTTP transports bind. A non-loopback address needs authentication."""

    port: int = Field(default=8080, ge=0, le=65535)
    """Port of the HTTP transports."""

    workers: int = Field(default=1, ge=1, le=64)
    """Processes serving streamable HTTP. Above 1, searches run in parallel, one per worker;
    sessions are then stateless (no sampling) and the server is read-only (the index changes through
    --watch or `index`)."""

    build_wait_seconds: float = 20.0
    """How long a build_index call waits for its job before returning the job id instead."""

    watch_settle_seconds: float = 1.0
    """With --watch: how long the data folder must be quiet before an update runs."""

    watch_retry_seconds: float = Field(default=30.0, gt=0)
    """With --watch: when an update fails (the provider failed, the version was not published), how
    long until it is tried again without a change; the wait doubles after each failure, up to 10
    minutes."""

    llm: AnswerModel = AnswerModel.INDEX
    """Model for search answers: `index` (settings.yaml's completion model) or `sampling` (the
    calling client's)."""

    # Failing model providers (docs/tools.md#errors)
    search_timeout_seconds: float = Field(default=45.0, gt=0, le=3600)
    """A search with no answer after this long returns the provider's last error (a search's
    timeout_seconds wins); below the 60 s many MCP clients wait, so they read the reason."""

    provider_probe_seconds: float = Field(default=30.0, gt=0)
    """How long the check of each model before an index build may take (one token; one small
    extraction)."""

    provider_failure_limit: int = Field(default=5, ge=1)
    """Consecutive failed model calls (after retries) that stop an index build."""

    # Authentication of the HTTP transports (docs/security.md)
    auth_token: SecretStr | None = None
    """Static bearer token every HTTP request must carry (`Authorization: Bearer ...`)."""

    auth_issuer: str | None = Field(default=None, pattern=r"^https?://")
    """OAuth 2.1 authorization server whose JWT access tokens the server accepts (the tokens' `iss`,
    exactly)."""

    auth_jwks_url: str | None = Field(default=None, pattern=r"^https?://")
    """JWKS of the issuer's signing keys; default: the `jwks_uri` of the issuer's metadata."""

    auth_audience: str | None = None
    """Audience (`aud`) the access tokens must carry; default: public_url."""

    auth_required_scopes: CommaList = []
    """Scopes every access token must grant (comma-separated)."""

    public_url: str | None = Field(default=None, pattern=r"^https?://")
    """URL clients reach the MCP endpoint at (e.g. https://mcp.example.com/mcp): the OAuth resource
    identifier; default http://HOST:PORT/mcp (or /sse)."""

    allowed_hosts: CommaList = []
    """Host header values accepted (`name`, `name:port` or `name:*`); default: loopback names and
    public_url's host."""

    allowed_origins: CommaList = []
    """Origin header values accepted from browsers; default: loopback origins and public_url's
    origin."""

    # What remote callers may index
    data_roots: Annotated[list[Path], NoDecode] = []
    """Folders build_index may index (comma-separated); default: the folder of serve --watch /
    --data-path."""

    read_only: bool = False
    """No build_index or cancel_index_job tools: the index changes only through the operator."""

    write_path: Path | None = None
    """Folder where the add_document, update_document and delete_document tools write Markdown
    documents (serve --write-path); none: those tools are absent. Never offered when read-only."""

    write_settle_seconds: float = Field(default=0.25, ge=0)
    """How soon after one document written through MCP the next must come to join its index job.
    Shorter than the watcher's window: a write through MCP is whole when made (an editor's save can
    come in steps), so the window only gathers a client's calls in a burst."""

    write_max_document_bytes: int = Field(default=200_000, ge=1)
    """Largest document (UTF-8 bytes of its text) one add_document or update_document may write."""

    write_bytes_per_minute: int = Field(default=1_000_000, ge=1)
    """Bytes of documents one client (its identity) may write in any minute."""

    max_job_documents: int = Field(default=10_000, ge=1)
    """Most documents one build_index job may read; larger folders are refused before anything
    runs."""

    max_job_bytes: int = Field(default=1_000_000_000, ge=1)
    """Most bytes of documents one build_index job may read."""

    # Bounds on requests
    max_query_chars: int = Field(default=4_000, ge=1)
    """Longest query (and prompt argument) accepted, in characters."""

    max_request_bytes: int = Field(default=1_048_576, ge=1024)
    """Largest HTTP request body accepted."""

    max_sessions: int = Field(default=100, ge=1)
    """Most open streamable HTTP sessions (or SSE streams) of all clients; one more is answered 503
    with Retry-After."""

    max_sessions_per_client: int = Field(default=10, ge=1)
    """Most open sessions (or SSE streams) of one client (its verified identity:
    docs/security.md#who-a-caller-is); one more is answered 429 with Retry-After, so one busy client
    cannot take every session."""

    max_calls_per_client: int = Field(default=1, ge=1)
    """Tool calls of one client (its identity, so each of its sessions) run at once; more wait their
    turn. One: a caller's searches then slowed another's 1.4-2.3x on two cores (two: about 4x;
    docs/security.md)."""

    max_queued_calls_per_client: int = Field(default=8, ge=0)
    """Tool calls of one client waiting for a turn; one more is answered at once with a JSON-RPC
    error."""

    trusted_proxies: CommaList = []
    """Addresses of reverse proxies whose X-Forwarded-For / X-Forwarded-Proto headers are believed
    (uvicorn's forwarded_allow_ips); none by default, so a header never changes who a caller is."""

    max_connections: int = Field(default=1000, ge=1)
    """Most open HTTP connections and running requests of one process (uvicorn's limit_concurrency):
    503 beyond."""

    header_timeout_seconds: float = Field(default=10.0, gt=0)
    """A connection that has not sent a request's headers this long after opening (or after its last
    answer) is closed, so connections that never finish their headers do not pile up."""

    session_idle_seconds: float = Field(default=60.0, gt=0)
    """A streamable HTTP session with no request for this long is closed."""

    @field_validator(
        "auth_required_scopes",
        "allowed_hosts",
        "allowed_origins",
        "data_roots",
        "trusted_proxies",
        mode="before",
    )
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value
