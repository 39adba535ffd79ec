"""An update merges its text units' extractions into the very frames graphrag's own merge makes."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from conftest import CORPUS, run_cli
from graphrag_mcp_server.config.runtime import prepare_models
from graphrag_mcp_server.handlers.indexing.extracted_rows import (
    ENTITY,
    FILE,
    RELATIONSHIP,
    Merged,
    carried_rows,
    in_order,
    merged,
    unit_rows,
)
from graphrag_mcp_server.handlers.indexing.memo_table import stored_rows
from graphrag_mcp_server.handlers.indexing.stored_results import StoredResults

KINDS = {"entities": ENTITY, "relationships": RELATIONSHIP}


def _graphrag_merge(kind: str, splits: list[tuple[dict, str]]) -> pd.DataFrame:
    """graphrag's own merge of units' extraction frames, each row's `source_id` its unit's."""
    prepare_models()
    from graphrag.index.operations.extract_graph import extract_graph

    merge = (
        extract_graph._merge_entities if kind == "entities" else extract_graph._merge_relationships
    )
    frames = [
        pd.DataFrame(split["data"], columns=split["columns"]).assign(source_id=unit)
        for split, unit in splits
    ]
    return merge(frames)


def _splits(rows: pd.DataFrame, kind: int) -> list[tuple[dict, str]]:
    """Stored rows back as each unit's extraction frame of `kind`, units in stored order."""
    keys = list(dict.fromkeys(rows["key"]))
    columns = (
        ["title", "type", "description", "source_id"]
        if kind == ENTITY
        else ["source", "target", "description", "source_id", "weight"]
    )
    splits = []
    for number, key in enumerate(keys):
        unit = rows[(rows["key"] == key) & (rows["kind"] == kind)].sort_values("row")
        data = [
            [r.first, r.second, r.description, "x"] + ([r.weight] if kind == RELATIONSHIP else [])
            for r in unit.itertuples()
        ]
        splits.append(({"columns": columns, "data": data}, f"unit-{number}"))
    return splits


@pytest.mark.parametrize("kind", KINDS)
def test_merged_extractions_equal_graphrags(built_index: tuple[Path, dict], kind: str) -> None:
    """Every text unit's stored extraction rows of the fixtures index, merged: the same frame
    (rows, order, lists, dtypes) as graphrag's `_merge_entities` / `_merge_relationships`."""
    import pyarrow.parquet as pq

    stored = pq.read_table(built_index[0] / "output" / FILE)
    keys = list(dict.fromkeys(stored["key"].to_pylist()))
    rows, found, gone = carried_rows(stored, keys)
    assert found == set(keys) and gone.num_rows == 0
    splits = _splits(stored.to_pandas(), KINDS[kind])
    assert sum(len(split["data"]) for split, _ in splits) > len(splits)  # groups merge rows

    frame = merged(in_order([rows]), [f"unit-{n}" for n in range(len(keys))], KINDS[kind])

    assert len(frame) > 10
    pd.testing.assert_frame_equal(frame, _graphrag_merge(kind, splits))
    assert "extraction" not in set(stored_rows(built_index[0] / "output")["step"].to_pylist())


def test_merged_leaves_out_missing_keys_and_sums_weights_as_graphrag() -> None:
    """Rows whose key is missing are left out, as pandas' groupby does; fractional weights sum
    alike; no rows give an empty frame."""
    entity = {
        "columns": ["title", "type", "description", "source_id"],
        "data": [["A", "P", "a", "x"]],
    }
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
    extractions = [
        (position, f"key-{position}", json.dumps([entity, split]))
        for position, (split, _) in enumerate(splits)
    ]

    frame = merged(in_order([unit_rows(extractions)]), ["u1", "u2"], RELATIONSHIP)

    pd.testing.assert_frame_equal(frame, _graphrag_merge("relationships", splits))
    assert frame["description"].tolist() == [["first", "third", "fourth"], ["second"]]
    assert frame["text_unit_ids"].tolist() == [["u1", "u2", "u2"], ["u1"]]
    assert frame["weight"].tolist() == pytest.approx([1.0, 2.5])
    assert merged(in_order([unit_rows([])]), [], RELATIONSHIP).empty


