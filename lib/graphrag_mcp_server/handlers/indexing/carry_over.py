"""Work carried over from the previous version where its input is unchanged.

An update runs graphrag's whole pipeline over every current document (build.py). Six steps of it
are pure functions of their input (with the same models): a result carried over is the one graphrag
would compute again (or replay from its LLM cache), so carrying it changes no output, only the time
each record costs although an edit touches a few:

- the chunks of a document (tokenising every document: the text units of an unchanged one are
  carried by create_base_text_units_kept, kept_text_units.py);
- graph extraction of a text unit, the summary of an entity's or relationship's descriptions and
  a community's report from its context (LLM calls, answered by graphrag's cache when unchanged,
  but each lookup hashes the prompt and reads a file);
- the context string of a community report (`sort_context`, which tokenises every record of the
  community: most of an update's pipeline time on a 300-document corpus before this module);
- the embedding of a text (text units, entity descriptions, reports).

Extraction and summaries are carried over by the workflow extract_graph_kept (kept_extraction.py),
embeddings by generate_text_embeddings_kept (vector_delta.py), report contexts and reports by
create_community_reports_kept (kept_reports.py, carried_reports.py); this module holds the memos.
Each version stores what these steps produced, by a hash of their whole input, in
`carried_over.parquet`; the next run takes from there every result whose input is unchanged and
computes the others with graphrag's own functions. Report contexts and reports are matched up to the
numbering and degrees of their records (carried_reports.py). Stored results are used only while
the models are configured as before (`fingerprints`: each step's own model). A failed extraction
(graphrag returns no entities) or report is never stored, so a provider fault is retried.
"""

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Memo, Step, input_hash
from graphrag_mcp_server.handlers.indexing.parquet_pages import PAGE_OPTIONS

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

TABLE = "carried_over.parquet"
logger = logging.getLogger(__name__)


CONNECTION_ARGS = {"max_retries", "timeout"}
"""Call arguments that change how a request is sent, not what the model answers."""


def _answering(model: Any) -> dict[str, Any]:
    """What decides a model's answers: its kind, provider, name, server and call arguments (not its
    key, retry policy, rate limits, metrics or timeouts, which change how a request is sent)."""
    return {
        "type": model.type,
        "provider": model.model_provider,
        "model": model.model,
        "api_base": model.api_base,
        "deployment": model.azure_deployment_name,
        "call_args": {
            name: value for name, value in model.call_args.items() if name not in CONNECTION_ARGS
        },
    }


def fingerprints(config: "GraphRagConfig") -> dict[Step, str]:
    """A hash per step of what its stored results depend on besides their input: the model that step
    calls (and the vector size, for embeddings). A changed model redoes exactly the steps that call
    it."""

    def completion(model_id: str) -> str:
        return input_hash(_answering(config.get_completion_model_config(model_id)))

    reports = completion(config.community_reports.completion_model_id)
    embedding = config.get_embedding_model_config(config.embed_text.embedding_model_id)
    return {
        Step.CHUNKS: input_hash(config.chunking.model_dump(mode="json")),
        Step.EXTRACTION: completion(config.extract_graph.completion_model_id),
        Step.SUMMARY: completion(config.summarize_descriptions.completion_model_id),
        Step.REPORT_CONTEXT: reports,
        Step.REPORT: reports,  # a context is cut to the report model's budget
        Step.EMBEDDING: input_hash(_answering(embedding), config.vector_store.vector_size),
    }


@contextmanager
def work_carried_over(
    previous: "PreviousVersion | None", version: Path, models: dict[Step, str]
) -> Iterator[CarriedOver]:
    """Within the block, results whose input is unchanged come from `previous` (each step's when it
    was made under the same `models` fingerprint); when the block completes, `version` stores those
    this run used."""
    stored = _read(previous.path if previous is not None else None, models)
    carried = {step: Memo(previous=stored.get(step, {}), decode=_decoder(step)) for step in Step}
    yield carried
    for step, memo in carried.items():
        logger.info("%s: %d computed, %d carried over", step, memo.computed, memo.reused)
    _write(carried, version / TABLE, models)


def _decoder(step: Step) -> Any:
    """How a step's stored result becomes the result: vectors (float32 arrays) as lists, the others
    from JSON."""
    return (lambda vector: vector.tolist()) if step is Step.EMBEDDING else json.loads


def _write(carried: CarriedOver, table: Path, models: dict[Step, str]) -> None:
    """Store the results this run used: vectors as float32 arrays, the others as JSON (carried ones
    as stored)."""
    import numpy as np
    import pandas as pd

    rows: list[tuple[str, str, str | None, Any, str]] = []  # step, key, result, vector, models
    for step, memo in carried.items():
        for key, result in memo.used.items():
            stored = memo.stored_form.get(key)
            if step is Step.EMBEDDING:
                rows.append(
                    (
                        step.value,
                        key,
                        None,
                        stored if stored is not None else np.asarray(result, np.float32),
                        models[step],
                    )
                )
            else:
                rows.append(
                    (
                        step.value,
                        key,
                        stored if stored is not None else json.dumps(result),
                        None,
                        models[step],
                    )
                )
    pd.DataFrame(rows, columns=["step", "key", "result", "vector", "models"]).to_parquet(
        table, index=False, **PAGE_OPTIONS
    )


def _read(version: Path | None, models: dict[Step, str]) -> dict[Step, dict[str, Any]]:
    """A version's stored results made under each step's same models, by step, as stored (JSON text,
    float32 arrays); none when it has no readable table."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if version is None:
        return {}
    try:
        table = pq.read_table(
            version / TABLE, columns=["step", "key", "result", "vector", "models"]
        )
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return {}
    same = table.filter(pc.is_in(table["models"], pa.array(sorted(set(models.values())))))
    stored: dict[Step, dict[str, Any]] = {step: {} for step in Step}
    models_of = {step.value: made_with for step, made_with in models.items()}
    for step, key, result, vector, made_with in zip(
        same["step"].to_pylist(),
        same["key"].to_pylist(),
        same["result"].to_pylist(),
        same["vector"].to_numpy(zero_copy_only=False),
        same["models"].to_pylist(),
        strict=True,
    ):
        if models_of.get(step) == made_with:
            stored[Step(step)][key] = vector if step == Step.EMBEDDING else result
    return stored
