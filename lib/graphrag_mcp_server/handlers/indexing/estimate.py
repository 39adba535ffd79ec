"""What an index run would process and what its model calls would cost, before it runs
(`graphrag-mcp index --dry-run`).

The documents are read and compared with the served version as a run compares them; the ones to
index are chunked by graphrag's chunker. A chunk whose text the served version already holds costs
no extraction call (its extraction is carried over, or answered by graphrag's cache on `--full`),
so the extraction calls are exact: one a new chunk with `max_gleanings: 0`, at most two more a
gleaning. Summaries and reports depend on what extraction finds; for an update they are estimated
from the served version: the entities and relationships drawn from the text units that go, plus
the served version's rows a text unit for each new chunk, and the communities holding those
entities. A cold build has no such figures: its estimate is the extraction alone, a floor.
"""

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from graphrag_mcp_server.handlers.indexing import versions
from graphrag_mcp_server.handlers.indexing.kept_text_units import Chunking

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig


class IndexEstimate(BaseModel):
    """What `index` would do now, and its model calls and input tokens."""

    mode: str = Field(description="full (every document) or incremental (the changed ones)")
    documents: int = Field(description="Documents in the data path")
    documents_to_index: int = Field(description="Documents added or changed (all on a full run)")
    documents_deleted: int
    chunks: int = Field(description="Text units of the documents to index (graphrag's chunker)")
    chunks_to_extract: int = Field(description="Those whose text the served version lacks")
    chunk_tokens: int = Field(description="Tokens of the chunks to extract")
    extraction_calls: int = Field(description="Exact, but for gleanings that stop early")
    summary_calls: int | None = Field(
        description="Estimated from the served version; None: unknown"
    )
    report_calls: int | None = Field(description="Estimated from the served version; None: unknown")
    calls: int = Field(description="Extraction, summary and report calls (the floor when unknown)")
    input_tokens: int = Field(
        description="Extraction prompts and chunks: the floor of input tokens"
    )
    basis: str = Field(description="How the summary and report figures were reached")


async def estimate(config: "GraphRagConfig", root: Path, full: bool, fast: bool) -> IndexEstimate:
    """The estimate of an `index` run of `config`'s documents into `root` (`full`: --full;
    `fast`: the NLP method, whose extraction calls no model)."""
    from graphrag_mcp_server.handlers.indexing.build import read_documents

    current = versions.current_version(root)
    # a file unchanged since the served version is taken from it, as a run takes it
    documents, _ = await read_documents(config, root, current=current)
    manifest = dict(zip(documents["title"].astype(str), documents["id"].astype(str), strict=True))
    previous = versions.read_manifest(current)
    changes = versions.diff(previous, manifest)
    incremental = previous is not None and not full
    chosen = set(changes.added) | set(changes.updated) if incremental else set(manifest)
    to_index = documents[documents["title"].astype(str).isin(chosen)]
    served = _served(current)
    chunking = Chunking(config)
    chunked = {row["id"]: chunking.chunked(row) for row in to_index.to_dict("records")}
    known = set(served["text_units"]["text"]) if served else set()
    new = [(text, tokens) for chunks in chunked.values() for text, tokens in chunks]
    new = [(text, tokens) for text, tokens in new if text not in known]
    per_chunk = 0 if fast else _calls_a_chunk(config)
    extraction = len(new) * per_chunk
    prompt = 0 if fast else len(chunking.tokenizer.encode(_extraction_prompt(config)))
    gone_ids = (
        {previous[title] for title in changes.updated + changes.deleted} if previous else set()
    )
    added = set(to_index["id"][to_index["title"].astype(str).isin(changes.added)])
    added_chunks = sum(
        1
        for row in to_index.to_dict("records")
        if row["id"] in added
        for _ in chunking.chunked(row)
    )
    summaries, reports, basis = _follow_on(served, gone_ids, added_chunks, incremental, fast)
    return IndexEstimate(
        mode="incremental" if incremental else "full",
        documents=len(manifest),
        documents_to_index=len(to_index),
        documents_deleted=len(changes.deleted) if incremental else 0,
        chunks=sum(len(chunks) for chunks in chunked.values()),
        chunks_to_extract=len(new),
        chunk_tokens=sum(tokens for _, tokens in new),
        extraction_calls=extraction,
        summary_calls=summaries,
        report_calls=reports,
        calls=extraction + (summaries or 0) + (reports or 0),
        input_tokens=extraction * prompt + per_chunk * sum(tokens for _, tokens in new),
        basis=basis,
    )


