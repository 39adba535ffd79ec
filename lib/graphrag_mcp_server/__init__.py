"""graphrag-mcp-server: GraphRAG knowledge of your own corpus for MCP clients."""

__version__ = "0.1.0"
