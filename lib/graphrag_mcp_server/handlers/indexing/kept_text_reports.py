"""The workflow `create_community_reports_text_kept`, named in the pipeline in place of graphrag's
`create_community_reports_text` (the fast method's reports, written from text units).

graphrag's workflow builds each community's context from its text units and asks the model for a
report of each (`summarize_communities`, which calls `run_extractor`). This workflow runs the same
steps, its reports through kept_reports.py `community_reports`: a report whose rows are unchanged
comes from the previous version (carried_reports.py `report_of`)."""

from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.kept_reports import (
    ReportRun,
    community_reports,
    report_model,
    written,
)
from graphrag_mcp_server.handlers.indexing.memos import CARRIED, run_state

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

WORKFLOW, REPLACES = "create_community_reports_text_kept", "create_community_reports_text"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_community_reports_text, with reports carried over."""
    from graphrag.data_model.data_reader import DataReader
    from graphrag.index.operations.summarize_communities.explode_communities import (
        explode_communities,
    )
    from graphrag.index.operations.summarize_communities.text_unit_context.context_builder import (
        build_level_context,
        build_local_context,
    )

    reader = DataReader(context.output_table_provider)
    communities = await reader.communities()
    nodes = explode_communities(communities, await reader.entities())
    model = report_model(config, context)
    settings = config.community_reports
    contexts = build_local_context(
        communities, await reader.text_units(), nodes, model.tokenizer, settings.max_input_length
    )
    reports = await community_reports(
        ReportRun(config, context, model, run_state(context, CARRIED)),
        nodes,
        communities,
        contexts,
        build_level_context,
        settings.resolved_prompts().text_prompt,
    )
    return await written(context, reports, communities)
