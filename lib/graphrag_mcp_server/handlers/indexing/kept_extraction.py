"""The workflow `extract_graph_kept`, named in the pipeline in place of graphrag's `extract_graph`.

graphrag's workflow extracts a graph from every text unit and summarises every entity's and
relationship's descriptions. This one runs the same steps with graphrag's operations, extracting
only the text units whose text the previous version did not extract (extracted_rows.py merges
every unit's rows by columns) and summarising only the descriptions it did not summarise
(kept_summaries.py; carry_over.py's memos, handed in the run's state); the rest is taken from the
previous version. The tables it writes hold what graphrag's workflow writes.
"""

import json
import logging
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.config.replacements import private
from graphrag_mcp_server.handlers.indexing import name_variants
from graphrag_mcp_server.handlers.indexing.extracted_rows import (
    ENTITY,
    RELATIONSHIP,
    RENAMES,
    STATE,
    ExtractedRows,
    Merged,
    carried_rows,
    graphrag_frame,
    grouped,
    in_order,
    names,
    unit_rows,
)
from graphrag_mcp_server.handlers.indexing.kept_summaries import (
    described,
    previous_summaries,
    summarized,
)
from graphrag_mcp_server.handlers.indexing.memos import (
    CARRIED,
    CarriedOver,
    Step,
    input_hash,
    run_state,
    sample,
    text_digest,
)
from graphrag_mcp_server.handlers.indexing.name_variants import Renames

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

logger = logging.getLogger(__name__)

WORKFLOW, REPLACES = "extract_graph_kept", "extract_graph"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's extract_graph workflow, extraction and summaries carried over where their input
    is unchanged; graphrag's own when the run carries nothing over."""
    from graphrag.cache.cache_key_creator import cache_key_creator
    from graphrag.data_model.data_reader import DataReader
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag.index.workflows import extract_graph
    from graphrag_llm.completion import create_completion

    carried: CarriedOver | None = run_state(context, CARRIED)
    stored_rows: ExtractedRows | None = run_state(context, STATE)
    if carried is None or stored_rows is None:
        return await extract_graph.run_workflow(config, context)

    def model(step: Any) -> Any:
        return create_completion(
            config.get_completion_model_config(step.completion_model_id),
            cache=context.cache.child(step.model_instance_name),
            cache_key_creator=cache_key_creator,
        )

    extraction, summaries = config.extract_graph, config.summarize_descriptions
    extraction_model, summary_model = model(extraction), model(summaries)
    text_units = await DataReader(context.output_table_provider).text_units()
    entities, relationships, changed = await extracted_graph(
        carried,
        stored_rows,
        text_units,
        context.callbacks,
        "text",
        "id",
        extraction_model,
        extraction.resolved_prompts().extraction_prompt,
        extraction.entity_types,
        extraction.max_gleanings,
        config.concurrent_requests,
        config.async_mode,
    )
    for kind, groups in (("entities", entities), ("relationships", relationships)):
        if groups.table.num_rows == 0:  # graphrag's words
            msg = f"Graph Extraction failed. No {kind} detected during extraction."
            logger.error(msg)
            raise ValueError(msg)
    entity_summaries, relationship_summaries = await summarized(
        carried,
        entities,
        relationships,
        context.callbacks,
        summary_model,
        summaries.max_length,
        summaries.max_input_tokens,
        summaries.resolved_prompts().summarize_prompt,
        config.concurrent_requests,
        changed,
        previous_summaries(stored_rows.previous),
    )
    written = {
        "entities": described(entities.table, entity_summaries),
        "relationships": described(relationships.table, relationship_summaries),
    }
    tables = context.output_table_provider
    for name, frame in written.items():
        await tables.write_dataframe(name, frame)
    if config.snapshots.raw_graph:
        await tables.write_dataframe("raw_entities", graphrag_frame(entities))
        await tables.write_dataframe("raw_relationships", graphrag_frame(relationships))
    return WorkflowFunctionOutput(result={name: sample(frame) for name, frame in written.items()})


