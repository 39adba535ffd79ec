"""Process set-up that must precede the first graphrag import, and the first model call."""

import os
from functools import cache


@cache
def prepare_graphrag() -> None:
    """Make graphrag work offline, quiet and fast.

    LiteLLM's bundled cost map instead of a download (should LiteLLM be imported); LanceDB's Rust
    log limited to errors. Imports no model library: reading an index's config and tables needs none
    (see prepare_models).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LANCEDB_LOG", "error")


@cache
def prepare_models() -> None:
    """Import LiteLLM (seconds), quieted, before any model or tokenizer is made; hash LLM cache keys faster.

    graphrag-llm imports it anyway; importing it first points tiktoken at the encodings LiteLLM
    bundles (TIKTOKEN_CACHE_DIR), so no tokenizer downloads one.
    """
    prepare_graphrag()
    _hash_cache_keys_faster()
    import litellm

    litellm.suppress_debug_info = True


def _hash_cache_keys_faster() -> None:
    """Compute graphrag's LLM cache keys with config.cache_keys: the same keys as the `graphrag` CLI
    (so either reuses the other's cache), about 5 times faster than PyYAML's pure-Python emitter."""
    import graphrag_cache.cache_key

    from graphrag_mcp_server.config.cache_keys import hash_like_graphrag

    graphrag_cache.cache_key.hash_data = hash_like_graphrag
