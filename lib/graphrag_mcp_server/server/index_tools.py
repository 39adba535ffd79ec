"""MCP tools that write: build_index, tune_prompts and cancel_index_job (absent on a read-only
server); each starts or stops a background job and returns it."""

import asyncio
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from graphrag_mcp_server.handlers.indexing.documents import Limits
from graphrag_mcp_server.handlers.indexing.tuning import (
    DocSelectionType,
    TuneOptions,
    tuning_config,
)
from graphrag_mcp_server.handlers.results import IndexJob, JobState
from graphrag_mcp_server.server.access import confined_data_path
from graphrag_mcp_server.server.context import ServerContext, start_build, start_tuning
from graphrag_mcp_server.server.tool_base import TUNE, WRITE, guarded

DataPath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        pattern=r"^[^\x00]*$",
        description="Folder of documents under the server's data roots (a relative path: under the "
        "first)",
    ),
]


def register_index_tools(server: MCPServer, shared: ServerContext) -> None:
    """build_index, tune_prompts and cancel_index_job: absent on a read-only server."""

    @server.tool(
        title="Build or update the index",
        annotations=WRITE,
        description="Build or update the index from a folder of documents (text, Markdown, PDF, "
        "Office, HTML, CSV, JSON) under the server's data roots. In the background: returns the "
        "job, finished if it ends within a short wait; index_status follows it. One job at a time. "
        "Cost: model calls for each new or changed chunk.",
    )
    async def build_index(
        data_path: DataPath,
        mode: Annotated[
            Literal["incremental", "full"],
            Field(description="incremental updates the index; full rebuilds it"),
        ] = "incremental",
        ctx: Context | None = None,
    ) -> IndexJob:
        return await guarded(shared, _build_index(shared, data_path, mode, ctx))

    @server.tool(
        title="Tune the prompts to the corpus",
        annotations=TUNE,
        description="Adapt the extraction, summary and report prompts to a folder's documents "
        "(graphrag's prompt tuning; the old ones are kept); the next build_index redoes what they "
        "affect. A background job like build_index. Cost: about a dozen model calls.",
    )
    async def tune_prompts(
        data_path: DataPath,
        domain: Annotated[
            str | None, Field(max_length=200, description="Default: the model names it")
        ] = None,
        language: Annotated[
            str | None,
            Field(max_length=100, description="Language of the prompts (default: detected)"),
        ] = None,
        selection_method: Annotated[
            DocSelectionType,
            Field(description="How text chunks are picked: random, top, all, auto (by embedding)"),
        ] = DocSelectionType.RANDOM,
        limit: Annotated[
            int | None,
            Field(ge=1, le=1000, description="Chunks to tune from (random, top; default 15)"),
        ] = None,
        max_tokens: Annotated[
            int, Field(ge=200, le=100_000, description="Most tokens of the extraction prompt")
        ] = 2000,
        discover_entity_types: Annotated[
            bool, Field(description="Let the model name the entity types")
        ] = True,
        ctx: Context | None = None,
    ) -> IndexJob:
        options = TuneOptions(
            domain=domain,
            language=language,
            selection_method=selection_method,
            limit=limit,
            max_tokens=max_tokens,
            discover_entity_types=discover_entity_types,
        )
        return await guarded(shared, _tune_prompts(shared, data_path, options, ctx))

    @server.tool(
        title="Cancel an index job",
        annotations=WRITE,
        description="Stop a running index job (the running one when no id is given); the index "
        "stays as it was before the job.",
    )
    async def cancel_index_job(
        job_id: Annotated[
            str | None, Field(max_length=64, description="Job id returned by build_index")
        ] = None,
    ) -> IndexJob:
        return await guarded(shared, shared.jobs.cancel(job_id))


async def _build_index(
    shared: ServerContext, data_path: str, mode: str, ctx: Context | None
) -> IndexJob:
    settings = shared.settings
    folder = confined_data_path(data_path, shared.data_roots)
    job = await start_build(
        shared, folder, mode, Limits(settings.max_job_documents, settings.max_job_bytes)
    )
    return await _waited(shared, job, ctx, "workflow")


async def _tune_prompts(
    shared: ServerContext, data_path: str, options: TuneOptions, ctx: Context | None
) -> IndexJob:
    folder = confined_data_path(data_path, shared.data_roots)
    # a root without settings.yaml fails the call
    await asyncio.to_thread(tuning_config, shared.root, folder)
    return await _waited(shared, start_tuning(shared, folder, options), ctx, "stage")


async def _waited(
    shared: ServerContext, job: IndexJob, ctx: Context | None, step_name: str
) -> IndexJob:
    """The job once it ends within the server's build wait, else still running; progress sent
    meanwhile."""

    async def report(running: IndexJob) -> None:
        if ctx is not None:
            step = f"{step_name} {running.workflow}" if running.workflow else "starting"
            await ctx.report_progress(running.workflows_done, running.workflows_total, step)

    job = await shared.jobs.wait(job.job_id, shared.settings.build_wait_seconds, report)
    if job.state is JobState.FAILED:
        raise ToolError(
            f"{'tuning' if job.mode == 'tune' else 'index'} job {job.job_id} failed: {job.error}"
        )
    return job
