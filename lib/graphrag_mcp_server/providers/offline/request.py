"""A chat request reduced to what the prompt handlers read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Request:
    """The parts of a chat request the handlers read."""

    instructions: str
    """System prompt, or the last user message when there is none."""
    query: str
    """The last user message."""


def message_text(content: Any) -> str:
    """Text of a message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def to_request(messages: Iterable[Any]) -> Request:
    """Reduce chat messages to instructions and the last user message."""
    items = [m if isinstance(m, dict) else m.model_dump() for m in messages]
    system = "\n".join(message_text(m.get("content")) for m in items if m.get("role") == "system")
    users = [message_text(m.get("content")) for m in items if m.get("role") == "user"]
    query = users[-1] if users else ""
    return Request(instructions=system or query, query=query)
