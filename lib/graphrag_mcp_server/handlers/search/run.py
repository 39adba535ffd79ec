"""The four searches: one graphrag.api call each, mapped to a SearchResult with sources and cost."""

import asyncio
import contextvars
import functools
import inspect
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from graphrag_mcp_server.errors import (
    EmbeddingMismatchError,
    IndexDamagedError,
    ModelCallsFailedError,
    ProviderError,
    SearchTimeoutError,
)
from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.results import SearchResult, Source, Turn
from graphrag_mcp_server.handlers.tables import CITATION, IndexTables
from graphrag_mcp_server.providers.faults import FaultKind, Operation, advice, kind_of
from graphrag_mcp_server.providers.operation import answer_by
from graphrag_mcp_server.providers.usage import count_streamed_answer, track_usage

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.callbacks.query_callbacks import QueryCallbacks
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.query.context_builder.builders import ContextBuilderResult
    from graphrag.query.context_builder.conversation_history import ConversationHistory
    from graphrag_llm.config import ModelConfig

    from graphrag_mcp_server.handlers.prepared import Lookup

MAX_SOURCES = 20
AnswerText = Callable[[str], Awaitable[None]]
"""Called with each piece of an answer as the model streams it."""
_CITED_KIND = re.compile(r"(Entities|Relationships|Sources|Reports)\s*\(([^)]*)\)")


T = TypeVar("T")
_SEARCH_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="search")


async def in_search_thread(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`function` run off the event loop in the one thread for searches' CPU work (contexts,
    sources).

    Python runs one thread's bytecode at a time, so several searches computing in several threads
    only interleave, each slower: 16 sessions of local searches on 1000 documents got 17.5-18.4
    searches/s from 2 workers with this thread, 12.4-15.4 with asyncio's thread pool (alternating
    runs).
    """
    in_context = functools.partial(
        contextvars.copy_context().run, function, *args, **kwargs
    )  # the usage tracked
    return await asyncio.get_running_loop().run_in_executor(
        _SEARCH_THREAD, in_context
    )  # counts the query's embedding


HISTORY_SEARCHES = ("local", "global")
"""The searches whose context graphrag 3.3 builds with a conversation history (local maps the
earlier questions to entities too; drift and basic accept one and ignore it)."""


class SearchType(StrEnum):
    """GraphRAG's search methods."""

    GLOBAL = "global"
    LOCAL = "local"
    DRIFT = "drift"
    BASIC = "basic"


def tuned_config(
    config: "GraphRagConfig",
    search_type: SearchType,
    *,
    top_k: int | None = None,
    follow_up_depth: int | None = None,
) -> "GraphRagConfig":
    """A copy of the config retrieving `top_k` records (text units for basic, entities for local
    and drift) and, for drift, following up `follow_up_depth` rounds."""
    updates: dict[str, dict[str, int]] = {}
    if top_k is not None and search_type is not SearchType.GLOBAL:
        section, field = {
            SearchType.BASIC: ("basic_search", "k"),
            SearchType.LOCAL: ("local_search", "top_k_entities"),
            SearchType.DRIFT: ("drift_search", "local_search_top_k_mapped_entities"),
        }[search_type]
        updates.setdefault(section, {})[field] = top_k
    if follow_up_depth is not None and search_type is SearchType.DRIFT:
        updates.setdefault("drift_search", {})["n_depth"] = follow_up_depth
    sections = {
        name: getattr(config, name).model_copy(update=fields) for name, fields in updates.items()
    }
    return config.model_copy(update=sections) if sections else config


VECTORS_NEEDED = {
    SearchType.GLOBAL: (),
    SearchType.LOCAL: ("entity_description",),
    SearchType.DRIFT: ("entity_description", "community_full_content"),
    SearchType.BASIC: ("text_unit_text",),
}
"""The embeddings (LanceDB tables) each search reads."""


def check_ready(
    config: "GraphRagConfig", tables: IndexTables, search_type: SearchType, *, answer: bool
) -> None:
    """Refuse a search whose vector tables are damaged, or whose models lack credentials, saying
    what to fix."""
    from graphrag_mcp_server.config.index_root import require_credentials

    damaged = [
        tables.vector_problems[name]
        for name in VECTORS_NEEDED[search_type]
        if name in tables.vector_problems
    ]
    if damaged:
        raise IndexDamagedError(f"{search_type.value} search cannot run: {damaged[0]}")
    section = getattr(config, f"{search_type.value}_search")
    needed = [section.embedding_model_id] if hasattr(section, "embedding_model_id") else []
    if search_type is SearchType.GLOBAL and not answer:
        needed = [
            config.drift_search.embedding_model_id
        ]  # context-only global ranks reports by embedding
    require_credentials(config, [*needed, *([section.completion_model_id] if answer else [])])


