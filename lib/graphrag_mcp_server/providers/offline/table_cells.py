"""The cells of tables written as text (a CSV's lines, a Markdown table's: text.table_rows) by
column: a header's cells name columns, not entities; a column headed by a place's noun
('Village', 'Home town') holds places, named in it whether or not a gazetteer knows them;
a column of values ('Variety', 'Grade', 'Status') holds none of the names it writes that nothing
else types; a column headed by a body's role ('Team', 'Home', 'Away', 'Employer', 'Publisher')
holds bodies where nothing but weak evidence makes them people (blocks.layout_cues). Which columns
hold people is left to the names themselves."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from graphrag_mcp_server.providers.offline.labels import FIELD_LABEL
from graphrag_mcp_server.providers.offline.lexicon import PLACE_HEADS, is_first_name
from graphrag_mcp_server.providers.offline.no_kind import is_common_word
from graphrag_mcp_server.providers.offline.text import PARAGRAPH_BREAK, table_rows

# fmt: off
PLACE_HEADERS = frozenset(
    [
        "location", "origin", "destination", "venue", "address", "country", "hometown", "base",
        "site", "residence", "birthplace", "municipality", "locality", "area",
    ]
)
"""Column names of places besides the place nouns of lexicon.PLACE_HEADS (English vocabulary)."""
VALUE_HEADERS = frozenset(
    [
        "type", "kind", "category", "class", "grade", "status", "variety", "species", "breed",
        "product", "item", "model", "brand", "colour", "color", "material", "condition", "method",
        "result", "outcome", "description", "note", "notes", "remark", "remarks", "comment",
        "comments", "unit", "size", "stage", "level", "priority", "reason", "cause", "flag",
    ]
)
"""Column names of a thing's attributes and kinds (English vocabulary): their cells are values."""
BODY_HEADERS = frozenset(
    [
        "team", "club", "side", "home", "away", "opponent", "opponents", "opposition", "company",
        "employer", "organisation", "organization", "sponsor", "manufacturer", "publisher",
        "supplier", "vendor", "firm", "agency", "school", "university", "college", "party",
        "operator", "airline", "carrier", "broadcaster", "insurer", "lender", "label",
    ]
)
"""Column names of a body's role in a row (English vocabulary): their cells name bodies."""
# fmt: on
_SEPARATOR_ROW = re.compile(r"^[\s|:+-]*-[\s|:+-]*$")
_WORD = re.compile(r"[^\W\d_]+")


@dataclass
class Column:
    """A table's column: its header cell and the cells below it."""

    header: str
    cells: list[str]

    @property
    def kind(self) -> str:
        """'place', 'body', 'value' or '' (any other: left to its names), by the header's last word
        ('Village', 'Home town', 'home_town'; 'Grape variety', 'status')."""
        words = [word.lower() for word in _WORD.findall(self.header)]
        last = words[-1] if words else ""
        if last in PLACE_HEADS or last in PLACE_HEADERS or "place" in words:
            return "place"
        if last in BODY_HEADERS:
            return "body"
        return "value" if last in VALUE_HEADERS else ""


def columns(text: str) -> list[Column]:
    """The columns of every table of `text` whose first row is a header (a Markdown table's is;
    a CSV's first row is when no cell of it holds a digit or a person's name), and each field line
    as a column of one row ('Site: Cae Glas, Llanfair Road': its label the header, the parts of its
    value between commas the cells)."""
    found = [
        Column(match[1].strip(), [part.strip(" .;") for part in line[match.end() :].split(",")])
        for line in text.splitlines()
        if (match := FIELD_LABEL.match(line))
    ]
    for paragraph in PARAGRAPH_BREAK.split(text):
        written = [_cells(row) for row in table_rows(paragraph)]
        rows = [row for row in written if row and not _SEPARATOR_ROW.match("|".join(row))]
        markdown = len(rows) < len(written)  # a Markdown table's second row: '| --- | --- |'
        if len(rows) < 2 or not (markdown or _is_header(rows[0])):
            continue
        found += [
            Column(header, [row[column] for row in rows[1:] if column < len(row)])
            for column, header in enumerate(rows[0])
        ]
    return found


def header_cells(tables: list[Column]) -> set[str]:
    """The header cells of the tables' `columns`, in upper case (column names: no entities)."""
    return {column.header.upper() for column in tables if column.header}


def place_cells(tables: list[Column]) -> list[str]:
    """The cells of place columns that are written as names (each word capitalised), once each,
    in the tables' order: the order the extraction names them in (a set's changed with each
    process's string hashing, and with it the ends of their relationships)."""
    return list(
        dict.fromkeys(
            cell
            for column in tables
            if column.kind == "place"
            for cell in column.cells
            if _written_as_name(cell)
        )
    )


def body_cells(tables: list[Column]) -> set[str]:
    """The cells of body columns, in upper case."""
    return {cell.upper() for column in tables if column.kind == "body" for cell in column.cells}


def value_cells(tables: list[Column]) -> set[str]:
    """The cells of value columns, in upper case."""
    return {cell.upper() for column in tables if column.kind == "value" for cell in column.cells}


def _cells(row: str) -> list[str]:
    """A row's cells: a Markdown row's between its bars, a CSV line's as csv reads it."""
    if "|" in row:
        return [cell.strip() for cell in row.strip().strip("|").split("|")]
    delimiter = "\t" if "\t" in row else ","
    return [cell.strip() for cell in next(csv.reader(io.StringIO(row), delimiter=delimiter))]


def _is_header(row: list[str]) -> bool:
    """No cell holds a digit or is a person's name (a first name, then another word)."""
    return not any(
        any(character.isdigit() for character in cell)
        or (len(words := cell.split()) > 1 and is_first_name(words[0]))
        for cell in row
    )


def _written_as_name(cell: str) -> bool:
    """A cell written as a place's name: one to four capitalised words in mixed case, no digit, a
    single word no common English one ('Kossou'; not 'PEN-S', 'H1' or 'Arena')."""
    words = cell.split()
    return (
        0 < len(words) <= 4
        and all(word[:1].isupper() and not word.isupper() for word in words)
        and not any(character.isdigit() for character in cell)
        and (len(words) > 1 or not is_common_word(cell))
    )