async def extracted_graph(
    carried: CarriedOver,
    stored_rows: ExtractedRows,
    text_units: "pd.DataFrame",
    callbacks: Any,
    text_column: str,
    id_column: str,
    model: Any,
    prompt: str,
    entity_types: list[str],
    max_gleanings: int,
    num_threads: int,
    async_type: Any,
) -> "tuple[Merged, Merged, set[str]]":
    """graphrag's graph extraction over text units, extracting only those whose text the previous
    version did not, and graphrag's merge of every unit's rows by columns (extracted_rows.py:
    the previous version's rows, less those of units gone, plus those of units new; orphan
    relationships left out, as graphrag leaves them out). Also the names
    (`summary_name`) of the entities and relationships whose description lists may differ from
    the previous version's: those in a unit new to this version or in one of the previous version
    that is gone (the lists of all others are made of the same units' descriptions in the same
    order)."""
    import pyarrow as pa
    from graphrag.index.operations.extract_graph import extract_graph as operation
    from graphrag.index.utils.derive_from_rows import derive_from_rows

    memo = carried[Step.EXTRACTION]
    prompt_key = text_digest(prompt)
    keys = [
        input_hash(text.strip(), entity_types, prompt_key, max_gleanings)
        for text in text_units[text_column]
    ]
    previous = stored_rows.stored()
    kept, covered, gone = carried_rows(previous, keys)
    memo.reused += sum(key in covered for key in keys)
    # a version stored before extracted_rows.py holds its extractions in the memo
    found: dict[int, str | None] = {
        position: memo.peek(key) for position, key in enumerate(keys) if key not in covered
    }
    memo.reused += sum(text is not None for text in found.values())
    missing = [position for position, text in found.items() if text is None]

    extract_one = private(
        operation, "graphrag.index.operations.extract_graph.extract_graph._run_extract_graph"
    )

    async def extract(row: "pd.Series") -> tuple[str, bool]:
        """A unit's extraction as JSON (its frames let go at once: 20,000 small frames held
        to the end of a 10,000-document build were most of its memory), and whether it found
        an entity."""
        frames = await extract_one(
            row[text_column], row[id_column], entity_types, model, prompt, max_gleanings
        )
        split = [frame.to_dict(orient="split", index=False) for frame in frames]
        return json.dumps(split), len(frames[0]) > 0

    extracted = await derive_from_rows(
        text_units.iloc[missing],
        extract,
        callbacks,
        num_threads=num_threads,
        async_type=async_type,
        progress_msg="extract graph progress: ",
    )
    for position, result in zip(missing, extracted, strict=True):
        if result is not None:
            found[position], has_entities = result
            memo.computed += has_entities
    new = unit_rows(
        [(position, keys[position], text) for position, text in found.items() if text is not None]
    )
    rows = in_order([kept, new])
    now = name_variants.renames(rows)
    stored_rows.write(rows, name_variants.recorded(now))
    before = name_variants.read_recorded(
        (previous.schema.metadata or {}).get(RENAMES) if previous is not None else None
    )
    units = pa.array(text_units[id_column].astype(str).tolist(), pa.string())
    merging = name_variants.renamed(rows, now)
    entities = grouped(merging, units, ENTITY)
    relationships = grouped(merging, units, RELATIONSHIP, entities.table["title"])
    changed = names(name_variants.renamed(new, now)) | names(name_variants.renamed(gone, before))
    return entities, relationships, changed | _renames_changed(rows, previous, now, before)


def _renames_changed(
    rows: "pa.Table", previous: "pa.Table | None", now: Renames, before: Renames
) -> set[str]:
    """The names (`summary_name`) whose description lists changed because a title is renamed
    otherwise than in the previous version: each row naming such a title, as renamed now and as
    renamed then."""
    import pyarrow as pa
    import pyarrow.compute as pc

    moved = [title for title in now.keys() | before.keys() if now.get(title) != before.get(title)]
    if not moved:
        return set()
    titles = pa.array(moved, pa.string())
    changed: set[str] = set()
    for table in (rows, previous):
        if table is None:
            continue
        naming = pc.or_(
            pc.is_in(table["first"], value_set=titles), pc.is_in(table["second"], value_set=titles)
        )
        touched = table.filter(pc.fill_null(naming, False))
        changed |= names(name_variants.renamed(touched, now)) | names(
            name_variants.renamed(touched, before)
        )
    return changed
