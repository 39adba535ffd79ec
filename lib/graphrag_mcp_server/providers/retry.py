"""Retry policies for model calls that fail fast with the provider's reason.

graphrag-llm's `exponential_backoff` retries every error but a fixed list for up to 7 times with
delays doubling to 128 s, and ignores `Retry-After`: a provider answering 429 or 500 makes a
search fail only after minutes. `bounded_backoff` (registered with graphrag-llm's retry factory,
written by `graphrag-mcp init`) retries only what can succeed (429, 5xx, a dropped connection;
never 401/403/404 or a timeout), waits what `Retry-After` asks (however long, `max_delay` bounds only its own
backoff) and gives up at once, with the provider's error, when the next wait would end past `total_seconds` or the
operation's deadline. graphrag's own `exponential_backoff` keeps its waits, but is run by the
same loop (ObservedRetry), so whichever a root names:

- every failed attempt's reason is kept in the current operation's `Usage.last_error` at once (graphrag's
  loop let it reach the request log only after its last attempt), so a search or build that fails says why;
- inside `answer_by(seconds)` (a search's deadline) no wait is begun that would end past it: the search
  answers with the provider's error instead of waiting out a wait it has no time for;
- inside `retries_told_to(listener)` each retry's reason and wait are told (a search's progress);
- inside `provider_breaker(n)` (index builds), n consecutive calls that fail for good trip the breaker:
  later calls fail at once, without reaching the provider.
"""

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from graphrag_mcp_server.providers.faults import MalformedAnswerError, describe, is_retryable, retry_after
from graphrag_mcp_server.providers.usage import current_usage

logger = logging.getLogger(__name__)

RETRY_TYPE = "bounded_backoff"
GRAPHRAG_RETRY_TYPE = "exponential_backoff"
"""graphrag's default policy (any root made by `graphrag init`), registered again run by ObservedRetry."""


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


DEADLINE_MARGIN_SECONDS = 1.0
"""A retry's wait must end this long before the operation's deadline: time for the attempt to be sent."""
_deadline: ContextVar[float | None] = ContextVar("graphrag_mcp_deadline", default=None)
RetryListener = Callable[[str, float], None]
"""Told (reason, seconds to wait) each time a failed call is retried."""
_retry_listener: ContextVar[RetryListener | None] = ContextVar("graphrag_mcp_retry_listener", default=None)


