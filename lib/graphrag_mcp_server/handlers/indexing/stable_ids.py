"""Entities and relationships keep their ids and numbers across updates.

graphrag's finalize step gives every entity and relationship a new uuid and numbers them in
stream order (`human_readable_id`), so an edit early in the corpus renumbers every later record:
the report contexts and the reports citing them change text, and so do their embeddings, although
nothing they say changed. During an incremental run (this module's workflow,
`finalize_graph_kept`, in place of graphrag's `finalize_graph`) an entity keeps the id and number
it had in the previous version (by title), a relationship those of its (source, target) pair; a
new one gets a new uuid and the next free number. `index --full` numbers as graphrag does."""

import itertools
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import run_state

if TYPE_CHECKING:
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

    def write(self, row: dict[str, Any], key: Any) -> dict[str, Any]:
        """`row` with the id and number of its key in the previous version, or a new id and the next
        number."""
        kept = self.ids.get(key)
        identity, number = kept if kept is not None else (str(uuid.uuid4()), next(self.numbers))
        return {**row, "id": identity, "human_readable_id": number}


@dataclass
class Identities:
    """A previous version's entity and relationship identities."""

    entities: _Kept
    relationships: _Kept


STATE = "stable_ids"
"""The key of a run's kept identities in the state graphrag hands its workflows."""
WORKFLOW, REPLACES = "finalize_graph_kept", "finalize_graph"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


class _KeepingTable:
    """graphrag's output table, its rows written with their kept identities."""

    def __init__(self, table: Any, kept: _Kept, key: Any) -> None:
        self._table, self._kept, self._key = table, kept, key

    def __aiter__(self) -> Any:
        return self._table.__aiter__()

    async def write(self, row: dict[str, Any]) -> None:
        await self._table.write(self._kept.write(row, self._key(row)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


def keeping_tables(entities: Any, relationships: Any, identities: "Identities") -> tuple[Any, Any]:
    """graphrag's opened entities and relationships tables, their rows written with the identities
    the previous version gave the same title, or (source, target) pair."""
    return (
        _KeepingTable(entities, identities.entities, lambda row: row.get("title")),
        _KeepingTable(
            relationships,
            identities.relationships,
            lambda row: (row.get("source"), row.get("target")),
        ),
    )


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's finalize_graph workflow (degrees, ids, numbers), its entities and relationships
    keeping the ids and numbers of the previous version; graphrag's own when the run keeps none."""
    from graphrag.data_model.row_transformers import (
        transform_entity_row,
        transform_relationship_row,
    )
    from graphrag.index.operations.snapshot_graphml import snapshot_graphml
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag.index.workflows import finalize_graph

    identities = run_state(context, STATE)
    if identities is None:
        return await finalize_graph.run_workflow(config, context)
    tables = context.output_table_provider
    async with (
        tables.open("entities", transformer=transform_entity_row) as entities,
        tables.open("relationships", transformer=transform_relationship_row) as relationships,
    ):
        result = await finalize_graph.finalize_graph(
            *keeping_tables(entities, relationships, identities)
        )
    if config.snapshots.graphml:
        await snapshot_graphml(
            await tables.read_dataframe("relationships"),
            name="graph",
            storage=context.output_storage,
        )
    return WorkflowFunctionOutput(result=result)


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
        _kept(entities["title"], entities),
        _kept(zip(relationships["source"], relationships["target"], strict=True), relationships),
    )


def _kept(keys: Any, table: Any) -> _Kept:
    numbers = table["human_readable_id"].astype(int)
    ids = {
        key: (str(identity), int(number))
        for key, identity, number in zip(keys, table["id"], numbers, strict=True)
    }
    return _Kept(ids, itertools.count(int(numbers.max()) + 1 if len(numbers) else 0))
