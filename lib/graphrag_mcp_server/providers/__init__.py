"""Model providers this project adds to graphrag-llm: the offline model, MCP sampling and usage accounting."""


def register_providers() -> None:
    """Register the offline and sampling models, the retry policy and the usage-tracking metrics stores
    with graphrag-llm."""
    from graphrag_mcp_server.providers.offline import register_offline_models
    from graphrag_mcp_server.providers.retry import register_retry_policy
    from graphrag_mcp_server.providers.sampling import register_sampling_model
    from graphrag_mcp_server.providers.usage import register_usage_stores

    register_offline_models()
    register_sampling_model()
    register_retry_policy()
    register_usage_stores()
