"""Extractive answers to GraphRAG's local, basic, global and DRIFT search prompts."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from graphrag_mcp_server.providers.offline.entities import find_entities
from graphrag_mcp_server.providers.offline.request import Request
from graphrag_mcp_server.providers.offline.tables import Row, number, parse_tables, row_id
from graphrag_mcp_server.providers.offline.text import (
    CITATION,
    MAX_DESCRIPTION_WORDS,
    and_join,
    cite,
    display,
    join_sentences,
    number_after,
    overlap,
    prose,
    split_sentences,
    terms_of,
    text_between,
    within_words,
)

OFFLINE_NOTE = (
    "_Offline extractive answer: assembled from the retrieved records without a language model._"
)
_MAX_EVIDENCE = 5
_MAX_FOLLOW_UPS = 5

_DATASETS = (  # table, citation label, name columns, text columns
    ("entities", "Entities", ("entity", "title"), ("description",)),
    ("relationships", "Relationships", ("source", "target"), ("description",)),
    ("claims", "Claims", ("entity", "subject_id"), ("description",)),
    ("reports", "Reports", ("title",), ("content", "full_content", "summary")),
    ("sources", "Sources", (), ("text",)),
)


@dataclass
class _Evidence:
    """A sentence from the context and the records it came from."""

    sentence: str
    score: float
    refs: dict[str, list[str]]


def _collect_evidence(tables: dict[str, list[Row]], terms: set[str]) -> list[_Evidence]:
    """Every context sentence scored by word overlap with the query terms."""
    evidence: dict[str, _Evidence] = {}
    for table, label, name_columns, text_columns in _DATASETS:
        for row in tables.get(table, []):
            name = " ".join(row.get(c, "") for c in name_columns)
            bonus = 0.5 * overlap(terms, name)
            for column in text_columns:
                for sentence in prose(row.get(column, "")):
                    key = " ".join(sentence.lower().split())
                    item = evidence.setdefault(key, _Evidence(sentence, 0.0, {}))
                    item.score = max(item.score, overlap(terms, sentence) + bonus)
                    item.refs.setdefault(label, []).append(row_id(row))
    return sorted(evidence.values(), key=lambda e: -e.score)


def _ranked_entities(tables: dict[str, list[Row]], terms: set[str]) -> list[Row]:
    """Entity rows ordered by query overlap (name counts double), then rank."""
    rows = tables.get("entities", [])
    return sorted(
        rows,
        key=lambda r: (
            -(2 * overlap(terms, r.get("entity", "")) + overlap(terms, r.get("description", "")))
        ),
    )


def _merge_refs(refs: Iterable[dict[str, list[str]]]) -> dict[str, list[str]]:
    """Combine citation references, keeping dataset order."""
    merged: dict[str, list[str]] = {}
    for ref in refs:
        for label, ids in ref.items():
            merged.setdefault(label, []).extend(ids)
    return merged


def _lead(names: list[str], refs: dict[str, list[str]], matched: bool) -> str:
    """Opening sentence naming the most relevant entities."""
    bold = and_join([f"**{display(n)}**" for n in names])
    if matched:
        return f"The records most relevant to the question concern {bold}.{cite(refs)}"
    return (
        "No record matches the question's wording directly; the closest "
        f"retrieved records concern {bold}.{cite(refs)}"
    )


def _compose_answer(tables: dict[str, list[Row]], query: str) -> tuple[str, int]:
    """Markdown answer from the context tables, and % of query terms covered."""
    terms = terms_of(query)
    evidence = _collect_evidence(tables, terms)
    evidence = ([e for e in evidence if e.score > 0] or evidence)[:_MAX_EVIDENCE]
    if not evidence:
        return "I don't know: the data tables contain no records for this question.", 0
    entities = _ranked_entities(tables, terms)[:3]
    if entities:
        names = [r.get("entity", "") for r in entities]
        refs = {"Entities": [row_id(r) for r in entities]}
    else:
        names = find_entities(" ".join(e.sentence for e in evidence)).names[:3]
        refs = _merge_refs(e.refs for e in evidence)
    bullets = [f"- {e.sentence}{cite(e.refs)}" for e in evidence]
    lead = _lead(names, refs, evidence[0].score > 0) if names else ""
    covered = terms & terms_of(" ".join(e.sentence for e in evidence))
    coverage = round(100 * len(covered) / len(terms)) if terms else 0
    return "\n\n".join(filter(None, [lead, "\n".join(bullets)])), coverage


def _follow_ups(names: list[str], *asked: str) -> list[str]:
    """'What is the role of X?' for names not already asked about."""
    asked_text = " ".join(asked).lower()
    fresh = [n for n in names if display(n).lower() not in asked_text]
    return [f"What is the role of {display(n)}?" for n in fresh[:_MAX_FOLLOW_UPS]]


def table_answer(request: Request) -> str:
    """Local and basic search: extractive markdown answer with citations."""
    tables = parse_tables(text_between(request.instructions, "---Data tables---", "---Goal---"))
    answer, _ = _compose_answer(tables, request.query)
    return f"{answer}\n\n{OFFLINE_NOTE}"


def drift_local(request: Request) -> str:
    """DRIFT local step: JSON with response, score and follow-up queries."""
    instructions = request.instructions
    tables = parse_tables(text_between(instructions, "---Data tables---", "---Goal---"))
    global_query = text_between(instructions, "overall research question:", ". Based on your")
    wanted = number_after(instructions, r"suggest up to (\d+) follow-up", _MAX_FOLLOW_UPS)
    answer, coverage = _compose_answer(tables, f"{request.query} {global_query}")
    names = [r.get("entity", "") for r in _ranked_entities(tables, terms_of(request.query))]
    follow_ups = _follow_ups(names, request.query, global_query)[:wanted]
    return json.dumps({"response": answer, "score": coverage, "follow_up_queries": follow_ups})


def global_map(request: Request) -> str:
    """Global map step: {"points": [...]} from reports overlapping the query."""
    tables = parse_tables(text_between(request.instructions, "---Data tables---", "---Goal---"))
    reports = tables.get("reports", [])
    terms = terms_of(request.query)
    max_words = number_after(request.instructions, r"response length to (\d+) words", 1000)
    scored = [(overlap(terms, f"{r.get('title', '')} {_report_text(r)}"), r) for r in reports]
    relevant = [(s, r) for s, r in scored if s > 0]
    if not relevant:  # broad question: offer the highest-ranked reports
        by_rank = sorted(reports, key=lambda r: -number(r, "rank"))
        relevant = [(0, r) for r in by_rank[:3]]
    points = [_map_point(row, terms, score) for score, row in relevant]
    points.sort(key=lambda p: -p["score"])
    return json.dumps({"points": within_words(points, lambda p: p["description"], max_words)})


def _report_text(row: Row) -> str:
    """A report row's text: full content, or its summary."""
    return row.get("content") or row.get("full_content") or row.get("summary", "")


