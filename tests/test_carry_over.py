"""An update merges its text units' extractions into the very frames graphrag's own merge makes."""

import json
from pathlib import Path

import pandas as pd
import pytest

from graphrag_mcp_server.config.runtime import prepare_models
from graphrag_mcp_server.handlers.indexing.carry_over import TABLE
from graphrag_mcp_server.handlers.indexing.kept_extraction import _merged

MERGES = {
    "entities": (0, ("title", "type"), "frequency"),
    "relationships": (1, ("source", "target"), "weight"),
}


def _as_graphrag_concatenates(splits: list[tuple[dict, str]]) -> list[pd.DataFrame]:
    """The units' extraction frames as graphrag hands them to its merge: each row's `source_id` its
    unit's."""
    return [
        pd.DataFrame(split["data"], columns=split["columns"]).assign(source_id=unit)
        for split, unit in splits
    ]


def _graphrag_merge(kind: str, splits: list[tuple[dict, str]]) -> pd.DataFrame:
    prepare_models()
    from graphrag.index.operations.extract_graph import extract_graph

    merge = (
        extract_graph._merge_entities if kind == "entities" else extract_graph._merge_relationships
    )
    return merge(_as_graphrag_concatenates(splits))


@pytest.mark.parametrize("kind", MERGES)
def test_merged_extractions_equal_graphrags(built_index: tuple[Path, dict], kind: str) -> None:
    """Every text unit's stored extraction of the fixtures index, merged: the same frame (rows,
    order, lists, dtypes) as graphrag's `_merge_entities` / `_merge_relationships`."""
    position, keys, total = MERGES[kind]
    stored = pd.read_parquet(built_index[0] / "output" / TABLE)
    extractions = [
        json.loads(result) for result in stored.loc[stored["step"] == "extraction", "result"]
    ]
    splits = [
        (extraction[position], f"unit-{number}") for number, extraction in enumerate(extractions)
    ]
    assert sum(len(split["data"]) for split, _ in splits) > len(
        splits
    )  # units share entities: groups merge rows

    merged = _merged(splits, keys, total)

    assert len(merged) > 10
    pd.testing.assert_frame_equal(merged, _graphrag_merge(kind, splits))


def test_merged_leaves_out_missing_keys_and_sums_weights_as_graphrag() -> None:
    """Rows whose key is missing are left out, as pandas' groupby does; fractional weights sum
    alike; no rows give an empty frame."""
    columns = ["source", "target", "description", "source_id", "weight"]
    splits = [
        (
            {
                "columns": columns,
                "data": [
                    ["A", "B", "first", "x", 0.1],
                    ["A", None, "lost", "x", 1.0],
                    ["B", "C", "second", "x", 2.5],
                ],
            },
            "u1",
        ),
        (
            {
                "columns": columns,
                "data": [
                    ["A", "B", "third", "x", 0.2],
                    [float("nan"), "C", "lost", "x", 1.0],
                    ["A", "B", "fourth", "x", 0.7],
                ],
            },
            "u2",
        ),
    ]

    merged = _merged(splits, ("source", "target"), "weight")

    pd.testing.assert_frame_equal(merged, _graphrag_merge("relationships", splits))
    assert merged["description"].tolist() == [["first", "third", "fourth"], ["second"]]
    assert merged["text_unit_ids"].tolist() == [["u1", "u2", "u2"], ["u1"]]
    assert merged["weight"].tolist() == pytest.approx([1.0, 2.5])
    assert _merged([], ("source", "target"), "weight").empty
