"""MCP tools: each validates its arguments, calls one handler, and returns the handler's typed
result."""

from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ClientCapabilities, SamplingCapability
from pydantic import Field

from graphrag_mcp_server.config.settings import AnswerModel
from graphrag_mcp_server.errors import ModelCallsFailedError
from graphrag_mcp_server.handlers.results import IndexJob, SearchResult, ServerStatistics, Turn
from graphrag_mcp_server.handlers.search.context import DEFAULT_CONTEXT_TOKENS
from graphrag_mcp_server.handlers.search.run import SearchType, in_search_thread, tuned_config
from graphrag_mcp_server.server.context import ServerContext, server_statistics
from graphrag_mcp_server.server.progress import search_progress
from graphrag_mcp_server.server.tool_base import READ, guarded

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    from graphrag_mcp_server.handlers.tables import IndexTables

CommunityLevel = Annotated[
    int, Field(ge=0, le=10, description="Community level: 0 = broadest, higher = finer")
]
ResponseType = Annotated[str, Field(min_length=1, description="Form of the answer, e.g. 'List'")]
ContextOnly = Annotated[
    bool,
    Field(description="The ranked context (with documents) instead of an answer: no model call"),
]
TimeoutSeconds = Annotated[
    float | None,
    Field(gt=0, le=3600, description="Seconds to wait for the model (default: the server's)"),
]
TopEntities = Annotated[
    int | None,
    Field(ge=1, le=100, description="Entities to start from (default 10)"),
]
Conversation = Annotated[
    list[Turn],
    Field(max_length=20, description="Earlier turns, oldest first"),
]
MaxContextTokens = Annotated[
    int,
    Field(ge=500, le=200_000, description="context_only's token budget"),
]


def register_tools(server: MCPServer, shared: ServerContext) -> None:
    """Add the search and statistics tools, and unless the server is read-only the index tools."""
    Query = Annotated[
        str,
        Field(
            min_length=1,
            max_length=shared.settings.max_query_chars,
            description="The question, in natural language",
        ),
    ]

    async def search(
        search_type: SearchType, query: str, ctx: Context | None, options: dict[str, Any]
    ) -> SearchResult:
        async def answer() -> SearchResult:
            snapshot = await shared.state.snapshot()
            tuning = {
                key: options.pop(key) for key in ("top_k", "follow_up_depth") if key in options
            }
            config = tuned_config(snapshot.config, search_type, **tuning)
            result = await _answer(
                shared, config, snapshot.tables, search_type, query, ctx, options
            )
            return result.model_copy(update={"index_version": snapshot.version})

        result = await guarded(shared, answer())
        shared.costs.add(
            f"{search_type.value}_search" + (" (context_only)" if result.context else ""), result
        )
        return result

    @server.tool(
        title="Global search",
        annotations=READ,
        description="Answer a question about the corpus as a whole (themes, trends, 'what are the "
        "main...') from GraphRAG's community reports, map-reduce style. Cost: one model call per "
        "batch of reports at the chosen level plus one to combine, so several calls; prefer "
        "local_search for questions about specific entities.",
    )
    async def global_search(
        query: Query,
        community_level: CommunityLevel = 2,
        response_type: ResponseType = "Multiple Paragraphs",
        dynamic_community_selection: Annotated[
            bool,
            Field(
                description="Let the model pick relevant communities across levels instead of one "
                "level"
            ),
        ] = False,
        conversation: Conversation = [],  # noqa: B006 - pydantic copies defaults
        context_only: ContextOnly = False,
        max_context_tokens: MaxContextTokens = DEFAULT_CONTEXT_TOKENS,
        timeout_seconds: TimeoutSeconds = None,
        ctx: Context | None = None,
    ) -> SearchResult:
        return await search(
            SearchType.GLOBAL,
            query,
            ctx,
            {
                "community_level": community_level,
                "response_type": response_type,
                "dynamic_community_selection": dynamic_community_selection,
                "conversation": conversation,
                "context_only": context_only,
                "max_context_tokens": max_context_tokens,
                "timeout": timeout_seconds,
            },
        )

    @server.tool(
        title="Local search",
        annotations=READ,
        description="Answer a question about specific people, places, organisations or things from "
        "the entities closest to it, their relationships, community reports and source text. Cost: "
        "one model call. The best first choice for 'who/what is X', 'how are X and Y related'.",
    )
    async def local_search(
        query: Query,
        entity_types: Annotated[
            list[str],
            Field(
                description="Only use entities of these types (e.g. ['PERSON', 'ORGANIZATION']); "
                "empty = all"
            ),
        ] = [],  # noqa: B006 - pydantic copies defaults
        top_k: TopEntities = None,
        community_level: CommunityLevel = 2,
        response_type: ResponseType = "Multiple Paragraphs",
        conversation: Conversation = [],  # noqa: B006 - pydantic copies defaults
        context_only: ContextOnly = False,
        max_context_tokens: MaxContextTokens = DEFAULT_CONTEXT_TOKENS,
        timeout_seconds: TimeoutSeconds = None,
        ctx: Context | None = None,
    ) -> SearchResult:
        return await search(
            SearchType.LOCAL,
            query,
            ctx,
            {
                "entity_types": entity_types,
                "top_k": top_k,
                "conversation": conversation,
                "community_level": community_level,
                "response_type": response_type,
                "context_only": context_only,
                "max_context_tokens": max_context_tokens,
                "timeout": timeout_seconds,
            },
        )

    @server.tool(
        title="DRIFT search",
        annotations=READ,
        description="DRIFT search: starts from the community reports that fit the question, then "
        "asks and answers follow-up questions locally. The most thorough answer to specific "
        "questions that need wider context, and the most expensive: tens of model calls. Use when "
        "local_search is too narrow.",
    )
    async def drift_search(
        query: Query,
        follow_up_depth: Annotated[
            int, Field(ge=0, le=5, description="Rounds of follow-up questions")
        ] = 2,
        top_k: TopEntities = None,
        community_level: CommunityLevel = 2,
        response_type: ResponseType = "Multiple Paragraphs",
        context_only: ContextOnly = False,
        max_context_tokens: MaxContextTokens = DEFAULT_CONTEXT_TOKENS,
        timeout_seconds: TimeoutSeconds = None,
        ctx: Context | None = None,
    ) -> SearchResult:
        return await search(
            SearchType.DRIFT,
            query,
            ctx,
            {
                "follow_up_depth": follow_up_depth,
                "top_k": top_k,
                "community_level": community_level,
                "response_type": response_type,
                "context_only": context_only,
                "max_context_tokens": max_context_tokens,
                "timeout": timeout_seconds,
            },
        )

    @server.tool(
        title="Basic search",
        annotations=READ,
        description="Plain retrieval-augmented answer from the text chunks most similar to the "
        "question (vector search, no graph). Cost: one model call. Use to find passages, or when "
        "the graph adds nothing.",
    )
    async def basic_search(
        query: Query,
        top_k: Annotated[
            int, Field(ge=1, le=100, description="Number of text chunks to retrieve")
        ] = 10,
        response_type: ResponseType = "Multiple Paragraphs",
        context_only: ContextOnly = False,
        max_context_tokens: MaxContextTokens = DEFAULT_CONTEXT_TOKENS,
        timeout_seconds: TimeoutSeconds = None,
        ctx: Context | None = None,
    ) -> SearchResult:
        return await search(
            SearchType.BASIC,
            query,
            ctx,
            {
                "top_k": top_k,
                "response_type": response_type,
                "context_only": context_only,
                "max_context_tokens": max_context_tokens,
                "timeout": timeout_seconds,
            },
        )

    @server.tool(
        title="Index job status",
        annotations=READ,
        description="State, progress, counts and error of an index job (the latest when no id is "
        "given).",
    )
    async def index_status(
        job_id: Annotated[str | None, Field(description="Job id returned by build_index")] = None,
    ) -> IndexJob:
        return await guarded(shared, _index_status(shared, job_id))

    @server.tool(
        title="Index statistics",
        annotations=READ,
        description="What the index holds (documents, entities, relationships, communities, "
        "reports, levels, models, vectors), the server's uptime, index version and last job.",
    )
    async def get_statistics() -> ServerStatistics:
        return await guarded(shared, server_statistics(shared))


