"""Retry policies for model calls that fail fast with the provider's reason.

graphrag-llm's `exponential_backoff` retries every error but a fixed list for up to 7 times with
delays doubling to 128 s, and ignores `Retry-After`: a provider answering 429 or 500 makes a
search fail only after minutes. `bounded_backoff` (registered with graphrag-llm's retry factory,
written by `graphrag-mcp init`) retries only what can succeed (429, 5xx, a dropped connection;
never 401/403/404 or a timeout), waits what `Retry-After` asks (however long, `max_delay` bounds
only its own backoff) and gives up at once, with the provider's error, when the next wait would
end past `total_seconds` or the operation's deadline. graphrag's own `exponential_backoff` keeps
its waits, but is run by the same loop (ObservedRetry), so whichever a root names:

- every failed attempt's reason is kept in the current operation's `Usage.last_error` at once
  (failures.py; graphrag's loop let it reach the request log only after its last attempt), so a
  search or build that fails says why;
- inside `answer_by(seconds)` (operation.py: a search's deadline) no wait is begun that would end
  past it: the search answers with the provider's error instead of waiting out a wait it has no
  time for;
- inside `retries_told_to(listener)` (operation.py) each retry's reason and wait are told (a
  search's progress);
- inside `provider_breaker(n)` (breaker.py: index builds), n consecutive calls that fail for good
  trip the breaker: later calls fail at once, without reaching the provider.
"""

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from graphrag_mcp_server.providers.breaker import (
    call_failed_for_good,
    call_succeeded,
    refuse_if_tripped,
)
from graphrag_mcp_server.providers.failures import note_failure
from graphrag_mcp_server.providers.faults import MalformedAnswerError, is_retryable, retry_after
from graphrag_mcp_server.providers.operation import latest_end, tell_retry

if TYPE_CHECKING:
    from graphrag_llm.retry.retry import Retry

RETRY_TYPE = "bounded_backoff"
GRAPHRAG_RETRY_TYPE = "exponential_backoff"
"""graphrag's default policy (any root made by `graphrag init`), registered again run by
ObservedRetry."""


class ObservedRetry:
    """graphrag-llm Retry loop shared by both policies: every failure's reason kept, each wait
    told to the operation's retry listener, the breaker honoured, and no wait begun that would end
    past the operation's deadline (`answer_by`). Subclasses say how long to wait after a failure
    (None: give up)."""

    total_seconds: float = float("inf")

    def retry(self, *, func: Callable[..., Any], input_args: dict[str, Any]) -> Any:
        """Call `func` until it succeeds or the policy gives up (blocking)."""
        started, attempt = time.monotonic(), 0
        while True:
            refuse_if_tripped()
            try:
                response = _well_formed(func(**input_args), input_args)
                call_succeeded()
                return response
            except Exception as error:  # noqa: BLE001 - _next_wait re-raises what is not retried
                wait = self._next_wait(error, attempt, started)
                attempt += 1
                time.sleep(wait)
            finally:
                _count_retries(input_args, attempt)

    async def retry_async(
        self, *, func: Callable[..., Awaitable[Any]], input_args: dict[str, Any]
    ) -> Any:
        """Await `func` until it succeeds or the policy gives up."""
        started, attempt = time.monotonic(), 0
        while True:
            refuse_if_tripped()
            try:
                response = _well_formed(await func(**input_args), input_args)
                call_succeeded()
                return response
            except Exception as error:  # noqa: BLE001 - _next_wait re-raises what is not retried
                wait = self._next_wait(error, attempt, started)
                attempt += 1
                await asyncio.sleep(wait)
            finally:
                _count_retries(input_args, attempt)

    def _wait_after(self, error: Exception, attempt: int) -> float | None:
        """Seconds to wait before retrying after the `attempt`-th failure (from 0); None to give
        up."""
        raise NotImplementedError

    def _next_wait(self, error: Exception, attempt: int, started: float) -> float:
        """How long to wait before the next attempt; re-raises `error` when there is none."""
        note_failure(error)
        wait = self._wait_after(error, attempt)
        if wait is None or time.monotonic() + wait > latest_end(started + self.total_seconds):
            call_failed_for_good(error)
            raise error
        tell_retry(error, wait)
        return wait


