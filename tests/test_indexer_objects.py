"""A version's load (issue 40): its tables read mapped into graphrag's DataFrames, its entities and
text units made by columns into graphrag's objects, its relationship index made by arrays; all
equal to what graphrag's readers make."""

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from test_prepared_searches import loaded  # noqa: F401 (a fixture)


def test_tables_are_graphrags_data_reader_frames(
    loaded: tuple[Any, Any],  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every table loaded equals graphrag's DataReader's (dtypes included), read without graphrag's
    whole-file read (ParquetTableProvider.read_dataframe)."""
    from graphrag.data_model.data_reader import DataReader
    from graphrag_storage import create_storage
    from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    from graphrag_mcp_server.handlers.tables import REQUIRED_TABLES, load_tables

    config, _ = loaded
    reads: list[str] = []
    read = ParquetTableProvider.read_dataframe

    async def counted(self: ParquetTableProvider, name: str) -> pd.DataFrame:
        reads.append(name)
        return await read(self, name)

    monkeypatch.setattr(ParquetTableProvider, "read_dataframe", counted)
    tables = asyncio.run(load_tables(config, Path.cwd()))
    assert reads == []
    reader = DataReader(
        create_table_provider(config.table_provider, storage=create_storage(config.output_storage))
    )
    for name in REQUIRED_TABLES:
        theirs = asyncio.run(getattr(reader, name)())
        pd.testing.assert_frame_equal(getattr(tables, name), theirs, check_exact=True)


def test_entities_and_text_units_are_graphrags_objects(
    loaded: tuple[Any, Any],  # noqa: F811 - the fixture
) -> None:
    """The entities (at each level, and for communities listing an entity twice or none) and the
    text units made by columns equal graphrag's read_indexer_* objects, in the same order; a
    missing required column raises graphrag's error."""
    from graphrag.query.indexer_adapters import read_indexer_entities, read_indexer_text_units

    from graphrag_mcp_server.handlers.indexer_objects import indexer_entities, indexer_text_units

    _, tables = loaded
    entities, communities = tables.entities, tables.communities
    for level in (0, 1, 2, 3):
        theirs = read_indexer_entities(entities, communities, level)
        assert indexer_entities(entities, communities, level) == theirs
    assert any(len(entity.community_ids or []) > 1 for entity in theirs)
    doubled = communities.copy()
    doubled["entity_ids"] = [np.concatenate([ids, ids[:1]]) for ids in doubled["entity_ids"]]
    doubled.loc[doubled.index[0], "entity_ids"] = np.array([], dtype=object)
    sparse = pd.concat([entities, entities.head(2)], ignore_index=True)
    sparse["description"] = sparse["description"].astype(object)
    sparse.loc[sparse.index[1], "description"] = None
    sparse.loc[sparse.index[2], "text_unit_ids"] = None
    assert indexer_entities(sparse, doubled, 2) == read_indexer_entities(sparse, doubled, 2)
    units = tables.text_units
    assert indexer_text_units(units) == read_indexer_text_units(units)
    shifted = units.tail(5).astype({"entity_ids": object})
    shifted.loc[shifted.index[0], "entity_ids"] = None
    assert indexer_text_units(shifted) == read_indexer_text_units(shifted)
    with pytest.raises(ValueError, match="document_id"):
        indexer_text_units(units.drop(columns=["document_id"]))
    with pytest.raises(ValueError, match="title"):
        indexer_entities(entities.drop(columns=["title"]), communities, 2)


def test_warming_a_version_makes_no_object_through_graphrags_readers(
    loaded: tuple[Any, Any],  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A version's warm-up and relationship index call none of graphrag's per-row readers of
    entities and text units (a dict a row: most of a version's load), and the index's positions
    are each entity's relationships, once each, in order."""
    import graphrag.query.indexer_adapters as adapters

    from graphrag_mcp_server.handlers.prepared import Prepared
    from graphrag_mcp_server.handlers.search.relationship_index import (
        RelationshipIndex,
        relationship_index,
    )

    def refused(*_: Any) -> None:
        raise AssertionError("read by graphrag's per-row reader")

    for name in ("read_indexer_entities", "read_indexer_text_units"):
        monkeypatch.setattr(adapters, name, refused)
    _, tables = loaded
    objects = Prepared(tables)
    objects.warm()
    index = relationship_index(objects)
    assert isinstance(index, RelationshipIndex)
    frame = tables.relationships
    for title in frame["source"].head(20):
        ends = (frame["source"] == title) | (frame["target"] == title)
        assert index.positions[title].tolist() == np.flatnonzero(ends.to_numpy()).tolist()
