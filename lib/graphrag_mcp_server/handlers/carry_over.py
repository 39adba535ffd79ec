"""Work carried over from the previous version where its input is unchanged.

An update runs graphrag's whole pipeline over every current document (handlers/index.py), so its
result is a rebuild by construction. Four steps of it are pure functions of their input that cost
time for every record although an edit touches a few:

- graph extraction of a text unit and the summary of an entity's or relationship's descriptions
  (LLM calls, answered by graphrag's cache when unchanged, but each lookup hashes the prompt and
  reads a file);
- the context string of a community report (`sort_context`, which tokenises every record of the
  community: most of an update's pipeline time on a 300-document corpus before this module);
- the embedding of a text (text units, entity descriptions, reports).

Each version stores what these steps produced, by a hash of their whole input, in
`carried_over.parquet`; the next run takes from there every result whose input is unchanged and
computes the others with graphrag's own functions. Stored results are used only while the models
are configured as before (`fingerprint`). A failed extraction (graphrag returns no entities) is
never stored, so a provider fault is retried.
"""

import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.tokenizer import Tokenizer

TABLE = "carried_over.parquet"
logger = logging.getLogger(__name__)


@dataclass
class Memo:
    """Results by input hash: the previous version's, and those this run used (stored for the next)."""

    previous: dict[str, Any] = field(default_factory=dict)
    used: dict[str, Any] = field(default_factory=dict)
    computed: int = 0

    def get(self, key: str) -> Any:
        """The stored result for `key` (now counted as used), or None."""
        found = self.used.get(key)
        if found is None:
            found = self.previous.get(key)
        if found is not None:
            self.used[key] = found
        return found

    @property
    def reused(self) -> int:
        """Results this run took from the previous version."""
        return len(self.used) - self.computed

    def put(self, key: str, result: Any) -> None:
        """Remember a result computed by this run."""
        self.used[key] = result
        self.computed += 1


class Step(StrEnum):
    """The steps whose results are carried over (the `step` column of the table)."""

    EXTRACTION = "extraction"
    SUMMARY = "summary"
    REPORT_CONTEXT = "report_context"
    EMBEDDING = "embedding"


CarriedOver = dict[Step, Memo]
_current: ContextVar[CarriedOver | None] = ContextVar("carried_over", default=None)


