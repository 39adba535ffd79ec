"""The server's log lines on stderr: plain (no rich wrapping), each bounded in length, repeats of
one line rate-limited, and secrets (SAS signatures, storage account keys, bearer tokens) redacted at
every level in every logger, urllib3's and the Azure SDK's included."""

import logging
import re
import sys
import time

SECRETS = re.compile(
    r"(?i)(\bsig=|\bAccountKey=|\bSharedAccessSignature=|\bBearer\s+|[?&]access_token=)[^&\s'\";,]+"
)
"""A secret's name, then its value (up to the next separator)."""

LONGEST_LINE = 2000
"""Characters of one log message kept; the rest is cut (a refused 8,000-character header is not a
log page)."""

REPEATS_PER_WINDOW, WINDOW_SECONDS = 20, 10.0
"""At most this many lines of one request-path logger and message template per window; the others
are dropped (and counted in the next line of the kind)."""

REQUEST_PATH = ("graphrag_mcp_server.server", "mcp.server", "mcp.shared", "uvicorn.error")
"""Loggers whose lines a caller can cause, one per request."""

FORMAT = "%(levelname)s %(name)s: %(message)s"


class SecretsRedacted(logging.Filter):
    """Every record's message with secret values replaced by `[redacted]` and cut to LONGEST_LINE
    characters; records of request-path warnings and below beyond REPEATS_PER_WINDOW per window are
    dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.windows: dict[tuple[str, str], tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact and bound the record; False to drop a repeat."""
        if (
            record.levelno <= logging.WARNING
            and record.name.startswith(REQUEST_PATH)
            and not self._within_rate(record)
        ):
            return False
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: logging reports it itself
            return True
        bounded = SECRETS.sub(r"\1[redacted]", message)
        if len(bounded) > LONGEST_LINE:
            bounded = f"{bounded[:LONGEST_LINE]}... ({len(bounded)} characters)"
        if bounded != message:
            record.msg, record.args = bounded, None
        return True

    def _within_rate(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg)[:200])
        now = time.monotonic()
        started, count = self.windows.get(key, (now, 0))
        if now - started >= WINDOW_SECONDS:
            if count > REPEATS_PER_WINDOW:
                record.msg = (
                    f"{record.msg} ({count - REPEATS_PER_WINDOW} like it dropped in "
                    f"{WINDOW_SECONDS:.0f} s)"
                )
            started, count = now, 0
        if len(self.windows) > 10_000:
            self.windows.clear()
        self.windows[key] = (started, count + 1)
        return count < REPEATS_PER_WINDOW


REDACTING = SecretsRedacted()

GRAPHRAG_LOGGERS = ("graphrag", "graphrag_llm")
"""The loggers graphrag's init_loggers gives a file handler in the index's logs/ (query.log)."""


class GraphragRecordsInLogs(logging.Filter):
    """graphrag's and graphrag-llm's records off stderr once their loggers write them to the
    index's logs/ (a search's "Reached token limit" lines by the hundred): stderr keeps this
    project's own lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a graphrag record that its own file handler already keeps."""
        top = record.name.split(".", 1)[0]
        return top not in GRAPHRAG_LOGGERS or not logging.getLogger(top).handlers


IN_LOGS = GraphragRecordsInLogs()


LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
"""The loggers LiteLLM gives its own handler when imported."""


def litellm_records_as_ours() -> None:
    """LiteLLM's records go where this process's own go (stderr, redacted and bounded), not
    through the handler LiteLLM gives its loggers, which writes every record below WARNING to
    stdout: under `serve --transport stdio` that is the JSON-RPC stream, and a client read
    `LiteLLM:DEBUG` lines there at GRAPHRAG_MCP_LOG_LEVEL=DEBUG. Call once LiteLLM is imported."""
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.propagate = True


def plain_logs(level: str) -> None:
    """Log to stderr in plain lines at `level` (before the MCP SDK would add its rich handler),
    redact and bound every line of every handler there is now, uvicorn's included, and leave
    graphrag's records to its logs/ files. Idempotent."""
    root = logging.getLogger()
    if not root.handlers:
        stderr_handler = logging.StreamHandler(sys.stderr)
        stderr_handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(stderr_handler)
        root.setLevel(level.upper())
    for logger in (
        root,
        *(logging.getLogger(name) for name in ("uvicorn", "uvicorn.error", "uvicorn.access")),
    ):
        for handler in logger.handlers:
            if REDACTING not in handler.filters:
                handler.addFilter(REDACTING)
    for handler in root.handlers:
        if not isinstance(handler, logging.FileHandler) and IN_LOGS not in handler.filters:
            handler.addFilter(IN_LOGS)
