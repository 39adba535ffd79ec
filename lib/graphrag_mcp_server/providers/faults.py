"""What kind of failure a model provider's error is, and the one piece of advice that fits it.

A wrong key is fixed in the settings, a rate limit by waiting, a server error or a dropped
connection often by trying again: telling a user who hit a 429 to check their key sends them to the
wrong place. `describe` writes an error as one line (its class, HTTP status, `Retry-After`, and the
provider's own text where its answer could not be parsed); `fault_kind` reads that kind from the
error, `kind_of` from such a line (what a build or a search keeps of a failure is the line), and
`advice` says what to do for each kind, in a build or in a search.
"""

import json
import re
import time
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any

RETRYABLE_STATUS = {408, 409, 429}
SHOWN_CHARACTERS = 200
"""How much of an answer that could not be parsed a message quotes."""
UNREADABLE = "an answer that could not be parsed"
"""What `describe` says of an error caused by a provider's answer that is not the JSON asked for."""


class MalformedAnswerError(Exception):
    """The provider answered, but not in the form the request asked for: its text (`raw_response`,
    as LiteLLM's JSONSchemaValidationError names it) and why it could not be read."""

    def __init__(self, raw_response: str, why: str) -> None:
        super().__init__(why)
        self.raw_response, self.why = raw_response, why


class FaultKind(StrEnum):
    """What went wrong with a model call, as far as what to do about it goes."""

    CREDENTIALS = "credentials"
    """401, 403: the key (or identity) was refused."""
    RATE_LIMIT = "rate limit"
    """429: too many requests or tokens for the account."""
    FAILED = "provider failed"
    """5xx, 408, 409, a dropped connection: the provider's trouble, not the settings'."""
    TIMEOUT = "timeout"
    """No answer within the request's time."""
    UNREADABLE = "unreadable answer"
    """HTTP 200, but a body that is not the JSON asked for (cut short, or another format)."""
    REQUEST = "request"
    """400, 404, 422...: the model name, the base URL or the request itself."""


class Operation(StrEnum):
    """What the failed call was part of: the advice differs."""

    BUILD = "build"
    SEARCH = "search"


def provider_error(error: BaseException) -> BaseException | None:
    """The model provider's error in `error`'s cause chain (LiteLLM raises OpenAI's error classes),
    if any."""
    import openai

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, openai.OpenAIError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def provider_error_reason(error: BaseException) -> str | None:
    """The model provider's reason for a failed call (auth, rate limit, timeout...), if that is what
    failed."""
    found = provider_error(error)
    return None if found is None else describe(found)


def fault_kind(error: BaseException) -> FaultKind:
    """The kind of a failed model call's error."""
    import openai

    status = getattr(error, "status_code", None)
    if _unparsed_body(error) is not None:
        return FaultKind.UNREADABLE
    if isinstance(error, openai.APITimeoutError):
        return FaultKind.TIMEOUT
    if isinstance(error, openai.APIConnectionError):
        return FaultKind.FAILED
    return _kind_of_status(status if isinstance(status, int) else None)


def is_retryable(error: BaseException) -> bool:
    """True for failures a later attempt may not repeat: rate limits, server errors, dropped
    connections, answers cut short."""
    return fault_kind(error) in {FaultKind.RATE_LIMIT, FaultKind.FAILED, FaultKind.UNREADABLE}


def retry_after(error: BaseException) -> float | None:
    """Seconds the provider asked to wait (`Retry-After`, in seconds or as an HTTP date), if it
    did."""
    headers: Any = getattr(error, "litellm_response_headers", None)
    response = getattr(error, "response", None)
    if headers is None and response is not None:
        headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def describe(error: BaseException) -> str:
    """The provider's reason in one line, e.g. `RateLimitError (HTTP 429, Retry-After 20 s): Rate
    limit reached...`; an answer that could not be parsed is quoted."""
    name = type(error).__name__
    if (body := _unparsed_body(error)) is not None:
        return f"{name}: {UNREADABLE} ({body[1]}); it answered: {_quoted(body[0])}"
    text = " ".join(str(error).split())
    for prefix in (f"litellm.{name}: ", f"{name}: "):
        text = text.removeprefix(prefix)
    status = getattr(error, "status_code", None)
    details = [f"HTTP {status}"] if isinstance(status, int) else []
    if (wait := retry_after(error)) is not None and status == 429:
        details.append(f"Retry-After {wait:g} s")
    shown = f" ({', '.join(details)})" if details else ""
    return f"{name}{shown}: {text}"[:600]


