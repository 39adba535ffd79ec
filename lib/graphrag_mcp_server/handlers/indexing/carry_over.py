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

Extraction and summaries are carried over by the workflow extract_graph_kept (kept_extraction.py;
extractions are stored as rows of their own table, extracted_rows.py, and found in the memo only
in a version stored before it),
embeddings by generate_text_embeddings_kept (vector_delta.py), report contexts and reports by
create_community_reports_kept (kept_reports.py, carried_reports.py); this module holds the memos.
Each version stores what these steps produced, by a hash of their whole input, in
`carried_over.parquet` and the changes beside it (memo_table.py); the next run takes from there
every result whose input is unchanged and computes the others with graphrag's own functions. Report
contexts and reports are matched up to the numbering and degrees of their records
(carried_reports.py). Stored results are used only while the models are configured as before
(`fingerprints`: each step's own model). A failed extraction (graphrag returns no entities) or
report is never stored, so a provider fault is retried.
"""

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing import memo_table
from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Memo, Step, input_hash
from graphrag_mcp_server.providers import embedding_revision

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

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
        Step.COMMUNITY: reports,
        Step.EMBEDDING: input_hash(
            _answering(embedding), config.vector_store.vector_size, *embedding_revision(embedding)
        ),
    }


@contextmanager
def work_carried_over(
    previous: "PreviousVersion | None", version: Path, models: dict[Step, str]
) -> Iterator[CarriedOver]:
    """Within the block, results whose input is unchanged come from `previous` (each step's when it
    was made under the same `models` fingerprint); when the block completes, `version` stores those
    this run used."""
    stored = memo_table.read(previous.path if previous is not None else None, models)
    results = stored.results if stored is not None else {}
    carried = {
        step: Memo(previous=results.get(step, {}))
        if step is Step.EXTRACTION  # JSON text: kept_extraction decodes a unit at a time
        else Memo(previous=results.get(step, {}), decode=_decoder(step))
        for step in Step
    }
    yield carried
    for step, memo in carried.items():
        logger.info("%s: %d computed, %d carried over", step, memo.computed, memo.reused)
    memo_table.write(carried, version, models, stored)


def _decoder(step: Step) -> Any:
    """How a step's stored result becomes the result: vectors (float32 arrays) as lists, the others
    from JSON."""
    return (lambda vector: vector.tolist()) if step is Step.EMBEDDING else json.loads
