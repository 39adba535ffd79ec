"""A company written with and without its legal form is one entity, in a full build and after any
update (name_variants.py)."""

import json
from pathlib import Path

import pyarrow as pa
import pytest

from graphrag_mcp_server.handlers.indexing.extracted_rows import (
    ENTITY,
    RELATIONSHIP,
    in_order,
    merged,
    unit_rows,
)
from graphrag_mcp_server.handlers.indexing.name_variants import renamed, renames


def _rows(*units: tuple[list[tuple[str, str]], list[tuple[str, str]]]) -> pa.Table:
    """Extraction rows of units, each given as its (title, type) entities and (source, target)
    relationships."""

    def extraction(entities: list[tuple[str, str]], links: list[tuple[str, str]]) -> str:
        return json.dumps(
            [
                {
                    "columns": ["title", "type", "description", "source_id"],
                    "data": [[title, kind, f"{title} is named.", "x"] for title, kind in entities],
                },
                {
                    "columns": ["source", "target", "description", "source_id", "weight"],
                    "data": [[source, target, "linked", "x", 1.0] for source, target in links],
                },
            ]
        )

    return in_order(
        [unit_rows([(at, f"u{at}", extraction(*unit)) for at, unit in enumerate(units)])]
    )


@pytest.mark.quick
def test_a_company_with_and_without_its_legal_form_is_renamed_to_the_formal_title() -> None:
    rows = _rows(
        ([("BRENNTORP MASKIN AB", "ORGANIZATION"), ("AGNES LINDQVIST", "PERSON")], []),
        ([("BRENNTORP MASKIN", "PERSON"), ("NILS EKDAHL", "PERSON")], []),
        (
            [("SOUTHERN BLADES LTD", "ORGANIZATION"), ("SOUTHERN BLADES LIMITED", "ORGANIZATION")],
            [],
        ),
        ([("SOUTHERN BLADES LTD", "ORGANIZATION"), ("BURULLUS GINNING", "ORGANIZATION")], []),
        ([("BURULLUS GINNING COMPANY", "X"), ("BURULLUS GINNING COMPANY S.A.E.", "ORG")], []),
        ([("BURULLUS GINNING COMPANY S.A.E.", "ORG")], []),
    )

    assert renames(rows) == {
        "BRENNTORP MASKIN": ("BRENNTORP MASKIN AB", "ORGANIZATION"),
        "SOUTHERN BLADES LIMITED": ("SOUTHERN BLADES LTD", "ORGANIZATION"),
        "BURULLUS GINNING": ("BURULLUS GINNING COMPANY S.A.E.", "ORG"),
        "BURULLUS GINNING COMPANY": ("BURULLUS GINNING COMPANY S.A.E.", "ORG"),
    }


@pytest.mark.quick
def test_a_place_a_founder_and_two_kinds_of_company_keep_their_titles() -> None:
    rows = _rows(
        ([("GAZIPUR", "GEO"), ("GAZIPUR COMPANY", "ORGANIZATION")], []),
        ([("MARCO BELLANDI", "PERSON"), ("MARCO BELLANDI S.R.L.", "ORGANIZATION")], []),
        ([("NOVAK", "PERSON"), ("NOVAK S.R.O.", "ORGANIZATION")], []),
        ([("ACME INC", "ORGANIZATION"), ("ACME LTD", "ORGANIZATION"), ("ACME", "PERSON")], []),
        ([("LONE TRADERS LTD", "ORGANIZATION")], []),
    )

    assert renames(rows) == {}


@pytest.mark.quick
def test_a_surname_alone_is_the_one_person_of_the_graph_with_that_name() -> None:
    """'OKAFOR' of a text that writes only 'Dr Okafor' is Amaka Okafor, the one person of the
    graph named so; 'PRICE' stays, as two people are named Price; a first name alone stays."""
    rows = _rows(
        ([("OKAFOR", "PERSON"), ("PRICE", "PERSON"), ("ANNA", "PERSON")], []),
        ([("AMAKA OKAFOR", "PERSON"), ("COLIN PRICE", "PERSON"), ("ANNA BERG", "PERSON")], []),
        ([("RUTH PRICE", "PERSON"), ("OKAFOR HOLDINGS", "ORGANIZATION")], []),
    )

    assert renames(rows) == {"OKAFOR": ("AMAKA OKAFOR", "PERSON")}


@pytest.mark.quick
def test_a_name_without_its_middle_name_is_the_one_person_written_with_it() -> None:
    """'WALTER PRUITT' is Walter James Pruitt, the one person of the graph named so, and 'PRUITT'
    is then him too; 'MARY SMITH' stays, as two people are Mary ... Smith; so do a place and an
    organisation whose words begin and end alike."""
    rows = _rows(
        ([("WALTER JAMES PRUITT", "PERSON"), ("MARY ANN SMITH", "PERSON")], []),
        ([("WALTER PRUITT", "PERSON"), ("PRUITT", "PERSON"), ("MARY SMITH", "PERSON")], []),
        ([("MARY JANE SMITH", "PERSON"), ("PORT ELLERY", "GEO")], []),
        ([("PORT OF ELLERY", "GEO"), ("ACME BOLTS", "ORGANIZATION")], []),
        ([("ACME STEEL BOLTS", "ORGANIZATION")], []),
    )

    assert renames(rows) == {
        "WALTER PRUITT": ("WALTER JAMES PRUITT", "PERSON"),
        "PRUITT": ("WALTER JAMES PRUITT", "PERSON"),
    }