def _map_point(row: Row, terms: set[str], matched: int) -> dict[str, Any]:
    """One key point: report title and its most relevant sentences."""
    sentences = sorted(prose(_report_text(row)), key=lambda s: -overlap(terms, s))
    body = join_sentences(sentences[:2], MAX_DESCRIPTION_WORDS)
    score = min(100, 10 + round(90 * matched / len(terms))) if matched and terms else 5
    citation = cite({"Reports": [row_id(row)]})
    return {"description": f"{row.get('title', 'Report')}: {body}{citation}", "score": score}


def global_reduce(request: Request) -> str:
    """Global reduce step: merge the ranked key points into one answer."""
    section = text_between(request.instructions, "---Analyst Reports---", "---Goal---")
    max_words = number_after(request.instructions, r"response length to (\d+) words", 2000)
    blocks = re.split(r"^----Analyst \d+----$", section, flags=re.M)
    points = [re.sub(r"^\s*Importance Score:.*", "", b).strip() for b in blocks]
    points = [p for p in points if p]
    if not points:
        return "I don't know: no relevant information was found in the dataset."
    titles = list(dict.fromkeys(f"**{p.split(':', 1)[0]}**" for p in points if ":" in p))
    lead = (
        f"The most relevant findings come from the community reports {and_join(titles[:3])}."
        if titles
        else ""
    )
    bullets = "\n".join(within_words([f"- {p}" for p in dict.fromkeys(points)], str, max_words))
    return "\n\n".join(filter(None, [lead, bullets, OFFLINE_NOTE]))


