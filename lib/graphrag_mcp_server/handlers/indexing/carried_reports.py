"""Community report contexts and reports carried over from the previous version (see carry_over.py).

graphrag numbers entities and relationships in stream order, so an edit early in the corpus shifts
the numbers in most communities' contexts although their records are unchanged; and a hub's degree
changes the degrees in every context its edges reach. A stored context is matched by its records
with each number replaced by its rank and without degrees, and shown with the records' new numbers
and degrees (context_rows.py). A stored report is matched by what it is written from: its context's
rows without record numbers and without the degrees (ranking signals that change whenever a
neighbour gains a relationship: a hub growing must not rewrite every report beside it); its
`[Data: ...]` citations follow each cited row to its number in the new context.

A community whose records changed only in numbers and degrees can still have its cut context move:
a hub's new relationship raises the degree of its edges in the contexts beside it, and an edge at
the budget's end gives way to another of the same community. Its report is kept (`_drifted`) while
the rows its context gained since the report was written stay within REPORT_DRIFT of the context's
rows and the report cites no row that left; past that share it is written anew.
"""

import csv
import io
import json
import re
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing import lone_entities, memos, unchanged_communities
from graphrag_mcp_server.handlers.indexing.context_rows import (
    Numbered,
    context_tables,
    degrees_by_rank,
    render_tables,
    rewritten_rows,
    whole_order,
)
from graphrag_mcp_server.handlers.indexing.cut_context import carried_cut, cut_context
from graphrag_mcp_server.handlers.tables import CITATION

if TYPE_CHECKING:
    import pandas as pd
    from graphrag_llm.tokenizer import Tokenizer


def sort_context_batch(
    community_df: "pd.DataFrame",
    tokenizer: "Tokenizer",
    max_context_tokens: int,
    carried: memos.CarriedOver | None,
) -> "pd.DataFrame":
    """graphrag's `parallel_sort_context_batch` with `community_context` (members without an edge
    included), taking unchanged contexts from the previous version (`carried`)."""
    import graphrag.data_model.schemas as schemas

    found, keys, previous = [], [], []
    for records in community_df[schemas.ALL_CONTEXT]:
        if carried is None:
            found.append(community_context(records, tokenizer, max_context_tokens))
            continue
        ranked, ids = ranked_records(records)
        numbered = (ids, degrees_by_rank(records, ids))
        key = memos.input_hash(CONTEXT_FORM, max_context_tokens, _without_degrees(ranked))
        stored = carried[memos.Step.REPORT_CONTEXT].take(key)
        context = (
            None
            if stored is None
            else carried_context(stored, numbered, records, tokenizer, max_context_tokens)
        )
        if context is None:
            context = community_context(records, tokenizer, max_context_tokens)
            carried[memos.Step.REPORT_CONTEXT].put(key, [*context, *numbered])
        found.append(context)
        keys.append(key)
        previous.append(stored[0] if stored is not None and len(stored) == 4 else None)
    if carried is not None:
        community_df[CONTEXT_KEY] = keys
        community_df[PREVIOUS_CONTEXT] = previous
    community_df[schemas.CONTEXT_STRING] = [text for text, _ in found]
    community_df[schemas.CONTEXT_SIZE] = [size for _, size in found]
    community_df[schemas.CONTEXT_EXCEED_FLAG] = (
        community_df[schemas.CONTEXT_SIZE] > max_context_tokens
    )
    return community_df