async def _answer(
    shared: ServerContext,
    config: "GraphRagConfig",
    tables: "IndexTables",
    search_type: SearchType,
    query: str,
    ctx: Context | None,
    options: dict[str, Any],
) -> SearchResult:
    """The search's answer from the index's model or the client's (sampling), or with context_only
    its context."""
    from graphrag_mcp_server.handlers.search.context import search_context

    context_only, max_tokens = options.pop("context_only"), options.pop("max_context_tokens")
    if context_only:
        scope = {key: options[key] for key in ("community_level", "entity_types") if key in options}
        return await in_search_thread(
            search_context, config, tables, search_type, query, max_tokens=max_tokens, **scope
        )
    options["timeout"] = options["timeout"] or shared.settings.search_timeout_seconds
    async with search_progress(ctx) as progress:
        return await _answer_with_model(
            shared,
            config,
            tables,
            search_type,
            query,
            ctx,
            {**options, "callbacks": progress.callbacks, "on_text": progress.on_text},
        )


async def _answer_with_model(
    shared: ServerContext,
    config: "GraphRagConfig",
    tables: "IndexTables",
    search_type: SearchType,
    query: str,
    ctx: Context | None,
    options: dict[str, Any],
) -> SearchResult:
    """The answer from the index's model, or with `serve --llm sampling` from the client's."""
    from graphrag_mcp_server.handlers.search.run import run_search

    if shared.settings.llm is not AnswerModel.SAMPLING:
        return await run_search(config, tables, search_type, query, **options)
    from graphrag_mcp_server.providers.sampling import sampling_client, sampling_config

    if ctx is None or not ctx.session.check_client_capability(
        ClientCapabilities(sampling=SamplingCapability())
    ):
        msg = (
            "this server writes answers with your client's own model (MCP sampling, serve --llm "
            "sampling), and this client does not offer sampling; call again with context_only=true "
            "and answer from the context, or run the server with --llm index to use the model in "
            "settings.yaml"
        )
        raise ToolError(msg)
    try:
        with sampling_client(ctx.session, ctx.request_context.request_id):
            return await run_search(sampling_config(config), tables, search_type, query, **options)
    except (
        MCPError,
        ModelCallsFailedError,
    ) as error:  # the client refused or failed its sampling request
        msg = (
            f"your client's model did not answer ({error}); call again with context_only=true and "
            "answer from the context"
        )
        raise ToolError(msg) from error


async def _index_status(shared: ServerContext, job_id: str | None) -> IndexJob:
    if job_id is not None:
        return shared.jobs.get(job_id)
    if shared.jobs.latest is None:
        raise ToolError("no index job has run on this server yet; start one with build_index")
    return shared.jobs.latest