def test_an_update_drops_the_rows_of_units_gone_and_adds_those_of_new_ones() -> None:
    """A unit's rows follow its key: kept at its new position, left out (and named gone) once its
    key is not current; the merge then lists only current units, in their order."""

    def extraction(*people: str) -> str:
        data = [[person, "PERSON", f"{person} spoke.", "x"] for person in people]
        relationships = {
            "columns": ["source", "target", "description", "source_id", "weight"],
            "data": [[people[0], people[-1], "met", "x", 1.0]],
        }
        return json.dumps(
            [
                {"columns": ["title", "type", "description", "source_id"], "data": data},
                relationships,
            ]
        )

    stored = unit_rows([(0, "a", extraction("ANN", "BO")), (1, "b", extraction("BO", "CY"))])
    stored = stored.drop_columns(["position"])
    rows, found, gone = carried_rows(stored, ["new", "b"])
    assert found == {"b"} and set(gone["key"].to_pylist()) == {"a"}
    assert set(rows["position"].to_pylist()) == {None, 1}  # "a" gone: no position

    merged_rows = in_order([rows, unit_rows([(0, "new", extraction("DI"))])])
    entities = merged(merged_rows, ["u-new", "u-b"], ENTITY)

    assert entities["title"].tolist() == ["DI", "BO", "CY"]
    assert entities["text_unit_ids"].tolist() == [["u-new"], ["u-b"], ["u-b"]]
    assert merged_rows["key"].to_pylist() == ["new", "b", "b", "new", "b"]  # entities first

    twice, _, _ = carried_rows(stored, ["b", "new", "b"])  # the same text in two documents
    entities = merged(in_order([twice]), ["u1", "u2", "u3"], ENTITY)
    assert entities["text_unit_ids"].tolist() == [["u1", "u3"], ["u1", "u3"]]


def test_a_text_in_two_documents_keeps_its_rows_once_for_each_update_after_update() -> None:
    """The rows of a text in two units are stored once for each unit, and carried so: stored
    twice, they are not taken twice for each unit (which doubled them on every update)."""
    extraction = json.dumps(
        [
            {
                "columns": ["title", "type", "description", "source_id"],
                "data": [["ANN", "PERSON", "Ann spoke.", "x"], ["BO", "PERSON", "Bo spoke.", "x"]],
            },
            {
                "columns": ["source", "target", "description", "source_id", "weight"],
                "data": [["ANN", "BO", "met", "x", 1.0]],
            },
        ]
    )
    keys = ["b", "new", "b"]
    stored = in_order([unit_rows([(0, "b", extraction), (2, "b", extraction)])])
    for _ in range(3):  # three updates, each storing what the previous one carried
        rows, found, gone = carried_rows(stored.drop_columns(["position"]), keys)
        stored = in_order([rows])
        assert found == {"b"} and gone.num_rows == 0
        assert stored["position"].to_pylist() == [0, 0, 2, 2, 0, 2]
        entities = merged(stored, ["u1", "u2", "u3"], ENTITY)
        assert entities["frequency"].tolist() == [2, 2]


def test_carried_rows_look_up_each_units_key_once_not_each_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stored rows are matched to the current keys a unit at a time: the keys looked up are as
    many as the units' runs of rows (two kinds of two units), not as the rows."""
    import pyarrow.compute as pc

    looked_up: list[int] = []
    index_in = pc.index_in

    def counted(values: pa.Array, *args: object, **kwargs: object) -> pa.Array:
        looked_up.append(len(values))
        return index_in(values, *args, **kwargs)

    extraction = json.dumps(
        [
            {
                "columns": ["title", "type", "description", "source_id"],
                "data": [[name, "PERSON", f"{name} spoke.", "x"] for name in ("ANN", "BO", "CY")],
            },
            {
                "columns": ["source", "target", "description", "source_id", "weight"],
                "data": [["ANN", "BO", "met", "x", 1.0], ["BO", "CY", "met", "x", 1.0]],
            },
        ]
    )
    stored = in_order([unit_rows([(0, "a", extraction), (1, "b", extraction)])])
    monkeypatch.setattr(pc, "index_in", counted)
    rows, found, _ = carried_rows(stored.drop_columns(["position"]), ["b", "a"])
    assert found == {"a", "b"} and stored.num_rows == 10
    assert looked_up == [4]
    assert in_order([rows])["key"].to_pylist() == ["b"] * 3 + ["a"] * 3 + ["b"] * 2 + ["a"] * 2