def drift_primer(request: Request) -> str:
    """DRIFT primer: intermediate answer, score and follow-up queries as JSON."""
    query = text_between(
        request.instructions, "For the query:", "The top-ranked community summaries:"
    )
    reports = text_between(
        request.instructions,
        "The top-ranked community summaries:",
        "Provide the intermediate answer",
    )
    terms = terms_of(query)
    sentences = sorted(prose(reports), key=lambda s: -overlap(terms, s))[:_MAX_EVIDENCE]
    bullets = "\n".join(f"- {s}" for s in sentences) or "No community summary was provided."
    names = sorted(find_entities(reports).names, key=lambda n: -overlap(terms, n))
    follow_ups = _follow_ups(names, query) or [f"What do the sources say about {query}?"]
    return json.dumps(
        {
            "intermediate_answer": f"# Community summaries related to: {query}\n\n{bullets}",
            "score": round(100 * len(terms & terms_of(reports)) / len(terms)) if terms else 0,
            "follow_up_queries": follow_ups,
        }
    )


def hypothetical_answer(request: Request) -> str:
    """DRIFT query expansion: the query plus matching template sentences."""
    query = text_between(request.instructions, "following query:", "\nFormat it")
    template = text_between(request.instructions, "structure of the template below:", "Ensure that")
    terms = terms_of(query)
    matching = [s for s in prose(template) if overlap(terms, s)][:3]
    return "\n\n".join([f"# {query}", *matching])


def drift_reduce(request: Request) -> str:
    """DRIFT reduce: the intermediate answers' bullets most relevant to the query."""
    raw = text_between(request.instructions, "---Data Reports---", "---Target response length")
    try:
        answers = [str(a) for a in ast.literal_eval(raw)]
    except (ValueError, SyntaxError):
        answers = [raw]
    text = "\n".join(answers)
    terms = terms_of(request.query)
    lines: dict[str, str] = {}  # sentence -> its bullet with the most citations
    for line in (part.strip() for part in text.splitlines()):
        key = CITATION.sub("", line)
        if line.startswith("- ") and len(line) > len(lines.get(key, "")):
            lines[key] = line
    ranked = sorted(lines.values(), key=lambda line: -overlap(terms, line))
    relevant = [line for line in ranked if overlap(terms, line)] or ranked
    names = find_entities(CITATION.sub("", "\n\n".join(relevant))).names[:3]
    bold = and_join([f"**{n}**" for n in names]) if names else ""
    lead = f"The findings most relevant to the question concern {bold}." if names else ""
    bullets = "\n".join(relevant[: 2 * _MAX_EVIDENCE]) or "I don't know: no findings were found."
    return "\n\n".join(filter(None, [lead, bullets, OFFLINE_NOTE]))


def rate_relevancy(request: Request) -> str:
    """Dynamic community selection: {"reason", "rating"} from word overlap."""
    information = text_between(request.instructions, "---Information---", "---Question---")
    question = text_between(request.instructions, "---Question---", "---Target response")
    terms = terms_of(question)
    matched = overlap(terms, information)
    return json.dumps(
        {
            "reason": f"The information shares {matched} of the question's {len(terms)} key terms.",
            "rating": max(1, min(5, matched)),
        }
    )


def fallback(request: Request) -> str:
    """Unrecognised prompt: the sentences that best match the last message."""
    terms = terms_of(request.query)
    pool = split_sentences(request.instructions)
    best = sorted(pool, key=lambda s: -overlap(terms, s))[:2]
    return join_sentences(best, MAX_DESCRIPTION_WORDS) or "No answer is available offline."
