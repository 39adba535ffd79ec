"""Telling clients that the served index changed, so they list its resources again."""

import logging
import weakref
from typing import Any

from mcp.server.subscriptions import InMemorySubscriptionBus, SubscriptionBus
from mcp.shared.subscriptions import ResourcesListChanged

from graphrag_mcp_server.config.replacements import private

logger = logging.getLogger(__name__)


class ChangeNotices:
    """`notifications/resources/list_changed` when a new index version is loaded: to every session
    that listed the resources (protocol 2025-*), and as an event on the subscriptions bus
    (2026-07-28 `subscriptions/listen`)."""

    def __init__(self, bus: SubscriptionBus | None = None) -> None:
        self.bus = bus or InMemorySubscriptionBus()
        self.connections: weakref.WeakSet[Any] = weakref.WeakSet()

    def listening(self, session: Any) -> None:
        """Remember the connection of a session that listed the resources (forgotten when it
        closes). The SDK hands each request a ServerSession of its own; the connection under it
        lasts as long as the client."""
        self.connections.add(private(session, "mcp.server.session.ServerSession._connection"))

    async def index_changed(self) -> None:
        """Notify every listening connection and listen stream (2026-07-28 connections drop the
        plain notification: they are told through the bus); a connection that fails is dropped."""
        await self.bus.publish(ResourcesListChanged())
        for connection in list(self.connections):
            try:
                await connection.outbound.notify("notifications/resources/list_changed", None)
            except Exception as error:  # noqa: BLE001 - a closed connection is no longer listening
                logger.debug("resources/list_changed not delivered: %s", error)
                self.connections.discard(connection)