def _groups(frame: pd.DataFrame) -> Merged:
    """Merged groups (extracted_rows.grouped) holding a frame's rows, its description lists as
    each group's rows."""
    import numpy as np

    lists = frame["description"].tolist()
    offsets = np.cumsum([0] + [len(listed) for listed in lists])
    return Merged(
        pa.Table.from_pandas(frame.drop(columns=["description"]), preserve_index=False),
        pa.ListArray.from_arrays(offsets, pa.array(np.arange(offsets[-1]), pa.int64())),
        pa.chunked_array([pa.array([text for listed in lists for text in listed], pa.string())]),
    )


def _graph(people: dict[str, list[str]]) -> tuple[Merged, Merged]:
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
    return _groups(entities), _groups(relationships)


class _Summaries:
    """Runs of kept_summaries.summarized over `_graph` in versions under `folder`, each hashed
    identity and each decoded stored result counted."""

    PEOPLE = {
        "ADA": ["Ada keeps the harbour ledger.", "Ada chairs the cooperative."],
        "BEN": ["Ben mends nets.", "Ben sails the Gull."],
        "CORA": ["Cora runs the kiln."],
    }
    EDITED = {**PEOPLE, "BEN": ["Ben mends nets.", "Ben sails the Gull.", "Ben met Dora."]}

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from graphrag_llm.completion import create_completion
        from graphrag_llm.config import ModelConfig

        from graphrag_mcp_server.handlers.indexing import kept_summaries
        from graphrag_mcp_server.providers.offline import OFFLINE_TYPE, register_offline_models

        prepare_models()
        register_offline_models()
        self.model = create_completion(
            ModelConfig(type=OFFLINE_TYPE, model_provider="offline", model="offline-extractive")
        )
        self.folder, self.hashed, self.decoded = folder, [], 0
        key = kept_summaries._summary_key
        monkeypatch.setattr(
            kept_summaries,
            "_summary_key",
            lambda identity, *rest: self.hashed.append(identity) or key(identity, *rest),
        )

    def run(self, version: str, previous: str | None, people: dict, changed: set | None) -> tuple:
        """The summaries of entities and relationships, and the summary keys the version stores;
        with `previous`, the summaries its tables hold are read (`previous_summaries`)."""
        import asyncio

        from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks

        from graphrag_mcp_server.handlers.indexing.carry_over import work_carried_over
        from graphrag_mcp_server.handlers.indexing.kept_summaries import (
            previous_summaries,
            summarized,
        )
        from graphrag_mcp_server.handlers.indexing.memos import Step
        from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

        def decode(text: str) -> object:
            self.decoded += 1
            return json.loads(text)

        (self.folder / version).mkdir()
        before = self.folder / previous if previous else None
        models = dict.fromkeys(Step, "m")
        with work_carried_over(
            PreviousVersion(before) if before else None, self.folder / version, models
        ) as carried:
            carried[Step.SUMMARY].decode = decode
            entities, relationships = _graph(people)
            found = asyncio.run(
                summarized(
                    carried,
                    entities,
                    relationships,
                    NoopWorkflowCallbacks(),
                    self.model,
                    200,
                    4000,
                    "{description_list}",
                    2,
                    changed,
                    previous_summaries(before),
                )
            )
        stored = stored_rows(self.folder / version).to_pandas()
        self._write_tables(version, entities, relationships, found)
        return found, sorted(stored.loc[stored["step"] == "summary", "key"])

    def _write_tables(self, version: str, entities: Merged, relationships: Merged, found) -> None:
        """The entities and relationships tables the version's finalize step would write."""
        import pyarrow.parquet as pq

        for name, groups, summaries in zip(
            ("entities", "relationships"), (entities, relationships), found, strict=True
        ):
            table = groups.table.append_column("description", summaries)
            pq.write_table(table, self.folder / version / f"{name}.parquet")


