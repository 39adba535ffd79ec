"""graphrag's pipeline run into a new version, and the check that the version is whole before it
is published: a failed workflow, a provider that stopped answering, failures graphrag's extractors
swallowed, or a table or vector row missing (integrity.py) each refuse it with what it lacks."""

import os
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.errors import IndexBuildError, IndexIncompleteError, ProviderError
from graphrag_mcp_server.handlers.indexing import versions
from graphrag_mcp_server.handlers.indexing.swallowed import SwallowedFailures, failures_recorded
from graphrag_mcp_server.handlers.integrity import Gap, record_check, version_gaps
from graphrag_mcp_server.handlers.tables import count_rows, record_vector_tables
from graphrag_mcp_server.providers.breaker import provider_breaker
from graphrag_mcp_server.providers.faults import Operation, advice, kind_of
from graphrag_mcp_server.providers.usage import Usage

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.callbacks.workflow_callbacks import WorkflowCallbacks
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.pipeline_run_result import PipelineRunResult

    from graphrag_mcp_server.handlers.indexing.kept import Kept
    from graphrag_mcp_server.handlers.indexing.record_tables import FileWrites


async def run_pipeline(
    target: "GraphRagConfig",
    documents: "pd.DataFrame",
    method: str,
    callbacks: "list[WorkflowCallbacks] | None",
    current: Path | None,
    incremental: bool,
    version: Path,
    failure_limit: int,
    usage: Usage,
) -> "tuple[Kept, dict[str, int]]":
    """graphrag's pipeline over `documents` into `version` (`target` pinned to it), keeping what the
    served version `current` allows when `incremental`; the version checked whole (refused with what
    it lacks otherwise) and its records written. What it kept, and the rows of each table."""
    from graphrag.api import build_index

    from graphrag_mcp_server.handlers.indexing.kept import (
        graphrag_name,
        kept_from,
        with_kept_workflows,
    )
    from graphrag_mcp_server.handlers.indexing.record_tables import written_tables_kept

    target = with_kept_workflows(target, method)
    workflows = [graphrag_name(name) for name in target.workflows or []]
    with (
        provider_breaker(failure_limit) as breaker,
        failures_recorded() as failures,
        kept_from(current if incremental else None, target, version) as kept,
        written_tables_kept(workflows) if incremental else nullcontext() as writes,
    ):
        outputs = await build_index(
            target,
            method=method,
            callbacks=_with_crash_points(_telling(writes, callbacks)),
            additional_context=kept.workflow_state,
            input_documents=documents,
        )
    kept.workflows = [output.workflow for output in outputs]
    stopped = next((output for output in outputs if output.error is not None), None)
    # a tripped breaker names the provider
    if failures.count() and stopped is not None and not breaker.tripped:
        refuse_incomplete(
            [], failures, usage, current, f"{stopped.workflow} stopped: {stopped.error}"
        )
    raise_first_failure(
        target, outputs, breaker.reason if breaker.tripped else None, usage.last_error
    )
    refuse_incomplete(
        version_gaps(target, version, set(failures.extractions)), failures, usage, current
    )
    versions.crash_point("checked")
    record_check(version)
    record_vector_tables(target)
    return kept, await count_rows(target)


def _telling(
    writes: "FileWrites | None", callbacks: "list[WorkflowCallbacks] | None"
) -> "list[WorkflowCallbacks] | None":
    """The callbacks, plus one that tells `writes` (None: no update) as each workflow ends."""
    if writes is None:
        return callbacks
    from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks

    from graphrag_mcp_server.handlers.indexing.kept import graphrag_name

    ended = writes.workflow_ended

    class WorkflowEnds(NoopWorkflowCallbacks):
        def workflow_end(self, name: str, instance: object) -> None:
            ended(graphrag_name(name))

    return [*(callbacks or []), WorkflowEnds()]


def _with_crash_points(
    callbacks: "list[WorkflowCallbacks] | None",
) -> "list[WorkflowCallbacks] | None":
    """The callbacks, plus one that makes each workflow's end a crash point while a test hook
    (CRASH_AT, PAUSE_AT) is set."""
    if not (os.environ.get(versions.CRASH_AT) or os.environ.get(versions.PAUSE_AT)):
        return callbacks
    from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks

    class CrashPoints(NoopWorkflowCallbacks):
        def workflow_end(self, name: str, instance: object) -> None:
            versions.crash_point(f"workflow:{name}")

    return [*(callbacks or []), CrashPoints()]


def raise_first_failure(
    config: "GraphRagConfig",
    outputs: "list[PipelineRunResult]",
    provider_failure: str | None,
    last_error: str | None,
) -> None:
    """The first failed workflow as an error; the provider's reason when it stopped answering."""
    failed = [output for output in outputs if output.error is not None]
    if failed and provider_failure is not None:
        advised = advice(kind_of(provider_failure), Operation.BUILD, reason=provider_failure)
        msg = (
            "indexing stopped: the model provider failed call after call: "
            f"{provider_failure.rstrip('.')}. {advised}"
        )
        raise ProviderError(msg)
    if failed:
        logs = Path(config.reporting.base_dir or "logs").resolve()
        provider = f"; the model provider's last error: {last_error}" if last_error else ""
        msg = (
            f"indexing failed in workflow {failed[0].workflow}: {failed[0].error}{provider} "
            f"(details in {logs})"
        )
        raise IndexBuildError(msg)


def refuse_incomplete(
    gaps: list[Gap],
    failures: SwallowedFailures,
    usage: Usage,
    current: Path | None,
    stopped: str | None = None,
) -> None:
    """Refuse to publish a version with gaps (or whose model calls failed until a workflow
    `stopped`), naming what it lacks, the provider's last error and what to do."""
    if not gaps and not failures.count():
        return
    reason = failures.last_reason() or usage.last_error
    why = f"; the model's last error: {reason.rstrip('.')}" if reason else ""
    served = (
        "the version served before stays current"
        if current is not None
        else "no version is served yet"
    )
    missing = "; ".join(map(str, gaps)) or f"model calls failed: {failures.summary()}"
    if stopped:
        missing += f" ({stopped})"
    msg = (
        f"indexing did not publish the new version, it is incomplete: {missing}{why}. "
        f"{served.capitalize()}; run the same index command again once the model provider "
        "answers: only the missing work is sent to the model (what succeeded is in "
        "graphrag's cache)"
    )
    raise IndexIncompleteError(msg)
