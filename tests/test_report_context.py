"""The community report context written once equals graphrag's own `sort_context`, whole or cut by
its budget."""

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from graphrag_mcp_server.config.runtime import prepare_models


@pytest.fixture(scope="module")
def community_records(built_index: tuple[Path, dict]) -> list[list[dict]]:
    """The records graphrag's report workflow hands to `sort_context` for each community of the
    fixtures index."""
    prepare_models()
    from graphrag.index.operations.summarize_communities.explode_communities import (
        explode_communities,
    )
    from graphrag.index.operations.summarize_communities.graph_context import context_builder
    from graphrag.index.workflows.create_community_reports import _prep_edges, _prep_nodes

    output = built_index[0] / "output"
    nodes = _prep_nodes(
        explode_communities(
            pd.read_parquet(output / "communities.parquet"),
            pd.read_parquet(output / "entities.parquet"),
        )
    )
    edges = _prep_edges(pd.read_parquet(output / "relationships.parquet"))
    captured: list[list[dict]] = []
    original = context_builder.parallel_sort_context_batch
    context_builder.parallel_sort_context_batch = lambda frame, **_: (
        captured.extend(frame["all_context"]) or frame
    )
    try:
        for level in sorted(nodes["level"].unique()):
            context_builder._prepare_reports_at_level(nodes, edges, None, None, level)
    finally:
        context_builder.parallel_sort_context_batch = original
    return captured


