"""Model providers this project adds to graphrag-llm: the offline model, MCP sampling and usage
accounting."""

from typing import Any

OFFLINE_TYPE = "offline"
"""graphrag-llm model type of the offline model (see providers/offline/)."""

OFFLINE_DIMENSIONS = 256
"""Vector size of the offline embedding."""

OFFLINE_EMBEDDING_REVISION = 2
"""The offline embedding's revision, part of what its vectors are made with (built_with.json, the
carried-over and cached vectors): revision 2 weights words by their rarity in general English
(issue 42), so an index's vectors of revision 1 are made again by its next `index`."""


def embedding_revision(model: Any) -> tuple[int, ...]:
    """What an embedding model's vectors are made with besides its settings: the offline
    embedding's revision; nothing for a provider's model (its name says it)."""
    return (OFFLINE_EMBEDDING_REVISION,) if model.type == OFFLINE_TYPE else ()


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
