"""MCP progress notifications while a search waits for its model: GraphRAG's stages (global's map
and reduce calls, drift's final reduce) and a heartbeat every few seconds, so a client sees a long
search (global, drift) at work and one that resets its timeout on progress keeps waiting."""

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context

if TYPE_CHECKING:
    from graphrag.callbacks.query_callbacks import QueryCallbacks

HEARTBEAT_SECONDS = 5.0


@asynccontextmanager
async def search_progress(ctx: Context | None) -> "AsyncIterator[list[QueryCallbacks]]":
    """graphrag query callbacks reporting each stage, plus a heartbeat while the block runs. Sent only
    when the client asked for progress (a progress token); the progress value only grows."""
    if ctx is None:
        yield []
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
            report(f"asking the model about {len(map_response_contexts)} batches of community reports")

        def on_map_response_end(self, map_response_outputs: list[Any]) -> None:
            report(f"{len(map_response_outputs)} partial answers received")

        def on_reduce_response_start(self, reduce_response_context: Any) -> None:
            report("combining the partial answers")

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            report(f"searching: {time.monotonic() - started:.0f} s")

    beating = loop.create_task(heartbeat())
    try:
        yield [StageProgress()]
    finally:
        beating.cancel()