@pytest.fixture(scope="module")
def graph_frames(built_index: tuple[Path, dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fixtures index's community members and relationships as create_community_reports_kept
    prepares them."""
    prepare_models()
    from graphrag_mcp_server.handlers.indexing.kept_reports import (
        community_edges,
        community_nodes,
    )

    output = built_index[0] / "output"
    nodes = community_nodes(
        pd.read_parquet(output / "communities.parquet"),
        pd.read_parquet(output / "entities.parquet"),
    )
    edges = community_edges(pd.read_parquet(output / "relationships.parquet"))
    return nodes, edges


def test_community_records_are_graphrags(
    graph_frames: tuple[pd.DataFrame, pd.DataFrame], community_records: list[list[dict]]
) -> None:
    """create_community_reports_kept hands the same records as graphrag's workflow, community by
    community and level by level."""
    from graphrag_mcp_server.handlers.indexing.kept_reports import level_records

    nodes, edges = graph_frames
    ours = [
        records
        for level in sorted(nodes["level"].unique())
        for records in level_records(nodes, edges, None, level)["all_context"]
    ]
    assert len(ours) >= 5
    assert ours == community_records


@pytest.mark.parametrize("budget", [None, 16_000, 400, 120])
def test_community_context_is_graphrags(
    community_records: list[list[dict]], budget: int | None
) -> None:
    import graphrag.data_model.schemas as schemas
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import (
        sort_context,
    )
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.carried_reports import community_context

    tokenizer = get_tokenizer()
    assert len(community_records) >= 5
    cut = 0
    for records in community_records:
        if any(not record.get(schemas.EDGE_DETAILS) for record in records):
            continue  # a member without an edge: graphrag leaves it out (the test below)
        text, tokens = community_context(records, tokenizer, budget)
        assert text == sort_context(records, tokenizer, max_context_tokens=budget)
        assert tokens == tokenizer.num_tokens(text)
        cut += (
            budget is not None and tokenizer.num_tokens(sort_context(records, tokenizer)) > budget
        )
    if budget is not None and budget < 1000:
        assert cut > 0, "a small budget cuts some community's context"


def test_a_table_is_written_as_pandas_writes_it() -> None:
    """csv_text writes rows as `pd.DataFrame(rows).to_csv(index=False)` does: its own writer for
    strings and ints (quotes, commas, line breaks, an empty field alone), pandas' for the rest."""
    import random

    from graphrag_mcp_server.handlers.indexing.context_rows import csv_text

    pieces = ["a", "Zoë", ",", '"', "\n", "\r", " ", "", "1.0", "nan", "None", 'é,"x"', "\t"]
    draw = random.Random(7)

    def value() -> Any:
        if draw.random() < 0.3:
            return draw.choice([0, -3, 7, 2**70, 12345])
        return "".join(draw.choices(pieces, k=draw.randint(0, 4)))

    tables = [
        [{"id": value(), "title": value(), "degree": value()} for _ in range(draw.randint(1, 5))]
        for _ in range(300)
    ]
    tables += [
        [{"description": ""}],
        [{"id": 1, "degree": 2}, {"id": 3, "degree": None}],  # pandas: a float column
        [{"id": 1, "weight": 0.5}, {"id": 2, "weight": 2.0}],
        [{"id": 1, "flag": True}],
        [{"id": 1, "title": "a"}, {"title": "b", "id": 2}],  # another key order
        [{"id": 1}, {"id": 2, "title": "b"}],
    ]
    for rows in tables:
        assert csv_text(rows) == pd.DataFrame(rows).to_csv(index=False, sep=","), rows


@pytest.mark.parametrize("budget", [1, 30, 60, 100, 150, 250, 400, 700, 1200, 2000, 5000])
def test_the_bisected_cut_is_graphrags(community_records: list[list[dict]], budget: int) -> None:
    """cut_context finds the prefix graphrag's edge-by-edge loop stops at, for every community of
    the fixtures (a budget below the first edge's context gives that context, as graphrag's)."""
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import (
        sort_context,
    )
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.cut_context import cut_context

    tokenizer = get_tokenizer()
    for records in community_records:
        assert cut_context(records, tokenizer, budget) == sort_context(
            records, tokenizer, max_context_tokens=budget
        )


@pytest.mark.parametrize("off_by", [-3, -1, 1, 3])
def test_a_wrong_guess_of_the_cut_falls_back_to_the_search(
    community_records: list[list[dict]], off_by: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cut guessed from each row's tokens is checked by tokenising: a guess off by a few edges
    (the rows' counts could disagree with the whole text's) still gives graphrag's cut."""
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import (
        sort_context,
    )
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing import cut_context

    tokenizer = get_tokenizer()
    guessed = cut_context._guessed_cut
    guesses: list[int] = []

    def wrong(*arguments: object) -> int | None:
        found = guessed(*arguments)  # type: ignore[arg-type]
        if found is None:
            return None
        guesses.append(max(0, found + off_by))
        return guesses[-1]

    monkeypatch.setattr(cut_context, "_guessed_cut", wrong)
    for budget in (100, 400, 1200):
        for records in community_records:
            assert cut_context.cut_context(records, tokenizer, budget) == sort_context(
                records, tokenizer, max_context_tokens=budget
            )
    assert len(guesses) > 10


def test_a_guessed_cut_is_right_on_the_fixtures(community_records: list[list[dict]]) -> None:
    """The rows' token counts give graphrag's cut itself (not only a start for the search) for
    every community of the fixtures at budgets that cut them."""
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import (
        sort_context,
    )
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.context_rows import render_tables
    from graphrag_mcp_server.handlers.indexing.cut_context import _guessed_cut, _prefixes

    tokenizer = get_tokenizer()
    checked = 0
    for budget in (100, 400, 1200):
        for records in community_records:
            nodes, claims, edges, sizes = _prefixes(records)
            guess = _guessed_cut(nodes, claims, edges, sizes, tokenizer, budget)
            if not sizes or guess is None or guess == len(sizes):
                continue
            held = sizes[max(guess, 1) - 1]
            text = render_tables(
                {"Entities": nodes[: held[0]], "Claims": [], "Relationships": edges[: held[2]]}
            )
            assert text == sort_context(records, tokenizer, max_context_tokens=budget)
            checked += 1
    assert checked > 10


def _renumbered_records(records: list[dict], number: Callable[[int], int]) -> list[dict]:
    """A community's records with every entity, relationship and claim number n changed to
    number(n)."""
    import graphrag.data_model.schemas as schemas

    def renumber(details: dict) -> dict:
        return {**details, schemas.SHORT_ID: number(int(details[schemas.SHORT_ID]))}

    def renumbered(record: dict) -> dict:
        lists = {
            name: [renumber(detail) for detail in record[name]]
            for name in (schemas.EDGE_DETAILS, schemas.CLAIM_DETAILS)
            if isinstance(record.get(name), list)
        }
        return {**record, schemas.NODE_DETAILS: renumber(record[schemas.NODE_DETAILS]), **lists}

    return [renumbered(record) for record in records]


def test_a_report_follows_its_records_to_new_numbers(community_records: list[list[dict]]) -> None:
    """A report is carried over to a context whose rows differ only by graphrag's numbers and
    degrees (a record added before them, a neighbour grown into a hub), its citations renumbered to
    the same rows; a report citing a record its context lacks is not carried, and a changed
    description gives another report."""
    import graphrag.data_model.schemas as schemas
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.carried_reports import (
        community_context,
        renumbered,
        report_rows,
    )

    tokenizer = get_tokenizer()
    records = max(community_records, key=len)
    before, _ = community_context(records, tokenizer, None)
    moved = _renumbered_records(records, lambda n: 3 * n + 5)
    for record in moved:
        record[schemas.NODE_DEGREE] = record[schemas.NODE_DETAILS][schemas.NODE_DEGREE] = 40 + len(
            record[schemas.TITLE]
        )
        for edge in record.get(schemas.EDGE_DETAILS, []):
            edge[schemas.EDGE_DEGREE] += 17
    after, _ = community_context(moved, tokenizer, None)
    (tables, cited), (tables_after, current) = report_rows(before), report_rows(after)
    assert before != after and tables == tables_after
    entities, relationships = (
        sorted(map(int, cited["Entities"])),
        sorted(map(int, cited["Relationships"])),
    )
    assert len(entities) >= 2 and relationships, cited

    entity, other, relationship = entities[0], entities[-1], relationships[-1]
    report = {
        "title": "Harbour 1994",
        "rank": 7.5,
        "summary": f"Built in 1994. [Data: Entities ({entity}, {other}, +more); Relationships "
        f"({relationship})]",
        "findings": [
            {"summary": "s", "explanation": f"x [Data: Relationships({relationship}); Reports (2)]"}
        ],
    }
    assert renumbered(report, cited, current) == {
        "title": "Harbour 1994",
        "rank": 7.5,
        "summary": f"Built in 1994. [Data: Entities ({3 * entity + 5}, {3 * other + 5}, +more); "
        f"Relationships ({3 * relationship + 5})]",
        "findings": [
            {
                "summary": "s",
                "explanation": f"x [Data: Relationships({3 * relationship + 5}); Reports (2)]",
            }
        ],
    }
    assert (
        renumbered({"summary": f"[Data: Entities ({max(entities) + 1})]"}, cited, current) is None
    )

    described = [
        {
            **record,
            schemas.NODE_DETAILS: {**record[schemas.NODE_DETAILS], schemas.DESCRIPTION: "new"},
        }
        if position == 0
        else record
        for position, record in enumerate(moved)
    ]
    assert report_rows(community_context(described, tokenizer, None)[0])[0] != tables


@pytest.mark.parametrize("budget", [None, 16_000, 400])
def test_a_context_follows_its_records_to_new_numbers(
    community_records: list[list[dict]], budget: int | None
) -> None:
    """A stored context carried to renumbered records is the context graphrag would write for them;
    a context the budget cut is carried when the same edges still fit, else written anew (which
    records fit depends on the numbers' tokens)."""
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.carried_reports import (
        community_context,
        ranked_records,
    )

    tokenizer = get_tokenizer()
    carried = cut = 0
    for records in community_records:
        renumbered = _renumbered_records(records, lambda n: 7 * n + 95)
        (ranked, ids), (ranked_after, ids_after) = (
            ranked_records(records),
            ranked_records(renumbered),
        )
        assert ranked == ranked_after and ids != ids_after
        stored, context, fresh = _carried_and_fresh(records, renumbered, tokenizer, budget)
        if context is None:  # only a context whose cut moved is written anew
            assert _edge_pairs(fresh[0]) != _edge_pairs(stored[0])
            continue
        assert context == fresh
        carried += 1
        cut += budget is not None and community_context(records, tokenizer, None)[1] > budget
    if budget == 400:
        assert cut > 0, "a context the budget cut is carried"
    else:
        assert carried == len(community_records), carried


def _carried_and_fresh(
    records: list[dict], changed: list[dict], tokenizer: Any, budget: int | None
) -> tuple[list, tuple[str, int] | None, tuple[str, int]]:
    """The context stored for `records`, that context carried to the `changed` records (None:
    written anew), and the context written afresh for them."""
    from graphrag_mcp_server.handlers.indexing.carried_reports import (
        carried_context,
        community_context,
        ranked_records,
    )
    from graphrag_mcp_server.handlers.indexing.context_rows import degrees_by_rank

    was_ids, now_ids = ranked_records(records)[1], ranked_records(changed)[1]
    stored = [
        *community_context(records, tokenizer, budget),
        was_ids,
        degrees_by_rank(records, was_ids),
    ]
    now = (now_ids, degrees_by_rank(changed, now_ids))
    context = carried_context(stored, now, changed, tokenizer, budget)
    return stored, context, community_context(changed, tokenizer, budget)


def _edge_pairs(context: str) -> set[tuple[str, str]]:
    """The (source, target) of each relationship row of a context."""
    import csv
    import io

    _, _, table = context.partition("-----Relationships-----\n")
    rows = list(csv.DictReader(io.StringIO(table.split("\n\n-----")[0])))
    return {(row["source"], row["target"]) for row in rows}


def test_a_member_without_an_edge_is_in_its_communitys_context(
    community_records: list[list[dict]],
) -> None:
    """graphrag's `sort_context` brings members in only through edges: a community of one entity
    without relationships got an empty context, and its report was written from nothing. Here every
    member is in the context, those without an edge after graphrag's own rows; a lone entity's
    report is written from its row."""
    import graphrag.data_model.schemas as schemas
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import (
        sort_context,
    )
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.carried_reports import community_context
    from graphrag_mcp_server.handlers.indexing.lone_entities import lone_entity_report

    tokenizer = get_tokenizer()
    lone = {
        schemas.TITLE: "KESTLEWICK",
        schemas.NODE_DEGREE: 0,
        schemas.EDGE_DETAILS: [],
        schemas.NODE_DETAILS: {
            schemas.SHORT_ID: 999,
            schemas.TITLE: "KESTLEWICK",
            schemas.DESCRIPTION: "The winter at Kestlewick was long.",
            schemas.NODE_DEGREE: 0,
        },
    }
    assert sort_context([lone], tokenizer) == "", "graphrag's context of a lone entity"
    alone, _ = community_context([lone], tokenizer, None)
    row = "999,KESTLEWICK,The winter at Kestlewick was long.,0\n"
    assert alone == f"-----Entities-----\nhuman_readable_id,title,description,degree\n{row}"
    report = lone_entity_report(alone)
    assert report is not None and (report["title"], report["summary"]) == (
        "KESTLEWICK",
        "The winter at Kestlewick was long.",
    )
    assert report["findings"][0]["explanation"].endswith("[Data: Entities (999)]")
    assert report["full_content"].startswith("# KESTLEWICK\n\nThe winter at Kestlewick was long.")

    records = max(community_records, key=len)
    joined, _ = community_context([*records, lone], tokenizer, None)
    graphrags = sort_context(records, tokenizer)
    end_of_entities = graphrags.index("\n\n-----")
    assert joined == graphrags[:end_of_entities] + row + graphrags[end_of_entities:]
    assert lone_entity_report(joined) is None, (
        "a community with relationships gets a model's report"
    )


def _regraded_records(records: list[dict], degree: Callable[[int], int]) -> list[dict]:
    """A community's records with each entity's degree d changed to degree(d) and each edge's
    combined degree to the sum of its ends' new degrees (or degree(c) for an end outside)."""
    import graphrag.data_model.schemas as schemas

    new_degree = {
        record[schemas.TITLE]: degree(int(record[schemas.NODE_DEGREE])) for record in records
    }

    def edge(details: dict) -> dict:
        ends = (details[schemas.EDGE_SOURCE], details[schemas.EDGE_TARGET])
        combined = sum(new_degree.get(end, degree(1)) for end in ends)
        return {**details, schemas.EDGE_DEGREE: combined}

    return [
        {
            **record,
            schemas.NODE_DEGREE: new_degree[record[schemas.TITLE]],
            schemas.NODE_DETAILS: {
                **record[schemas.NODE_DETAILS],
                schemas.NODE_DEGREE: new_degree[record[schemas.TITLE]],
            },
            schemas.EDGE_DETAILS: [edge(e) for e in record.get(schemas.EDGE_DETAILS, [])],
        }
        for record in records
    ]


@pytest.mark.parametrize(
    "degree", [lambda d: d + 1, lambda d: 1000 * d + 7, lambda d: max(1, 20 - d)]
)
def test_a_whole_context_is_rewritten_for_new_degrees_and_numbers(
    community_records: list[list[dict]], degree: Callable[[int], int]
) -> None:
    """A stored whole context rewritten for records whose degrees (and so the edges' order) and
    numbers changed equals the context written afresh, and so do its tokens (1000x: a degree's
    digits take another token)."""
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.carried_reports import (
        community_context,
        ranked_records,
    )
    from graphrag_mcp_server.handlers.indexing.context_rows import (
        context_tables,
        degrees_by_rank,
        rewritten_rows,
        whole_order,
    )

    tokenizer = get_tokenizer()
    reordered = 0
    for records in community_records:
        text, tokens = community_context(records, tokenizer, None)
        changed = _renumbered_records(_regraded_records(records, degree), lambda n: 3 * n + 5)
        fresh, fresh_tokens = community_context(changed, tokenizer, None)
        was_ids, now_ids = ranked_records(records)[1], ranked_records(changed)[1]
        was = (was_ids, degrees_by_rank(records, was_ids))
        now = (now_ids, degrees_by_rank(changed, now_ids))
        context = rewritten_rows(
            context_tables(text), tokens, was, now, whole_order(changed), tokenizer
        )
        assert context == (fresh, fresh_tokens)
        reordered += _rows_without_numbers(text) != _rows_without_numbers(fresh)
    assert reordered > 0, "some community's rows change order with their degrees"


@pytest.mark.parametrize(
    ("before", "after", "same_order"),
    [
        (None, lambda d: d + 1, True),
        (None, lambda d: 1000 * d + 7, True),  # more tokens: fewer edges may fit
        (lambda d: 10**15 * d + 7, lambda d: d + 1, True),  # fewer tokens: more edges may fit
        (None, lambda d: max(1, 20 - d), False),
    ],
)
def test_a_cut_context_is_rewritten_for_new_degrees_while_its_edges_still_fit(
    community_records: list[list[dict]],
    before: Callable[[int], int] | None,
    after: Callable[[int], int],
    same_order: bool,
) -> None:
    """A stored context the budget cut, carried to records whose degrees and numbers changed,
    equals the context written afresh when it is carried, and is not carried only when the fresh
    cut holds other edges (a hub's degree changes the rows of every community beside it: they
    were all written anew, issue 40). Degrees that keep the edges' order keep some cut at one
    budget or another (which cuts fit a budget depends on the fixtures' communities)."""
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing.carried_reports import (
        community_context,
    )

    tokenizer = get_tokenizer()
    carried = fitting = 0
    for original, budget in itertools.product(community_records, [120, 250, 400, 700]):
        records = original if before is None else _regraded_records(original, before)
        if community_context(records, tokenizer, None)[1] <= budget:
            continue  # whole: the test above
        changed = _renumbered_records(_regraded_records(original, after), lambda n: 3 * n + 5)
        stored, context, fresh = _carried_and_fresh(records, changed, tokenizer, budget)
        fitting += stored[1] <= budget  # else not even the first edge fits: written anew
        if context is None:
            assert stored[1] > budget or _edge_pairs(fresh[0]) != _edge_pairs(stored[0])
            continue
        assert context == fresh
        carried += 1
    assert carried > 0 or not (same_order and fitting), "some cut context keeps its edges"


def _rows_without_numbers(context: str) -> list[str]:
    """A context's lines without their first and last cells (record number, degree)."""
    return [line.partition(",")[2].rpartition(",")[0] for line in context.split("\n")]


def _changes(nodes: pd.DataFrame, edges: pd.DataFrame) -> dict[str, tuple]:
    """Ways an update changes what a community's records hold: (nodes, edges) after each. The
    first two change degrees without changing a context's order or digits."""
    title = edges["source"].iloc[0]
    same_digits = nodes.loc[nodes["degree"] % 10 != 9, "title"].iloc[0]
    graded = nodes.copy()
    graded.loc[graded["title"] == same_digits, "degree"] += 1
    every_edge = edges.copy()
    every_edge["combined_degree"] += _shift_keeping_digits(edges["combined_degree"])
    described = nodes.copy()
    described.loc[described["title"] == title, "description"] = "Now described otherwise."
    digits = nodes.copy()
    digits.loc[digits["title"] == title, "degree"] *= 10
    renumbered = nodes.copy()
    renumbered.loc[renumbered["title"] == title, "human_readable_id"] += 1000
    reordered = edges.copy()
    reordered.loc[reordered.index[3], "combined_degree"] = edges["combined_degree"].max() + 1
    redescribed = edges.copy()
    redescribed.loc[redescribed.index[0], "description"] = "Now related otherwise."
    first = edges.iloc[[2]].assign(human_readable_id=9999, description="A new relationship.")
    return {
        "an entity's degree, its digits unchanged": (graded, edges),
        "every relationship's combined degree, one apart": (nodes, every_edge),
        "an entity's description": (described, edges),
        "an entity's degree gaining a digit": (digits, edges),
        "an entity's number": (renumbered, edges),
        "a relationship's combined degree, now the highest": (nodes, reordered),
        "a relationship's description": (nodes, redescribed),
        "a relationship before the others": (nodes, pd.concat([first, edges])),
        "the first relationship gone": (nodes, edges.iloc[1:]),
    }


def _shift_keeping_digits(degrees: pd.Series) -> int:
    """One more or one less, whichever leaves every degree with its number of digits (a graph
    with both a 9 and a 10 has neither; the fixtures' has not)."""
    for shift in (1, -1):
        if all(len(str(int(d))) == len(str(int(d + shift))) and d + shift > 0 for d in degrees):
            return shift
    raise AssertionError("no shift by one keeps every degree's digits")


def _as_seen(records: list[dict]) -> tuple[list[dict], list[int]]:
    """What a community's context is made from: its records with each degree as its number of
    digits, and its relationships' numbers in graphrag's order (combined degree, then number)."""

    def digits(details: dict) -> dict:
        return {
            name: len(str(int(value))) if name in ("degree", "combined_degree") else value
            for name, value in details.items()
        }

    edges = [edge for record in records for edge in record["edge_details"]]
    order = sorted(edges, key=lambda edge: (-edge["combined_degree"], edge["human_readable_id"]))
    seen = [
        {
            **record,
            "degree": None,
            "node_details": digits(record["node_details"]),
            "edge_details": [digits(edge) for edge in record["edge_details"]],
        }
        for record in records
    ]
    return seen, [edge["human_readable_id"] for edge in order]


def test_a_community_keeps_its_signature_exactly_when_its_context_is_made_from_the_same(
    graph_frames: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    """unchanged_communities' signature of a community changes with any change of its records
    (a member's details, its first edge's details, which edge comes first) but their degrees'
    values, with the order and digits its degrees give its context, and with nothing else, at
    every level of the fixtures index: a hub gaining a relationship keeps the signatures of the
    communities its relationships are listed in."""
    from graphrag_mcp_server.handlers.indexing.kept_reports import (
        _EDGE_COLUMNS,
        _NODE_COLUMNS,
        level_members,
        level_records,
    )
    from graphrag_mcp_server.handlers.indexing.unchanged_communities import signature_keys

    nodes, edges = graph_frames

    def by_community(nodes: pd.DataFrame, edges: pd.DataFrame, level: int) -> tuple[dict, dict]:
        records = level_records(nodes, edges, None, level)
        members, first_edge = level_members(nodes, edges, level)
        keys = signature_keys(members, first_edge, edges, _NODE_COLUMNS, _EDGE_COLUMNS, ("s",))
        return dict(zip(records["community"], records["all_context"], strict=True)), keys

    for number, (change, (changed_nodes, changed_edges)) in enumerate(
        _changes(nodes, edges).items()
    ):
        kept = moved = records_changed = 0
        for level in sorted(nodes["level"].unique()):
            records, keys = by_community(nodes, edges, level)
            records_now, keys_now = by_community(changed_nodes, changed_edges, level)
            assert set(keys) == set(records) == set(records_now) == set(keys_now)
            for community, held in records.items():
                same = _as_seen(held) == _as_seen(records_now[community])
                assert (keys[community] == keys_now[community]) == same, (change, community)
                kept, moved = kept + same, moved + (not same)
                records_changed += held != records_now[community]
        if number < 2:  # degrees changed, not what a context is made from
            assert kept and not moved and records_changed, (change, kept, records_changed)
        else:
            assert kept and moved, (change, kept, moved)


def test_a_community_entry_holds_its_report_once() -> None:
    """A community's memo entry names its report's entry instead of holding the same report again;
    it holds the report as written only when renumbering changed it. Either way the next run gets
    the report as written, and keeps the context and report entries it names."""
    import json

    from graphrag_mcp_server.handlers.indexing import unchanged_communities
    from graphrag_mcp_server.handlers.indexing.memos import Memo, Step

    report = {"title": "Harbour", "summary": "The harbour board [Data: Entities (1)]."}
    renumbered = {"title": "Harbour", "summary": "The harbour board [Data: Entities (7)]."}
    now = {step: Memo() for step in Step}
    now[Step.REPORT].put("r", {"report": report, "rows": {}})
    now[Step.REPORT_CONTEXT].put("c", "context text")
    unchanged_communities.remember(now, "same", "c", "r", None)
    unchanged_communities.remember(now, "moved", "c", "r", renumbered)
    assert now[Step.COMMUNITY].used["same"]["written"] is None

    stored = {
        step: {key: json.dumps(value) for key, value in memo.used.items()}
        for step, memo in now.items()
    }
    later = {step: Memo(previous=stored[step], decode=json.loads) for step in Step}
    found = unchanged_communities.unchanged_reports(later, ["same", "moved", "unknown"], {})
    assert found == {"same": report, "moved": renumbered}
    assert later[Step.REPORT].kept == {"r"} and later[Step.REPORT_CONTEXT].kept == {"c"}


def test_unchanged_communities_decode_their_entries_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The stored entries of a level's unchanged communities, and of the reports they name, are
    decoded as one array each (Memo.peek_many), not one a community."""
    import json

    from graphrag_mcp_server.handlers.indexing import unchanged_communities
    from graphrag_mcp_server.handlers.indexing.memos import Memo, Step

    now = {step: Memo() for step in Step}
    for number in range(50):
        now[Step.REPORT].put(f"r{number}", {"report": {"title": f"T{number}"}, "rows": {}})
        now[Step.REPORT_CONTEXT].put(f"c{number}", "context text")
        unchanged_communities.remember(now, f"s{number}", f"c{number}", f"r{number}", None)
    stored = {
        step: {key: json.dumps(value) for key, value in memo.used.items()}
        for step, memo in now.items()
    }
    decoded: list[str] = []
    loads = json.loads

    def counted(text: str) -> Any:
        decoded.append(text)
        return loads(text)

    monkeypatch.setattr(json, "loads", counted)
    later = {step: Memo(previous=stored[step], decode=json.loads) for step in Step}
    found = unchanged_communities.unchanged_reports(
        later, [f"s{number}" for number in range(50)], {}
    )
    assert found == {f"s{number}": {"title": f"T{number}"} for number in range(50)}
    assert len(decoded) == 2
    assert len(later[Step.COMMUNITY].kept) == len(later[Step.REPORT].kept) == 50


def test_finalized_reports_are_graphrags() -> None:
    """The reports table is graphrag's finalize_community_reports', ids and all."""
    from graphrag.index.operations.finalize_community_reports import finalize_community_reports

    from graphrag_mcp_server.handlers.indexing.kept_reports import finalized_reports

    reports = pd.DataFrame(
        {
            "community": [2, 0, 1],
            "level": [1, 0, 0],
            "title": ["Harbour", "Quay", "Dock"],
            "summary": ["s2", "s0", "s1"],
            "full_content": ["# Harbour", "# Quay ünïcode", None],
            "rank": [7.5, 2.0, 1.0],
            "rating_explanation": ["r2", "r0", "r1"],
            "findings": [[{"summary": "f", "explanation": "e"}], [], []],
            "full_content_json": ["{}", "{}", "{}"],
        }
    )
    communities = pd.DataFrame(
        {
            "community": [0, 1, 2],
            "parent": [-1, -1, 0],
            "children": [[2], [], []],
            "size": [3, 1, 2],
            "period": ["2026-01-01"] * 3,
        }
    )
    expected = finalize_community_reports(reports.copy(), communities)
    pd.testing.assert_frame_equal(finalized_reports(reports.copy(), communities), expected)


def _promoted_edge(records: list[dict], context: str) -> list[dict]:
    """`records` with the first edge that `context` (a cut) does not hold raised above every other
    edge: only its combined degree changes, as a neighbour's new relationship changes it."""
    import graphrag.data_model.schemas as schemas

    held = _edge_pairs(context)
    top = 1 + max(edge[schemas.EDGE_DEGREE] for r in records for edge in r[schemas.EDGE_DETAILS])
    left_out = next(
        (edge[schemas.EDGE_SOURCE], edge[schemas.EDGE_TARGET])
        for record in records
        for edge in record[schemas.EDGE_DETAILS]
        if (edge[schemas.EDGE_SOURCE], edge[schemas.EDGE_TARGET]) not in held
    )

    def edge(details: dict) -> dict:
        pair = (details[schemas.EDGE_SOURCE], details[schemas.EDGE_TARGET])
        return {**details, schemas.EDGE_DEGREE: top} if pair == left_out else details

    return [
        {**record, schemas.EDGE_DETAILS: [edge(e) for e in record[schemas.EDGE_DETAILS]]}
        for record in records
    ]


async def test_a_report_is_kept_while_its_cut_moves_by_few_rows(
    community_records: list[list[dict]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A community whose records changed only in degrees keeps its report when its cut context
    gained a few rows (a hub's new relationship reorders the edges beside it, issue 40): the
    report is renumbered to the new context and stored with its drift; a report citing a row that
    left, a drift past REPORT_DRIFT of the rows, or no previous context write it anew."""
    from graphrag.index.operations.summarize_communities import summarize_communities
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.indexing import carried_reports
    from graphrag_mcp_server.handlers.indexing.memos import Memo, Step, input_hash, text_digest

    written: list[str] = []

    async def extractor(community: Any, context: str, level: int, *_: Any) -> dict:
        written.append(context)
        return {"community": community, "level": level, "title": "fresh", "summary": "new"}

    monkeypatch.setattr(summarize_communities, "run_extractor", extractor)
    tokenizer = get_tokenizer()
    records = max(community_records, key=len)
    budget = carried_reports.community_context(records, tokenizer, None)[1] * 9 // 10
    before = carried_reports.community_context(records, tokenizer, budget)[0]
    after = carried_reports.community_context(_promoted_edge(records, before), tokenizer, budget)
    (tables, cited), (tables_after, current) = map(carried_reports.report_rows, (before, after[0]))
    rows_now = _digests(current)
    gained = len(rows_now - _digests(cited))
    limit = int(carried_reports.REPORT_DRIFT * len(rows_now))
    assert 0 < gained <= limit, (gained, len(rows_now))
    staying = next(number for number, row in cited["Entities"].items() if row in rows_now)
    leaving = next(n for n, row in cited["Relationships"].items() if row not in rows_now)
    now = next(n for n, row in current["Entities"].items() if row == cited["Entities"][staying])

    async def report_of(report: dict, drift: int, previous: str | None) -> tuple[Any, Memo]:
        memo = Memo()
        entry = {"report": report, "rows": cited, "drift": drift}
        memo.put(input_hash(tables, text_digest("prompt"), 500), entry, counted=False)
        found = await carried_reports.report_of(
            7, after[0], 1, None, "prompt", 500, {Step.REPORT: memo}, previous=previous
        )
        return found, memo

    kept = {"title": "Harbour", "summary": f"[Data: Entities ({staying})]"}
    found, memo = await report_of(kept, 0, before)
    renumbered = {"title": "Harbour", "summary": f"[Data: Entities ({now})]"}
    assert found == {"community": 7, "level": 1, **renumbered} and not written
    assert (memo.computed, memo.reused) == (0, 1)
    key_after = input_hash(tables_after, text_digest("prompt"), 500)
    assert memo.used[key_after] == {"report": renumbered, "rows": current, "drift": gained}
    assert (await report_of(kept, limit - gained, before))[0]["title"] == "Harbour"

    citing_a_row_gone = {"title": "Harbour", "summary": f"[Data: Relationships ({leaving})]"}
    for report, drift, previous in (
        (citing_a_row_gone, 0, before),
        (kept, limit - gained + 1, before),
        (kept, 0, None),
    ):
        written.clear()
        found, memo = await report_of(report, drift, previous)
        assert found["title"] == "fresh" and written == [after[0]] and memo.computed == 1


def _digests(rows: dict[str, dict[str, str]]) -> set[str]:
    """Every row digest of a context's `report_rows`."""
    return {digest for numbered in rows.values() for digest in numbered.values()}
