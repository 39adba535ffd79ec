"""What an incremental run keeps from the previous version, as one block around graphrag's pipeline."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.carry_over import fingerprints, work_carried_over
from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Step
from graphrag_mcp_server.handlers.indexing.stable_communities import communities_kept
from graphrag_mcp_server.handlers.indexing.stable_ids import identities_kept
from graphrag_mcp_server.handlers.indexing.vector_delta import VectorWrites, vectors_by_delta
from graphrag_mcp_server.handlers.results import Clustering

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig


@dataclass
class Kept:
    """What a run took from the previous version: step results, communities, vector rows."""

    carried: CarriedOver
    clustering: Clustering | None
    vectors: VectorWrites


@contextmanager
def kept_from(previous: Path | None, config: "GraphRagConfig", version: Path) -> Iterator[Kept]:
    """Within the block, graphrag's pipeline writing `version` (as `config` is pinned to it) takes from the
    version in `previous` the results whose input is unchanged (carry_over.py), its communities
    (stable_communities.py), the ids of its entities and relationships (stable_ids.py) and its vector rows
    (vector_delta.py). None: a full build, which still records what the next update compares against."""
    models = fingerprints(config)
    with (work_carried_over(previous, version, models) as carried, communities_kept(previous) as clustering,
          identities_kept(previous), vectors_by_delta(previous, _previous_db(config, previous, version), version,
                                                      models[Step.EMBEDDING]) as vectors):
        yield Kept(carried, clustering, vectors)


def _previous_db(config: "GraphRagConfig", previous: Path | None, version: Path) -> Path | None:
    """The previous version's LanceDB folder, when the vector store lives in the versions (else it is shared)."""
    db_uri = Path(config.vector_store.db_uri) if config.vector_store.type == "lancedb" and config.vector_store.db_uri \
        else None
    if previous is None or db_uri is None or not db_uri.is_relative_to(version):
        return None
    return previous / db_uri.relative_to(version)
