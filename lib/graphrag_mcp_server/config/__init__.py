"""Configuration: the server's own settings and the graphrag settings.yaml of an index root."""

from graphrag_mcp_server.config.settings import ServerSettings

__all__ = ["ServerSettings"]
