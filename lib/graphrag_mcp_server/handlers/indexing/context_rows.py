"""A stored whole report context rewritten for records that changed only in numbers and degrees.

A community's whole context (every member, edge and claim, carried_reports.community_context) is
CSV tables whose rows carry graphrag's record numbers (first column) and degrees (last column of
entities and relationships), edges ordered by degree. When a neighbour grows into a hub, every
edge that touches it changes its `combined_degree`: at 1,000 documents of the generated archive
117 of the 139 contexts a deletion rebuilt differed from their stored ones in nothing else. Such a
context is written here from the stored one: its rows put in the order graphrag's would have
(`whole_order`), each row's number and degree replaced. Its tokens are the stored count plus the
difference of the replaced numbers' tokens: the tokenizer splits digits from the commas and line
ends around them, so a number's tokens do not depend on its neighbours, nor a row's on its place
(tests/test_report_context.py compares both with a fresh context on changed degrees).
"""

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag_llm.tokenizer import Tokenizer

Row = dict[str, Any]
DEGREE_COLUMNS = {"Entities": "degree", "Relationships": "combined_degree"}
"""The tables whose rows end with a degree, and its column."""


def sorted_details(
    records: list[Row],
) -> tuple[list[Row], dict[str, Row], dict[str, list[Row]]]:
    """A community's edges by degree then number, its members' details by title and their claims
    by title, each record number an int (graphrag's `sort_context` preparation)."""
    import graphrag.data_model.schemas as schemas

    short_id = schemas.SHORT_ID
    edges = [
        {**edge, short_id: int(edge[short_id])}
        for record in records
        for edge in record.get(schemas.EDGE_DETAILS, [])
        if isinstance(edge, dict)
    ]
    nodes = {
        record[schemas.TITLE]: {
            **record[schemas.NODE_DETAILS],
            short_id: int(record[schemas.NODE_DETAILS][short_id]),
        }
        for record in records
    }
    claims = {
        record[schemas.TITLE]: [
            {**claim, short_id: int(claim[short_id])}
            for claim in record.get(schemas.CLAIM_DETAILS, [])
            if isinstance(claim, dict) and claim.get(short_id) is not None
        ]
        for record in records
        if isinstance(record.get(schemas.CLAIM_DETAILS), list)
    }
    edges.sort(key=lambda edge: (-edge.get(schemas.EDGE_DEGREE, 0), edge.get(short_id, "")))
    return edges, nodes, claims


def whole_order(records: list[Row]) -> dict[str, list[Row]]:
    """The rows of a community's whole context, by table, in graphrag's `sort_context` order: the
    entities, claims and relationships of each edge by degree then number, then the members no
    edge brought by degree then number."""
    import graphrag.data_model.schemas as schemas

    short_id = schemas.SHORT_ID
    edges, nodes, claims = sorted_details(records)
    tables: dict[str, dict[int, Row]] = {"Entities": {}, "Claims": {}, "Relationships": {}}
    for edge in edges:
        for title in (edge[schemas.EDGE_SOURCE], edge[schemas.EDGE_TARGET]):
            if (node := nodes.get(title)) is not None:
                tables["Entities"].setdefault(node[short_id], node)
            for claim in claims.get(title) or []:
                tables["Claims"].setdefault(claim[short_id], claim)
        tables["Relationships"].setdefault(edge[short_id], edge)
    for title, node in sorted(
        nodes.items(), key=lambda item: (-item[1].get(schemas.NODE_DEGREE, 0), item[1][short_id])
    ):
        if node[short_id] not in tables["Entities"]:
            tables["Entities"][node[short_id]] = node
            for claim in claims.get(title) or []:
                tables["Claims"].setdefault(claim[short_id], claim)
    return {label: list(rows.values()) for label, rows in tables.items()}


def render_tables(tables: dict[str, list[Row]]) -> str:
    """Each non-empty table as graphrag's `sort_context` writes it: a title, then CSV."""
    return "\n\n".join(
        f"-----{label}-----\n{csv_text(rows)}" for label, rows in tables.items() if rows
    )


def csv_text(rows: list[Row]) -> str:
    """`pd.DataFrame(rows).to_csv(index=False, sep=",")`, as graphrag writes a context's table.
    Rows of the same keys holding only strings and ints are written by the csv module as pandas
    writes them (its writer, its options): 0.10 ms for a 40-row table against 0.54 ms by a
    frame, and a run writes one for every context it carries or cuts. Other rows (a missing key,
    None, a float) go to pandas, whose dtypes change how they are written."""
    import csv
    import io

    columns = tuple(rows[0]) if rows else ()
    if not columns or any(
        tuple(row) != columns or not all(type(value) in (str, int) for value in row.values())
        for row in rows
    ):
        import pandas as pd

        written: str = pd.DataFrame(rows).to_csv(index=False, sep=",")
        return written
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(columns)
    writer.writerows(row.values() for row in rows)
    return text.getvalue()


