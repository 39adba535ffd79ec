"""What the running operation asks of the retries of its model calls: to answer by a deadline
(a search) and to tell each retry to a listener (a search's progress), both held in context
variables, so concurrent operations stay apart."""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from graphrag_mcp_server.providers.faults import describe

DEADLINE_MARGIN_SECONDS = 1.0
"""A retry's wait must end this long before the operation's deadline: time for the attempt to be
sent."""
RetryListener = Callable[[str, float], None]
"""Told (reason, seconds to wait) each time a failed call is retried."""

_deadline: ContextVar[float | None] = ContextVar("graphrag_mcp_deadline", default=None)
_retry_listener: ContextVar[RetryListener | None] = ContextVar(
    "graphrag_mcp_retry_listener", default=None
)


@contextmanager
def answer_by(seconds: float | None) -> Iterator[None]:
    """Inside the block, no retry waits past `seconds` from now: it gives up with the provider's
    error instead."""
    token = _deadline.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def latest_end(limit: float) -> float:
    """The latest time (monotonic) a retry's wait may end: `limit`, or earlier inside `answer_by`
    (its deadline less the margin)."""
    if (deadline := _deadline.get()) is not None:
        return min(limit, deadline - DEADLINE_MARGIN_SECONDS)
    return limit


def retry_notice(reason: str, wait: float) -> str:
    """What a listener tells of one retry."""
    return f"the model provider failed ({reason}); retrying in {wait:.0f} s"


@contextmanager
def retries_told_to(listener: RetryListener) -> Iterator[None]:
    """Tell `listener` the reason and the wait of each retry inside the block (it may be called
    from any thread)."""
    token = _retry_listener.set(listener)
    try:
        yield
    finally:
        _retry_listener.reset(token)


def tell_retry(error: Exception, wait: float) -> None:
    """Tell the operation's listener, if any, that `error` is retried after `wait` seconds."""
    if (listener := _retry_listener.get()) is not None:
        listener(describe(error), wait)
