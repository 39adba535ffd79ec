"""The workflow `create_community_reports_kept`, named in the pipeline in place of graphrag's
`create_community_reports`.

graphrag's workflow builds each community's context (`build_local_context`, which sorts every
context with `parallel_sort_context_batch`) and asks the model for a report of each
(`summarize_communities`, which calls `run_extractor`). Both are module functions that graphrag
offers no way to change, so this workflow runs graphrag 3.3's steps in graphrag's order with
carried_reports.py's two in their place: a context whose records are unchanged and a report whose
rows are unchanged come from the previous version, a community of one entity without
relationships gets its context and report from its row (lone_entities.py). Everything else is
graphrag's own: `explode_communities`, `build_level_context`, `derive_from_rows`, `run_extractor`;
graphrag's `finalize_community_reports` is `finalized_reports`, its ids hashed without a row-wise
apply (tests/test_report_context.py compares both with graphrag's).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.arrow_columns import large_strings
from graphrag_mcp_server.handlers.indexing import (
    carried_reports,
    report_rows,
    unchanged_communities,
)
from graphrag_mcp_server.handlers.indexing.memos import CARRIED, CarriedOver, run_state, sample
from graphrag_mcp_server.handlers.indexing.report_rows import ReportRows

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
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
    rows: ReportRows | None = run_state(context, report_rows.STATE)
    settings = config.community_reports
    prompt = settings.resolved_prompts().graph_prompt
    nodes = community_nodes(communities, await reader.entities())
    contexts, unchanged, signatures = local_contexts(
        nodes,
        community_edges(await reader.relationships()),
        None if claims is None else _with_details(claims, _CLAIM_COLUMNS, "claim_details"),
        model.tokenizer,
        settings.max_input_length,
        carried,
        unchanged_communities.report_settings(
            carried_reports.CONTEXT_FORM, settings.max_input_length, prompt, settings.max_length
        ),
        rows.previous_rows() if rows is not None else {},
    )
    reports = await community_reports(
        ReportRun(config, context, model, carried),
        nodes,
        communities,
        contexts,
        build_level_context,
        prompt,
        unchanged,
    )
    if rows is not None:
        reports = _with_previous_rows(reports, unchanged, rows)
        rows.record(signatures)
    return await written(context, reports, communities)


def _with_previous_rows(
    reports: "pd.DataFrame", unchanged: "Unchanged", rows: ReportRows
) -> "pd.DataFrame":
    """`reports` with those `unchanged` holds as rows of the previous version's table, in
    graphrag's order: level by level from the highest, by community within a level."""
    import pandas as pd

    taken = {
        int(community): (level, row)
        for level, found in unchanged.items()
        for community, row in found.items()
        if isinstance(row, int)
    }
    if not taken:
        return reports
    merged = pd.concat([reports, rows.rows(taken)], ignore_index=True)
    order = merged.assign(_level=-merged["level"].astype(int), _community=merged["community"])
    return merged.loc[order.sort_values(["_level", "_community"], kind="stable").index]


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
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    output = finalized_reports(reports, communities)
    await context.output_table_provider.write_dataframe("community_reports", output)
    return WorkflowFunctionOutput(result=sample(output))


def finalized_reports(reports: "pd.DataFrame", communities: "pd.DataFrame") -> "pd.DataFrame":
    """graphrag 3.3's finalize_community_reports, each id hashed from its full content as
    graphrag's gen_sha512_hash hashes it, without graphrag's row-wise apply (which turned every
    row into a Series: a tenth of this step at 10,000 documents)."""
    from hashlib import sha512

    from graphrag.data_model.schemas import COMMUNITY_REPORTS_FINAL_COLUMNS

    output = reports.merge(
        communities.loc[:, ["community", "parent", "children", "size", "period"]],
        on="community",
        how="left",
    )
    output["community"] = output["community"].astype(int)
    output["human_readable_id"] = output["community"]
    output["id"] = [
        sha512(str(text).encode("utf-8"), usedforsecurity=False).hexdigest()
        for text in output["full_content"]
    ]
    return output.loc[:, COMMUNITY_REPORTS_FINAL_COLUMNS]


def community_nodes(communities: "pd.DataFrame", entities: "pd.DataFrame") -> "pd.DataFrame":
    """Each entity once per community it belongs to, a missing description written as graphrag
    writes it (graphrag's explode_communities and node preparation, details made per level)."""
    from graphrag.index.operations.summarize_communities.explode_communities import (
        explode_communities,
    )

    return explode_communities(communities, entities).fillna({"description": "No Description"})


def community_edges(relationships: "pd.DataFrame") -> "pd.DataFrame":
    """The relationships, a missing description written as graphrag writes it (graphrag's edge
    preparation, details made per level)."""
    return relationships.fillna({"description": "No Description"})


