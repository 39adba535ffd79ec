"""Entities and relationships keep their ids and numbers across updates.

graphrag's finalize step gives every entity and relationship a new uuid and numbers them in
stream order (`human_readable_id`), so an edit early in the corpus renumbers every later record:
the report contexts and the reports citing them change text, and so do their embeddings, although
nothing they say changed. During an incremental run (this module's workflow,
`finalize_graph_kept`, in place of graphrag's `finalize_graph`) an entity keeps the id and number
it had in the previous version (by title), a relationship those of its (source, target) pair; a
new one gets a new uuid and the next free number. A first build and `index --full` keep none and
number as graphrag does (tests/test_stable_ids_unit.py), by columns: graphrag's finalize_graph
streams every row through a dict, which raised a 10,000-document cold build's peak RSS from 1,877 to
2,076 MiB."""

import itertools
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import run_state, sample

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

logger = logging.getLogger(__name__)


@dataclass
class _Kept:
    """A previous version's identities by key (title, or (source, target)), and the numbers left to
    give."""

    ids: dict[Any, tuple[str, int]]
    numbers: Iterator[int]

    def identity(self, key: Any) -> tuple[str, int]:
        """The id and number of `key` in the previous version, or a new id and the next number."""
        kept = self.ids.get(key)
        return kept if kept is not None else (str(uuid.uuid4()), next(self.numbers))


@dataclass
class Identities:
    """A previous version's entity and relationship identities."""

    entities: _Kept
    relationships: _Kept


STATE = "stable_ids"
"""The key of a run's kept identities in the state graphrag hands its workflows."""
WORKFLOW, REPLACES = "finalize_graph_kept", "finalize_graph"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's finalize_graph workflow (degrees, ids, numbers), its entities and relationships
    keeping the ids and numbers of the previous version; numbered as graphrag numbers them when the
    run keeps none."""
    from graphrag.index.operations.snapshot_graphml import snapshot_graphml
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    tables = context.output_table_provider
    result = await finalized(tables, run_state(context, STATE) or fresh_identities())
    if config.snapshots.graphml:
        await snapshot_graphml(
            await tables.read_dataframe("relationships"),
            name="graph",
            storage=context.output_storage,
        )
    return WorkflowFunctionOutput(result=result)


async def finalized(tables: Any, identities: Identities) -> dict[str, list[dict[str, Any]]]:
    """graphrag's `finalize_graph` operation by columns: degrees over the undirected, deduplicated
    edges; entities deduplicated by title and relationships by (source, target), first kept; each
    with the kept id and number (`identities`); graphrag's final columns. graphrag streams every
    row through a dict (about 10% of an update at 3,000 documents); tests/test_stable_ids_unit.py
    checks the tables equal graphrag's."""
    from graphrag.data_model.schemas import ENTITIES_FINAL_COLUMNS, RELATIONSHIPS_FINAL_COLUMNS

    entities = await tables.read_dataframe("entities")
    relationships = await tables.read_dataframe("relationships")
    degree = _degrees(relationships)
    entities = entities[entities["title"].notna() & (entities["title"] != "")]
    entities = entities.drop_duplicates("title").reset_index(drop=True)
    entities["degree"] = [degree.get(title, 0) for title in entities["title"]]
    _identify(entities, identities.entities, list(entities["title"]))
    relationships = relationships.drop_duplicates(["source", "target"]).reset_index(drop=True)
    # object arrays: iterating pandas' Arrow-backed strings makes a Python object per value
    sources, targets = (relationships[end].to_numpy(dtype=object) for end in ("source", "target"))
    relationships["combined_degree"] = [
        degree.get(source, 0) + degree.get(target, 0)
        for source, target in zip(sources, targets, strict=True)
    ]
    pairs = list(zip(sources.tolist(), targets.tolist(), strict=True))
    _identify(relationships, identities.relationships, pairs)
    entities = entities[ENTITIES_FINAL_COLUMNS]
    relationships = relationships[RELATIONSHIPS_FINAL_COLUMNS]
    await tables.write_dataframe("entities", entities)
    await tables.write_dataframe("relationships", relationships)
    return {
        "entities": sample(entities),
        "relationships": sample(relationships),
    }


def _degrees(relationships: "pd.DataFrame") -> dict[str, int]:
    """graphrag's degree map: each entity's count of distinct undirected edges."""
    import numpy as np
    import pandas as pd

    source, target = relationships["source"].to_numpy(), relationships["target"].to_numpy()
    first = source <= target
    pairs = pd.DataFrame(
        {"low": np.where(first, source, target), "high": np.where(first, target, source)}
    ).drop_duplicates()
    return {
        str(k): int(v) for k, v in pd.concat([pairs["low"], pairs["high"]]).value_counts().items()
    }


def _identify(frame: "pd.DataFrame", kept: _Kept, keys: list[Any]) -> None:
    """Give each row of `frame` the id and number its key had, or a new id and the next number, in
    row order."""
    given = [kept.identity(key) for key in keys]
    frame["id"] = [identity for identity, _ in given]
    frame["human_readable_id"] = [number for _, number in given]


def fresh_identities() -> Identities:
    """No identities to keep: new uuids, numbers from 0 in row order (graphrag's)."""
    return Identities(_Kept({}, itertools.count()), _Kept({}, itertools.count()))


def identities_kept(previous: "PreviousVersion | None") -> "Identities | None":
    """The identities of the `previous` version for this run's finalize step to keep (None: it
    numbers afresh, as a rebuild)."""
    return _read(previous) if previous is not None else None


def _read(version: "PreviousVersion") -> Identities | None:
    try:
        entities = version.table("entities")
        relationships = version.table("relationships")
    except (OSError, ValueError, KeyError) as error:
        logger.info("no previous identities to keep (%s): numbering afresh", error)
        return None
    return Identities(
        _kept(entities["title"].tolist(), entities),
        _kept(
            zip(relationships["source"].tolist(), relationships["target"].tolist(), strict=True),
            relationships,
        ),
    )


def _kept(keys: Any, table: Any) -> _Kept:
    numbers = table["human_readable_id"].astype(int)
    ids = {
        key: (str(identity), int(number))
        for key, identity, number in zip(keys, table["id"].tolist(), numbers.tolist(), strict=True)
    }
    return _Kept(ids, itertools.count(int(numbers.max()) + 1 if len(numbers) else 0))
