"""The workflow `extract_graph_kept`, named in the pipeline in place of graphrag's `extract_graph`.

graphrag's workflow extracts a graph from every text unit and summarises every entity's and
relationship's descriptions. This one runs the same steps with graphrag's operations, extracting
only the text units whose text the previous version did not extract and summarising only the
descriptions it did not summarise (carry_over.py's memos, handed in the run's state); the rest is
taken from the previous version. The tables it writes are those graphrag's workflow writes.
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
    carried_rows,
    in_order,
    merged,
    names,
    summary_name,
    unit_rows,
)
from graphrag_mcp_server.handlers.indexing.hub_summaries import (
    fits_one_call,
    hub_summaries,
    usable_tokens,
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
    for kind, frame in (("entities", entities), ("relationships", relationships)):
        if len(frame) == 0:  # graphrag's words
            msg = f"Graph Extraction failed. No {kind} detected during extraction."
            logger.error(msg)
            raise ValueError(msg)
    raw_entities, raw_relationships = entities.copy(), relationships.copy()
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
    )
    relationships = relationships.drop(columns=["description"]).merge(
        relationship_summaries, on=["source", "target"], how="left"
    )
    entities = entities.drop(columns=["description"]).merge(
        entity_summaries, on="title", how="left"
    )
    tables = context.output_table_provider
    await tables.write_dataframe("entities", entities)
    await tables.write_dataframe("relationships", relationships)
    if config.snapshots.raw_graph:
        await tables.write_dataframe("raw_entities", raw_entities)
        await tables.write_dataframe("raw_relationships", raw_relationships)
    return WorkflowFunctionOutput(
        result={"entities": sample(entities), "relationships": sample(relationships)}
    )


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
) -> "tuple[pd.DataFrame, pd.DataFrame, set[str]]":
    """graphrag's graph extraction over text units, extracting only those whose text the previous
    version did not, and graphrag's merge of every unit's rows (extracted_rows.py: the previous
    version's rows, less those of units gone, plus those of units new). Also the names
    (`summary_name`) of the entities and relationships whose description lists may differ from
    the previous version's: those in a unit new to this version or in one of the previous version
    that is gone (the lists of all others are made of the same units' descriptions in the same
    order)."""
    from graphrag.index.operations.extract_graph import extract_graph as operation
    from graphrag.index.operations.extract_graph.utils import filter_orphan_relationships
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
    units = text_units[id_column].astype(str).tolist()
    merging = name_variants.renamed(rows, now)
    entities = merged(merging, units, ENTITY)
    relationships = filter_orphan_relationships(merged(merging, units, RELATIONSHIP), entities)
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


async def summarized(
    carried: CarriedOver,
    entities_df: "pd.DataFrame",
    relationships_df: "pd.DataFrame",
    callbacks: Any,
    model: Any,
    max_summary_length: int,
    max_input_tokens: int,
    prompt: str,
    num_threads: int,
    changed: set[str] | None = None,
) -> "tuple[pd.DataFrame, pd.DataFrame]":
    """graphrag's summaries of every entity's and relationship's descriptions, handing graphrag only
    the rows the previous version did not summarise (one task a row: 10,000 rows cost half a
    second in asyncio alone). A row not named in `changed` has the previous version's key for its
    name (its input is the same), so its key is not computed again: hashing 220,000 description
    lists was a tenth of an update at 10,000 documents (None: every key computed)."""
    import pandas as pd
    from graphrag.index.operations.summarize_descriptions.summarize_descriptions import (
        summarize_descriptions,
    )

    memo = carried[Step.SUMMARY]

    def key(
        identity: str | tuple[str, str], descriptions: Any
    ) -> str:  # graphrag hands on each row's set, sorted
        return _summary_key(
            identity, sorted(set(descriptions)), max_summary_length, max_input_tokens, prompt
        )

    settings = input_hash(max_summary_length, max_input_tokens, text_digest(prompt))
    titles = entities_df["title"].astype(str)
    # a title extracted with two types is two rows: its name is not one row's
    recomputed = {summary_name(title) for title in titles[titles.duplicated()]}

    def keyed(identities: list[Any], lists: Any) -> list[tuple[Any, str]]:
        """Each row's identity and memo key: the previous version's key for its name while the
        row is unchanged (looked up at once), else computed from its descriptions."""
        plain = [summary_name(identity) for identity in identities]
        names = [f"{settings}\x00{name}" for name in plain]
        unchanged = [
            changed is not None and name not in changed and name not in recomputed for name in plain
        ]
        kept_keys = iter(
            memo.previous_keys([name for name, kept in zip(names, unchanged, strict=True) if kept])
        )
        keys = [
            (next(kept_keys) if kept else None) or key(identity, descriptions)
            for identity, descriptions, kept in zip(identities, lists, unchanged, strict=True)
        ]
        memo.identities.update(zip(keys, names, strict=True))
        return list(zip(identities, keys, strict=True))

    nodes = keyed(titles.tolist(), entities_df["description"])
    pairs = zip(
        relationships_df["source"].astype(str).tolist(),
        relationships_df["target"].astype(str).tolist(),
        strict=True,
    )
    edges = keyed(list(pairs), relationships_df["description"])
    missing_nodes = [found is None for found in memo.take_many([key for _, key in nodes])]
    missing_edges = [found is None for found in memo.take_many([key for _, key in edges])]
    usable = usable_tokens(model, prompt, max_input_tokens)
    long_nodes = _too_long(entities_df, missing_nodes, model, usable)
    long_edges = _too_long(relationships_df, missing_edges, model, usable)
    hubs = _hub_rows(entities_df, long_nodes, nodes) + _hub_rows(
        relationships_df, long_edges, edges
    )
    await hub_summaries(
        hubs,
        relationships_df,
        memo,
        key,
        model,
        usable,
        lambda identity, top: _summary_of(
            identity, top, model, max_summary_length, max_input_tokens, prompt
        ),
        num_threads,
    )
    for row in long_nodes:
        missing_nodes[row] = False
    for row in long_edges:
        missing_edges[row] = False
    if any(missing_nodes) or any(missing_edges):  # graphrag answers row by row, in order
        new_nodes, new_edges = await summarize_descriptions(
            entities_df[missing_nodes],
            relationships_df[missing_edges],
            callbacks,
            model,
            max_summary_length,
            max_input_tokens,
            prompt,
            num_threads,
        )
        for (_, found), summary in zip(
            _picked(nodes, missing_nodes), _column(new_nodes), strict=True
        ):
            memo.put(found, summary)
        for (_, found), summary in zip(
            _picked(edges, missing_edges), _column(new_edges), strict=True
        ):
            memo.put(found, summary)
    entities = pd.DataFrame(
        {
            "title": [title for title, _ in nodes],
            "description": memo.take_many([found for _, found in nodes]),
        }
    )
    relationships = pd.DataFrame(
        {
            "source": [pair[0] for pair, _ in edges],
            "target": [pair[1] for pair, _ in edges],
            "description": memo.take_many([found for _, found in edges]),
        }
    )
    return entities, relationships


def _too_long(frame: "pd.DataFrame", missing: list[bool], model: Any, usable: int) -> list[int]:
    """The positions of the missing rows whose descriptions graphrag would summarise in more than
    one call (hub_summaries.py's rows)."""
    return [
        row
        for row, (absent, listed) in enumerate(zip(missing, frame["description"], strict=True))
        if absent and not fits_one_call(sorted(set(listed)), model, usable)
    ]


def _hub_rows(frame: "pd.DataFrame", rows: list[int], keyed: list[Any]) -> list[Any]:
    """hub_summaries.py's input for the rows at `rows`: identity, the whole list's memo key (from
    `keyed`), descriptions and the text units that state them."""
    descriptions, units = frame["description"], frame["text_unit_ids"]
    return [(*keyed[row], descriptions.iat[row], units.iat[row]) for row in rows]


async def _summary_of(
    identity: Any,
    descriptions: list[str],
    model: Any,
    max_summary_length: int,
    max_input_tokens: int,
    prompt: str,
) -> str:
    """graphrag's summary of one row's descriptions."""
    from graphrag.index.operations.summarize_descriptions.summarize_descriptions import (
        run_summarize_descriptions,
    )

    result = await run_summarize_descriptions(
        identity, descriptions, model, max_summary_length, max_input_tokens, prompt
    )
    return str(result.description)


def _picked(rows: list[Any], chosen: list[bool]) -> list[Any]:
    return [row for row, keep in zip(rows, chosen, strict=True) if keep]


def _column(frame: "pd.DataFrame") -> list[Any]:
    """The summaries graphrag returned (an empty frame when it was handed no row)."""
    return list(frame["description"]) if len(frame) else []


def _summary_key(
    identity: str | tuple[str, str],
    descriptions: list[str],
    max_summary_length: int,
    max_input_tokens: int,
    prompt: str,
) -> str:
    """The memo key of one entity's or relationship's summary, from graphrag's input to it."""
    return input_hash(
        identity, descriptions, max_summary_length, max_input_tokens, text_digest(prompt)
    )