_NODE_COLUMNS = ("human_readable_id", "title", "description", "degree")
_EDGE_COLUMNS = ("human_readable_id", "source", "target", "description", "combined_degree")
_CLAIM_COLUMNS = ("human_readable_id", "subject_id", "type", "status", "description")
"""The columns graphrag's workflow puts in each record's details (graphrag 3.3 schemas)."""


def _with_details(frame: "pd.DataFrame", columns: tuple[str, ...], name: str) -> "pd.DataFrame":
    """`frame` with a missing description written as graphrag writes it, and a column `name`
    holding each row's `columns` as a record (graphrag's _prep_claims)."""
    frame = frame.fillna({"description": "No Description"})
    frame[name] = frame.loc[:, list(columns)].to_dict(orient="records")
    return frame


Unchanged = dict[int, dict[Any, dict[str, Any] | int]]
"""By level, the communities whose records did not change -> their report as written, or its row
in the previous version's reports table (report_rows.py)."""


def local_contexts(
    nodes: "pd.DataFrame",
    edges: "pd.DataFrame",
    claims: "pd.DataFrame | None",
    tokenizer: "Tokenizer",
    max_tokens: int,
    carried: CarriedOver | None,
    settings: tuple[Any, ...],
    previous_rows: "Mapping[str, int] | None" = None,
) -> "tuple[pd.DataFrame, Unchanged, dict[Any, str]]":
    """The records and context of every community at every level whose records changed since
    the previous version (graphrag's build_local_context, its contexts from
    carried_reports.sort_context_batch), with each one's signature key; and the reports of those
    whose records did not (unchanged_communities.py; every community is built when the run
    carries nothing over or has claims), by `previous_rows` where it gives their row
    (report_rows.py); and every community's signature key."""
    import graphrag.data_model.schemas as schemas
    import pandas as pd
    from graphrag.index.operations.summarize_communities.utils import get_levels

    frames, unchanged, signatures = [], {}, {}
    ends = EdgeEnds.of(edges)
    for level in get_levels(nodes, schemas.COMMUNITY_LEVEL):
        members, first_edge = level_members(nodes, edges, level, ends)
        keys = (
            {}
            if carried is None or claims is not None
            else unchanged_communities.signature_keys(
                members, first_edge, edges, _NODE_COLUMNS, _EDGE_COLUMNS, settings
            )
        )
        signatures.update(keys)
        reports = (
            {}
            if carried is None
            else unchanged_communities.unchanged_reports(
                carried, list(keys.values()), previous_rows or {}
            )
        )
        unchanged[level] = {
            community: reports[key] for community, key in keys.items() if key in reports
        }
        changed = ~members[schemas.COMMUNITY_ID].isin(list(unchanged[level])).to_numpy()
        records = member_records(members[changed], first_edge[changed], edges, claims)
        frame = carried_reports.sort_context_batch(records, tokenizer, max_tokens, carried)
        frame[schemas.COMMUNITY_LEVEL] = level
        frame[SIGNATURE] = [keys.get(community) for community in frame[schemas.COMMUNITY_ID]]
        frames.append(frame)
    built = [frame for frame in frames if len(frame)]  # an empty frame's columns have no dtype
    return (pd.concat(built) if built else frames[0]), unchanged, signatures


SIGNATURE = "signature_key"
"""The column of a context's signature key (unchanged_communities.py), None when not made."""


def level_members(
    nodes: "pd.DataFrame", edges: "pd.DataFrame", level: int, ends: "EdgeEnds | None" = None
) -> "tuple[pd.DataFrame, np.ndarray]":
    """The members of each community at `level` in graphrag's order (title, community, level,
    degree), and the position in `edges` of the relationship each is listed with: the first
    inside the level it is the source of, else the first it is the target of (-1: none; graphrag
    3.3's _prepare_reports_at_level up to its sort)."""
    import graphrag.data_model.schemas as schemas
    import numpy as np

    ends = ends or EdgeEnds.of(edges)
    at_level = nodes[nodes[schemas.COMMUNITY_LEVEL] == level]
    member = np.zeros(len(ends.titles) + 1, dtype=bool)  # the last code: a title on no edge
    member[ends.codes_of(at_level[schemas.TITLE])] = True
    member[-1] = False
    inside = np.flatnonzero(member[ends.source] & member[ends.target])
    first = np.full(len(member), -1, dtype=np.int64)
    for codes in (ends.target, ends.source):  # a source's first edge wins
        earliest = np.full(len(member), len(ends.source), dtype=np.int64)
        np.minimum.at(earliest, codes[inside], inside)  # no sort, as np.unique's first would
        first = np.where(earliest < len(ends.source), earliest, first)
    keys = [schemas.TITLE, schemas.COMMUNITY_ID, schemas.COMMUNITY_LEVEL, schemas.NODE_DEGREE]
    frame = at_level.dropna(subset=keys).drop_duplicates(subset=keys).sort_values(keys)
    return frame, first[ends.codes_of(frame[schemas.TITLE])]