QUERY_WIDTH = re.compile(r"query dim\((\d+)\) doesn't match the column .*? dim\((\d+)\)")
"""LanceDB's refusal of a query vector whose width differs from the table's."""


@contextmanager
def embedding_width_checked() -> Iterator[None]:
    """LanceDB's refusal of a query vector of another width than the index's, as one line naming
    both widths and the fix (the embedding model changed since the index was built)."""
    try:
        yield
    except ValueError as error:
        if (widths := QUERY_WIDTH.search(str(error))) is None:
            raise
        raise EmbeddingMismatchError.of_widths(*widths.groups()) from None


async def run_search(
    config: "GraphRagConfig",
    tables: IndexTables,
    search_type: SearchType,
    query: str,
    *,
    community_level: int = 2,
    response_type: str = "Multiple Paragraphs",
    dynamic_community_selection: bool = False,
    entity_types: list[str] | None = None,
    conversation: list[Turn] | None = None,
    timeout: float | None = None,
    callbacks: "list[QueryCallbacks] | None" = None,
    on_text: AnswerText | None = None,
) -> SearchResult:
    """Answer `query` with graphrag's search engine of `search_type`, built as graphrag.api builds
    it, over the loaded version's prepared objects.

    `entity_types` keeps local search to entities of those types; `conversation` (earlier turns,
    oldest first) goes into local and global searches' context. A search still running after
    `timeout` seconds is stopped with the provider's last error, and a retry that would wait past it
    gives up with its error; `callbacks` see its stages, and `on_text` each piece of the answer as
    the model streams it (graphrag's `*_search_streaming`): the same answer either way.
    """
    check_ready(config, tables, search_type, answer=True)
    started = time.perf_counter()
    with track_usage() as usage, answer_by(timeout), embedding_width_checked():
        try:
            answer, context = await asyncio.wait_for(
                _answered(
                    config,
                    tables,
                    search_type,
                    query,
                    response_type,
                    callbacks or [],
                    on_text,
                    level=community_level,
                    entity_types=entity_types,
                    dynamic=dynamic_community_selection,
                    conversation=conversation,
                ),
                timeout,
            )
        except TimeoutError:
            raise SearchTimeoutError(
                _timeout_message(config, search_type, timeout, usage.last_error)
            ) from None
    if usage.failed_calls and not usage.answered_calls:
        logs = Path(config.reporting.base_dir or "logs").resolve() / "query.log"
        reason = usage.last_error or f"the provider's errors are in {logs}"
        advised = (
            advice(kind_of(reason), Operation.SEARCH, reason=reason) if usage.last_error else ""
        )
        msg = (
            f"the model provider failed: all {usage.failed_calls} model calls failed; last "
            f"error: {reason.rstrip('.')}"
        )
        raise ModelCallsFailedError(f"{msg}. {advised}" if advised else msg)
    model = _answer_model(config, search_type)
    if not answer.strip():
        raise ProviderError(_no_answer_message(model, search_type, usage.last_error))
    count_streamed_answer(usage, answer, f"{model.model_provider}/{model.model}")
    frames = list(context_frames(context))
    return SearchResult(
        type=search_type.value,
        answer=answer,
        sources=await in_search_thread(find_sources, answer, frames, tables),
        context_counts=_count_records(frames),
        llm_calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        embedding_calls=usage.embedding_calls,
        seconds=round(time.perf_counter() - started, 3),
    )