def _calls_a_chunk(config: "GraphRagConfig") -> int:
    """graphrag's extraction calls for one chunk, at most: one, then for each gleaning a call and
    (but after the last) a check whether to go on; claims alike when enabled."""
    gleanings = config.extract_graph.max_gleanings
    calls = 1 + max(0, 2 * gleanings - 1)
    if config.extract_claims.enabled:
        calls += 1 + max(0, 2 * config.extract_claims.max_gleanings - 1)
    return calls


def _extraction_prompt(config: "GraphRagConfig") -> str:
    return str(config.extract_graph.resolved_prompts().extraction_prompt)


def _served(current: Path | None) -> "dict[str, pd.DataFrame] | None":
    """The served version's tables the estimate reads, or None."""
    import pandas as pd

    if current is None:
        return None
    columns = {
        "text_units": ["id", "text", "document_id"],
        "entities": ["id", "text_unit_ids"],
        "relationships": ["id", "source", "target", "text_unit_ids"],
        "communities": ["community", "entity_ids"],
    }
    try:
        return {
            name: pd.read_parquet(current / f"{name}.parquet", columns=listed)
            for name, listed in columns.items()
        }
    except (OSError, ValueError, KeyError):
        return None


def _follow_on(
    served: "dict[str, pd.DataFrame] | None",
    gone_documents: set[str],
    added_chunks: int,
    incremental: bool,
    fast: bool,
) -> tuple[int | None, int | None, str]:
    """Estimated summary and report calls, and how they were reached: a row (entity or
    relationship) costs a summary call when it has two descriptions or more, so the rows of the text
    units that go (a changed document's new chunks state mostly the same rows) that other units
    also state, and for each chunk of an added document the served version's such rows a text
    unit; a report for each community holding an entity of those units, and the served version's
    communities a text unit for each added chunk."""
    if served is None or not incremental:
        return (
            None,
            None,
            (
                "a cold or full build: summaries and reports follow what extraction finds, so the "
                "calls shown are the extraction's alone (a floor)"
            ),
        )
    units = served["text_units"]
    gone = set(units["id"][units["document_id"].isin(gone_documents)])
    entities, relationships = served["entities"], served["relationships"]
    listed = list(entities["text_unit_ids"]) + list(relationships["text_unit_ids"])
    touched = sum(1 for ids in listed if len(ids) > 1 and gone & set(ids))
    shared_a_unit = sum(1 for ids in listed if len(ids) > 1) / max(len(units), 1)
    summaries = 0 if fast else touched + math.ceil(shared_a_unit * added_chunks)
    touched_entities = {
        entity
        for entity, ids in zip(entities["id"], entities["text_unit_ids"], strict=True)
        if gone & set(ids)
    }
    communities = served["communities"]
    held = sum(1 for members in communities["entity_ids"] if touched_entities & set(members))
    communities_a_unit = len(communities) / max(len(units), 1)
    reports = held + math.ceil(communities_a_unit * added_chunks)
    return (
        summaries,
        reports,
        (
            f"from the served version: {touched} entities and relationships stated by the "
            f"{len(gone)} text units that go and by others, {shared_a_unit:.1f} such a text "
            f"unit for each added chunk; {held} communities holding an entity of those units, "
            f"{communities_a_unit:.2f} a text unit for each added chunk (reports of communities "
            "whose context is unchanged are carried over, so this leans high)"
        ),
    )


def as_rows(found: IndexEstimate) -> list[tuple[str, Any]]:
    """The estimate as (label, value) lines for the CLI's text output."""
    unknown = "unknown until extraction"
    return [
        ("Mode", found.mode),
        ("Documents to index", f"{found.documents_to_index} of {found.documents}"),
        ("Documents deleted", found.documents_deleted),
        ("Chunks", f"{found.chunks} ({found.chunks_to_extract} new, {found.chunk_tokens} tokens)"),
        ("Extraction calls", found.extraction_calls),
        ("Summary calls", unknown if found.summary_calls is None else found.summary_calls),
        ("Report calls", unknown if found.report_calls is None else found.report_calls),
        ("Calls", found.calls),
        ("Input tokens (extraction)", found.input_tokens),
        ("Basis", found.basis),
    ]
