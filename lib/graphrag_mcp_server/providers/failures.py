"""Failed model requests recorded: each failure's reason kept in the running operation's Usage (a
search or build that fails says why), and graphrag-llm's request log, which carries a whole
traceback per failure, replaced by one line."""

import logging

from graphrag_mcp_server.providers.breaker import ProviderUnavailableError
from graphrag_mcp_server.providers.faults import describe
from graphrag_mcp_server.providers.usage import current_usage

logger = logging.getLogger(__name__)

REQUEST_LOGGER = "graphrag_llm.middleware.with_logging"
"""graphrag-llm's logger of failed requests."""


def note_failure(error: BaseException) -> None:
    """Keep `error`'s one-line description as the running operation's last error (a call the
    breaker refused is not the provider's failure)."""
    if not isinstance(error, ProviderUnavailableError) and (usage := current_usage()) is not None:
        usage.last_error = describe(error)


class _FailedRequestRecorder(logging.Handler):
    """Keeps the reason of each request graphrag-llm logs as failed in the operation's Usage, and
    logs it in one line (graphrag-llm's own record carries a whole traceback)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            note_failure(record.exc_info[1])
            logger.warning("model call failed: %s", describe(record.exc_info[1]))


def record_failed_requests() -> None:
    """Put the recorder on graphrag-llm's request logger in place of its own output (idempotent);
    the host application's logging sees the one-line warning instead."""
    request_log = logging.getLogger(REQUEST_LOGGER)
    if not any(isinstance(handler, _FailedRequestRecorder) for handler in request_log.handlers):
        request_log.addHandler(_FailedRequestRecorder(logging.ERROR))
        request_log.propagate = False
