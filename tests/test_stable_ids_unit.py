"""stable_ids without an index build: a previous version's entities and relationships, and
graphrag's own finalize operations writing through the table stable_ids hands them."""

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag_mcp_server.handlers.indexing import stable_ids
from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion


class Rows:
    """The smallest graphrag Table: rows read by `async for`, rows written collected."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows, self.written = rows, []

    async def __aiter__(self) -> Any:
        for row in self.rows:
            yield dict(row)

    async def write(self, row: dict[str, Any]) -> None:
        self.written.append(row)


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


def finalized(previous: PreviousVersion | None, entities: Rows, relationships: Rows) -> None:
    """graphrag's finalize_graph operation over the tables finalize_graph_kept hands it (graphrag's
    own tables when there is no previous version)."""
    from graphrag.index.workflows.finalize_graph import finalize_graph

    identities = stable_ids.identities_kept(previous)
    tables = (
        (entities, relationships)
        if identities is None
        else stable_ids.keeping_tables(entities, relationships, identities)
    )
    asyncio.run(finalize_graph(*tables))


def entity(title: str) -> dict[str, Any]:
    return {
        "title": title,
        "type": "THING",
        "description": f"{title} text",
        "text_unit_ids": ["t1"],
    }


def relationship(source: str, target: str) -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "description": "linked",
        "weight": 1.0,
        "text_unit_ids": ["t1"],
    }


def test_unchanged_titles_and_pairs_keep_their_ids_and_numbers(
    tmp_path: Path,
) -> None:
    entities = Rows([entity("GAMMA"), entity("BETA"), entity("ALPHA")])
    relationships = Rows([relationship("BETA", "GAMMA"), relationship("ALPHA", "BETA")])
    finalized(previous_version(tmp_path / "v1"), entities, relationships)
    by_title = {row["title"]: (row["id"], row["human_readable_id"]) for row in entities.written}
    assert by_title["ALPHA"] == ("id-alpha", 0) and by_title["BETA"] == ("id-beta", 5)
    gamma_id, gamma_number = by_title["GAMMA"]
    assert gamma_id not in ("id-alpha", "id-beta") and gamma_number == 6  # max + 1
    by_pair = {
        (row["source"], row["target"]): (row["id"], row["human_readable_id"])
        for row in relationships.written
    }
    assert by_pair[("ALPHA", "BETA")] == ("id-ab", 3)
    new_id, new_number = by_pair[("BETA", "GAMMA")]
    assert new_id != "id-ab" and new_number == 4


def test_without_a_previous_version_graphrag_numbers_afresh(
    tmp_path: Path,
) -> None:
    entities = Rows([entity("ALPHA"), entity("BETA")])
    relationships = Rows([relationship("ALPHA", "BETA")])
    finalized(None, entities, relationships)
    assert [row["human_readable_id"] for row in entities.written] == [0, 1]
    assert "id-alpha" not in {row["id"] for row in entities.written}
    assert [row["human_readable_id"] for row in relationships.written] == [0]


def test_unreadable_previous_version_numbers_afresh(tmp_path: Path) -> None:
    (tmp_path / "v1").mkdir()
    assert stable_ids._read(PreviousVersion(tmp_path / "v1")) is None
