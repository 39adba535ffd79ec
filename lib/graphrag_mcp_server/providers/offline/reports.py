"""Answers to GraphRAG's description summary and community report prompts."""

from __future__ import annotations

import json

from graphrag_mcp_server.providers.offline.entities import find_entities
from graphrag_mcp_server.providers.offline.request import Request
from graphrag_mcp_server.providers.offline.tables import Row, number, parse_tables, row_id
from graphrag_mcp_server.providers.offline.text import (
    MAX_DESCRIPTION_WORDS,
    SUMMARY_WORDS,
    and_join,
    cite,
    display,
    join_sentences,
    number_after,
    prose,
    split_sentences,
    text_between,
    within_words,
)


def summarize(request: Request) -> str:
    """Distinct sentences of the description list, within the prompt's word limit and
    SUMMARY_WORDS."""
    max_words = min(
        number_after(request.instructions, r"length to (\d+) words", 500), SUMMARY_WORDS
    )
    raw = text_between(request.instructions, "Description List:", "\n#######")
    try:
        descriptions = [str(d) for d in json.loads(raw)]
    except json.JSONDecodeError:
        descriptions = [raw]
    sentences = [s for d in descriptions for s in split_sentences(d)]
    return join_sentences(sentences, max_words)


def community_report(request: Request) -> str:
    """CommunityReportResponse JSON built from the community's tables."""
    real = text_between(request.instructions, "# Real Data")
    data = text_between(real, "Text:", "\nThe report should include", "\nOutput:")
    tables = parse_tables(data)
    entities = sorted(tables.get("entities", []), key=lambda r: -number(r, "degree"))
    relationships = sorted(
        tables.get("relationships", []), key=lambda r: -number(r, "combined_degree")
    )
    reports = tables.get("reports", [])
    names = (
        [display(r.get("title", "")) for r in entities[:3]]
        or [_report_title(r) for r in reports[:3]]
        or find_entities(data).names[:3]
        or ["Unnamed community"]
    )
    findings = (
        [_entity_finding(row, relationships) for row in entities[:5]]
        + [_relationship_finding(row) for row in relationships[:3]]
        + [_report_finding(row) for row in reports[:3]]
    )
    max_words = number_after(request.instructions, r"report length to (\d+) words", 1500)
    return json.dumps(
        {
            "title": and_join(names[:2]),
            "summary": _report_summary(names, entities, relationships),
            "rating": round(min(10.0, 1.0 + 0.5 * len(relationships) + 0.25 * len(entities)), 1),
            "rating_explanation": (
                "Offline heuristic: the rating grows with the community's size "
                f"({len(entities)} entities, {len(relationships)} relationships)."
            ),
            "findings": within_words(findings, lambda f: " ".join(f.values()), max_words),
        }
    )


def _report_summary(names: list[str], entities: list[Row], relationships: list[Row]) -> str:
    """Executive summary: key members, size and the top entity's first sentence."""
    summary = (
        f"The community revolves around {and_join(names)}, linking {len(entities)} "
        f"entities through {len(relationships)} relationships."
    )
    first = prose(entities[0].get("description", "")) if entities else []
    if first:
        summary += f" {first[0]}{cite({'Entities': [row_id(entities[0])]})}"
    return summary


def _entity_finding(row: Row, relationships: list[Row]) -> dict[str, str]:
    """A finding about one entity, citing it and its relationships."""
    title = row.get("title", "")
    related = [row_id(r) for r in relationships if title in (r.get("source"), r.get("target"))]
    refs = {"Entities": [row_id(row)], "Relationships": related}
    description = join_sentences(prose(row.get("description", "")), MAX_DESCRIPTION_WORDS)
    return {
        "summary": f"The role of {display(title)}",
        "explanation": f"{description}{cite({k: v for k, v in refs.items() if v})}",
    }


def _relationship_finding(row: Row) -> dict[str, str]:
    """A finding about one relationship."""
    source, target = display(row.get("source", "")), display(row.get("target", ""))
    description = join_sentences(prose(row.get("description", "")), MAX_DESCRIPTION_WORDS)
    return {
        "summary": f"{source} and {target}",
        "explanation": f"{description}{cite({'Relationships': [row_id(row)]})}",
    }


def _report_title(row: Row) -> str:
    """Title of a sub-community report ('# Title' line of its content)."""
    content = row.get("full_content", "")
    return content.strip().split("\n", 1)[0].lstrip("# ").strip() or "Sub-community"


def _report_finding(row: Row) -> dict[str, str]:
    """A finding summarising a sub-community report."""
    sentences = prose(row.get("full_content", "").strip().partition("\n")[2])
    return {
        "summary": _report_title(row),
        "explanation": join_sentences(sentences, MAX_DESCRIPTION_WORDS)
        + cite({"Reports": [row_id(row)]}),
    }
