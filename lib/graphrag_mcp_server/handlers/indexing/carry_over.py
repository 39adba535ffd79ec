"""Work carried over from the previous version where its input is unchanged.

An update runs graphrag's whole pipeline over every current document (build.py). Five steps of it
are pure functions of their input (with the same models): a result carried over is the one graphrag
would compute again (or replay from its LLM cache), so carrying it changes no output, only the time
each record costs although an edit touches a few:

- graph extraction of a text unit, the summary of an entity's or relationship's descriptions and
  a community's report from its context (LLM calls, answered by graphrag's cache when unchanged,
  but each lookup hashes the prompt and reads a file);
- the context string of a community report (`sort_context`, which tokenises every record of the
  community: most of an update's pipeline time on a 300-document corpus before this module);
- the embedding of a text (text units, entity descriptions, reports).

Each version stores what these steps produced, by a hash of their whole input, in
`carried_over.parquet`; the next run takes from there every result whose input is unchanged and
computes the others with graphrag's own functions. Report contexts and reports are matched up to
the numbering of their records (carried_reports.py). Stored results are used only while the models
are configured as before (`fingerprints`: each step's own model). A failed extraction (graphrag returns no entities) or
report is never stored, so a provider fault is retried.
"""

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing import carried_reports
from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Memo, Step, current, input_hash, text_digest

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig

TABLE = "carried_over.parquet"
logger = logging.getLogger(__name__)


async def _extract_graph(text_units: "pd.DataFrame", callbacks: Any, text_column: str, id_column: str, model: Any,
                         prompt: str, entity_types: list[str], max_gleanings: int, num_threads: int,
                         async_type: Any) -> "tuple[pd.DataFrame, pd.DataFrame]":
    """graphrag's graph extraction over text units, extracting only those whose text the previous
    version did not; every unit's entities and relationships then merged by graphrag's own functions."""
    from graphrag.index.operations.extract_graph import extract_graph as operation
    from graphrag.index.operations.extract_graph.utils import filter_orphan_relationships
    from graphrag.index.utils.derive_from_rows import derive_from_rows

    carried = current.get()
    if carried is None:
        return await _ORIGINALS["extract"](text_units, callbacks, text_column, id_column, model, prompt, entity_types,
                                          max_gleanings, num_threads, async_type)
    memo = carried[Step.EXTRACTION]
    prompt_key = text_digest(prompt)
    keys = [input_hash(text.strip(), entity_types, prompt_key, max_gleanings) for text in text_units[text_column]]
    found = [memo.take(key) for key in keys]
    missing = [position for position, split in enumerate(found) if split is None]

    async def extract(row: "pd.Series") -> "tuple[pd.DataFrame, pd.DataFrame]":
        return await operation._run_extract_graph(row[text_column], row[id_column], entity_types, model, prompt,  # noqa: SLF001
                                                  max_gleanings)

    extracted = await derive_from_rows(text_units.iloc[missing], extract, callbacks, num_threads=num_threads,
                                       async_type=async_type, progress_msg="extract graph progress: ")
    for position, result in zip(missing, extracted, strict=True):
        if result is None:
            continue
        found[position] = [frame.to_dict(orient="split", index=False) for frame in result]
        if len(result[0]):
            memo.put(keys[position], found[position])
    units = [(split, unit) for split, unit in zip(found, text_units[id_column], strict=True) if split is not None]
    entities = _merged([(split[0], unit) for split, unit in units], ("title", "type"), "frequency")
    relationships = _merged([(split[1], unit) for split, unit in units], ("source", "target"), "weight")
    return entities, filter_orphan_relationships(relationships, entities)


