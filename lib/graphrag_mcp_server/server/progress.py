"""MCP progress notifications for the searches that make many model calls (global, drift)."""

import asyncio
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context

if TYPE_CHECKING:
    from graphrag.callbacks.query_callbacks import QueryCallbacks


def search_progress(ctx: Context | None) -> "list[QueryCallbacks]":
    """graphrag query callbacks that report each stage of a search to the client (sent only when the
    client asked for progress with a progress token)."""
    if ctx is None:
        return []
    from graphrag.callbacks.noop_query_callbacks import NoopQueryCallbacks

    loop = asyncio.get_running_loop()
    pending: set[asyncio.Task[None]] = set()

    def report(step: int, message: str) -> None:
        task = loop.create_task(ctx.report_progress(step, None, message))
        pending.add(task)
        task.add_done_callback(pending.discard)

    class StageProgress(NoopQueryCallbacks):
        """Turns graphrag's map/reduce callbacks into progress notifications."""

        def on_map_response_start(self, map_response_contexts: list[Any]) -> None:
            report(1, f"asking the model about {len(map_response_contexts)} batches of community reports")

        def on_map_response_end(self, map_response_outputs: list[Any]) -> None:
            report(2, f"{len(map_response_outputs)} partial answers received")

        def on_reduce_response_start(self, reduce_response_context: Any) -> None:
            report(3, "combining the partial answers")

    return [StageProgress()]