@dataclass(frozen=True)
class EdgeEnds:
    """Each relationship's source and target as codes of their titles (`titles`, each once): made
    once per run by Arrow, so a level's inside relationships are found by array lookups."""

    titles: "pa.Array"
    source: "np.ndarray"
    target: "np.ndarray"

    @classmethod
    def of(cls, edges: "pd.DataFrame") -> "EdgeEnds":
        import graphrag.data_model.schemas as schemas
        import pyarrow as pa
        import pyarrow.compute as pc

        ends = [
            large_strings(edges[column]) for column in (schemas.EDGE_SOURCE, schemas.EDGE_TARGET)
        ]
        encoded = pc.dictionary_encode(pa.concat_arrays(ends))
        codes = pc.fill_null(encoded.indices, -1).to_numpy()
        return cls(encoded.dictionary, codes[: len(ends[0])], codes[len(ends[0]) :])

    def codes_of(self, titles: "pd.Series") -> "np.ndarray":
        """The code of each title, -1 for a title on no relationship."""
        import pyarrow.compute as pc

        found = pc.index_in(large_strings(titles), value_set=self.titles)
        codes: np.ndarray = pc.fill_null(found, -1).to_numpy()
        return codes


def member_records(
    members: "pd.DataFrame",
    first_edge: "np.ndarray",
    edges: "pd.DataFrame",
    claims: "pd.DataFrame | None",
) -> "pd.DataFrame":
    """The records of each community of `members` (level_members'), one per member: its details,
    its first edge and its claims (graphrag 3.3's _prepare_reports_at_level up to its sort)."""
    import graphrag.data_model.schemas as schemas

    keys = [schemas.TITLE, schemas.COMMUNITY_ID, schemas.COMMUNITY_LEVEL, schemas.NODE_DEGREE]
    merged = members.loc[:, keys]
    merged[schemas.NODE_DETAILS] = members.loc[:, list(_NODE_COLUMNS)].to_dict(orient="records")
    listed = first_edge >= 0
    details = iter(
        edges.iloc[first_edge[listed]].loc[:, list(_EDGE_COLUMNS)].to_dict(orient="records")
    )
    merged[schemas.EDGE_DETAILS] = [[next(details)] if found else [] for found in listed]
    context_columns = [
        schemas.TITLE,
        schemas.NODE_DEGREE,
        schemas.NODE_DETAILS,
        schemas.EDGE_DETAILS,
    ]
    if claims is not None:
        members_titles = set(members[schemas.TITLE])
        merged = merged.merge(
            claims.loc[
                claims[schemas.CLAIM_SUBJECT].isin(members_titles),
                [schemas.CLAIM_SUBJECT, schemas.CLAIM_DETAILS],
            ].rename(columns={schemas.CLAIM_SUBJECT: schemas.TITLE}),
            on=schemas.TITLE,
            how="left",
        )
        context_columns.append(schemas.CLAIM_DETAILS)
    merged[schemas.ALL_CONTEXT] = merged.loc[:, context_columns].to_dict(orient="records")
    return merged.groupby(schemas.COMMUNITY_ID).agg({schemas.ALL_CONTEXT: list}).reset_index()


def _text(value: Any) -> str | None:
    """A context column's text; None for a missing one (pandas' concat makes it NaN)."""
    return value if isinstance(value, str) else None


def level_records(
    nodes: "pd.DataFrame", edges: "pd.DataFrame", claims: "pd.DataFrame | None", level: int
) -> "pd.DataFrame":
    """The records of every community at `level` (graphrag 3.3's _prepare_reports_at_level up to
    its sort)."""
    members, first_edge = level_members(nodes, edges, level)
    return member_records(members, first_edge, edges, claims)


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
    unchanged: Unchanged | None = None,
) -> "pd.DataFrame":
    """A report per community, level by level from the lowest (graphrag's summarize_communities,
    each report from carried_reports.report_of), those of the `unchanged` communities as they
    were written (in community order among the others)."""
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
    unchanged = unchanged or {}
    tick = progress_ticker(
        run.context.callbacks.progress,
        len(contexts) + sum(len(reports) for reports in unchanged.values()),
    )
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
                (row.get(SIGNATURE), row.get(carried_reports.CONTEXT_KEY)),
                _text(row.get(carried_reports.PREVIOUS_CONTEXT)),
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
        found = [report for report in written if report is not None]
        if carried := unchanged.get(level):
            tick(len(carried))
            found += [
                {"community": community, "level": level, **report}
                for community, report in carried.items()
                if not isinstance(report, int)  # a row of the previous table: added by its caller
            ]
            found.sort(key=lambda report: int(report["community"]))
        reports.extend(found)
    return pd.DataFrame(reports)