@contextmanager
def answer_by(seconds: float | None) -> Iterator[None]:
    """Inside the block, no retry waits past `seconds` from now: it gives up with the provider's error instead."""
    token = _deadline.set(None if seconds is None else time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def retry_notice(reason: str, wait: float) -> str:
    """What a listener tells of one retry."""
    return f"the model provider failed ({reason}); retrying in {wait:.0f} s"


@contextmanager
def retries_told_to(listener: RetryListener) -> Iterator[None]:
    """Tell `listener` the reason and the wait of each retry inside the block (it may be called from any thread)."""
    token = _retry_listener.set(listener)
    try:
        yield
    finally:
        _retry_listener.reset(token)


class ObservedRetry:
    """graphrag-llm Retry loop shared by both policies: every failure's reason kept, each wait told to the
    operation's retry listener, the breaker honoured, and no wait begun that would end past the operation's
    deadline (`answer_by`). Subclasses say how long to wait after a failure (None: give up)."""

    total_seconds: float = float("inf")

    def retry(self, *, func: Callable[..., Any], input_args: dict[str, Any]) -> Any:
        """Call `func` until it succeeds or the policy gives up (blocking)."""
        started, attempt = time.monotonic(), 0
        while True:
            _refuse_if_tripped()
            try:
                return _succeeded(_well_formed(func(**input_args), input_args))
            except Exception as error:
                wait = self._next_wait(error, attempt, started)
                attempt += 1
                time.sleep(wait)
            finally:
                _count_retries(input_args, attempt)

    async def retry_async(self, *, func: Callable[..., Awaitable[Any]], input_args: dict[str, Any]) -> Any:
        """Await `func` until it succeeds or the policy gives up."""
        started, attempt = time.monotonic(), 0
        while True:
            _refuse_if_tripped()
            try:
                return _succeeded(_well_formed(await func(**input_args), input_args))
            except Exception as error:
                wait = self._next_wait(error, attempt, started)
                attempt += 1
                await asyncio.sleep(wait)
            finally:
                _count_retries(input_args, attempt)

    def _wait_after(self, error: Exception, attempt: int) -> float | None:
        """Seconds to wait before retrying after the `attempt`-th failure (from 0); None to give up."""
        raise NotImplementedError

    def _next_wait(self, error: Exception, attempt: int, started: float) -> float:
        """How long to wait before the next attempt; re-raises `error` when there is none."""
        _note_failure(error)
        wait = self._wait_after(error, attempt)
        limit = started + self.total_seconds
        if (deadline := _deadline.get()) is not None:
            limit = min(limit, deadline - DEADLINE_MARGIN_SECONDS)
        if wait is None or time.monotonic() + wait > limit:
            _fail_for_good(error)
            raise error
        if (listener := _retry_listener.get()) is not None:
            listener(describe(error), wait)
        return wait


class BoundedRetry(ObservedRetry):
    """`bounded_backoff`: bounded attempts and total time, `Retry-After` honoured (up to the deadline: a
    `Retry-After: 60` is waited, not cut to `max_delay`), only what can succeed retried."""

    def __init__(self, *, max_retries: int | None = 3, base_delay: float | None = 2.0,
                 max_delay: float | None = 30.0, total_seconds: float = 60.0, jitter: bool | None = True,
                 **_: Any) -> None:
        self._max_retries = 3 if max_retries is None else max_retries
        self._base_delay = base_delay or 2.0
        self._max_delay = max_delay or 30.0
        self.total_seconds = total_seconds
        self._jitter = bool(jitter)

    def _wait_after(self, error: Exception, attempt: int) -> float | None:
        if not is_retryable(error) or attempt >= self._max_retries:
            return None
        if (asked := retry_after(error)) is not None:
            return asked  # what the provider asks; _next_wait gives up when it ends past the deadline
        return min(self._max_delay, self._base_delay ** (attempt + 1) + self._jitter * random.uniform(0, 1))  # noqa: S311


def _graphrag_backoff() -> type:
    """graphrag-llm's `exponential_backoff` policy, its waits and limits unchanged, run by ObservedRetry's loop:
    its own loop keeps no reason until its last attempt fails (minutes later: 7 retries, waits doubling to 128 s),
    and knows no deadline."""
    from graphrag_llm.retry.exponential_retry import ExponentialRetry

    class GraphragBackoff(ObservedRetry, ExponentialRetry):
        """graphrag-llm's ExponentialRetry (its settings and skipped errors) with the reasons kept."""

        def _wait_after(self, error: Exception, attempt: int) -> float | None:
            if type(error).__name__ in self._exceptions_to_skip or attempt >= self._max_retries:
                return None
            return min(self._max_delay, self._base_delay ** (attempt + 1) + self._jitter * random.uniform(0, 1))  # noqa: S311

    return GraphragBackoff


def _well_formed(response: Any, input_args: dict[str, Any]) -> Any:
    """The response, once its content parses as the pydantic model the request asked for (graphrag's community
    reports): an answer that does not is retried as a failure, so graphrag's cache (outside this loop) never keeps
    it and a later run asks again. (LiteLLM checks the schema itself for providers it knows to support it.)"""
    from graphrag_llm.utils.structure_response import structure_completion_response
    from pydantic import BaseModel

    wanted = input_args.get("response_format")
    content = getattr(response, "content", None)
    if not (isinstance(wanted, type) and issubclass(wanted, BaseModel)) or not isinstance(content, str):
        return response
    try:
        structure_completion_response(content, wanted)
    except ValueError as error:  # json.JSONDecodeError and pydantic's ValidationError are ValueErrors
        raise MalformedAnswerError(content, f"not the JSON {wanted.__name__} asks for") from error
    return response


def _refuse_if_tripped() -> None:
    breaker = _breaker.get()
    if breaker is not None and breaker.tripped:
        msg = f"not calling the model provider after {breaker.failures} failed calls in a row: {breaker.reason}"
        raise ProviderUnavailableError(msg)


def _succeeded(response: Any) -> Any:
    if (breaker := _breaker.get()) is not None:
        breaker.failures = 0
    return response


def _note_failure(error: BaseException) -> None:
    if not isinstance(error, ProviderUnavailableError) and (usage := current_usage()) is not None:
        usage.last_error = describe(error)


def _fail_for_good(error: BaseException) -> None:
    breaker = _breaker.get()
    if breaker is not None and not isinstance(error, ProviderUnavailableError):
        breaker.failures += 1
        breaker.reason = describe(error)


def _count_retries(input_args: dict[str, Any], attempt: int) -> None:
    if (metrics := input_args.get("metrics")) is not None:
        metrics["retries"] = attempt
        metrics["requests_with_retries"] = 1 if attempt > 0 else 0


class _FailedRequestRecorder(logging.Handler):
    """Keeps the reason of each request graphrag-llm logs as failed in the operation's Usage, and
    logs it in one line (graphrag-llm's own record carries a whole traceback)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            _note_failure(record.exc_info[1])
            logger.warning("model call failed: %s", describe(record.exc_info[1]))


REQUEST_LOGGER = "graphrag_llm.middleware.with_logging"


def register_retry_policy() -> None:
    """Register `bounded_backoff`, and graphrag's `exponential_backoff` run by ObservedRetry, with graphrag-llm's
    retry factory, and record failed requests (idempotent)."""
    from graphrag_llm.retry.retry_factory import register_retry, retry_factory

    if RETRY_TYPE not in retry_factory:
        register_retry(RETRY_TYPE, BoundedRetry)
        register_retry(GRAPHRAG_RETRY_TYPE, _graphrag_backoff())
    request_log = logging.getLogger(REQUEST_LOGGER)
    if not any(isinstance(handler, _FailedRequestRecorder) for handler in request_log.handlers):
        request_log.addHandler(_FailedRequestRecorder(logging.ERROR))
        request_log.propagate = False
