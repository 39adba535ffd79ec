"""An update merges its text units' extractions into the very frames graphrag's own merge makes."""

import json
from pathlib import Path

import pandas as pd
import pytest

from graphrag_mcp_server.config.runtime import prepare_models
from graphrag_mcp_server.handlers.indexing.kept_extraction import _merged
from graphrag_mcp_server.handlers.indexing.memo_table import stored_rows

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
    stored = stored_rows(built_index[0] / "output").to_pandas()
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


def _graph(people: dict[str, list[str]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Extracted entities (each with its descriptions) and one relationship between the first two,
    as extract_graph merges them."""
    first, second = list(people)[:2]
    entities = pd.DataFrame(
        {
            "title": list(people),
            "type": ["PERSON"] * len(people),
            "description": list(people.values()),
            "text_unit_ids": [
                [f"u{n}" for n, _ in enumerate(listed)] for listed in people.values()
            ],
            "frequency": [len(listed) for listed in people.values()],
        }
    )
    relationships = pd.DataFrame(
        {
            "source": [first],
            "target": [second],
            "description": [["They met at the pier.", "They sailed together."]],
            "text_unit_ids": [["u0", "u1"]],
            "weight": [2.0],
        }
    )
    return entities, relationships


def test_an_unchanged_row_reuses_its_stored_key_and_a_changed_one_is_keyed_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A summary row not named as changed by the extraction takes the key the previous version
    stored under its name, without hashing its descriptions; a changed row is hashed; both give
    the summaries and stored keys a run that hashes every row gives."""
    import asyncio

    from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks
    from graphrag_llm.completion import create_completion
    from graphrag_llm.config import ModelConfig

    from graphrag_mcp_server.handlers.indexing import kept_extraction
    from graphrag_mcp_server.handlers.indexing.carry_over import work_carried_over
    from graphrag_mcp_server.handlers.indexing.memos import Step
    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion
    from graphrag_mcp_server.providers.offline import OFFLINE_TYPE, register_offline_models

    prepare_models()
    register_offline_models()
    model = create_completion(
        ModelConfig(type=OFFLINE_TYPE, model_provider="offline", model="offline-extractive")
    )
    models = dict.fromkeys(Step, "m")
    hashed: list[object] = []
    key = kept_extraction._summary_key
    monkeypatch.setattr(
        kept_extraction,
        "_summary_key",
        lambda identity, *rest: hashed.append(identity) or key(identity, *rest),
    )

    def run(version: str, previous: str | None, people: dict, changed: set[str] | None) -> tuple:
        (tmp_path / version).mkdir()
        before = PreviousVersion(tmp_path / previous) if previous else None
        with work_carried_over(before, tmp_path / version, models) as carried:
            entities, relationships = _graph(people)
            found = asyncio.run(
                kept_extraction.summarized(
                    carried,
                    entities,
                    relationships,
                    NoopWorkflowCallbacks(),
                    model,
                    200,
                    4000,
                    "{description_list}",
                    2,
                    changed,
                )
            )
        stored = stored_rows(tmp_path / version).to_pandas()
        return found, sorted(stored.loc[stored["step"] == "summary", "key"])

    people = {
        "ADA": ["Ada keeps the harbour ledger.", "Ada chairs the cooperative."],
        "BEN": ["Ben mends nets.", "Ben sails the Gull."],
        "CORA": ["Cora runs the kiln."],
    }
    run("v1", None, people, None)
    edited = {**people, "BEN": ["Ben mends nets.", "Ben sails the Gull.", "Ben met Dora."]}
    hashed.clear()
    found, keys = run("v2", "v1", edited, {"entity\x00BEN"})
    assert hashed == ["BEN"]  # ADA, CORA and the relationship kept their stored keys
    hashed.clear()
    every, every_keys = run("v3", "v1", edited, None)
    assert len(hashed) == 4
    assert keys == every_keys
    for ours, theirs in zip(found, every, strict=True):
        pd.testing.assert_frame_equal(ours, theirs)
    assert "Ben met Dora" in found[0].set_index("title").loc["BEN", "description"]


def test_an_update_stores_its_changes_beside_the_base_it_links(tmp_path: Path) -> None:
    """An update that carries most results links the base table of the version before (the same
    file) and stores only the rows it adds, those it carries from the changes before, a row whose
    name changed, and the base rows it drops; every version reads back as exactly the results it
    used. Changes past COMPACT_SHARE of the base's bytes (many rows dropped, or one large row
    added) write a whole new base."""
    from graphrag_mcp_server.handlers.indexing.carry_over import work_carried_over
    from graphrag_mcp_server.handlers.indexing.memo_table import CHANGES, TABLE
    from graphrag_mcp_server.handlers.indexing.memos import Step
    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

    models = dict.fromkeys(Step, "m")

    def result(number: int) -> dict:
        return {"summary": number, "padding": "x" * 6000 if number >= 1000 else ""}

    def run(version: str, previous: str | None, taken: list[int], new: list[int], names: dict):
        (tmp_path / version).mkdir()
        before = PreviousVersion(tmp_path / previous) if previous else None
        with work_carried_over(before, tmp_path / version, models) as carried:
            memo = carried[Step.SUMMARY]
            for number in taken:
                assert memo.take(f"k{number}") == result(number)
                memo.name(f"k{number}", names.get(number, f"n{number}"))
            for number in new:
                memo.put(f"k{number}", result(number))
                memo.name(f"k{number}", f"n{number}")
        rows = stored_rows(tmp_path / version).to_pylist()
        assert sorted((row["key"], json.loads(row["result"]), row["identity"]) for row in rows) == (
            sorted((f"k{n}", result(n), names.get(n, f"n{n}")) for n in [*taken, *new])
        )
        changes = tmp_path / version / CHANGES
        return (tmp_path / version / TABLE).stat().st_ino, (
            pd.read_parquet(changes).groupby("dropped")["key"].apply(sorted).to_dict()
            if changes.exists()
            else None
        )

    base, changes = run("v1", None, [], list(range(100)), {})
    assert changes is None  # a build without a version before writes the whole table
    linked, changes = run("v2", "v1", list(range(98)), [100], {})
    assert linked == base
    assert changes == {False: ["k100"], True: ["k98", "k99"]}
    linked, changes = run("v3", "v2", [*range(97), 100], [101], {0: "renamed"})
    assert linked == base
    assert changes == {False: ["k0", "k100", "k101"], True: ["k0", "k97", "k98", "k99"]}
    rebased, changes = run("v4", "v3", list(range(60)), [], {0: "renamed"})
    assert rebased != base and changes is None  # 41 rows dropped of 100: a whole table again
    linked, changes = run("v5", "v4", list(range(60)), [200], {0: "renamed"})
    assert linked == rebased and changes == {False: ["k200"]}
    heavy, changes = run("v6", "v5", [*range(60), 200], [1000], {0: "renamed"})
    assert heavy != rebased and changes is None  # one row of 6 KB against 60 of ~100 bytes
