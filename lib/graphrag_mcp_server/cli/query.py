"""`graphrag-mcp query`: answer a question from the index, or print the context a model would
get."""

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from graphrag_mcp_server.cli.common import (
    FormatOption,
    IndexPath,
    StorageOption,
    local_copy,
    user_errors,
)
from graphrag_mcp_server.cli.output import OutputFormat, print_piece, render_context
from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.handlers.search.context import DEFAULT_CONTEXT_TOKENS
from graphrag_mcp_server.handlers.search.run import SearchType
from graphrag_mcp_server.providers.operation import retries_told_to, retry_notice


@user_errors
def query(
    query_text: Annotated[str, typer.Argument(metavar="QUERY", help="The question.")],
    index_path: IndexPath = None,
    query_type: Annotated[
        SearchType, typer.Option("--type", "-t", help="Search method.")
    ] = SearchType.GLOBAL,
    community_level: Annotated[
        int, typer.Option(min=0, help="Community level (0 = broadest).")
    ] = 2,
    top_k: Annotated[
        int | None,
        typer.Option(
            min=1, help="Records to retrieve: text units (basic) or entities (local, drift)."
        ),
    ] = None,
    response_type: Annotated[str, typer.Option(help="Form of the answer.")] = "Multiple Paragraphs",
    context_only: Annotated[
        bool,
        typer.Option(
            "--context-only",
            help="Print the context the model would get instead of an answer (no completion call).",
        ),
    ] = False,
    max_tokens: Annotated[
        int, typer.Option(min=100, help="Token budget of the context (with --context-only).")
    ] = DEFAULT_CONTEXT_TOKENS,
    timeout: Annotated[
        float | None,
        typer.Option(
            min=1,
            help="Seconds to wait for the model (default GRAPHRAG_MCP_SEARCH_TIMEOUT_SECONDS, 45).",
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.TEXT,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also print graphrag's log records (kept in logs/query.log) on stderr.",
        ),
    ] = False,
    storage: StorageOption = None,
    stream: Annotated[
        bool,
        typer.Option(
            "--stream",
            help="Print the answer as the model writes it (text output; JSON stays whole).",
        ),
    ] = False,
) -> None:
    """Answer a question from the index (for debugging what the MCP tools return)."""
    # graphrag's loggers propagate here; their own handler (init_loggers) writes logs/query.log
    if verbose:
        logging.basicConfig(
            stream=sys.stderr, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s"
        )
    streaming = stream and output_format is OutputFormat.TEXT and not context_only
    options = QueryOptions(
        query_type,
        community_level,
        top_k,
        response_type,
        max_tokens if context_only else None,
        timeout or ServerSettings().search_timeout_seconds,
        print_piece if streaming else None,
    )
    result = asyncio.run(_run_query(local_copy(index_path, storage), query_text, options))
    if output_format is OutputFormat.JSON:
        typer.echo(result.model_dump_json())
        return
    if streaming:
        typer.echo()  # the answer's pieces were printed as they came
    else:
        typer.echo(result.answer if result.context is None else render_context(result.context))
    documents = list(dict.fromkeys(source.document for source in result.sources))
    typer.echo("\nSources: " + (", ".join(documents) if documents else "none"))
    typer.echo(
        f"LLM calls {result.llm_calls}, prompt tokens {result.prompt_tokens}, "
        f"completion tokens {result.completion_tokens}, embedding calls {result.embedding_calls}, "
        f"{result.seconds:.1f} s.",
        err=True,
    )


@dataclass(frozen=True)
class QueryOptions:
    """How `query` searches; `context_tokens` set means context only, within that budget."""

    search_type: SearchType
    community_level: int
    top_k: int | None
    response_type: str
    context_tokens: int | None
    timeout: float
    on_text: Callable[[str], Awaitable[None]] | None = None


async def _run_query(root: Path, text: str, options: QueryOptions) -> Any:
    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import run_search, tuned_config
    from graphrag_mcp_server.handlers.tables import load_tables
    from graphrag_mcp_server.server.state import disk_version

    config = load_index_config(root, without_credentials=True)
    version, tables = disk_version(root, config), await load_tables(config, root)
    config = tuned_config(config, options.search_type, top_k=options.top_k)
    if options.context_tokens is not None:
        result = search_context(
            config,
            tables,
            options.search_type,
            text,
            max_tokens=options.context_tokens,
            community_level=options.community_level,
        )
    else:
        with retries_told_to(_say_retry):
            result = await run_search(
                config,
                tables,
                options.search_type,
                text,
                community_level=options.community_level,
                response_type=options.response_type,
                timeout=options.timeout,
                on_text=options.on_text,
            )
    return result.model_copy(update={"index_version": version})


def _say_retry(reason: str, wait: float) -> None:
    typer.echo(retry_notice(reason, wait), err=True)