async def _summarize_descriptions(entities_df: "pd.DataFrame", relationships_df: "pd.DataFrame", callbacks: Any,
                                  model: Any, max_summary_length: int, max_input_tokens: int, prompt: str,
                                  num_threads: int) -> "tuple[pd.DataFrame, pd.DataFrame]":
    """graphrag's summaries of every entity's and relationship's descriptions, handing graphrag only the rows the
    previous version did not summarise (one task a row: 10,000 rows cost half a second in asyncio alone)."""
    import pandas as pd

    summarize = _ORIGINALS["summarize_all"]
    carried = current.get()
    if carried is None:
        return await summarize(entities_df, relationships_df, callbacks, model, max_summary_length, max_input_tokens,
                               prompt, num_threads)
    memo = carried[Step.SUMMARY]

    def key(identity: str | tuple[str, str], descriptions: Any) -> str:  # graphrag hands on each row's set, sorted
        return _summary_key(identity, sorted(set(descriptions)), max_summary_length, max_input_tokens, prompt)

    nodes = [(str(title), key(str(title), descriptions))
             for title, descriptions in zip(entities_df["title"], entities_df["description"], strict=True)]
    pairs = zip(relationships_df["source"].astype(str), relationships_df["target"].astype(str), strict=True)
    edges = [(pair, key(pair, descriptions))
             for pair, descriptions in zip(pairs, relationships_df["description"], strict=True)]
    missing_nodes = [memo.take(found) is None for _, found in nodes]
    missing_edges = [memo.take(found) is None for _, found in edges]
    if any(missing_nodes) or any(missing_edges):  # graphrag's run_summarize_descriptions (routed below) stores them
        await summarize(entities_df[missing_nodes], relationships_df[missing_edges], callbacks, model,
                        max_summary_length, max_input_tokens, prompt, num_threads)
    entities = pd.DataFrame({"title": [title for title, _ in nodes],
                             "description": [memo.take(found) for _, found in nodes]})
    relationships = pd.DataFrame({"source": [pair[0] for pair, _ in edges], "target": [pair[1] for pair, _ in edges],
                                  "description": [memo.take(found) for _, found in edges]})
    return entities, relationships


def _summary_key(identity: str | tuple[str, str], descriptions: list[str], max_summary_length: int,
                 max_input_tokens: int, prompt: str) -> str:
    """The memo key of one entity's or relationship's summary, from graphrag's input to it."""
    return input_hash(identity, descriptions, max_summary_length, max_input_tokens, text_digest(prompt))


async def _run_summarize_descriptions(id: str | tuple[str, str], descriptions: list[str], model: Any,  # noqa: A002
                                      max_summary_length: int, max_input_tokens: int, prompt: str) -> Any:
    """graphrag's summary of one entity's or relationship's descriptions, taking an unchanged one
    from the previous version."""
    from graphrag.index.operations.summarize_descriptions.typing import SummarizedDescriptionResult

    summarize = _ORIGINALS["summarize"]
    carried = current.get()
    if carried is None:
        return await summarize(id, descriptions, model, max_summary_length, max_input_tokens, prompt)
    key = _summary_key(id, descriptions, max_summary_length, max_input_tokens, prompt)
    stored = carried[Step.SUMMARY].take(key)
    if stored is None:
        stored = (await summarize(id, descriptions, model, max_summary_length, max_input_tokens, prompt)).description
        carried[Step.SUMMARY].put(key, stored)
    return SummarizedDescriptionResult(id=id, description=stored)


async def _run_embed_text(input: list[str], callbacks: Any, model: Any, tokenizer: Any, batch_size: int,  # noqa: A002
                          batch_max_tokens: int, num_threads: int) -> Any:
    """graphrag's embedding of a buffer of texts, embedding only those the previous version lacks."""
    from graphrag.index.operations.embed_text.run_embed_text import TextEmbeddingResult

    embed = _ORIGINALS["embed"]
    carried = current.get()
    if carried is None or not input:
        return await embed(input, callbacks, model, tokenizer, batch_size, batch_max_tokens, num_threads)
    memo = carried[Step.EMBEDDING]
    model_id = getattr(model, "_model_id", type(model).__qualname__)  # graphrag-llm's factory passes every model one
    keys = [input_hash(model_id, batch_max_tokens, text) for text in input]
    vectors = [memo.take(key) for key in keys]
    missing = [index for index, vector in enumerate(vectors) if vector is None]
    if missing:
        fresh = await embed([input[i] for i in missing], callbacks, model, tokenizer, batch_size, batch_max_tokens,
                            num_threads)
        for index, vector in zip(missing, fresh.embeddings or [None] * len(missing), strict=True):
            vectors[index] = vector
            if vector is not None:
                memo.put(keys[index], vector)
    return TextEmbeddingResult(embeddings=vectors)


