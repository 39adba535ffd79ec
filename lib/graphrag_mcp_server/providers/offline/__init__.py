"""Offline, deterministic stand-ins for GraphRAG's completion and embedding models.

This is NOT a language model. ``OfflineCompletion`` recognises which GraphRAG
prompt it is answering (graph extraction, description summaries, community
reports, claims, and the local, basic, global and DRIFT search prompts) by
stable marker phrases, and answers in exactly the format GraphRAG parses,
using only extractive heuristics: capitalised names, sentence co-occurrence and
word overlap with the question. ``OfflineEmbedding`` returns hashed
bag-of-words vectors. Nothing leaves the machine, no key is needed, and the
same input always gives the same output.

It exists to try the server without an API key and to test it. Answers are
stitched together from the indexed text; they are not reasoning or prose.

Both models run through graphrag-llm's middleware pipeline, like
``LiteLLMCompletion`` and ``LiteLLMEmbedding``, so GraphRAG's cache, metrics,
retries and rate limiting behave as with a real provider. After
``register_offline_models()``, select them in settings.yaml::

    completion_models:
      default_completion_model:
        type: offline
        model_provider: offline
        model: offline-extractive
    embedding_models:
      default_embedding_model:
        type: offline
        model_provider: offline
        model: offline-hashing
        dimensions: 256       # optional, DEFAULT_OFFLINE_DIMENSIONS
    vector_store:
      vector_size: 256        # must equal dimensions
"""

from graphrag_llm.completion import register_completion
from graphrag_llm.embedding import register_embedding

from graphrag_mcp_server.providers import OFFLINE_DIMENSIONS as DEFAULT_OFFLINE_DIMENSIONS
from graphrag_mcp_server.providers import OFFLINE_TYPE
from graphrag_mcp_server.providers.offline.completion import (
    OfflineCompletion,
    async_items,
    completion_response,
    stream_chunks,
)
from graphrag_mcp_server.providers.offline.embedding import OfflineEmbedding
from graphrag_mcp_server.providers.offline.request import message_text

__all__ = [
    "DEFAULT_OFFLINE_DIMENSIONS",
    "OFFLINE_TYPE",
    "OfflineCompletion",
    "OfflineEmbedding",
    "async_items",
    "completion_response",
    "message_text",
    "register_offline_models",
    "stream_chunks",
]


def register_offline_models() -> None:
    """Register both offline models under ``type: offline``; safe to repeat."""
    register_completion(OFFLINE_TYPE, OfflineCompletion, scope="singleton")
    register_embedding(OFFLINE_TYPE, OfflineEmbedding, scope="singleton")
