"""The settings a version was built with, recorded beside its tables: what `index` compares to
decide whether settings.yaml changed since (and what that redoes), and what `stats` names as the
models in use."""

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from graphrag_mcp_server.providers import embedding_revision

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

RECORD = "built_with.json"


class BuiltWith(BaseModel):
    """The settings of a build that its results depend on."""

    completion: dict[str, str]
    """graphrag step -> provider/model it called."""
    embedding: str
    vector_size: int
    chunking: dict[str, object]
    entity_types: list[str]
    data_path: str | None = None
    """The folder the documents were read from (tune's default when the root's input/ is empty);
    never compared by `changes`: the same documents may move."""


def built_with(config: "GraphRagConfig") -> BuiltWith:
    """The settings of `config` that a build's results depend on."""

    def named(model_id: str, embedding: bool = False) -> str:
        model = (
            config.get_embedding_model_config(model_id)
            if embedding
            else config.get_completion_model_config(model_id)
        )
        revisions = embedding_revision(model) if embedding else ()
        return f"{model.model_provider}/{model.model}" + "".join(
            f" (revision {number})" for number in revisions
        )

    steps = {
        "extract_graph": config.extract_graph.completion_model_id,
        "summarize_descriptions": config.summarize_descriptions.completion_model_id,
        "community_reports": config.community_reports.completion_model_id,
    }
    return BuiltWith(
        completion={step: named(model_id) for step, model_id in steps.items()},
        embedding=named(config.embed_text.embedding_model_id, embedding=True),
        vector_size=config.vector_store.vector_size,
        chunking=config.chunking.model_dump(mode="json"),
        entity_types=list(config.extract_graph.entity_types),
        data_path=config.input_storage.base_dir,
    )


def record(version: Path, config: "GraphRagConfig") -> None:
    """Write what `config` builds with into the version."""
    (version / RECORD).write_text(built_with(config).model_dump_json(indent=1), encoding="utf-8")


def recorded(version: Path | None) -> BuiltWith | None:
    """What a version was built with; None for a version built before this was recorded (or by
    graphrag)."""
    path = None if version is None else version / RECORD
    if path is None or not path.is_file():
        return None
    try:
        return BuiltWith.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except ValueError:
        return None


def changes(before: BuiltWith, now: BuiltWith) -> list[str]:
    """Each setting that differs, with what it makes the next build redo."""
    found = []
    moved: dict[tuple[str | None, str], list[str]] = {}
    for step, model in now.completion.items():
        if before.completion.get(step) != model:
            moved.setdefault((before.completion.get(step), model), []).append(step)
    for (was, model), steps in moved.items():
        found.append(
            f"{', '.join(steps)} {'calls' if len(steps) == 1 else 'call'} {model} (was {was}): "
            f"{'its' if len(steps) == 1 else 'their'} results are computed again"
        )
    if before.embedding != now.embedding or before.vector_size != now.vector_size:
        found.append(
            f"the embedding model is {now.embedding} with vectors of {now.vector_size} "
            f"numbers (was {before.embedding}, {before.vector_size}): every vector is "
            "computed again"
        )
    if before.chunking != now.chunking:
        found.append(
            "chunking changed: documents are cut again, and what their new text units "
            "hold is extracted"
        )
    if before.entity_types != now.entity_types:
        found.append(
            f"entity types are {', '.join(now.entity_types)} (were "
            f"{', '.join(before.entity_types)}): every text unit is extracted again"
        )
    return found
