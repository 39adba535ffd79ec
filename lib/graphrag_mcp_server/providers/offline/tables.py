"""Parsing of the CSV context tables GraphRAG puts in its prompts."""

from __future__ import annotations

import csv
import io
import re

Row = dict[str, str]

_ROW_ID = re.compile(r"^\s*\d+\s*$")
_SECTION_HEADER = re.compile(r"^-{3,}\s*([A-Za-z][A-Za-z ]*?)\s*-{3,}\s*$", re.M)


def parse_tables(text: str) -> dict[str, list[Row]]:
    """Parse '-----Name-----' CSV sections; an unnamed one is named by its columns."""
    parts = _SECTION_HEADER.split(text)
    sections = [("", parts[0]), *zip(parts[1::2], parts[2::2], strict=True)]
    tables = {}
    for name, body in sections:
        if rows := _parse_rows(body):
            tables[name.strip().lower() or _table_name(rows[0])] = rows
    return tables


def _table_name(row: Row) -> str:
    """Name of a header-less table (basic search sources, global map reports)."""
    return "sources" if "text" in row else "reports"


def _parse_rows(body: str) -> list[Row]:
    """Rows of one CSV table; lines not starting with an id continue a row."""
    body = body.strip()
    if not body:
        return []
    delimiter = "|" if "|" in body.split("\n", 1)[0] else ","
    reader = csv.reader(io.StringIO(body), delimiter=delimiter)
    header = [h.strip() for h in next(reader)]
    text_column = next(
        (c for c in ("text", "content", "full_content", "description") if c in header),
        header[-1],
    )
    rows: list[Row] = []
    for cells in reader:
        if rows and (not cells or not _ROW_ID.match(cells[0])):
            rows[-1][text_column] = f"{rows[-1].get(text_column, '')}\n{delimiter.join(cells)}"
        elif cells:
            rows.append(dict(zip(header, cells, strict=False)))
    return rows


def row_id(row: Row) -> str:
    """The record id GraphRAG cites."""
    for column in ("id", "human_readable_id", "short_id", "community"):
        if row.get(column, "").strip():
            return row[column].strip()
    return "?"


def number(row: Row, column: str) -> float:
    """Numeric value of ``row[column]``, else 0."""
    try:
        return float(row.get(column, ""))
    except ValueError:
        return 0.0
