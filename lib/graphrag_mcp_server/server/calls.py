"""How many tool calls of one caller run at once: the rest wait their turn, up to a bound, then are
refused."""

import asyncio
import logging
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.shared.exceptions import MCPError

logger = logging.getLogger(__name__)

STDIO = "stdio"
"""The caller of every tool call of a stdio server."""


class CallLimits:
    """At most `running` tool calls of one client run at once and `queued` more wait their turn
    (first come, first served); one more is answered at once with a JSON-RPC error. A client is its
    identity (every session of it), so one caller's searches cannot take every thread while
    another's wait."""

    def __init__(self, running: int, queued: int) -> None:
        self.running, self.queued = running, queued
        self.turns: dict[str, asyncio.Semaphore] = {}
        self.holding: defaultdict[str, int] = defaultdict(int)
        """Per client: its calls running or waiting."""

    @asynccontextmanager
    async def turn(self, client: str) -> AsyncIterator[None]:
        """Hold one of `client`'s turns for the block; MCPError when its calls and queue are full.
        The one client of a stdio server (STDIO) shares the server with nobody: its calls all run at
        once, as before the limit."""
        if client == STDIO:
            yield
            return
        if self.holding[client] >= self.running + self.queued:
            logger.warning(
                "refused a tool call: the client has %d running and %d waiting "
                "(GRAPHRAG_MCP_MAX_CALLS_PER_CLIENT)",
                self.running,
                self.queued,
            )
            message = (
                f"too many tool calls at once from this client ({self.running} running, "
                f"{self.queued} waiting): wait for an answer before sending more"
            )
            raise MCPError(code=-32000, message=message)
        self.holding[client] += 1
        turns = self.turns.setdefault(client, asyncio.Semaphore(self.running))
        try:
            async with turns:
                yield
        finally:
            self.holding[client] -= 1
            if not self.holding[client]:
                del self.holding[client], self.turns[client]