def ranked_records(
    records: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """A community's records with each entity, relationship and claim number replaced by its rank
    among those of its kind, and each kind's numbers in rank order (by the context's table
    titles)."""
    import graphrag.data_model.schemas as schemas

    short_id = schemas.SHORT_ID
    nodes = [record[schemas.NODE_DETAILS] for record in records]
    edges = [
        edge
        for record in records
        for edge in record.get(schemas.EDGE_DETAILS, [])
        if isinstance(edge, dict)
    ]
    claims = [
        claim
        for record in records
        if isinstance(record.get(schemas.CLAIM_DETAILS), list)
        for claim in record[schemas.CLAIM_DETAILS]
        if isinstance(claim, dict) and claim.get(short_id) is not None
    ]
    ids = {
        title: sorted({int(detail[short_id]) for detail in details})
        for title, details in (("Entities", nodes), ("Relationships", edges), ("Claims", claims))
        if details
    }
    rank = {
        title: {number: position for position, number in enumerate(numbers)}
        for title, numbers in ids.items()
    }

    def ranked(detail: Any, title: str) -> Any:
        if not isinstance(detail, dict) or detail.get(short_id) is None:
            return detail
        return {**detail, short_id: rank[title][int(detail[short_id])]}

    return [
        {
            **record,
            schemas.NODE_DETAILS: ranked(record[schemas.NODE_DETAILS], "Entities"),
            **(
                {
                    schemas.EDGE_DETAILS: [
                        ranked(edge, "Relationships") for edge in record[schemas.EDGE_DETAILS]
                    ]
                }
                if isinstance(record.get(schemas.EDGE_DETAILS), list)
                else {}
            ),
            **(
                {
                    schemas.CLAIM_DETAILS: [
                        ranked(claim, "Claims") for claim in record[schemas.CLAIM_DETAILS]
                    ]
                }
                if isinstance(record.get(schemas.CLAIM_DETAILS), list)
                else {}
            ),
        }
        for record in records
    ], ids


def carried_context(
    stored: list[Any],
    now: Numbered,
    records: list[dict[str, Any]],
    tokenizer: "Tokenizer",
    max_context_tokens: int | None,
) -> tuple[str, int] | None:
    """A stored context (text, tokens, its rows' numbers and degrees by rank) for records that
    differ from its own at most in numbers and degrees: as stored when they are the same, its rows
    renumbered, regraded and reordered when it was whole (context_rows.py) or when the budget cut
    it and the same edges still fit (cut_context.carried_cut); None where it no longer fits, or
    its cut moved."""
    if len(stored) != 4:  # stored before degrees were kept apart: written anew once
        return None
    text, tokens, ids, degrees = stored
    if (ids, degrees) == now:
        return text, tokens
    if max_context_tokens and tokens > max_context_tokens:
        return None
    tables = context_tables(text)  # parsed once for both ways of carrying it
    context = rewritten_rows(tables, tokens, (ids, degrees), now, whole_order(records), tokenizer)
    if context is None and max_context_tokens:
        return carried_cut(
            tables, tokens, (ids, degrees), now, records, tokenizer, max_context_tokens
        )
    if context is None or (max_context_tokens and context[1] > max_context_tokens):
        return None
    return context


def _without_degrees(ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ranked records without their degrees: the part of a context's key that must be the same
    for a stored context to be carried (its degrees are rewritten)."""
    import graphrag.data_model.schemas as schemas

    def edges(record: dict[str, Any]) -> list[Any]:
        return [
            {name: value for name, value in edge.items() if name != schemas.EDGE_DEGREE}
            if isinstance(edge, dict)
            else edge
            for edge in record.get(schemas.EDGE_DETAILS, [])
        ]

    return [
        {
            **{name: value for name, value in record.items() if name != schemas.NODE_DEGREE},
            schemas.NODE_DETAILS: {
                name: value
                for name, value in record[schemas.NODE_DETAILS].items()
                if name != schemas.NODE_DEGREE
            },
            schemas.EDGE_DETAILS: edges(record),
        }
        for record in ranked
    ]


CONTEXT_KEY = "context_key"
"""The column of a context's memo key (sort_context_batch), when the run carries work over."""

PREVIOUS_CONTEXT = "previous_context"
"""The column of the context the previous version stored for the same records (their numbers and
degrees aside; None: none stored), when the run carries work over: its report may be kept
(`_drifted`)."""
REPORT_DRIFT = 0.1
"""The share of a report's context rows that may have come into the context since the report was
written (added over the updates that kept it) for the report to be kept, when its community's
records changed only in numbers and degrees."""

CONTEXT_FORM = "members-without-edges/degrees-apart"
"""Part of a stored context's key: contexts stored before members without an edge were written, or
before degrees were kept apart from the key, are not reused."""


def community_context(
    records: list[dict[str, Any]], tokenizer: "Tokenizer", max_context_tokens: int | None
) -> tuple[str, int]:
    """graphrag's `sort_context` of a community's records, and its tokens, with the members that
    have no edge in the community after those that do.

    graphrag adds members only through the community's edges, so a community of one entity without
    relationships got an empty context (and a report written from nothing). graphrag adds the edges
    one at a time (by degree, then id), rewriting and re-tokenising the whole context after each,
    until the budget is exceeded: quadratic in the community's size. When the whole context fits,
    that loop ends with the whole context, so it is written once here; otherwise cut_context.py
    finds graphrag's cut by bisection (members without an edge are then left out, as graphrag
    leaves them).
    """

    whole = _whole_context(records)
    tokens = tokenizer.num_tokens(whole)
    if not max_context_tokens or tokens <= max_context_tokens:
        return whole, tokens
    text = cut_context(records, tokenizer, max_context_tokens)
    return text, tokenizer.num_tokens(text)


def _whole_context(records: list[dict[str, Any]]) -> str:
    """What graphrag's `sort_context` returns with no budget, then the members no edge brought
    (context_rows.whole_order)."""
    return render_tables(whole_order(records))


async def report_of(
    community: str | int,
    context: str,
    level: int,
    model: Any,
    prompt: str,
    max_report_length: int,
    carried: memos.CarriedOver | None,
    signature: tuple[str | None, str | None] = (None, None),
    previous: str | None = None,
) -> Any:
    """graphrag's report of one community (`run_extractor`), taking the previous version's report
    written from the same rows (`report_rows`), its citations moved to those rows' numbers in this
    context; a lone entity's report is written from its row (`lone_entities.lone_entity_report`).
    With its records' `signature` key and its context's key, the report is remembered for the
    next version (unchanged_communities.py). With the `previous` context of the same records, the
    report written from it is kept while the rows moved since stay few (`_drifted`)."""
    from graphrag.index.operations.summarize_communities.summarize_communities import (
        run_extractor,
    )

    signature_key, context_key = signature
    if (lone := lone_entities.lone_entity_report(context)) is not None:
        if carried is not None and signature_key and context_key:
            unchanged_communities.remember(carried, signature_key, context_key, None, lone)
        return {"community": community, "level": level, **lone}
    if carried is None:
        return await run_extractor(community, context, level, model, prompt, max_report_length)
    tables, rows = report_rows(context)
    prompt_key = memos.text_digest(prompt)
    key = memos.input_hash(tables, prompt_key, max_report_length)
    memo = carried[memos.Step.REPORT]
    stored = memo.take(key)
    report = (
        None
        if stored is None or "rows" not in stored
        else renumbered(stored["report"], stored["rows"], rows)
    )
    if report is None and previous is not None:
        stored = _drifted(memo, previous, rows, (prompt_key, max_report_length))
        if stored is not None:
            report = stored["report"]
            memo.put(key, stored, counted=False)
    if report is None:
        fresh = await run_extractor(community, context, level, model, prompt, max_report_length)
        if fresh is None:
            return None
        report = {
            name: value for name, value in fresh.items() if name not in ("community", "level")
        }
        stored = {"report": report, "rows": rows}
        carried[memos.Step.REPORT].put(key, stored)
    if signature_key and context_key:
        as_stored = report == stored["report"]  # renumbering changed nothing: not stored twice
        unchanged_communities.remember(
            carried, signature_key, context_key, key, None if as_stored else report
        )
    return {"community": community, "level": level, **report}


def _drifted(
    memo: memos.Memo,
    previous: str,
    rows: dict[str, dict[str, str]],
    settings: tuple[str, int],
) -> dict[str, Any] | None:
    """The report written from the `previous` context (`settings`: the prompt's digest and the
    report's length) as a memo entry for the context of `rows`, its citations renumbered and the
    rows gained since it was written added to its `drift`; None when there is no such report,
    when it cites a row that left or when the drift passes REPORT_DRIFT of the rows."""
    was_tables, _ = report_rows(previous)
    was_key = memos.input_hash(was_tables, *settings)
    was = memo.peek(was_key)
    if was is None or "rows" not in was:
        return None
    now = _row_digests(rows)
    drift = int(was.get("drift", 0)) + len(now - _row_digests(was["rows"]))
    if drift > REPORT_DRIFT * len(now):
        return None
    report = renumbered(was["report"], was["rows"], rows)
    if report is None:
        return None
    memo.reused += 1  # carried over, stored under the new context's key
    return {"report": report, "rows": rows, "drift": drift}


def _row_digests(rows: dict[str, dict[str, str]]) -> set[str]:
    """The digests of a context's rows (`report_rows`), every table's together."""
    return {digest for numbered in rows.values() for digest in numbered.values()}


_TABLE_TITLE = re.compile(r"^-----(\w+)-----\n", re.MULTILINE)
_CITED_TABLE = re.compile(r"(\w+)\s*\(([^)]*)\)")
_NUMBER = re.compile(r"\d+")


DEGREES = ("degree", "combined_degree")
"""graphrag's degree columns of report contexts: ranking signals, not what a report says."""


def report_rows(context: str) -> tuple[list[Any], dict[str, dict[str, str]]]:
    """What a report is written from: each table of its context with its rows sorted, without
    graphrag's record numbers and degrees; and each table's record numbers -> a digest of their row
    (what a citation points at). A table whose first column is not graphrag's record number is kept
    as it is."""
    import graphrag.data_model.schemas as schemas

    parts = _TABLE_TITLE.split(context)
    tables: list[Any] = [parts[0]]
    rows: dict[str, dict[str, str]] = {}
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        header, *records = [record for record in csv.reader(io.StringIO(body)) if record]
        if header[:1] != [schemas.SHORT_ID] or not all(record[0].isdigit() for record in records):
            tables.append([title, body])
            continue
        kept = [column for column, name in enumerate(header) if column and name not in DEGREES]
        contents = {
            record[0]: json.dumps([record[column] for column in kept if column < len(record)])
            for record in records
        }
        rows[title] = {number: memos.input_hash(content) for number, content in contents.items()}
        tables.append([title, [header[column] for column in kept], sorted(contents.values())])
    return tables, rows


def renumbered(
    report: dict[str, Any], cited: dict[str, dict[str, str]], current: dict[str, dict[str, str]]
) -> dict[str, Any] | None:
    """`report` with the record numbers it cites (`[Data: Entities (3, 7); Relationships (12)]`)
    changed from those of the context it was written for (`cited`: number -> row digest) to those of
    the same rows in this context; None when it cites a number that context did not hold."""
    numbers: dict[str, dict[int, int]] = {}
    for title, was in cited.items():
        now = {row: int(number) for number, row in current.get(title, {}).items()}
        numbers[title] = {int(number): now[row] for number, row in was.items() if row in now}
    if all(
        len(numbers[title]) == len(was) and all(old == new for old, new in numbers[title].items())
        for title, was in cited.items()
    ):
        return report  # every row kept its number (stable ids: most reports of an update)

    def table(match: re.Match[str]) -> str:
        title = match.group(1)
        if title not in numbers:
            return match.group(0)
        start, end = match.span(2)
        listed = _NUMBER.sub(
            lambda number: str(numbers[title][int(number.group(0))]), match.group(2)
        )
        return match.string[match.start(0) : start] + listed + match.string[end : match.end(0)]

    def text(value: Any) -> Any:
        if isinstance(value, str):
            return CITATION.sub(lambda block: _CITED_TABLE.sub(table, block.group(0)), value)
        if isinstance(value, list):
            return [text(item) for item in value]
        if isinstance(value, dict):
            return {name: text(item) for name, item in value.items()}
        return value

    try:
        moved: dict[str, Any] = text(report)
    except KeyError:
        return None
    return moved
