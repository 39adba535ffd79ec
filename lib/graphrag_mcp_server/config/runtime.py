"""Process set-up that must precede the first graphrag import."""

import os
from functools import cache


@cache
def prepare_graphrag() -> None:
    """Make graphrag work offline and quiet.

    LiteLLM's bundled cost map instead of a download; litellm imported first so tiktoken finds the
    encodings it bundles; LanceDB's Rust log limited to errors.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LANCEDB_LOG", "error")
    import litellm

    litellm.suppress_debug_info = True
