"""What an incremental run keeps from the previous version: the state of the run handed to its
workflows, and the pipeline naming this project's workflows in place of graphrag's."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing import (
    extracted_rows,
    fresh_reference,
    kept_communities,
    kept_extraction,
    kept_final_documents,
    kept_final_text_units,
    kept_reports,
    kept_text_reports,
    kept_text_units,
    report_rows,
    stable_communities,
    stable_ids,
    vector_delta,
)
from graphrag_mcp_server.handlers.indexing.carry_over import fingerprints, work_carried_over
from graphrag_mcp_server.handlers.indexing.memos import CARRIED, CarriedOver, Step
from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion
from graphrag_mcp_server.handlers.indexing.vector_delta import VectorWrites
from graphrag_mcp_server.handlers.results import Clustering

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

KEPT_WORKFLOWS = {
    module.REPLACES: (module.WORKFLOW, module.run_workflow)
    for module in (
        kept_text_units,
        kept_final_documents,
        kept_extraction,
        stable_ids,
        kept_communities,
        kept_final_text_units,
        kept_reports,
        kept_text_reports,
        vector_delta,
    )
}
"""graphrag's workflow -> this project's, run in its place: (name, function)."""
_REPLACED: dict[str, str] = {name: replaced for replaced, (name, _) in KEPT_WORKFLOWS.items()}


def graphrag_name(workflow: str) -> str:
    """The name graphrag gives the workflow named `workflow` in the pipeline (this project's runs
    in place of graphrag's of that name)."""
    return _REPLACED.get(workflow, workflow)


@dataclass
class Kept:
    """What a run took from the previous version (step results, communities, vector rows), and the
    state its workflows read (graphrag.api.build_index's `additional_context`)."""

    carried: CarriedOver
    clustering: Clustering | None
    vectors: VectorWrites
    workflow_state: dict[str, Any]
    workflows: list[str] = field(default_factory=list)
    """The workflows of graphrag's pipeline that ran, in order."""


@contextmanager
def kept_from(previous: Path | None, config: "GraphRagConfig", version: Path) -> Iterator[Kept]:
    """Within the block, graphrag's pipeline writing `version` (as `config` is pinned to it, its
    workflows named by `with_kept_workflows`) and given `Kept.workflow_state` takes from the
    version in `previous` the results whose input is unchanged (carry_over.py), its communities
    (stable_communities.py), the ids of its entities and relationships (stable_ids.py) and of its
    text units (kept_text_units.py), its extraction rows (extracted_rows.py), its reports' rows
    (report_rows.py) and its vector rows (vector_delta.py). None: a full build, which still
    records what the next update compares against."""
    models = fingerprints(config)
    kept_version = PreviousVersion.of(previous, config, version)
    communities = stable_communities.communities_kept(kept_version)
    vectors = vector_delta.vectors_by_delta(kept_version, models[Step.EMBEDDING])
    state: dict[str, Any] = {
        stable_communities.STATE: communities,
        stable_ids.STATE: stable_ids.identities_kept(kept_version),
        kept_text_units.STATE: kept_text_units.unit_ids_kept(kept_version),
        vector_delta.STATE: vectors,
        extracted_rows.STATE: extracted_rows.ExtractedRows(
            previous, version, models[Step.EXTRACTION]
        ),
        report_rows.STATE: report_rows.ReportRows(previous, version),
    }
    with work_carried_over(kept_version, version, models) as carried:
        state[CARRIED] = carried
        yield Kept(carried, communities.clustering if communities else None, vectors, state)
    vector_delta.record_rows(vectors, version, models[Step.EMBEDDING])
    if communities is not None and communities.reference is not None:
        fresh_reference.write(communities.reference, version)


def with_kept_workflows(config: "GraphRagConfig", method: str) -> "GraphRagConfig":
    """The config whose pipeline (`config.workflows`, or graphrag's for `method`) runs this
    project's workflows in place of graphrag's (KEPT_WORKFLOWS), registered with graphrag's
    PipelineFactory."""
    from graphrag.index.workflows.factory import PipelineFactory

    for name, workflow in KEPT_WORKFLOWS.values():
        PipelineFactory.register(name, workflow)
    workflows = [
        KEPT_WORKFLOWS[name][0] if name in KEPT_WORKFLOWS else name
        for name in config.workflows or PipelineFactory.pipelines[method]
    ]
    return config.model_copy(update={"workflows": workflows})