async def _answered(
    config: "GraphRagConfig",
    tables: IndexTables,
    search_type: SearchType,
    query: str,
    response_type: str,
    callbacks: "list[QueryCallbacks]",
    on_text: AnswerText | None,
    *,
    level: int,
    entity_types: list[str] | None,
    dynamic: bool,
    conversation: list[Turn] | None = None,
) -> tuple[str, Any]:
    """The engine's streamed answer and the context it answered from, collected as graphrag.api's
    `*_search` collects them. The engine is made in the search thread, and its context built there
    where that calls no model (local, basic, global without dynamic selection); drift's steps,
    dynamic selection and the answer's streaming run on the event loop (they call the model:
    sampling's session lives on this loop)."""
    from graphrag.callbacks.noop_query_callbacks import NoopQueryCallbacks
    from graphrag.query.context_builder.conversation_history import ConversationHistory

    from graphrag_mcp_server.handlers.search.engines import (
        basic_engine,
        drift_engine,
        global_engine,
        local_engine,
    )

    log_to_query_log(config)

    class ContextCollector(NoopQueryCallbacks):
        """Keeps the context the engine reports (the records it answered from)."""

        def __init__(self) -> None:
            self.context: Any = {}

        def on_context(self, context: Any) -> None:
            self.context = context

    collector = ContextCollector()
    every_callback = [*callbacks, collector]
    engine: AbstractContextManager[Any]
    match search_type:
        case SearchType.LOCAL:
            engine = local_engine(
                config, tables, level, entity_types, response_type, every_callback
            )
        case SearchType.BASIC:
            engine = basic_engine(config, tables, response_type, every_callback)
        case SearchType.GLOBAL:
            engine = global_engine(config, tables, level, dynamic, response_type, every_callback)
        case SearchType.DRIFT:
            engine = drift_engine(config, tables, level, response_type, every_callback)
    build_now = search_type is not SearchType.DRIFT and not (
        search_type is SearchType.GLOBAL and dynamic
    )
    history = (
        ConversationHistory.from_list([turn.model_dump() for turn in conversation])
        if conversation and search_type.value in HISTORY_SEARCHES
        else None
    )
    searcher, lent = await in_search_thread(
        _entered, engine, query, build_now=build_now, history=history
    )
    pieces: list[str] = []
    with lent:
        async for chunk in searcher.stream_search(query=query, conversation_history=history):
            pieces.append(chunk)
            if on_text is not None and chunk:
                await on_text(chunk)
    return "".join(pieces), collector.context


def log_to_query_log(config: "GraphRagConfig") -> None:
    """Send graphrag's and graphrag-llm's log records of a search to the index's query log, as
    graphrag.api does (`init_loggers`). Without a handler Python prints their warnings on stderr: a
    drift search's "Reached token limit" and "No follow-up actions" lines, in a terminal or an MCP
    client's server log."""
    from graphrag.logger.standard_logging import init_loggers

    init_loggers(config=config, verbose=False, filename="query.log")


def _entered(
    engine: "AbstractContextManager[Any]",
    query: str,
    *,
    build_now: bool,
    history: "ConversationHistory | None" = None,
) -> tuple[Any, ExitStack]:
    """The engine, entered (blocking: run in a worker thread), and what gives back the objects it
    borrowed. With `build_now` its context is built here (global's builder is a coroutine that
    awaits nothing without dynamic selection) and the borrowed objects are given back at once."""
    lent = ExitStack()
    searcher = lent.enter_context(engine)
    if build_now:
        with lent:
            built = searcher.context_builder.build_context(
                query=query, conversation_history=history, **searcher.context_builder_params
            )
            awaited = inspect.isawaitable(built)
            searcher.context_builder = _Built(asyncio.run(built) if awaited else built, awaited)
    return searcher, lent


@dataclass(frozen=True)
class _Built:
    """Stands in for an engine's context builder: hands back the context built beforehand in a
    worker thread."""

    result: "ContextBuilderResult"
    awaited: bool
    """Whether the engine awaits its builder (global search)."""

    def build_context(self, **_: Any) -> Any:
        """The context built beforehand, whatever the engine asks (to await, for an engine that
        awaits it)."""
        return _ready(self.result) if self.awaited else self.result


async def _ready(result: "ContextBuilderResult") -> "ContextBuilderResult":
    return result


def _timeout_message(
    config: "GraphRagConfig", search_type: SearchType, timeout: float | None, last_error: str | None
) -> str:
    waited = f"{search_type.value} search gave no answer within {timeout:g} s"
    model = _answer_model(config, search_type)
    where = (
        f"{model.model_provider}/{model.model}{f' at {model.api_base}' if model.api_base else ''}"
    )
    cause = (
        f"the model provider's last error: {last_error}"
        if last_error
        else (
            f"the model provider ({where}) did not answer in time (slow, overloaded or unreachable)"
        )
    )
    return (
        f"{waited}; {cause}. Try context_only=true (no model call: answer from the context "
        "yourself), a cheaper search (local_search or basic_search: one model call), or a "
        "larger timeout_seconds"
    )


