"""Entities and relationships keep their ids and numbers across updates.

graphrag's finalize step gives every entity and relationship a new uuid and numbers them in stream order
(`human_readable_id`), so an edit early in the corpus renumbers every later record: the report contexts and
the reports citing them change text, and so do their embeddings, although nothing they say changed. During an
incremental run an entity keeps the id and number it had in the previous version (by title), a relationship
those of its (source, target) pair; a new one gets a new uuid and the next free number. `index --full` numbers
as graphrag does.
"""

import itertools
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


@dataclass
class _Kept:
    """A previous version's identities by key (title, or (source, target)), and the numbers left to give."""

    ids: dict[Any, tuple[str, int]]
    numbers: Iterator[int]

    def write(self, row: dict[str, Any], key: Any) -> dict[str, Any]:
        """`row` with the id and number of its key in the previous version, or a new id and the next number."""
        kept = self.ids.get(key)
        identity, number = kept if kept is not None else (str(uuid.uuid4()), next(self.numbers))
        return {**row, "id": identity, "human_readable_id": number}


@dataclass
class _Identities:
    entities: _Kept
    relationships: _Kept


_current: ContextVar[_Identities | None] = ContextVar("stable_ids", default=None)
_ORIGINALS: dict[str, Any] = {}
"""graphrag's originals of what this module replaces, called by the replacements:
finalize_graph.finalize_entities / finalize_relationships."""


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


async def _finalize_entities(entities_table: Any, degree_map: dict[str, int]) -> list[dict[str, Any]]:
    identities = _current.get()
    if identities is None:
        return await _ORIGINALS["entities"](entities_table, degree_map)
    table = _KeepingTable(entities_table, identities.entities, lambda row: row.get("title"))
    return await _ORIGINALS["entities"](table, degree_map)


async def _finalize_relationships(relationships_table: Any, degree_map: dict[str, int]) -> list[dict[str, Any]]:
    identities = _current.get()
    if identities is None:
        return await _ORIGINALS["relationships"](relationships_table, degree_map)
    table = _KeepingTable(relationships_table, identities.relationships,
                          lambda row: (row.get("source"), row.get("target")))
    return await _ORIGINALS["relationships"](table, degree_map)


@contextmanager
def identities_kept(previous: Path | None) -> Iterator[None]:
    """Within the block, graphrag's finalize step keeps the identities of the version in `previous` (None: it
    numbers afresh, as a rebuild)."""
    from graphrag.index.workflows import finalize_graph

    if not _ORIGINALS:
        _ORIGINALS["entities"], _ORIGINALS["relationships"] = (finalize_graph.finalize_entities,
                                                             finalize_graph.finalize_relationships)
        finalize_graph.finalize_entities, finalize_graph.finalize_relationships = (_finalize_entities,
                                                                                   _finalize_relationships)
    identities = _read(previous) if previous is not None else None
    token = _current.set(identities)
    try:
        yield
    finally:
        _current.reset(token)


def _read(version: Path) -> _Identities | None:
    import pandas as pd

    try:
        entities = pd.read_parquet(version / "entities.parquet", columns=["id", "human_readable_id", "title"])
        relationships = pd.read_parquet(version / "relationships.parquet",
                                        columns=["id", "human_readable_id", "source", "target"])
    except (OSError, ValueError, KeyError) as error:
        logger.info("no previous identities to keep (%s): numbering afresh", error)
        return None
    return _Identities(
        _kept(entities["title"], entities),
        _kept(zip(relationships["source"], relationships["target"], strict=True), relationships),
    )


def _kept(keys: Any, table: Any) -> _Kept:
    numbers = table["human_readable_id"].astype(int)
    ids = {key: (str(identity), int(number)) for key, identity, number in zip(keys, table["id"], numbers, strict=True)}
    return _Kept(ids, itertools.count(int(numbers.max()) + 1 if len(numbers) else 0))