def _hash(*parts: Any) -> str:
    text = json.dumps(parts, default=str, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sort_context_batch(community_df: "pd.DataFrame", tokenizer: "Tokenizer", max_context_tokens: int,
                        parallel: bool = False) -> "pd.DataFrame":
    """graphrag's `parallel_sort_context_batch`, taking unchanged contexts from the previous version."""
    import graphrag.data_model.schemas as schemas
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import parallel_sort_context_batch

    carried = _current.get()
    if carried is None:
        return parallel_sort_context_batch(community_df, tokenizer, max_context_tokens, parallel)
    found = []
    for records in community_df[schemas.ALL_CONTEXT]:
        key = _hash(max_context_tokens, records)
        context = carried[Step.REPORT_CONTEXT].get(key)
        if context is None:
            context = community_context(records, tokenizer, max_context_tokens)
            carried[Step.REPORT_CONTEXT].put(key, context)
        found.append(context)
    community_df[schemas.CONTEXT_STRING] = [text for text, _ in found]
    community_df[schemas.CONTEXT_SIZE] = [size for _, size in found]
    community_df[schemas.CONTEXT_EXCEED_FLAG] = community_df[schemas.CONTEXT_SIZE] > max_context_tokens
    return community_df


def community_context(records: list[dict], tokenizer: "Tokenizer", max_context_tokens: int | None) -> tuple[str, int]:
    """graphrag's `sort_context` of a community's records, and its tokens.

    graphrag adds the community's edges one at a time (by degree, then id), rewriting and
    re-tokenising the whole context after each, until the budget is exceeded: quadratic in the
    community's size. When the whole context fits, that loop ends with the whole context, so it is
    written once here; otherwise graphrag's own `sort_context` cuts it.
    """
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import sort_context

    whole = _whole_context(records)
    tokens = tokenizer.num_tokens(whole)
    if not max_context_tokens or tokens <= max_context_tokens:
        return whole, tokens
    text = sort_context(records, tokenizer, max_context_tokens=max_context_tokens)
    return text, tokenizer.num_tokens(text)


def _whole_context(records: list[dict]) -> str:
    """What graphrag's `sort_context` returns with no budget: the entities, claims and relationships
    of every edge in its order, each once, as its CSV tables."""
    import graphrag.data_model.schemas as schemas
    import pandas as pd

    short_id = schemas.SHORT_ID
    edges = [{**edge, short_id: int(edge[short_id])} for record in records
             for edge in record.get(schemas.EDGE_DETAILS, []) if isinstance(edge, dict)]
    nodes = {record[schemas.TITLE]: {**record[schemas.NODE_DETAILS],
                                     short_id: int(record[schemas.NODE_DETAILS][short_id])} for record in records}
    claims = {record[schemas.TITLE]: [{**claim, short_id: int(claim[short_id])}
                                      for claim in record.get(schemas.CLAIM_DETAILS, [])
                                      if isinstance(claim, dict) and claim.get(short_id) is not None]
              for record in records if isinstance(record.get(schemas.CLAIM_DETAILS), list)}
    edges.sort(key=lambda edge: (-edge.get(schemas.EDGE_DEGREE, 0), edge.get(short_id, "")))
    tables: dict[str, dict] = {"Entities": {}, "Claims": {}, "Relationships": {}}
    for edge in edges:
        for title in (edge[schemas.EDGE_SOURCE], edge[schemas.EDGE_TARGET]):
            if (node := nodes.get(title)) is not None:
                tables["Entities"].setdefault(node[short_id], node)
            for claim in claims.get(title) or []:
                tables["Claims"].setdefault(claim[short_id], claim)
        tables["Relationships"].setdefault(edge[short_id], edge)
    return "\n\n".join(f"-----{label}-----\n{pd.DataFrame(list(rows.values())).to_csv(index=False, sep=',')}"
                        for label, rows in tables.items() if rows)


async def _run_extract_graph(text: str, source_id: str, entity_types: list[str], model: Any, prompt: str,
                             max_gleanings: int) -> "tuple[pd.DataFrame, pd.DataFrame]":
    """graphrag's per-text-unit extraction, taking an unchanged unit's entities and relationships
    from the previous version."""
    carried = _current.get()
    if carried is None:
        return await _GRAPHRAG["extract"](text, source_id, entity_types, model, prompt, max_gleanings)
    key = _hash(text.strip(), entity_types, prompt, max_gleanings)
    stored = carried[Step.EXTRACTION].get(key)
    if stored is not None:
        entities, relationships = (_frame(split, source_id) for split in stored)
        return entities, relationships
    entities, relationships = await _GRAPHRAG["extract"](text, source_id, entity_types, model, prompt, max_gleanings)
    if len(entities):
        carried[Step.EXTRACTION].put(key, [frame.to_dict(orient="split", index=False) for frame in (entities, relationships)])
    return entities, relationships


async def _run_summarize_descriptions(id: str | tuple[str, str], descriptions: list[str], model: Any,  # noqa: A002
                                      max_summary_length: int, max_input_tokens: int, prompt: str) -> Any:
    """graphrag's summary of one entity's or relationship's descriptions, taking an unchanged one
    from the previous version."""
    from graphrag.index.operations.summarize_descriptions.typing import SummarizedDescriptionResult

    summarize = _GRAPHRAG["summarize"]
    carried = _current.get()
    if carried is None:
        return await summarize(id, descriptions, model, max_summary_length, max_input_tokens, prompt)
    key = _hash(id, descriptions, max_summary_length, max_input_tokens, prompt)
    stored = carried[Step.SUMMARY].get(key)
    if stored is None:
        stored = (await summarize(id, descriptions, model, max_summary_length, max_input_tokens, prompt)).description
        carried[Step.SUMMARY].put(key, stored)
    return SummarizedDescriptionResult(id=id, description=stored)


async def _run_embed_text(input: list[str], callbacks: Any, model: Any, tokenizer: Any, batch_size: int,  # noqa: A002
                          batch_max_tokens: int, num_threads: int) -> Any:
    """graphrag's embedding of a buffer of texts, embedding only those the previous version lacks."""
    from graphrag.index.operations.embed_text.run_embed_text import TextEmbeddingResult

    embed = _GRAPHRAG["embed"]
    carried = _current.get()
    if carried is None or not input:
        return await embed(input, callbacks, model, tokenizer, batch_size, batch_max_tokens, num_threads)
    memo = carried[Step.EMBEDDING]
    model_id = getattr(model, "_model_id", type(model).__qualname__)  # graphrag-llm's factory passes every model one
    keys = [_hash(model_id, batch_max_tokens, text) for text in input]
    vectors = [memo.get(key) for key in keys]
    missing = [index for index, vector in enumerate(vectors) if vector is None]
    if missing:
        fresh = await embed([input[i] for i in missing], callbacks, model, tokenizer, batch_size, batch_max_tokens,
                            num_threads)
        for index, vector in zip(missing, fresh.embeddings or [None] * len(missing), strict=True):
            vectors[index] = vector
            if vector is not None:
                memo.put(keys[index], vector)
    return TextEmbeddingResult(embeddings=vectors)


def _frame(split: dict[str, list], source_id: str) -> "pd.DataFrame":
    """A stored extraction frame (`DataFrame.to_dict(orient="split")`) for the unit `source_id`."""
    import pandas as pd

    frame = pd.DataFrame(split["data"], columns=split["columns"])
    frame["source_id"] = source_id
    return frame


_GRAPHRAG: dict[str, Any] = {}


def _install() -> None:
    """Route graphrag's per-unit extraction, description summary, report context sorting and text
    embedding through this module (once per process; without a run's memos they call graphrag's own)."""
    from graphrag.index.operations.embed_text import embed_text
    from graphrag.index.operations.extract_graph import extract_graph
    from graphrag.index.operations.summarize_communities.graph_context import context_builder
    from graphrag.index.operations.summarize_descriptions import summarize_descriptions

    if not _GRAPHRAG:
        _GRAPHRAG["extract"] = extract_graph._run_extract_graph  # noqa: SLF001 - the per-unit step
        _GRAPHRAG["summarize"] = summarize_descriptions.run_summarize_descriptions
        _GRAPHRAG["embed"] = embed_text.run_embed_text
        embed_text.run_embed_text = _run_embed_text
        extract_graph._run_extract_graph = _run_extract_graph  # noqa: SLF001
        summarize_descriptions.run_summarize_descriptions = _run_summarize_descriptions
        context_builder.parallel_sort_context_batch = _sort_context_batch


def fingerprint(config: "GraphRagConfig") -> str:
    """A hash of the models' settings (secrets left out): stored work is used only under the same."""
    models = {**config.completion_models, **config.embedding_models}
    return _hash({name: model.model_dump(mode="json", exclude={"api_key"}) for name, model in models.items()})


@contextmanager
def work_carried_over(previous: Path | None, version: Path, models: str) -> Iterator[CarriedOver]:
    """Within the block, results whose input is unchanged come from `previous` (when its models'
    fingerprint equals `models`); when the block completes, `version` stores those this run used."""
    _install()
    stored = _read(previous, models)
    carried = {step: Memo(previous=stored.get(step, {})) for step in Step}
    token = _current.set(carried)
    try:
        yield carried
    finally:
        _current.reset(token)
    for step, memo in carried.items():
        logger.info("%s: %d computed, %d carried over", step, memo.computed, memo.reused)
    _write(carried, version / TABLE, models)


def _write(carried: CarriedOver, table: Path, models: str) -> None:
    """Store the results this run used: vectors as float32 lists, the others as JSON."""
    import numpy as np
    import pandas as pd

    rows = [
        (step.value, key, None, np.asarray(result, dtype=np.float32)) if step is Step.EMBEDDING
        else (step.value, key, json.dumps(result), None)
        for step, memo in carried.items() for key, result in memo.used.items()
    ]
    frame = pd.DataFrame(rows, columns=["step", "key", "result", "vector"])
    frame.assign(models=models).to_parquet(table, index=False)


def _read(version: Path | None, models: str) -> dict[Step, dict[str, Any]]:
    """A version's stored results made under the same models, by step; none when it has no readable table."""
    import pandas as pd

    if version is None:
        return {}
    try:
        frame = pd.read_parquet(version / TABLE, columns=["step", "key", "result", "vector", "models"])
    except (OSError, ValueError, KeyError):
        return {}
    stored: dict[Step, dict[str, Any]] = {step: {} for step in Step}
    same = frame[frame["models"] == models]
    for step, key, result, vector in same[["step", "key", "result", "vector"]].itertuples(index=False):
        if step == Step.EMBEDDING:
            stored[Step.EMBEDDING][key] = vector.tolist()
        elif step in stored:
            stored[Step(step)][key] = json.loads(result)
    return stored