def test_an_unchanged_row_reuses_its_stored_key_and_a_changed_one_is_keyed_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A summary row not named as changed by the extraction takes the key the previous version
    stored under its name, without hashing its descriptions; a changed row is hashed; both give
    the summaries and stored keys a run that hashes every row gives."""
    runs = _Summaries(tmp_path, monkeypatch)
    runs.run("v1", None, runs.PEOPLE, None)
    (tmp_path / "v1" / "entities.parquet").unlink()  # no table to read summaries from
    runs.hashed.clear()
    found, keys = runs.run("v2", "v1", runs.EDITED, {"entity\x00BEN"})
    assert runs.hashed == ["BEN"]  # ADA, CORA and the relationship kept their stored keys
    runs.hashed.clear()
    every, every_keys = runs.run("v3", "v1", runs.EDITED, None)
    assert len(runs.hashed) == 4
    assert keys == every_keys
    for ours, theirs in zip(found, every, strict=True):
        assert ours.equals(theirs)
    assert "Ben met Dora" in found[0][1].as_py()


def test_an_unchanged_row_takes_its_summary_from_the_previous_tables_undecoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unchanged row whose summary the previous version's tables hold takes it from there: its
    description list is not made and its stored result is kept for the next version without
    being decoded or its name looked up; the summaries and stored keys are those of a run that
    takes every row's from the memo."""
    runs = _Summaries(tmp_path, monkeypatch)
    runs.run("v1", None, runs.PEOPLE, None)
    listed: list[int] = []
    lists = Merged.lists
    monkeypatch.setattr(
        Merged, "lists", lambda self, groups: listed.append(len(groups)) or lists(self, groups)
    )
    looked_up: list[int] = []
    kept_by_name = StoredResults.kept_by_name
    monkeypatch.setattr(
        StoredResults,
        "kept_by_name",
        lambda self, names: looked_up.append(len(names)) or kept_by_name(self, names),
    )
    runs.decoded = 0
    found, keys = runs.run("v2", "v1", runs.EDITED, {"entity\x00BEN"})
    assert runs.decoded == 0 and runs.hashed[-1:] == ["BEN"]
    assert listed == [1, 0]  # BEN's list only
    assert looked_up == []  # ADA, CORA and the relationship kept at once: no name looked up
    (tmp_path / "v1" / "relationships.parquet").unlink()
    every, every_keys = runs.run("v3", "v1", runs.EDITED, {"entity\x00BEN"})
    assert runs.decoded == 3  # ADA, CORA and the relationship taken from the memo
    assert keys == every_keys
    for ours, theirs in zip(found, every, strict=True):
        assert ours.equals(theirs)


