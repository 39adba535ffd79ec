"""Process set-up that must precede the first graphrag import, and the first model call."""

import hashlib
import os
from functools import cache
from typing import Any


@cache
def prepare_graphrag() -> None:
    """Make graphrag work offline, quiet and fast.

    LiteLLM's bundled cost map instead of a download (should LiteLLM be imported); LanceDB's Rust
    log limited to errors; LLM cache keys hashed from libyaml. Imports no model library: reading
    an index's config and tables needs none (see prepare_models).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LANCEDB_LOG", "error")
    _hash_cache_keys_with_libyaml()


@cache
def prepare_models() -> None:
    """Import LiteLLM (seconds), quieted, before any model or tokenizer is made.

    graphrag-llm imports it anyway; importing it first points tiktoken at the encodings LiteLLM
    bundles (TIKTOKEN_CACHE_DIR), so no tokenizer downloads one.
    """
    prepare_graphrag()
    import litellm

    litellm.suppress_debug_info = True


def _hash_cache_keys_with_libyaml() -> None:
    """Serialize LLM cache keys with libyaml's emitter instead of PyYAML's pure-Python one.

    graphrag hashes every model request's arguments, prompts included, as YAML to find it in its
    cache; the pure-Python emitter takes about 25 ms per prompt, most of an unchanged document's
    cost in an update. libyaml writes the same YAML but folds long lines elsewhere, so its keys are
    stable between runs but differ from those of the `graphrag` CLI on the same cache.
    """
    import yaml

    if not yaml.__with_libyaml__:
        return
    import graphrag_cache.cache_key

    graphrag_cache.cache_key.hash_data = hash_with_libyaml


def hash_with_libyaml(data: Any) -> str:
    """SHA-256 of `data` dumped as YAML by libyaml (graphrag_common.hasher.hash_data's contract)."""
    import yaml
    from graphrag_common.hasher.hasher import make_yaml_serializable

    try:
        text = yaml.dump(data, sort_keys=True, Dumper=yaml.CDumper)
    except TypeError:
        text = yaml.dump(make_yaml_serializable(data), sort_keys=True, Dumper=yaml.CDumper)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