def _merged(splits: list[tuple[dict[str, list], str]], keys: tuple[str, str], total: str) -> "pd.DataFrame":
    """graphrag's `_merge_entities` (`total` "frequency": rows counted) or `_merge_relationships` ("weight": weights
    summed) of text units' extraction frames (`DataFrame.to_dict(orient="split")`), each row's `source_id` its
    unit's: rows grouped by `keys` in order of first appearance (rows with a missing key left out), their
    descriptions and units listed. The same frame as graphrag's, without concatenating every unit's frame and
    grouping it with per-group Python callbacks (0.3-0.5 s of a one-document update at 2000 documents)."""
    import numpy as np
    import pandas as pd

    groups: dict[tuple, int] = {}
    descriptions: list[list] = []
    units: list[list[str]] = []
    codes: list[int] = []
    weights: list[Any] = []
    for split, unit in splits:
        columns = split["columns"]
        first, second, description = (columns.index(name) for name in (*keys, "description"))
        weight = columns.index("weight") if total == "weight" else None
        for row in split["data"]:
            key = (row[first], row[second])
            if _missing(key[0]) or _missing(key[1]):
                continue
            code = groups.setdefault(key, len(groups))
            if code == len(descriptions):
                descriptions.append([])
                units.append([])
            descriptions[code].append(row[description])
            units[code].append(unit)
            if weight is not None:
                codes.append(code)
                weights.append(row[weight])
    frame = pd.DataFrame({keys[0]: [key[0] for key in groups], keys[1]: [key[1] for key in groups],
                          "description": descriptions, "text_unit_ids": units})
    if total == "weight":  # summed by pandas, as graphrag's groupby sums them
        summed = pd.Series(weights, dtype="float64").groupby(np.asarray(codes, dtype=np.int64), sort=True).sum()
        frame["weight"] = summed.to_numpy() if groups else np.empty(0)
    else:
        frame["frequency"] = pd.Series([len(listed) for listed in units], dtype="int64")
    return frame


def _missing(value: Any) -> bool:
    """A group key pandas leaves out: None or NaN."""
    return value is None or value != value  # noqa: PLR0124 - NaN is the one value unequal to itself


_ORIGINALS: dict[str, Any] = {}
"""graphrag's originals of the functions `_install` replaces, called by the replacements."""


def _install() -> None:
    """Route graphrag's graph extraction, description summary, report context sorting, community report and
    text embedding through this module (config/replacements.py; without a run's memos they call graphrag's
    own)."""
    from graphrag_mcp_server.config.replacements import replace

    operations = "graphrag.index.operations"
    _ORIGINALS["extract"] = replace("graphrag.index.workflows.extract_graph.extractor", _extract_graph)
    _ORIGINALS["summarize_all"] = replace("graphrag.index.workflows.extract_graph.summarize_descriptions",
                                          _summarize_descriptions)
    _ORIGINALS["summarize"] = replace(
        f"{operations}.summarize_descriptions.summarize_descriptions.run_summarize_descriptions",
        _run_summarize_descriptions)
    _ORIGINALS["embed"] = replace(f"{operations}.embed_text.embed_text.run_embed_text", _run_embed_text)
    carried_reports.ORIGINALS["report"] = replace(
        f"{operations}.summarize_communities.summarize_communities.run_extractor",
        carried_reports.run_report_extractor)
    replace(f"{operations}.summarize_communities.graph_context.context_builder.parallel_sort_context_batch",
            carried_reports.sort_context_batch)


CONNECTION_ARGS = {"max_retries", "timeout"}
"""Call arguments that change how a request is sent, not what the model answers."""


