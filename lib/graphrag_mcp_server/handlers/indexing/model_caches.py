"""graphrag's LLM cache kept per model: a step whose model changed gets that model's cache, not the
old one's.

graphrag 3.3 keys a cached answer by the request's messages and arguments alone: the model name,
base URL and key are bound inside graphrag-llm's completion, so after settings.yaml names another
model every unchanged prompt is answered from the old model's cache, and nothing is redone. Each
step caches in its own folder (`cache/<model_instance_name>`: extract_graph, summarize_descriptions,
community_reporting, text_embedding); when a step's model changed since the served version was
built, its folder is set aside under the old model's name
(`cache/extract_graph@openai_gpt-4.1-mini`) and the new model's folder, kept from an earlier switch,
put in its place.
"""

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.built_with import BuiltWith

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig


def caches_follow_models(
    config: "GraphRagConfig", root: Path, before: BuiltWith, now: BuiltWith
) -> list[str]:
    """Swap in each changed step's cache folder for its new model; the folders swapped, as `old ->
    new` lines."""
    storage = config.cache.storage
    if storage is None or storage.type != "file":
        return []
    base = root / (storage.base_dir or "cache")
    folders = {
        "extract_graph": config.extract_graph.model_instance_name,
        "summarize_descriptions": config.summarize_descriptions.model_instance_name,
        "community_reports": config.community_reports.model_instance_name,
    }
    changed = [
        (folders[step], before.completion.get(step), model)
        for step, model in now.completion.items()
        if step in folders and before.completion.get(step) != model
    ]
    if before.embedding != now.embedding:
        changed.append((config.embed_text.model_instance_name, before.embedding, now.embedding))
    swapped = []
    for folder, old, new in changed:
        current = base / folder
        if current.is_dir() and old is not None:
            # older answers of the same model
            shutil.rmtree(_kept(base, folder, old), ignore_errors=True)
            current.rename(_kept(base, folder, old))
        if (kept := _kept(base, folder, new)).is_dir() and not current.exists():
            kept.rename(current)
        swapped.append(f"{folder}: {old} -> {new}")
    return swapped


def _kept(base: Path, folder: str, model: str) -> Path:
    """Where a step's cache for `model` waits while another model is in use."""
    return base / f"{folder}@{re.sub(r'[^A-Za-z0-9._-]', '_', model)}"