def degrees_by_rank(records: list[Row], ids: dict[str, list[int]]) -> dict[str, list[Any]]:
    """Each degree table's degrees in the order of its record numbers `ids` (ranked_records')."""
    import graphrag.data_model.schemas as schemas

    short_id = schemas.SHORT_ID
    rows = {
        "Entities": [record[schemas.NODE_DETAILS] for record in records],
        "Relationships": [
            edge
            for record in records
            for edge in record.get(schemas.EDGE_DETAILS, [])
            if isinstance(edge, dict)
        ],
    }
    found = {}
    for label, column in DEGREE_COLUMNS.items():
        degree_of = {int(row[short_id]): row.get(column) for row in rows[label]}
        found[label] = [degree_of.get(number) for number in ids.get(label, [])]
    return found


Numbered = tuple[dict[str, list[int]], dict[str, list[Any]]]
"""A community's record numbers and degrees, by table, in rank order."""


Tables = dict[str, tuple[str, dict[int, str]]]
"""A written context's tables: label -> (header, each row's text by its number)."""


def rewritten_rows(
    stored: Tables | None,
    tokens: int,
    was: Numbered,
    now: Numbered,
    order: dict[str, list[Row]],
    tokenizer: "Tokenizer",
) -> tuple[str, int] | None:
    """The `stored` tables (`context_tables` of a context of `tokens`, written for rows numbered
    `was`) rewritten for the same rows numbered and graded `now`, in the order of `order` (a whole
    context's: `whole_order`), with its tokens; None unless `order` holds exactly the stored rows,
    or when a degree is not a whole number or the context has claims (a claim's row can end in
    punctuation, which the tokenizer joins to the line end): it is then written anew."""
    import graphrag.data_model.schemas as schemas

    if stored is None or order["Claims"] or set(stored) != {k for k, v in order.items() if v}:
        return None
    parts, delta = [], 0
    for label, rows in order.items():
        if not rows:
            continue
        header, lines = stored[label]
        if len(rows) != len(lines):
            return None
        rank = {number: position for position, number in enumerate(now[0][label])}
        written = [header]
        for row in rows:
            position = rank.get(row[schemas.SHORT_ID])
            if position is None or position >= len(was[0][label]):
                return None
            old, new = was[0][label][position], now[0][label][position]
            line = lines.get(old)
            if line is None or not line.startswith(f"{old},"):
                return None
            line, delta = f"{new}{line[len(str(old)) :]}", delta + _change(old, new, tokenizer)
            if label in DEGREE_COLUMNS:
                old_degree, new_degree = was[1][label][position], now[1][label][position]
                if not (
                    isinstance(old_degree, int)
                    and isinstance(new_degree, int)
                    and line.endswith(f",{old_degree}")
                ):
                    return None
                line = f"{line[: -len(str(old_degree))]}{new_degree}"
                delta += _change(old_degree, new_degree, tokenizer)
            written.append(line)
        parts.append(f"-----{label}-----\n" + "\n".join(written) + "\n")
    return "\n\n".join(parts), tokens + delta


def _change(old: int, new: int, tokenizer: "Tokenizer") -> int:
    """How many more tokens `new` takes than `old` (0 when they are equal)."""
    if old == new:
        return 0
    return tokenizer.num_tokens(str(new)) - tokenizer.num_tokens(str(old))


_TABLE_TITLE = re.compile(r"^-----(\w+)-----\n", re.MULTILINE)
_ROW_NUMBER = re.compile(r"(\d+),")


def context_tables(text: str) -> Tables | None:
    """A context's tables: label -> (header, each row's text by its number); a row spanning lines
    (a quoted field with a line break) is one row. None when a row does not start with a number."""
    parts = _TABLE_TITLE.split(text)
    tables = {}
    for label, body in zip(parts[1::2], parts[2::2], strict=True):
        header, *lines = body.rstrip("\n").split("\n")
        found = csv_rows("\n".join(lines))
        if found is None:
            return None
        rows: dict[int, str] = {}
        for row in found:
            if (match := _ROW_NUMBER.match(row)) is None:
                return None
            rows[int(match.group(1))] = row
        tables[label] = (header, rows)
    return tables


def csv_rows(body: str) -> list[str] | None:
    """The rows of CSV text, each without its line end; a row spanning lines (a quoted field with
    a line break) is one row. None when a quoted field is left open."""
    rows: list[str] = []
    current: list[str] = []
    quoted = False
    for line in body.rstrip("\n").split("\n") if body.strip("\n") else []:
        current.append(line)
        quoted ^= line.count('"') % 2 == 1
        if not quoted:
            rows.append("\n".join(current))
            current = []
    return None if current else rows