def _answering(model: Any) -> dict[str, Any]:
    """What decides a model's answers: its kind, provider, name, server and call arguments (not its key, retry
    policy, rate limits, metrics or timeouts, which change how a request is sent)."""
    return {"type": model.type, "provider": model.model_provider, "model": model.model, "api_base": model.api_base,
            "deployment": model.azure_deployment_name,
            "call_args": {name: value for name, value in model.call_args.items() if name not in CONNECTION_ARGS}}


def fingerprints(config: "GraphRagConfig") -> dict[Step, str]:
    """A hash per step of what its stored results depend on besides their input: the model that step calls
    (and the vector size, for embeddings). A changed model redoes exactly the steps that call it."""
    def completion(model_id: str) -> str:
        return input_hash(_answering(config.get_completion_model_config(model_id)))

    reports = completion(config.community_reports.completion_model_id)
    embedding = config.get_embedding_model_config(config.embed_text.embedding_model_id)
    return {Step.EXTRACTION: completion(config.extract_graph.completion_model_id),
            Step.SUMMARY: completion(config.summarize_descriptions.completion_model_id),
            Step.REPORT_CONTEXT: reports, Step.REPORT: reports,  # a context is cut to the report model's budget
            Step.EMBEDDING: input_hash(_answering(embedding), config.vector_store.vector_size)}


@contextmanager
def work_carried_over(previous: Path | None, version: Path, models: dict[Step, str]) -> Iterator[CarriedOver]:
    """Within the block, results whose input is unchanged come from `previous` (each step's when it was made
    under the same `models` fingerprint); when the block completes, `version` stores those this run used."""
    _install()
    stored = _read(previous, models)
    carried = {step: Memo(previous=stored.get(step, {}), decode=_decoder(step)) for step in Step}
    token = current.set(carried)
    try:
        yield carried
    finally:
        current.reset(token)
    for step, memo in carried.items():
        logger.info("%s: %d computed, %d carried over", step, memo.computed, memo.reused)
    _write(carried, version / TABLE, models)


def _decoder(step: Step) -> Any:
    """How a step's stored result becomes the result: vectors (float32 arrays) as lists, the others from JSON."""
    return (lambda vector: vector.tolist()) if step is Step.EMBEDDING else json.loads


def _write(carried: CarriedOver, table: Path, models: dict[Step, str]) -> None:
    """Store the results this run used: vectors as float32 arrays, the others as JSON (carried ones as stored)."""
    import numpy as np
    import pandas as pd

    rows = []
    for step, memo in carried.items():
        for key, result in memo.used.items():
            stored = memo.stored_form.get(key)
            if step is Step.EMBEDDING:
                rows.append((step.value, key, None, stored if stored is not None else np.asarray(result, np.float32),
                             models[step]))
            else:
                rows.append((step.value, key, stored if stored is not None else json.dumps(result), None, models[step]))
    pd.DataFrame(rows, columns=["step", "key", "result", "vector", "models"]).to_parquet(table, index=False)


def _read(version: Path | None, models: dict[Step, str]) -> dict[Step, dict[str, Any]]:
    """A version's stored results made under each step's same models, by step, as stored (JSON text, float32
    arrays); none when it has no readable table."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if version is None:
        return {}
    try:
        table = pq.read_table(version / TABLE, columns=["step", "key", "result", "vector", "models"])
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return {}
    same = table.filter(pc.is_in(table["models"], pa.array(sorted(set(models.values())))))
    stored: dict[Step, dict[str, Any]] = {step: {} for step in Step}
    models_of = {step.value: made_with for step, made_with in models.items()}
    for step, key, result, vector, made_with in zip(same["step"].to_pylist(), same["key"].to_pylist(),
                                                    same["result"].to_pylist(),
                                                    same["vector"].to_numpy(zero_copy_only=False),
                                                    same["models"].to_pylist(), strict=True):
        if models_of.get(step) == made_with:
            stored[Step(step)][key] = vector if step == Step.EMBEDDING else result
    return stored
