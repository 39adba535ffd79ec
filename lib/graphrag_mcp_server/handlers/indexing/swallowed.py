"""Model calls whose failure graphrag's extractors swallow: collected from graphrag's own log
records.

graph_extractor, claim_extractor and community_reports_extractor catch a failed call, log it and
return nothing, so the workflow "succeeds" with the text unit's entities or the community's report
missing. Their log records are graphrag's extension point for this: a handler on graphrag's
operations logger keeps each failure's reason (and the text unit it concerns) for the build in
progress, which then refuses to publish.
"""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

OPERATIONS_LOGGER = "graphrag.index.operations"
EXTRACTION_ERRORS = {
    "graphrag.index.operations.extract_graph.extract_graph": "extraction",
    "graphrag.index.operations.extract_covariates.extract_covariates": "claims",
    "graphrag.index.operations.summarize_communities.summarize_communities": "report",
}
"""The loggers of graphrag's extractors' `on_error` records, and the step each one's failures belong
to."""


@dataclass
class SwallowedFailures:
    """A build's failed extractions (text unit id -> reason) and the reasons of its failed reports
    and claims."""

    extractions: dict[str, str] = field(default_factory=dict)
    reports: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)

    def count(self) -> int:
        """How many model calls failed for good."""
        return len(self.extractions) + len(self.reports) + len(self.claims)

    def summary(self) -> str:
        """How many failed of each kind, in words."""
        kinds = [
            (len(self.extractions), "text unit extractions"),
            (len(self.reports), "community reports"),
            (len(self.claims), "claim extractions"),
        ]
        return ", ".join(f"{count} {kind}" for count, kind in kinds if count)

    def last_reason(self) -> str | None:
        """The reason of the last failure noted, if any."""
        reasons = [*self.extractions.values(), *self.reports, *self.claims]
        return reasons[-1] if reasons else None


_current: ContextVar[SwallowedFailures | None] = ContextVar("graphrag_mcp_swallowed", default=None)


class _Recorder(logging.Handler):
    """Notes each extractor failure graphrag logs in the current build's SwallowedFailures."""

    def emit(self, record: logging.LogRecord) -> None:
        failures, step = _current.get(), EXTRACTION_ERRORS.get(record.name)
        if failures is None or step is None or record.levelno < logging.ERROR:
            return
        reason = _reason(record)
        if step == "extraction":
            details = getattr(record, "details", None) or {}
            failures.extractions[str(details.get("source_id", len(failures.extractions)))] = reason
        elif step == "report":
            failures.reports.append(reason)
        else:
            failures.claims.append(reason)


def _reason(record: logging.LogRecord) -> str:
    from graphrag_mcp_server.providers.faults import describe

    error = record.exc_info[1] if record.exc_info else None
    return describe(error) if error is not None else record.getMessage()


@contextmanager
def failures_recorded() -> Iterator[SwallowedFailures]:
    """Collect the extractor failures graphrag logs inside the block (tasks spawned inside
    included)."""
    operations = logging.getLogger(OPERATIONS_LOGGER)
    if not any(isinstance(handler, _Recorder) for handler in operations.handlers):
        operations.addHandler(_Recorder(logging.ERROR))
    failures = SwallowedFailures()
    token = _current.set(failures)
    try:
        yield failures
    finally:
        _current.reset(token)