def _no_answer_message(
    model: "ModelConfig", search_type: SearchType, last_error: str | None
) -> str:
    """An answer without text: the provider's body was not the stream of chunks asked for (cut
    short, or JSON where a stream was asked) or held nothing; graphrag would have returned it as an
    empty answer."""
    if model.type == "mcp_sampling":
        return (
            f"{search_type.value} search got no answer: the MCP client's model (sampling) "
            "answered no text; ask again, or use context_only=true and answer from the "
            "context"
        )
    where = (
        f"{model.model_provider}/{model.model}{f' at {model.api_base}' if model.api_base else ''}"
    )
    error = f"; the model provider's last error: {last_error}" if last_error else ""
    return (
        f"the model provider failed: the answer of {where} to the {search_type.value} search "
        "could not be read: it held no text (a body that is not the stream of answer chunks "
        f"asked for, or an empty one){error}. {advice(FaultKind.UNREADABLE, Operation.SEARCH)}"
    )


def _answer_model(config: "GraphRagConfig", search_type: SearchType) -> "ModelConfig":
    """The completion model that writes (streams) the search's answer."""
    return config.get_completion_model_config(
        getattr(config, f"{search_type.value}_search").completion_model_id
    )


def context_frames(context: Any, kind: str = "") -> Iterator[tuple[str, "pd.DataFrame"]]:
    """(kind, records) for every table in graphrag's context data, however deeply nested (drift)."""
    import pandas as pd

    if isinstance(context, pd.DataFrame):
        yield kind.lower(), context
    elif isinstance(context, dict):
        for key, value in context.items():
            yield from context_frames(value, str(key))
    elif isinstance(context, list):
        for value in context:
            yield from context_frames(value, kind)


def _count_records(frames: list[tuple[str, "pd.DataFrame"]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for kind, frame in frames:
        counts[kind] = counts.get(kind, 0) + len(frame)
    return counts


def _cited(answer: str) -> dict[str, list[str]]:
    """Record ids cited in graphrag's `[Data: Entities (1, 2); Sources (3)]` style, by lower-case
    kind."""
    cited: dict[str, list[str]] = {}
    for block in CITATION.findall(answer):
        for kind, ids in _CITED_KIND.findall(block):
            cited.setdefault(kind.lower(), []).extend(re.findall(r"\d+", ids))
    return cited


def _in_context(frames: list[tuple[str, "pd.DataFrame"]]) -> dict[str, list[str]]:
    """Record ids present in the context, by kind, in context order."""
    ids: dict[str, list[str]] = {}
    for kind, frame in frames:
        if "id" in frame.columns:
            ids.setdefault(kind, []).extend(str(value) for value in frame["id"])
    return ids


def _text_units_of(kind: str, ids: list[str], lookup: "Lookup") -> list[str]:
    """Text unit ids behind records of `kind` named by their short ids."""
    if kind == "sources":
        return [lookup.unit_ids[record_id] for record_id in ids if record_id in lookup.unit_ids]
    behind = lookup.text_units_of.get(kind, {})
    return [unit_id for record_id in ids if record_id in behind for unit_id in behind[record_id]]


def _evidence(answer: str, frames: list[tuple[str, "pd.DataFrame"]]) -> dict[str, list[str]]:
    """The records that back the answer: cited text units, else cited graph records, else the
    context."""
    cited = _cited(answer)
    if cited.get("sources"):
        return {"sources": cited["sources"]}
    if cited:
        return cited
    in_context = _in_context(frames)
    return {"sources": in_context["sources"]} if in_context.get("sources") else in_context


def find_sources(
    answer: str, frames: list[tuple[str, "pd.DataFrame"]], tables: IndexTables
) -> list[Source]:
    """Text units behind the answer, with their documents, most direct evidence first."""
    records = _evidence(answer, frames)
    lookup = prepared(tables).lookup()
    unit_ids: list[str] = []
    for kind in ("sources", "entities", "relationships", "reports"):
        unit_ids.extend(_text_units_of(kind, records.get(kind, []), lookup))
    sources = [
        Source(document=lookup.document_of[unit_id], text_unit_id=unit_id)
        for unit_id in dict.fromkeys(unit_ids)
        if unit_id in lookup.document_of
    ]
    return sources[:MAX_SOURCES]