@pytest.mark.quick
def test_a_rename_to_a_renamed_title_ends_at_the_last_one() -> None:
    """'ANNE DUVAL' is Anne Marie Duval, whose name is written most often 'ANNE-MARIE DUVAL': it
    is renamed to that spelling, not to a title that no longer exists."""
    rows = _rows(
        ([("ANNE-MARIE DUVAL", "PERSON"), ("ANNE DUVAL", "PERSON")], []),
        ([("ANNE-MARIE DUVAL", "PERSON"), ("ANNE MARIE DUVAL", "PERSON")], []),
    )

    names = renames(rows)
    assert names["ANNE DUVAL"] == ("ANNE-MARIE DUVAL", "PERSON")
    assert names["ANNE MARIE DUVAL"] == ("ANNE-MARIE DUVAL", "PERSON")


@pytest.mark.quick
def test_renamed_rows_merge_into_one_entity_and_drop_a_link_to_itself() -> None:
    rows = _rows(
        (
            [("BRENNTORP MASKIN AB", "ORGANIZATION"), ("AGNES LINDQVIST", "PERSON")],
            [("AGNES LINDQVIST", "BRENNTORP MASKIN AB")],
        ),
        (
            [("BRENNTORP MASKIN", "PERSON"), ("NILS EKDAHL", "PERSON")],
            [("BRENNTORP MASKIN", "NILS EKDAHL"), ("BRENNTORP MASKIN", "BRENNTORP MASKIN AB")],
        ),
    )

    merging = renamed(rows, renames(rows))
    entities = merged(merging, ["t0", "t1"], ENTITY)
    relationships = merged(merging, ["t0", "t1"], RELATIONSHIP)

    company = entities[entities["title"] == "BRENNTORP MASKIN AB"]
    assert company["type"].tolist() == ["ORGANIZATION"]
    assert company["text_unit_ids"].tolist() == [["t0", "t1"]]
    assert "BRENNTORP MASKIN" not in set(entities["title"])
    assert sorted(zip(relationships["source"], relationships["target"], strict=True)) == [
        ("AGNES LINDQVIST", "BRENNTORP MASKIN AB"),
        ("BRENNTORP MASKIN AB", "NILS EKDAHL"),
    ]


TEXTS = {
    "contract.txt": "Brenntorp Maskin AB signed a supply contract with Vallby Energi on 3 March. "
    "Agnes Lindqvist, the managing director of Brenntorp Maskin AB, said the first turbines "
    "would ship in June.\n",
    "visit.txt": "Engineers from Brenntorp Maskin visited the Vallby plant in April. Nils Ekdahl "
    "showed them the old boiler hall, and Brenntorp Maskin agreed to remove it before the "
    "turbines arrive.\n",
    "harbour.txt": "Nils Ekdahl met Agnes Lindqvist at the Vallby harbour office in May. They "
    "agreed on a date for the first delivery.\n",
}


@pytest.mark.slow  # five index runs of their own
def test_updates_follow_the_renames_as_a_rebuild_does(tmp_path: Path) -> None:
    """Deleting the only document with the legal form gives the plain title back, with its own
    descriptions; adding it again merges them once more: each update equals a full rebuild."""
    from test_incremental import _content, _index, _table

    data, root = tmp_path / "data", tmp_path / "index"
    data.mkdir()
    for name, text in TEXTS.items():
        (data / name).write_text(text)
    _index(data, root)
    entities = _table(root, "entities").set_index("title")
    assert "BRENNTORP MASKIN" not in entities.index
    company = entities.loc["BRENNTORP MASKIN AB"]
    assert company["type"] == "ORGANIZATION" and len(company["text_unit_ids"]) == 2
    assert {"NILS EKDAHL", "AGNES LINDQVIST"} <= set(
        _table(root, "relationships")
        .query("source == 'BRENNTORP MASKIN AB' or target == 'BRENNTORP MASKIN AB'")[
            ["source", "target"]
        ]
        .stack()
    )

    for step, change in (("delete", "unlink"), ("add", "write")):
        if change == "unlink":
            (data / "contract.txt").unlink()
        else:
            (data / "contract.txt").write_text(TEXTS["contract.txt"])
        _index(data, root, "--incremental")
        _index(data, tmp_path / f"rebuild_{step}", "--full")
        assert _content(root) == _content(tmp_path / f"rebuild_{step}"), step
        titles = set(_table(root, "entities")["title"])
        assert ("BRENNTORP MASKIN" in titles) == (step == "delete"), step


@pytest.mark.quick
def test_spellings_with_and_without_accents_or_hyphens_are_one_entity() -> None:
    """'JOSE IBANEZ' and 'ANNE MARIE DUVAL' are renamed to the spelling written most often
    ('JOSÉ IBÁÑEZ', 'ANNE-MARIE DUVAL'); a place and a person spelled alike keep their titles."""
    rows = _rows(
        ([("JOSÉ IBÁÑEZ", "PERSON"), ("ANNE-MARIE DUVAL", "PERSON")], []),
        ([("JOSÉ IBÁÑEZ", "PERSON"), ("JOSE IBANEZ", "PERSON")], []),
        ([("ANNE MARIE DUVAL", "PERSON"), ("SÃO PAULO", "GEO"), ("SAO PAULO", "PERSON")], []),
    )
    names = renames(rows)
    assert names["JOSE IBANEZ"] == ("JOSÉ IBÁÑEZ", "PERSON")
    assert names["ANNE MARIE DUVAL"] == ("ANNE-MARIE DUVAL", "PERSON")
    assert "SAO PAULO" not in names and "SÃO PAULO" not in names
