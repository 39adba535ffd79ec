"""The server's own settings (GRAPHRAG_MCP_ prefix, .env); the index's config is graphrag's settings.yaml."""

from enum import StrEnum
from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict


class AnswerModel(StrEnum):
    """Who writes the searches' answers: the index's completion model, or each client's own through MCP sampling."""

    INDEX = "index"
    SAMPLING = "sampling"


class ServerSettings(BaseSettings):
    """Settings of graphrag-mcp itself, read from the environment and ./.env."""

    model_config = SettingsConfigDict(env_prefix="GRAPHRAG_MCP_", env_file=".env", extra="ignore")

    index_path: Path = Path("graphrag_index")
    """Index root: settings.yaml, prompts/, output/ (parquet tables and LanceDB), cache/, logs/."""

    log_level: str = "WARNING"
    """Level of the server's own log lines, written to stderr."""

    host: str = "127.0.0.1"
    """Address the HTTP transports bind."""

    port: int = 8080
    """Port of the HTTP transports."""

    build_wait_seconds: float = 20.0
    """How long a build_index call waits for its job before returning the job id instead."""

    watch_settle_seconds: float = 1.0
    """With --watch: how long the data folder must be quiet before an update runs."""

    llm: AnswerModel = AnswerModel.INDEX
    """Model for search answers: `index` (settings.yaml's completion model) or `sampling` (the calling client's)."""
