"""Model providers this project adds to graphrag-llm: the offline model and usage accounting."""


def register_providers() -> None:
    """Register the offline model and the usage-tracking metrics stores with graphrag-llm."""
    from graphrag_mcp_server.providers.offline import register_offline_models
    from graphrag_mcp_server.providers.usage import register_usage_stores

    register_offline_models()
    register_usage_stores()