def kind_of(reason: str) -> FaultKind:
    """The kind of failure a line written by `describe` tells of (the line is what an operation
    keeps)."""
    if f": {UNREADABLE} (" in reason:
        return FaultKind.UNREADABLE
    if re.match(r"(\w*Timeout\w*|[^:]*no answer within)", reason):
        return FaultKind.TIMEOUT
    if (status := re.search(r"^\w+ \(HTTP (\d{3})", reason)) is not None:
        return _kind_of_status(int(status.group(1)))
    if re.match(r"\w*Connection\w*", reason):
        return FaultKind.FAILED
    return FaultKind.REQUEST


def advice(
    kind: FaultKind, operation: Operation, settings: str = "settings.yaml", reason: str = ""
) -> str:
    """What to do about a failure of `kind` during `operation` (a sentence); `reason` (describe's
    line) gives the Retry-After a rate limit asked for."""
    again = (
        "run the index again (calls already answered are cached, not paid again)"
        if operation is Operation.BUILD
        else "ask again"
    )
    meanwhile = (
        ""
        if operation is Operation.BUILD
        else "; context_only=true answers without the model meanwhile"
    )
    match kind:
        case FaultKind.CREDENTIALS if operation is Operation.BUILD:
            return f"Check the key, base URL and model name in {settings} and the environment"
        case FaultKind.CREDENTIALS:
            return f"Check the model settings and credentials in {settings}"
        case FaultKind.RATE_LIMIT:
            asked = re.search(r"Retry-After (\d+(?:\.\d+)?) s", reason)
            wait = (
                f"wait {asked.group(1)} s (the provider's Retry-After)" if asked else "wait a while"
            )
            return (
                f"The provider's rate limit was reached: {wait} and {again}, or lower "
                f"concurrent_requests in {settings}{meanwhile}"
            )
        case FaultKind.FAILED:
            return (
                f"The provider failed, not the settings: a retry may succeed ({again}); if it "
                f"keeps failing, check that the provider at api_base in {settings} is "
                f"up{meanwhile}"
            )
        case FaultKind.TIMEOUT:
            return (
                f"The provider did not answer in time: a retry may succeed ({again}); a slow "
                f"model needs a larger call_args.timeout in {settings}{meanwhile}"
            )
        case FaultKind.UNREADABLE:
            return (
                "The provider's answer was cut short or not in the form asked for (JSON, or "
                f"a stream of chunks): a retry may succeed ({again}); if it keeps happening, "
                f"check that api_base in {settings} is an OpenAI-compatible "
                f"endpoint{meanwhile}"
            )
    return f"Check the model name, base URL and request settings in {settings}"


def provider_failure(
    error: BaseException, operation: Operation, settings: str = "settings.yaml"
) -> str | None:
    """`the model provider failed: REASON. ADVICE` for a failed model call in `error`'s causes; None
    if none failed."""
    if (found := provider_error(error)) is None:
        return None
    reason = describe(found)
    return (
        f"the model provider failed: {reason.rstrip('.')}. "
        f"{advice(fault_kind(found), operation, settings, reason)}"
    )


def _kind_of_status(status: int | None) -> FaultKind:
    if status in {401, 403}:
        return FaultKind.CREDENTIALS
    if status == 429:
        return FaultKind.RATE_LIMIT
    if status is not None and (status in RETRYABLE_STATUS or status >= 500):
        return FaultKind.FAILED
    return FaultKind.REQUEST


def _unparsed_body(error: BaseException) -> tuple[str, str] | None:
    """(the body, why it could not be parsed) when `error` comes from a provider answer that is not
    valid JSON."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, json.JSONDecodeError):
            return cause.doc, cause.msg
        if isinstance(
            raw := getattr(cause, "raw_response", None), str
        ):  # ours, and LiteLLM's schema check
            return raw, getattr(cause, "why", "not the JSON asked for")
        cause = cause.__cause__ or cause.__context__
    return None


def _quoted(text: str) -> str:
    shown = " ".join(text.split())
    return json.dumps(shown[:SHOWN_CHARACTERS] + ("..." if len(shown) > SHOWN_CHARACTERS else ""))
