"""stable_ids without an index build: a previous version's entities and relationships, and the
finalize step by columns (`finalized`) against graphrag's own finalize_graph on the same tables."""

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag_mcp_server.handlers.indexing import stable_ids
from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion


def previous_version(folder: Path) -> PreviousVersion:
    folder.mkdir()
    pd.DataFrame(
        {"id": ["id-alpha", "id-beta"], "human_readable_id": [0, 5], "title": ["ALPHA", "BETA"]}
    ).to_parquet(folder / "entities.parquet")
    pd.DataFrame(
        {
            "id": ["id-ab"],
            "human_readable_id": [3],
            "source": ["ALPHA"],
            "target": ["BETA"],
            "weight": [1.0],
        }
    ).to_parquet(folder / "relationships.parquet")
    return PreviousVersion(folder)


def entity(title: str | None, frequency: int = 1) -> dict[str, Any]:
    return {
        "title": title,
        "type": "THING",
        "description": f"{title} text",
        "text_unit_ids": ["t1", "t2"][:frequency],
        "frequency": frequency,
    }


def relationship(source: str, target: str, weight: float = 1.0) -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "description": f"{source} and {target}",
        "weight": weight,
        "text_unit_ids": ["t1"],
    }


ENTITIES = [entity("GAMMA", 2), entity("BETA"), entity("ALPHA"), entity("BETA", 2), entity("")]
RELATIONSHIPS = [
    relationship("BETA", "GAMMA"),
    relationship("ALPHA", "BETA", 2.0),
    relationship("GAMMA", "BETA", 3.0),  # the same undirected edge: counted once for degrees
    relationship("ALPHA", "BETA", 4.0),  # the same pair: left out
    relationship("ALPHA", "ALPHA"),
]


def tables_in(folder: Path) -> Any:
    """graphrag's parquet tables in `folder`, holding ENTITIES and RELATIONSHIPS."""
    from graphrag_storage.file_storage import FileStorage
    from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider

    tables = ParquetTableProvider(storage=FileStorage(base_dir=str(folder)))

    async def write() -> None:
        await tables.write_dataframe("entities", pd.DataFrame(ENTITIES))
        await tables.write_dataframe("relationships", pd.DataFrame(RELATIONSHIPS))

    asyncio.run(write())
    return tables


def by_graphrag(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """graphrag's finalize_graph over the tables, opened as its workflow opens them."""
    from graphrag.data_model.row_transformers import (
        transform_entity_row,
        transform_relationship_row,
    )
    from graphrag.index.workflows.finalize_graph import finalize_graph

    tables = tables_in(folder)

    async def run() -> tuple[pd.DataFrame, pd.DataFrame]:
        async with (
            tables.open("entities", transformer=transform_entity_row) as entities,
            tables.open("relationships", transformer=transform_relationship_row) as relations,
        ):
            await finalize_graph(entities, relations)
        return await tables.read_dataframe("entities"), await tables.read_dataframe("relationships")

    return asyncio.run(run())


def by_columns(folder: Path, previous: PreviousVersion | None) -> tuple[pd.DataFrame, ...]:
    tables = tables_in(folder)
    identities = stable_ids.identities_kept(previous) or stable_ids.fresh_identities()

    async def run() -> tuple[pd.DataFrame, pd.DataFrame]:
        await stable_ids.finalized(tables, identities)
        return await tables.read_dataframe("entities"), await tables.read_dataframe("relationships")

    return asyncio.run(run())


def _without_ids(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows = frame.drop(columns=["id"]).to_dict("records")
    return [{k: list(v) if k == "text_unit_ids" else v for k, v in row.items()} for row in rows]


def test_finalized_by_columns_equals_graphrags_finalize(tmp_path: Path) -> None:
    """Same rows, columns, order, degrees and numbers as graphrag's (ids are new uuids in both)."""
    ours = by_columns(tmp_path / "ours", None)
    theirs = by_graphrag(tmp_path / "graphrag")
    for mine, graphrags in zip(ours, theirs, strict=True):
        assert list(mine.columns) == list(graphrags.columns)
        assert dict(mine.dtypes) == dict(graphrags.dtypes)
        assert _without_ids(mine) == _without_ids(graphrags)
    entities = ours[0].set_index("title")
    assert entities.loc["BETA", "degree"] == 2 and entities.loc["ALPHA", "degree"] == 3


def test_unchanged_titles_and_pairs_keep_their_ids_and_numbers(tmp_path: Path) -> None:
    entities, relationships = by_columns(tmp_path / "v2", previous_version(tmp_path / "v1"))
    by_title = dict(
        zip(
            entities["title"],
            zip(entities["id"], entities["human_readable_id"], strict=True),
            strict=True,
        )
    )
    assert by_title["ALPHA"] == ("id-alpha", 0) and by_title["BETA"] == ("id-beta", 5)
    gamma_id, gamma_number = by_title["GAMMA"]
    assert gamma_id not in ("id-alpha", "id-beta") and gamma_number == 6  # max + 1
    pairs = zip(relationships["source"], relationships["target"], strict=True)
    by_pair = dict(
        zip(
            pairs,
            zip(relationships["id"], relationships["human_readable_id"], strict=True),
            strict=True,
        )
    )
    assert by_pair[("ALPHA", "BETA")] == ("id-ab", 3)
    assert by_pair[("BETA", "GAMMA")][1] == 4 and by_pair[("GAMMA", "BETA")][1] == 5


def test_unreadable_previous_version_numbers_afresh(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    assert stable_ids._read(PreviousVersion(tmp_path / "v1")) is None