def test_a_stored_summary_no_row_names_is_dropped_once_past_the_slack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored summary whose name no row uses any more and that the extraction did not name as
    changed (CORA's here; a relationship whose entity went, in an index) is kept with the others
    while they are within the slack (STALE_SHARE, STALE_ROWS); past it, the entries are kept by
    name, and the version stores only the summaries its rows use, as a run keying every row."""
    from graphrag_mcp_server.handlers.indexing import kept_summaries

    runs = _Summaries(tmp_path, monkeypatch)
    runs.run("v1", None, runs.PEOPLE, None)
    without_cora = {name: texts for name, texts in runs.PEOPLE.items() if name != "CORA"}
    _, at_once = runs.run("v2", "v1", without_cora, set())
    _, every = runs.run("v3", "v1", without_cora, None)
    assert len(at_once) == len(every) + 1 and set(every) < set(at_once)
    monkeypatch.setattr(kept_summaries, "STALE_ROWS", 0)
    _, swept = runs.run("v4", "v1", without_cora, set())
    assert swept == every


def test_an_update_stores_its_changes_beside_the_base_it_links(tmp_path: Path) -> None:
    """An update that carries most results links the base table of the version before (the same
    file) and stores only the rows it adds, those it carries from the changes before, a row whose
    name changed, and the base rows it drops; every version reads back as exactly the results it
    used. Changes past COMPACT_SHARE of the base's bytes (many rows dropped, or one large row
    added) write a whole new base. The base's keys file is written and linked with it."""
    from graphrag_mcp_server.handlers.indexing.carry_over import work_carried_over
    from graphrag_mcp_server.handlers.indexing.memo_keys import KEYS
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
    keys = {version: (tmp_path / version / KEYS).stat().st_ino for version in ("v1", "v3", "v4")}
    assert keys["v1"] == keys["v3"] != keys["v4"] == (tmp_path / "v5" / KEYS).stat().st_ino


def _extractions_in_the_memo(output: Path) -> int:
    """Rewrite a version as one stored before extracted_rows.py: its extractions (JSON frames,
    as graphrag's extractor returns them) in the memo table, no rows table. Returns the units."""
    import pyarrow.parquet as pq

    rows = pq.read_table(output / FILE)
    fingerprint = rows.schema.metadata[b"models"].decode()
    frames = rows.to_pandas()
    columns = {
        ENTITY: ["title", "type", "description", "source_id"],
        RELATIONSHIP: ["source", "target", "description", "source_id", "weight"],
    }
    extractions = []
    for key, unit in frames.groupby("key", sort=False):
        split = [
            {
                "columns": columns[kind],
                "data": [
                    [r.first, r.second, r.description, "unit"]
                    + ([r.weight] if kind == RELATIONSHIP else [])
                    for r in unit[unit["kind"] == kind].sort_values("row").itertuples()
                ],
            }
            for kind in (ENTITY, RELATIONSHIP)
        ]
        extractions.append((key, json.dumps(split)))
    memo = pq.read_table(output / "carried_over.parquet").drop_columns(["size"])  # none then
    added = pa.table(
        {
            "step": ["extraction"] * len(extractions),
            "key": [key for key, _ in extractions],
            "result": [text for _, text in extractions],
            "vector": [None] * len(extractions),
            "models": [fingerprint] * len(extractions),
            "identity": [None] * len(extractions),
        }
    ).cast(memo.schema)
    for path in (output, output / "carried_over.parquet", output / FILE):
        path.chmod(0o755 if path.is_dir() else 0o644)
    pq.write_table(pa.concat_tables([memo, added]), output / "carried_over.parquet")
    (output / FILE).unlink()
    return len(extractions)


@pytest.mark.slow  # an index update of its own
def test_an_update_takes_the_extractions_a_version_before_extracted_rows_kept_in_its_memo(
    copied_index: Path, tmp_path: Path
) -> None:
    """An index built before extracted_rows.py is updated without extracting its unchanged text
    units again: their extractions come from the memo, and the new version stores their rows."""
    import pyarrow.parquet as pq

    units = _extractions_in_the_memo(copied_index / "output")
    data = tmp_path / "data"
    shutil.copytree(CORPUS, data)
    edited = data / "02_building_old_bessie.txt"
    edited.write_text(edited.read_text() + "\nLinnea Storr painted the hull that spring.\n")

    result = run_cli("index", data, "--index-path", copied_index, "--offline", "--format", "json")

    assert result.code == 0, result.stderr
    summary = result.json()
    computed, carried = summary["computed"]["extraction"], summary["carried_over"]["extraction"]
    assert 1 <= computed <= 2 and carried == summary["text_units"] - computed >= units - 2
    stored = pq.read_table(copied_index / "output" / FILE)
    assert len(set(stored["key"].to_pylist())) == summary["text_units"]
    assert "LINNEA STORR" in set(
        pq.read_table(copied_index / "output" / "entities.parquet")["title"].to_pylist()
    )