class BoundedRetry(ObservedRetry):
    """`bounded_backoff`: bounded attempts and total time, `Retry-After` honoured (up to the
    deadline: a `Retry-After: 60` is waited, not cut to `max_delay`), only what can succeed
    retried."""

    def __init__(
        self,
        *,
        max_retries: int | None = 3,
        base_delay: float | None = 2.0,
        max_delay: float | None = 30.0,
        total_seconds: float = 60.0,
        jitter: bool | None = True,
        **_: Any,
    ) -> None:
        self._max_retries = 3 if max_retries is None else max_retries
        self._base_delay = base_delay or 2.0
        self._max_delay = max_delay or 30.0
        self.total_seconds = total_seconds
        self._jitter = bool(jitter)

    def _wait_after(self, error: Exception, attempt: int) -> float | None:
        if not is_retryable(error) or attempt >= self._max_retries:
            return None
        if (asked := retry_after(error)) is not None:
            return asked  # as asked; _next_wait gives up when it would end past the deadline
        return _backoff(self._base_delay, self._max_delay, self._jitter, attempt)


def _graphrag_backoff() -> type:
    """graphrag-llm's `exponential_backoff` policy, its waits and limits unchanged, run by
    ObservedRetry's loop: its own loop keeps no reason until its last attempt fails (minutes later:
    7 retries, waits doubling to 128 s), and knows no deadline."""
    from graphrag_llm.retry.exponential_retry import ExponentialRetry

    class GraphragBackoff(ObservedRetry, ExponentialRetry):
        """graphrag-llm's ExponentialRetry (its settings and skipped errors), reasons kept."""

        def _wait_after(self, error: Exception, attempt: int) -> float | None:
            if type(error).__name__ in self._exceptions_to_skip or attempt >= self._max_retries:
                return None
            return _backoff(self._base_delay, self._max_delay, self._jitter, attempt)

    return GraphragBackoff


def _backoff(base_delay: float, max_delay: float, jitter: bool, attempt: int) -> float:
    """Exponential backoff after the `attempt`-th failure, jittered by up to a second, capped."""
    return min(max_delay, base_delay ** (attempt + 1) + jitter * random.uniform(0, 1))


def _well_formed(response: Any, input_args: dict[str, Any]) -> Any:
    """The response, once its content parses as the pydantic model the request asked for
    (graphrag's community reports): an answer that does not is retried as a failure, so graphrag's
    cache (outside this loop) never keeps it and a later run asks again. (LiteLLM checks the
    schema itself for providers it knows to support it.)"""
    from graphrag_llm.utils.structure_response import structure_completion_response
    from pydantic import BaseModel

    wanted = input_args.get("response_format")
    content = getattr(response, "content", None)
    if not isinstance(content, str) or not isinstance(wanted, type):
        return response
    if not issubclass(wanted, BaseModel):
        return response
    try:
        structure_completion_response(content, wanted)
    except ValueError as error:  # json's JSONDecodeError, pydantic's ValidationError
        raise MalformedAnswerError(content, f"not the JSON {wanted.__name__} asks for") from error
    return response


def _count_retries(input_args: dict[str, Any], attempt: int) -> None:
    if (metrics := input_args.get("metrics")) is not None:
        metrics["retries"] = attempt
        metrics["requests_with_retries"] = 1 if attempt > 0 else 0


def register_retry_policy() -> None:
    """Register `bounded_backoff`, and graphrag's `exponential_backoff` run by ObservedRetry, with
    graphrag-llm's retry factory (idempotent)."""
    from graphrag_llm.retry.retry_factory import register_retry, retry_factory

    if RETRY_TYPE not in retry_factory:
        # a Retry by its methods, not by inheritance: graphrag-llm is imported only when used
        register_retry(RETRY_TYPE, cast("Callable[..., Retry]", BoundedRetry))
        register_retry(GRAPHRAG_RETRY_TYPE, _graphrag_backoff())
