"""The circuit breaker of an index build: after n consecutive model calls that fail for good,
later calls fail at once without reaching the provider (the retry loop asks it before each
attempt and tells it each outcome)."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from graphrag_mcp_server.providers.faults import describe


class ProviderUnavailableError(Exception):
    """The provider failed too many calls in a row; this call was not sent."""


@dataclass
class Breaker:
    """Counts consecutive failed model calls of one operation."""

    limit: int
    failures: int = 0
    reason: str | None = None

    @property
    def tripped(self) -> bool:
        """True once `limit` calls in a row have failed."""
        return self.failures >= self.limit


_breaker: ContextVar[Breaker | None] = ContextVar("graphrag_mcp_breaker", default=None)


@contextmanager
def provider_breaker(limit: int) -> Iterator[Breaker]:
    """Stop calling the provider after `limit` consecutive failed calls inside the block."""
    breaker = Breaker(limit)
    token = _breaker.set(breaker)
    try:
        yield breaker
    finally:
        _breaker.reset(token)


def refuse_if_tripped() -> None:
    """Raise ProviderUnavailableError instead of a call once the operation's breaker tripped."""
    breaker = _breaker.get()
    if breaker is not None and breaker.tripped:
        msg = (
            f"not calling the model provider after {breaker.failures} failed calls in a row: "
            f"{breaker.reason}"
        )
        raise ProviderUnavailableError(msg)


def call_succeeded() -> None:
    """A call went through: the count of consecutive failures starts again."""
    if (breaker := _breaker.get()) is not None:
        breaker.failures = 0


def call_failed_for_good(error: BaseException) -> None:
    """A call failed after its last retry: counted, its reason kept for the refusals after."""
    breaker = _breaker.get()
    if breaker is not None and not isinstance(error, ProviderUnavailableError):
        breaker.failures += 1
        breaker.reason = describe(error)
