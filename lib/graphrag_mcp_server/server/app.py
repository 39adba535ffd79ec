"""The MCP server: tools, resources and prompts over one index root, on stdio, SSE or streamable
HTTP."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from graphrag_mcp_server import __version__
from graphrag_mcp_server.config.logs import plain_logs
from graphrag_mcp_server.config.replacements import replace_on
from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.server.calls import CallLimits
from graphrag_mcp_server.server.completions import register_completions
from graphrag_mcp_server.server.context import ServerContext, caller_identity
from graphrag_mcp_server.server.documents import register_document_tools
from graphrag_mcp_server.server.index_tools import register_index_tools
from graphrag_mcp_server.server.notices import ChangeNotices
from graphrag_mcp_server.server.prompts import register_prompts
from graphrag_mcp_server.server.record_tools import register_record_tools
from graphrag_mcp_server.server.resources import register_resources
from graphrag_mcp_server.server.state import IndexState
from graphrag_mcp_server.server.tokens import authentication
from graphrag_mcp_server.server.tools import register_tools

Transport = Literal["stdio", "sse", "streamable-http"]

INSTRUCTIONS = """\
GraphRAG knowledge of the user's own documents: a graph of entities, relationships and
community reports built from them. Pick the search by the question:
- local_search: about specific people, places, organisations or things (cheap: one model call).
- global_search: themes or summaries across the whole corpus (one call per batch of community \
reports).
- drift_search: specific questions that need wider context (many calls: the most thorough, the \
slowest).
- basic_search: plain passage lookup by similarity (one call).
Every answer lists its sources (documents) and its cost. With context_only=true a search returns
the ranked context (entities, relationships, reports, passages, with their documents) instead of
an answer, with no model call: answer from it yourself when you can. Browse entities and
communities through the graphrag:// resources; get_statistics tells what the index holds and
what the searches have cost."""


def _advertising_list_changed(advertise: Any) -> Any:
    """The SDK's create_initialization_options, advertising resources.listChanged (told only
    there)."""

    def options(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        return advertise(
            notification_options or NotificationOptions(resources_changed=True), *args, **kwargs
        )

    return options


class GraphRagServer(MCPServer[Any]):
    """MCPServer that answers tool arguments failing their schema with JSON-RPC invalid params,
    lists compact tool schemas, and tells the sessions that list resources when the index changes
    (`notices`)."""

    def __init__(self, notices: ChangeNotices, calls: CallLimits, **options: Any) -> None:
        super().__init__(subscriptions=notices.bus, **options)
        self.notices, self.calls = notices, calls
        replace_on(
            self._lowlevel_server,
            "mcp.server.lowlevel.server.Server.create_initialization_options",
            _advertising_list_changed,
        )

    async def _handle_list_resources(self, ctx: Any, params: Any) -> Any:
        """The resources; the session listing them is told when they change."""
        self.notices.listening(ctx.session)
        return await super()._handle_list_resources(ctx, params)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """Run the tool in one of its caller's turns (CallLimits); a validation failure names each
        offending argument."""
        try:
            async with self.calls.turn(caller_identity(context)):
                return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if not isinstance(error.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: {problem['msg']}"
                for problem in error.__cause__.errors()
            )
            raise MCPError(
                code=INVALID_PARAMS, message=f"invalid arguments for {name}: {problems}"
            ) from error

    async def list_tools(self) -> list[MCPTool]:
        """The tools, their schemas compact (about a fifth of the SDK's: a client puts the listing
        in its model's context): input schemas without pydantic's titles, output schemas as their
        top-level fields and types."""
        return [
            tool.model_copy(
                update={
                    "input_schema": _untitled(tool.input_schema),
                    "output_schema": _outline(tool.output_schema),
                }
            )
            for tool in await super().list_tools()
        ]

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> Any:
        """Render the prompt; missing or invalid arguments are JSON-RPC invalid params."""
        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as error:
            root_cause: BaseException = error
            while root_cause.__cause__ is not None:  # the SDK wraps the prompt's own message
                root_cause = root_cause.__cause__
            raise MCPError(code=INVALID_PARAMS, message=f"prompt {name}: {root_cause}") from error


def _untitled(schema: Any) -> Any:
    """A JSON schema without pydantic's `title` keywords (a property's title only repeats its
    name), an optional value's `anyOf: [{type: T, ...}, {type: null}]` written as `type: [T,
    "null"]` (the same values, a third of the bytes)."""
    if isinstance(schema, list):
        return [_untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if (
        isinstance(options, list)
        and len(options) == 2
        and options[1] == {"type": "null"}
        and isinstance(options[0].get("type"), str)
    ):
        rest = {key: value for key, value in schema.items() if key != "anyOf"}
        schema = {**options[0], **rest, "type": [options[0]["type"], "null"]}
    return {
        key: _untitled(value)
        for key, value in schema.items()
        if not (key == "title" and isinstance(value, str))
    }


def _outline(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """An output schema reduced to its top-level fields and their JSON types: what every result
    still conforms to, without the nested models (the full models are in docs/tools.md)."""
    if schema is None:
        return None
    definitions = schema.get("$defs", {})

    def types(node: dict[str, Any]) -> set[str]:
        if "$ref" in node:
            node = definitions.get(node["$ref"].rsplit("/", 1)[-1], {})
        if "anyOf" in node:
            return set().union(*(types(option) for option in node["anyOf"]))
        kind = node.get("type")
        return {kind} if isinstance(kind, str) else set(kind or [])

    def field(node: dict[str, Any]) -> dict[str, Any]:
        found = sorted(types(node))
        return {} if not found else {"type": found[0] if len(found) == 1 else found}

    outline: dict[str, Any] = {
        "type": "object",
        "properties": {name: field(node) for name, node in schema.get("properties", {}).items()},
    }
    return {**outline, "required": schema["required"]} if schema.get("required") else outline


def create_server(
    root: Path,
    settings: ServerSettings | None = None,
    watch: Path | None = None,
    transport: Transport = "stdio",
) -> GraphRagServer:
    """A server over the index at `root`; graphrag loads in the background once it starts.

    With `watch`, the index is updated from that folder after each burst of changes. build_index may
    index folders under the settings' data roots, and under `watch`.
    """
    settings = settings or ServerSettings()
    roots = [path.resolve() for path in settings.data_roots]
    if watch is not None and watch.resolve() not in roots:
        roots.append(watch.resolve())
    shared = ServerContext(
        root=root.resolve(),
        settings=settings,
        state=IndexState(root.resolve(), settings.storage),
        watch=watch.resolve() if watch else None,
        data_roots=roots,
    )

    writable = settings.write_path is not None and not settings.read_only

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[ServerContext]:
        shared.state.start_warm_up()
        if writable:  # a written document's job starts with graphrag already imported
            shared.jobs.keep_warm(shared.root)
        shared.state.start_polling(settings.index_poll_seconds)
        shared.start_watching()
        shared.start_following()
        try:
            yield shared
        finally:
            shared.state.stop_polling()

    auth, verifier = authentication(settings, transport) if transport != "stdio" else (None, None)
    shared.state.on_new_version = shared.notices.index_changed
    plain_logs(settings.log_level)  # before the SDK would log through rich
    server = GraphRagServer(
        shared.notices,
        CallLimits(settings.max_calls_per_client, settings.max_queued_calls_per_client),
        name="graphrag-mcp",
        title="GraphRAG knowledge of your documents",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        log_level=settings.log_level.upper(),
        auth=auth,
        token_verifier=verifier,
    )
    for handler in logging.getLogger().handlers:  # graphrag sets its own loggers to INFO
        handler.setLevel(settings.log_level.upper())
    register_tools(server, shared)
    if writable:
        register_document_tools(server, shared)
    register_record_tools(server, shared)
    if not settings.read_only:
        register_index_tools(server, shared)
    register_resources(server, shared)
    register_prompts(server, settings.max_query_chars)
    register_completions(server, shared)
    return server
