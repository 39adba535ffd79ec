"""The workflow `create_community_reports_kept`, named in the pipeline in place of graphrag's
`create_community_reports`.

graphrag's workflow builds each community's context (`build_local_context`, which sorts every
context with `parallel_sort_context_batch`) and asks the model for a report of each
(`summarize_communities`, which calls `run_extractor`). Both are module functions that graphrag
offers no way to change, so this workflow runs graphrag 3.3's steps in graphrag's order with
carried_reports.py's two in their place: a context whose records are unchanged and a report whose
rows are unchanged come from the previous version, a community of one entity without
relationships gets its context and report from its row (lone_entities.py). Everything else is
graphrag's own: `explode_communities`, `build_level_context`, `derive_from_rows`, `run_extractor`,
`finalize_community_reports` (tests/test_kept_reports.py compares the contexts with graphrag's).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing import carried_reports
from graphrag_mcp_server.handlers.indexing.memos import CARRIED, CarriedOver, run_state

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag_llm.completion import LLMCompletion
    from graphrag_llm.tokenizer import Tokenizer

WORKFLOW, REPLACES = "create_community_reports_kept", "create_community_reports"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_community_reports, with contexts and reports carried over."""
    from graphrag.data_model.data_reader import DataReader
    from graphrag.index.operations.summarize_communities.graph_context.context_builder import (
        build_level_context,
    )

    tables = context.output_table_provider
    reader = DataReader(tables)
    communities = await reader.communities()
    claims = None
    if config.extract_claims.enabled and await tables.has("covariates"):
        claims = await reader.covariates()
    model = report_model(config, context)
    carried: CarriedOver | None = run_state(context, CARRIED)
    nodes = community_nodes(communities, await reader.entities())
    contexts = local_contexts(
        nodes,
        community_edges(await reader.relationships()),
        None if claims is None else _with_details(claims, _CLAIM_COLUMNS, "claim_details"),
        model.tokenizer,
        config.community_reports.max_input_length,
        carried,
    )
    reports = await community_reports(
        ReportRun(config, context, model, carried),
        nodes,
        communities,
        contexts,
        build_level_context,
        config.community_reports.resolved_prompts().graph_prompt,
    )
    return await written(context, reports, communities)


def report_model(config: "GraphRagConfig", context: "PipelineRunContext") -> "LLMCompletion":
    """The report model with graphrag's cache, as graphrag's report workflows make it."""
    from graphrag.cache.cache_key_creator import cache_key_creator
    from graphrag_llm.completion import create_completion

    settings = config.community_reports
    return create_completion(
        config.get_completion_model_config(settings.completion_model_id),
        cache=context.cache.child(settings.model_instance_name),
        cache_key_creator=cache_key_creator,
    )


async def written(
    context: "PipelineRunContext", reports: "pd.DataFrame", communities: "pd.DataFrame"
) -> "WorkflowFunctionOutput":
    """The reports finalised and written as graphrag's `community_reports` table."""
    from graphrag.index.operations.finalize_community_reports import (
        finalize_community_reports,
    )
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    output = finalize_community_reports(reports, communities)
    await context.output_table_provider.write_dataframe("community_reports", output)
    return WorkflowFunctionOutput(result=output)


def community_nodes(communities: "pd.DataFrame", entities: "pd.DataFrame") -> "pd.DataFrame":
    """Each entity once per community it belongs to, with its details (graphrag's
    explode_communities and node preparation)."""
    from graphrag.index.operations.summarize_communities.explode_communities import (
        explode_communities,
    )

    return _with_details(explode_communities(communities, entities), _NODE_COLUMNS, "node_details")


def community_edges(relationships: "pd.DataFrame") -> "pd.DataFrame":
    """The relationships with their details (graphrag's edge preparation)."""
    return _with_details(relationships, _EDGE_COLUMNS, "edge_details")


_NODE_COLUMNS = ("human_readable_id", "title", "description", "degree")
_EDGE_COLUMNS = ("human_readable_id", "source", "target", "description", "combined_degree")
_CLAIM_COLUMNS = ("human_readable_id", "subject_id", "type", "status", "description")
"""The columns graphrag's workflow puts in each record's details (graphrag 3.3 schemas)."""


def _with_details(frame: "pd.DataFrame", columns: tuple[str, ...], name: str) -> "pd.DataFrame":
    """`frame` with a missing description written as graphrag writes it, and a column `name`
    holding each row's `columns` as a record (graphrag's _prep_nodes/_prep_edges/_prep_claims)."""
    frame = frame.fillna({"description": "No Description"})
    frame[name] = frame.loc[:, list(columns)].to_dict(orient="records")
    return frame


def local_contexts(
    nodes: "pd.DataFrame",
    edges: "pd.DataFrame",
    claims: "pd.DataFrame | None",
    tokenizer: "Tokenizer",
    max_tokens: int,
    carried: CarriedOver | None,
) -> "pd.DataFrame":
    """Every community's records and context at every level (graphrag's build_local_context, its
    contexts from carried_reports.sort_context_batch)."""
    import graphrag.data_model.schemas as schemas
    import pandas as pd
    from graphrag.index.operations.summarize_communities.utils import get_levels

    frames = []
    for level in get_levels(nodes, schemas.COMMUNITY_LEVEL):
        records = level_records(nodes, edges, claims, level)
        frame = carried_reports.sort_context_batch(records, tokenizer, max_tokens, carried)
        frame.loc[:, schemas.COMMUNITY_LEVEL] = level
        frames.append(frame)
    return pd.concat(frames)


