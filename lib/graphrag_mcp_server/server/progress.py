"""MCP progress notifications while a search waits for its model: GraphRAG's stages (global's map
and reduce calls, drift's final reduce), each retry of a failed model call with the provider's
reason, and a heartbeat every few seconds, so a client sees a long search (global, drift) at work
and one that resets its timeout on progress keeps waiting; then the answer itself as the model
streams it: after the notification `writing the answer`, each message is the next piece of the
answer's text (docs/tools.md#streamed-answers)."""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context

from graphrag_mcp_server.providers.operation import retries_told_to, retry_notice

if TYPE_CHECKING:
    from graphrag.callbacks.query_callbacks import QueryCallbacks

    from graphrag_mcp_server.handlers.search.run import AnswerText

HEARTBEAT_SECONDS = 5.0
ANSWER_STARTS = "writing the answer"
"""The message of the progress notification after which each message is a piece of the answer."""


@dataclass
class SearchProgress:
    """What a search reports through: graphrag's query callbacks (stages), and the answer's
    pieces."""

    callbacks: "list[QueryCallbacks]"
    on_text: "AnswerText | None" = None


@asynccontextmanager
async def search_progress(ctx: Context | None) -> AsyncIterator[SearchProgress]:
    """graphrag query callbacks reporting each stage, a heartbeat while the block runs, and the
    answer's text as it streams (the heartbeat stops then: the text is the progress). Sent only when
    the client asked for progress (a progress token); the progress value only grows."""
    if ctx is None:
        yield SearchProgress([])
        return
    from graphrag.callbacks.noop_query_callbacks import NoopQueryCallbacks

    loop, started, step = asyncio.get_running_loop(), time.monotonic(), 0
    pending: set[asyncio.Task[None]] = set()

    def report(message: str) -> None:
        nonlocal step
        step += 1
        task = loop.create_task(ctx.report_progress(step, None, message))
        pending.add(task)
        task.add_done_callback(pending.discard)

    class StageProgress(NoopQueryCallbacks):
        """Turns graphrag's map/reduce callbacks into progress notifications."""

        def on_map_response_start(self, map_response_contexts: list[Any]) -> None:
            batches = _counted(len(map_response_contexts), "batch", "batches")
            report(f"asking the model about {batches} of community reports")

        def on_map_response_end(self, map_response_outputs: list[Any]) -> None:
            answers = _counted(len(map_response_outputs), "partial answer", "partial answers")
            report(f"{answers} received")

        def on_reduce_response_start(self, reduce_response_context: Any) -> None:
            report("combining the partial answers")

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            report(f"searching: {time.monotonic() - started:.0f} s")

    async def on_text(piece: str) -> None:
        nonlocal step
        # the first piece: stages and heartbeats end, in order, before the text
        if not beating.done():
            beating.cancel()
            await asyncio.gather(*pending)
            step += 1
            await ctx.report_progress(step, None, ANSWER_STARTS)
        step += 1
        await ctx.report_progress(step, None, piece)

    def retrying(reason: str, wait: float) -> None:
        loop.call_soon_threadsafe(report, retry_notice(reason[:200], wait))

    beating = loop.create_task(heartbeat())
    try:
        with retries_told_to(retrying):
            yield SearchProgress([StageProgress()], on_text)
    finally:
        beating.cancel()


def _counted(count: int, one: str, many: str) -> str:
    """`count` and the noun in the number it takes ("1 batch", "4 batches")."""
    return f"{count} {one if count == 1 else many}"
