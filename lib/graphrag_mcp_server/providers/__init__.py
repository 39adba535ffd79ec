"""Model providers this project adds to graphrag-llm: the offline model, MCP sampling and usage
accounting."""

OFFLINE_TYPE = "offline"
"""graphrag-llm model type of the offline model (see providers/offline/)."""

OFFLINE_DIMENSIONS = 256
"""Vector size of the offline embedding."""


def register_providers() -> None:
    """Register the offline models, the retry policy, the failed-request recorder and the
    usage-tracking metrics stores with graphrag-llm.

    The sampling model registers itself where it is chosen (sampling_config), so that only the
    server imports the MCP SDK.
    """
    from graphrag_mcp_server.providers.failures import record_failed_requests
    from graphrag_mcp_server.providers.offline import register_offline_models
    from graphrag_mcp_server.providers.retry import register_retry_policy
    from graphrag_mcp_server.providers.usage import register_usage_stores

    register_offline_models()
    register_retry_policy()
    record_failed_requests()
    register_usage_stores()