def level_records(
    nodes: "pd.DataFrame", edges: "pd.DataFrame", claims: "pd.DataFrame | None", level: int
) -> "pd.DataFrame":
    """The records of each community at `level`, one per member: its details, the first edge it is
    the source of (else the first it is the target of) inside the level, and its claims; members
    in title order (graphrag 3.3's _prepare_reports_at_level up to its sort)."""
    import graphrag.data_model.schemas as schemas

    at_level = nodes[nodes[schemas.COMMUNITY_LEVEL] == level]
    members = set(at_level[schemas.TITLE])
    inside = edges[
        edges[schemas.EDGE_SOURCE].isin(members) & edges[schemas.EDGE_TARGET].isin(members)
    ]
    first_edge = {
        **_firsts(inside[schemas.EDGE_TARGET], inside[schemas.EDGE_DETAILS]),
        **_firsts(inside[schemas.EDGE_SOURCE], inside[schemas.EDGE_DETAILS]),
    }
    keys = [schemas.TITLE, schemas.COMMUNITY_ID, schemas.COMMUNITY_LEVEL, schemas.NODE_DEGREE]
    members_frame = at_level.dropna(subset=keys).drop_duplicates(subset=keys).sort_values(keys)
    merged = members_frame.loc[:, [*keys, schemas.NODE_DETAILS]]
    merged[schemas.EDGE_DETAILS] = [
        [first_edge[title]] if title in first_edge else [] for title in merged[schemas.TITLE]
    ]
    context_columns = [
        schemas.TITLE,
        schemas.NODE_DEGREE,
        schemas.NODE_DETAILS,
        schemas.EDGE_DETAILS,
    ]
    if claims is not None:
        merged = merged.merge(
            claims.loc[
                claims[schemas.CLAIM_SUBJECT].isin(members),
                [schemas.CLAIM_SUBJECT, schemas.CLAIM_DETAILS],
            ].rename(columns={schemas.CLAIM_SUBJECT: schemas.TITLE}),
            on=schemas.TITLE,
            how="left",
        )
        context_columns.append(schemas.CLAIM_DETAILS)
    merged[schemas.ALL_CONTEXT] = merged.loc[:, context_columns].to_dict(orient="records")
    return merged.groupby(schemas.COMMUNITY_ID).agg({schemas.ALL_CONTEXT: list}).reset_index()


def _firsts(keys: "pd.Series", values: "pd.Series") -> dict[Any, Any]:
    """Each key's first value, in row order (pandas' groupby(...).first())."""
    firsts: dict[Any, Any] = {}
    for key, value in zip(keys, values, strict=True):
        firsts.setdefault(key, value)
    return firsts


@dataclass(frozen=True)
class ReportRun:
    """What writing a run's reports needs besides the communities: its settings and state."""

    config: "GraphRagConfig"
    context: "PipelineRunContext"
    model: "LLMCompletion"
    carried: CarriedOver | None


async def community_reports(
    run: ReportRun,
    nodes: "pd.DataFrame",
    communities: "pd.DataFrame",
    contexts: "pd.DataFrame",
    level_context_builder: Callable[..., "pd.DataFrame"],
    prompt: str,
) -> "pd.DataFrame":
    """A report per community, level by level from the lowest (graphrag's summarize_communities,
    each report from carried_reports.report_of)."""
    import graphrag.data_model.schemas as schemas
    import pandas as pd
    from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks
    from graphrag.index.operations.summarize_communities.utils import get_levels
    from graphrag.index.utils.derive_from_rows import derive_from_rows
    from graphrag.logger.progress import progress_ticker

    hierarchy = (
        communities.explode("children")
        .rename({"children": "sub_community"}, axis=1)
        .loc[:, ["community", "level", "sub_community"]]
    ).dropna()
    levels = get_levels(nodes)
    # graphrag 3.3 builds every level's context before any report is written, so a context over
    # the budget is trimmed rather than made of its sub-communities' reports: the same here.
    settings = run.config.community_reports
    level_contexts = [
        level_context_builder(
            pd.DataFrame(),
            community_hierarchy_df=hierarchy,
            local_context_df=contexts,
            level=level,
            tokenizer=run.model.tokenizer,
            max_context_tokens=settings.max_input_length,
        )
        for level in levels
    ]
    tick = progress_ticker(run.context.callbacks.progress, len(contexts))
    reports: list[Any] = []
    for level, level_context in zip(levels, level_contexts, strict=True):

        async def report(row: Any) -> Any:
            found = await carried_reports.report_of(
                row[schemas.COMMUNITY_ID],
                row[schemas.CONTEXT_STRING],
                row[schemas.COMMUNITY_LEVEL],
                run.model,
                prompt,
                settings.max_length,
                run.carried,
            )
            tick()
            return found

        written = await derive_from_rows(
            level_context,
            report,
            callbacks=NoopWorkflowCallbacks(),
            num_threads=run.config.concurrent_requests,
            async_type=run.config.async_mode,
            progress_msg=f"level {level} summarize communities progress: ",
        )
        reports.extend(found for found in written if found is not None)
    return pd.DataFrame(reports)
