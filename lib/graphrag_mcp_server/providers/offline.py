"""Offline, deterministic stand-ins for GraphRAG's completion and embedding models.

This is NOT a language model. ``OfflineCompletion`` recognises which GraphRAG
prompt it is answering (graph extraction, description summaries, community
reports, claims, and the local, basic, global and DRIFT search prompts) by
stable marker phrases, and answers in exactly the format GraphRAG parses,
using only extractive heuristics: capitalised names, sentence co-occurrence and
word overlap with the question. ``OfflineEmbedding`` returns hashed
bag-of-words vectors. Nothing leaves the machine, no key is needed, and the
same input always gives the same output.

It exists to try the server without an API key and to test it. Answers are
stitched together from the indexed text; they are not reasoning or prose.

Both models run through graphrag-llm's middleware pipeline, like
``LiteLLMCompletion`` and ``LiteLLMEmbedding``, so GraphRAG's cache, metrics,
retries and rate limiting behave as with a real provider. After
``register_offline_models()``, select them in settings.yaml::

    completion_models:
      default_completion_model:
        type: offline
        model_provider: offline
        model: offline-extractive
    embedding_models:
      default_embedding_model:
        type: offline
        model_provider: offline
        model: offline-hashing
        dimensions: 256       # optional, DEFAULT_OFFLINE_DIMENSIONS
    vector_store:
      vector_size: 256        # must equal dimensions
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import logging
import math
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, pairwise
from types import UnionType
from typing import TYPE_CHECKING, Any, TypeVar, Union, Unpack, get_args, get_origin

import numpy as np
from graphrag.index.operations.extract_graph.graph_extractor import (
    COMPLETION_DELIMITER,
    RECORD_DELIMITER,
    TUPLE_DELIMITER,
)
from graphrag_llm import types as llm_types
from graphrag_llm.completion import LLMCompletion, register_completion
from graphrag_llm.embedding import LLMEmbedding, register_embedding
from graphrag_llm.middleware import with_middleware_pipeline
from graphrag_llm.utils import create_completion_response, structure_completion_response
from pydantic import BaseModel, ValidationError

from graphrag_mcp_server.config.providers import OFFLINE_DIMENSIONS as DEFAULT_OFFLINE_DIMENSIONS
from graphrag_mcp_server.config.providers import OFFLINE_TYPE

if TYPE_CHECKING:
    from graphrag_cache import Cache, CacheKeyCreator
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.metrics import MetricsProcessor, MetricsStore
    from graphrag_llm.rate_limit import RateLimiter
    from graphrag_llm.retry import Retry
    from graphrag_llm.tokenizer import Tokenizer

logger = logging.getLogger(__name__)
T = TypeVar("T")

OFFLINE_NOTE = (
    "_Offline extractive answer: assembled from the retrieved records without a language model._"
)

_DEFAULT_ENTITY_TYPES = ("organization", "person", "geo", "event")
_MAX_DESCRIPTION_WORDS = 80
_MAX_EVIDENCE = 5
_MAX_FOLLOW_UPS = 5

_STOPWORDS = frozenset(
    """
    a about above after again against all also although am among an and any
    are as at be because been before being below between both but by can could
    did do does doing down during each either else even ever every few for from
    further had has have having he her here hers him his how however i if in
    into is it its itself just least less many may me meanwhile might more most
    much must my neither no nor not now of off on once one only or other our
    ours out over own per please rather same she should since so some such than
    that the their theirs them then there these they this those though through
    thus to too under until up upon us very was we were what whatever when where
    whether which while who whom whose why will with within without would yet
    you your yours yesterday today tomorrow last next according despite tell
    know known say says said explain describe give list role main
    """.split()
)
_JOINERS = frozenset("of the de du da del della van von der den la le &".split())
_CALENDAR = frozenset(
    """
    january february march april may june july august september october
    november december monday tuesday wednesday thursday friday saturday sunday
    """.split()
)
_TITLES = frozenset(
    """
    dr mr mrs ms miss mx prof professor sir dame lord lady captain capt mayor
    councillor inspector sergeant judge agent agents doctor officer detective
    lieutenant colonel commander chief president senator minister reverend
    """.split()
)
_PLACE_PREPOSITIONS = frozenset({"in", "at", "near"})
_ABBREVIATIONS = frozenset("dr mr mrs ms mx prof st vs etc e.g i.e capt sgt jr sr".split())
_TYPE_CUES = {
    "organization": frozenset(
        """
        cooperative co-operative board works council company co ltd limited inc
        corp corporation institute university college agency committee trust
        engineering foundation association society group bank authority
        ministry department commission union guild partners holdings laboratory
        labs services school hospital party club press gazette network alliance
        federation office bureau fund industries systems technologies inspectorate
        squad team unit division corps force army navy police command agency
        """.split()
    ),
    "geo": frozenset(
        """
        port point estuary bay river street road lane harbour harbor island
        isle lake mount mountain valley sea ocean county city town village quay
        bridge coast sound strait creek marsh hill square avenue province region
        district cape fort peninsula channel rock sands beach head headland shore
        wharf pier dock moor forest
        """.split()
    ),
    "event": frozenset(
        """
        festival storm conference inquiry summit war battle election flood fair
        regatta hearing trial crisis strike ceremony championship games expo
        symposium
        """.split()
    ),
}
_GEO_PREFIXES = frozenset("port point mount lake cape fort isle".split())
_TYPE_SYNONYMS = {
    "organization": ("organization", "organisation", "company", "institution"),
    "geo": ("geo", "location", "place", "country", "city", "region"),
    "event": ("event",),
    "person": ("person", "people", "individual"),
}
_FEATURE_WEIGHTS = {"w": 1.0, "b": 0.6, "c": 0.2}

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\w+(?:['’&-]\w+)*|\S")
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")
_ROW_ID = re.compile(r"^\s*\d+\s*$")
_CITATION = re.compile(r"\s*\[Data:[^\]]*\]")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,60})[\"”]")
_TITLE_LIKE = re.compile(r"[A-Z][\w'’&-]*(?:\s+[\w'’&-]+){0,5}")
_SECTION_HEADER = re.compile(r"^-{3,}\s*([A-Za-z][A-Za-z ]*?)\s*-{3,}\s*$", re.M)
_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"”’)]))\s+(?=[\"“(*_\[]*[A-Z0-9])")


# --------------------------------------------------------------------------
# Text helpers
# --------------------------------------------------------------------------


def _terms(text: str) -> set[str]:
    """Lowercase content words of ``text``, lightly singularised."""
    words = (w.lower() for w in _WORD.findall(text))
    return {
        w[:-1] if len(w) > 4 and w.endswith("s") else w
        for w in words
        if len(w) > 2 and w not in _STOPWORDS
    }


def _overlap(terms: set[str], text: str) -> int:
    """Count how many of ``terms`` occur in ``text``."""
    return len(terms & _terms(text))


def _split_sentences(text: str) -> list[str]:
    """Split prose into sentences; blank lines, headings and list items also break."""
    sentences: list[str] = []
    for paragraph in re.split(r"\n\s*\n|\n(?=#)|\n(?=\s*[-*+] )", text):
        paragraph = re.sub(r"^\s*(?:#+|[-*+])\s+", "", paragraph).replace("**", "")
        merged: list[str] = []
        for piece in _SENTENCE_BREAK.split(" ".join(paragraph.split())):
            if merged and merged[-1].rsplit(" ", 1)[-1].rstrip(".").lower() in _ABBREVIATIONS:
                merged[-1] = f"{merged[-1]} {piece}"
            elif piece:
                merged.append(piece)
        sentences.extend(merged)
    return sentences


def _limit_words(text: str, max_words: int) -> str:
    """Cut ``text`` to at most ``max_words`` words."""
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]) + " …"


def _within_words(items: list[T], text_of: Callable[[T], str], max_words: int) -> list[T]:
    """Leading ``items`` whose texts total at most ``max_words`` (at least one)."""
    kept: list[T] = []
    words = 0
    for item in items:
        words += len(text_of(item).split())
        if kept and words > max_words:
            break
        kept.append(item)
    return kept


def _join_sentences(sentences: Iterable[str], max_words: int) -> str:
    """Join distinct sentences until ``max_words`` would be exceeded."""
    distinct: dict[str, str] = {}
    for sentence in sentences:
        distinct.setdefault(" ".join(sentence.lower().split()), sentence)
    kept = _within_words(list(distinct.values()), str, max_words)
    return _limit_words(" ".join(map(_terminated, kept)), max_words)


def _terminated(sentence: str) -> str:
    """``sentence`` ending in punctuation, so joined headings stay separate."""
    return sentence if sentence[-1:] in '.!?…"”’)' else f"{sentence}."


def _section(text: str, start: str, *ends: str) -> str:
    """Text after the first ``start`` (or all of it), up to the first of ``ends``."""
    _, found, rest = text.partition(start)
    rest = rest if found else text
    cut = min((i for end in ends if (i := rest.find(end)) >= 0), default=len(rest))
    return rest[:cut].strip()


def _number_after(text: str, pattern: str, default: int) -> int:
    """The integer captured by ``pattern`` in ``text``, else ``default``."""
    match = re.search(pattern, text)
    return int(match.group(1)) if match else default


def _display(name: str) -> str:
    """Readable form of an upper-cased GraphRAG title."""
    if not name.isupper():
        return name
    return " ".join(w.lower() if w.lower() in _JOINERS else w.capitalize() for w in name.split())


def _and_join(items: list[str]) -> str:
    """Join ``items`` as 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _citation(refs: dict[str, list[str]]) -> str:
    """GraphRAG's '[Data: Entities (1, 2); Sources (4, +more)]' reference."""
    parts = []
    for label, ids in refs.items():
        shown = list(dict.fromkeys(ids))
        more = ", +more" if len(shown) > 5 else ""
        parts.append(f"{label} ({', '.join(shown[:5])}{more})")
    return f" [Data: {'; '.join(parts)}]" if parts else ""


def _clean_field(text: str) -> str:
    """Make ``text`` safe inside a delimited extraction record."""
    text = text.replace(TUPLE_DELIMITER, " ").replace(RECORD_DELIMITER, "#")
    return " ".join(text.split())


# --------------------------------------------------------------------------
# Named entities
# --------------------------------------------------------------------------


def _strip_possessive(token: str) -> tuple[str, bool]:
    """Remove a trailing 's; report whether there was one."""
    for suffix in ("'s", "’s"):
        if token.endswith(suffix) and len(token) > 2:
            return token[: -len(suffix)], True
    return token, False


def _is_name_word(word: str) -> bool:
    """A capitalised word that can be part of a name."""
    return word[:1].isupper() and word.lower() not in _CALENDAR and word != "I"


def _core_count(words: list[str]) -> int:
    """Number of words in ``words`` that are not joiners."""
    return sum(w.lower() not in _JOINERS for w in words)


def _trim_joiners(words: list[str]) -> list[str]:
    """Drop joiners at either end of a name."""
    while words and words[0].lower() in _JOINERS:
        words = words[1:]
    while words and words[-1].lower() in _JOINERS:
        words = words[:-1]
    return words


def _split_run(words: list[str]) -> list[list[str]]:
    """Split 'Mirela Voss of Harrowgate Board' at joiners after 2+ words."""
    parts: list[list[str]] = [[]]
    for word in words:
        if word.lower() in _JOINERS and _core_count(parts[-1]) >= 2:
            parts.append([])
        else:
            parts[-1].append(word)
    return [_trim_joiners(part) for part in parts]


def _is_sentence_opener(word: str) -> bool:
    """A capitalised sentence-initial word unlikely to start a name ('The', 'Building')."""
    lower = word.lower()
    return lower in _STOPWORDS or lower.endswith(("ing", "ly"))


def _run_names(words: list[str], at_start: bool, previous: str) -> list[tuple[str, bool]]:
    """Names in one run of capitalised words, each with a place hint."""
    while words and at_start and _is_sentence_opener(words[0]):
        words = words[1:]
    while words and words[0].lower() in _TITLES:
        words = words[1:]
    words = _trim_joiners(words)
    if _core_count(words) == 1 and not at_start and previous in _PLACE_PREPOSITIONS:
        return [] if words[0].lower() in _STOPWORDS else [(words[0], True)]
    return [(" ".join(part), False) for part in _split_run(words) if _core_count(part) >= 2]


def _sentence_names(sentence: str) -> list[tuple[str, bool]]:
    """Capitalised multi-word names (and places after in/at/near) in a sentence."""
    tokens = _TOKEN.findall(sentence)
    names: list[tuple[str, bool]] = []
    run: list[str] = []
    start = 0

    def flush() -> None:
        if run:
            at_start = not any(t[0].isalnum() for t in tokens[:start])
            previous = tokens[start - 1].lower() if start else ""
            names.extend(_run_names(run.copy(), at_start, previous))
            run.clear()

    for index, token in enumerate(tokens):
        word, possessive = _strip_possessive(token)
        joins = bool(run) and (
            word.lower() in _JOINERS
            or (_YEAR.match(word) is not None and run[-1].lower() in _JOINERS)
        )
        if _is_name_word(word) or joins:
            if not run:
                start = index
            run.append(word)
            if possessive:
                flush()
        else:
            flush()
    flush()
    return names


def _quoted_names(text: str) -> list[str]:
    """Title-like quoted terms such as "Slack Water Protocol"."""
    names = []
    for term in (m.group(1).strip() for m in _QUOTED.finditer(text)):
        words = term.split()
        if _TITLE_LIKE.fullmatch(term) and all(
            w[0].isupper() or w.lower() in _JOINERS for w in words
        ):
            names.append(term)
    return names


@dataclass
class _Mentions:
    """Named entities of a text and the sentences mentioning each."""

    names: list[str]
    quoted: set[str]
    places: set[str]
    sentences: dict[str, list[str]]


def _find_entities(text: str) -> _Mentions:
    """Find names in ``text`` and the sentences that mention them."""
    sentences = _split_sentences(text)
    found: dict[str, str] = {}
    places: set[str] = set()
    for sentence in sentences:
        for name, is_place in _sentence_names(sentence):
            found.setdefault(name.upper(), name)
            if is_place:
                places.add(found[name.upper()])
    given_names = {name.split()[0].upper() for name in found.values() if " " in name}
    for given in given_names & {place.upper() for place in places}:
        places.discard(found.pop(given))  # 'looked at Alex' names Alex Mercer, not a place
    quoted = {found.setdefault(q.upper(), q) for q in _quoted_names(text)}
    tails = _tail_names(list(found.values()))
    names = [n for n in found.values() if not any(n in t for t in tails.values())]
    forms = _surface_forms(names, tails, quoted | places)
    mentions = {
        name: [s for s in sentences if any(_mentions(s, f) for f in forms[name])] for name in names
    }
    return _Mentions(names, quoted, places, mentions)


def _tail_names(names: list[str]) -> dict[str, list[str]]:
    """Shorter names ending a longer one ('Harbour Board' of 'Port Harbour Board')."""
    return {name: [n for n in names if n != name and name.endswith(f" {n}")] for name in names}


def _surface_forms(
    names: list[str], tails: dict[str, list[str]], non_people: set[str]
) -> dict[str, list[str]]:
    """Each name, the shorter names it ends with, and a person's unambiguous surname."""
    word_counts = Counter(w for n in names for w in set(n.split()))
    forms = {}
    for name in names:
        surname = name.split()[-1]
        person = (
            name not in non_people and _canonical_type(name, quoted=False, place=False) == "person"
        )
        short = [surname] if person and word_counts[surname] == 1 else []
        forms[name] = [name, *tails[name], *short]
    return forms


def _mentions(sentence: str, form: str) -> bool:
    """Whether ``form`` occurs as whole words in ``sentence``."""
    return re.search(rf"(?<!\w){re.escape(form)}(?!\w)", sentence) is not None


def _canonical_type(name: str, *, quoted: bool, place: bool) -> str:
    """Guess organization / geo / event / person from simple cues."""
    words = [w.lower() for w in name.split()]
    cues = _TYPE_CUES
    if any(_YEAR.match(w) for w in words) or words[-1] in cues["event"]:
        return "event"
    if words[-1] in cues["organization"]:
        return "organization"
    if place or words[-1] in cues["geo"] or words[0] in _GEO_PREFIXES:
        return "geo"
    for kind in ("organization", "event", "geo"):
        if any(w in cues[kind] for w in words):
            return kind
    plain = all(w.isalpha() for w in words) and not set(words) & _JOINERS
    if not quoted and 2 <= len(words) <= 3 and plain:
        return "person"
    return "organization"


def _entity_type(canonical: str, entity_types: list[str]) -> str:
    """Map a canonical type onto the configured entity types."""
    for wanted in (canonical, "organization"):
        for entity_type in entity_types:
            if entity_type.lower() in _TYPE_SYNONYMS[wanted]:
                return entity_type
    return entity_types[0]


# --------------------------------------------------------------------------
# Context tables
# --------------------------------------------------------------------------

Row = dict[str, str]


def _parse_tables(text: str) -> dict[str, list[Row]]:
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


def _row_id(row: Row) -> str:
    """The record id GraphRAG cites."""
    for column in ("id", "human_readable_id", "short_id", "community"):
        if row.get(column, "").strip():
            return row[column].strip()
    return "?"


def _number(row: Row, column: str) -> float:
    """Numeric value of ``row[column]``, else 0."""
    try:
        return float(row.get(column, ""))
    except ValueError:
        return 0.0


def _prose(text: str) -> list[str]:
    """Sentences of report-like text without its headings and citations."""
    body = _CITATION.sub("", re.sub(r"^#.*$", "", text, flags=re.M))
    return [s for s in _split_sentences(body) if len(s.split()) > 2]


# --------------------------------------------------------------------------
# Extractive answers over query context tables
# --------------------------------------------------------------------------

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
            bonus = 0.5 * _overlap(terms, name)
            for column in text_columns:
                for sentence in _prose(row.get(column, "")):
                    key = " ".join(sentence.lower().split())
                    item = evidence.setdefault(key, _Evidence(sentence, 0.0, {}))
                    item.score = max(item.score, _overlap(terms, sentence) + bonus)
                    item.refs.setdefault(label, []).append(_row_id(row))
    return sorted(evidence.values(), key=lambda e: -e.score)


def _ranked_entities(tables: dict[str, list[Row]], terms: set[str]) -> list[Row]:
    """Entity rows ordered by query overlap (name counts double), then rank."""
    rows = tables.get("entities", [])
    return sorted(
        rows,
        key=lambda r: (
            -(2 * _overlap(terms, r.get("entity", "")) + _overlap(terms, r.get("description", "")))
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
    bold = _and_join([f"**{_display(n)}**" for n in names])
    if matched:
        return f"The records most relevant to the question concern {bold}.{_citation(refs)}"
    return (
        "No record matches the question's wording directly; the closest "
        f"retrieved records concern {bold}.{_citation(refs)}"
    )


def _compose_answer(tables: dict[str, list[Row]], query: str) -> tuple[str, int]:
    """Markdown answer from the context tables, and % of query terms covered."""
    terms = _terms(query)
    evidence = _collect_evidence(tables, terms)
    evidence = ([e for e in evidence if e.score > 0] or evidence)[:_MAX_EVIDENCE]
    if not evidence:
        return "I don't know: the data tables contain no records for this question.", 0
    entities = _ranked_entities(tables, terms)[:3]
    if entities:
        names = [r.get("entity", "") for r in entities]
        refs = {"Entities": [_row_id(r) for r in entities]}
    else:
        names = _find_entities(" ".join(e.sentence for e in evidence)).names[:3]
        refs = _merge_refs(e.refs for e in evidence)
    bullets = [f"- {e.sentence}{_citation(e.refs)}" for e in evidence]
    lead = _lead(names, refs, evidence[0].score > 0) if names else ""
    covered = terms & _terms(" ".join(e.sentence for e in evidence))
    coverage = round(100 * len(covered) / len(terms)) if terms else 0
    return "\n\n".join(filter(None, [lead, "\n".join(bullets)])), coverage


def _follow_ups(names: list[str], *asked: str) -> list[str]:
    """'What is the role of X?' for names not already asked about."""
    asked_text = " ".join(asked).lower()
    fresh = [n for n in names if _display(n).lower() not in asked_text]
    return [f"What is the role of {_display(n)}?" for n in fresh[:_MAX_FOLLOW_UPS]]


# --------------------------------------------------------------------------
# Prompt handlers
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    """The parts of a chat request the handlers read."""

    instructions: str
    """System prompt, or the last user message when there is none."""
    query: str
    """The last user message."""


def _extract_graph(request: _Request) -> str:
    """Entity and relationship records for GraphExtractor."""
    real = _section(request.instructions, "-Real Data-")
    types_line = _section(real, "Entity_types:", "\n")
    entity_types = [t.strip() for t in types_line.split(",") if t.strip()]
    text = _section(real, "Text:", "######################\nOutput:", "\nOutput:")
    found = _find_entities(text)
    records = [
        _entity_record(name, found, entity_types or list(_DEFAULT_ENTITY_TYPES))
        for name in found.names
    ]
    records += _relationship_records(found)
    return "\n##\n".join([*records, COMPLETION_DELIMITER])


def _entity_record(name: str, found: _Mentions, entity_types: list[str]) -> str:
    """One '("entity"<|>NAME<|>TYPE<|>description)' record."""
    canonical = _canonical_type(name, quoted=name in found.quoted, place=name in found.places)
    description = _join_sentences(found.sentences[name], _MAX_DESCRIPTION_WORDS)
    fields = [
        '"entity"',
        name.upper(),
        _entity_type(canonical, entity_types).upper(),
        _clean_field(description or f"{name} is mentioned in the text."),
    ]
    return f"({TUPLE_DELIMITER.join(fields)})"


def _relationship_records(found: _Mentions) -> list[str]:
    """Records for entities sharing a sentence, strength from co-occurrences."""
    shared: dict[tuple[str, str], list[str]] = {}
    for sentence in dict.fromkeys(s for v in found.sentences.values() for s in v):
        present = [n for n in found.names if sentence in found.sentences[n]]
        for pair in combinations(present, 2):
            shared.setdefault(pair, []).append(sentence)
    records = []
    for (source, target), sentences in shared.items():
        strength = min(10, 3 + 2 * len(sentences))
        description = _clean_field(_join_sentences(sentences, _MAX_DESCRIPTION_WORDS))
        fields = ['"relationship"', source.upper(), target.upper(), description, str(strength)]
        records.append(f"({TUPLE_DELIMITER.join(fields)})")
    return records


def _extract_claims(request: _Request) -> str:
    """One claim per sentence naming an entity, in ClaimExtractor's format."""
    real = _section(request.instructions, "-Real Data-")
    text = _section(real, "Text:", "\nOutput:")
    found = _find_entities(text)
    claims = []
    for sentence in _split_sentences(text):
        names = [n.upper() for n in found.names if sentence in found.sentences[n]]
        if names:
            subject, target = names[0], (names[1] if len(names) > 1 else "NONE")
            clean = _clean_field(sentence)
            fields = [subject, target, "STATEMENT", "SUSPECTED", "NONE", "NONE", clean, clean]
            claims.append(f"({TUPLE_DELIMITER.join(fields)})")
    return "\n##\n".join(claims) + f"\n{COMPLETION_DELIMITER}"


def _summarize(request: _Request) -> str:
    """Distinct sentences of the description list, within the word limit."""
    max_words = _number_after(request.instructions, r"length to (\d+) words", 500)
    raw = _section(request.instructions, "Description List:", "\n#######")
    try:
        descriptions = [str(d) for d in json.loads(raw)]
    except json.JSONDecodeError:
        descriptions = [raw]
    sentences = [s for d in descriptions for s in _split_sentences(d)]
    return _join_sentences(sentences, max_words)


def _community_report(request: _Request) -> str:
    """CommunityReportResponse JSON built from the community's tables."""
    real = _section(request.instructions, "# Real Data")
    data = _section(real, "Text:", "\nThe report should include", "\nOutput:")
    tables = _parse_tables(data)
    entities = sorted(tables.get("entities", []), key=lambda r: -_number(r, "degree"))
    relationships = sorted(
        tables.get("relationships", []), key=lambda r: -_number(r, "combined_degree")
    )
    reports = tables.get("reports", [])
    names = (
        [_display(r.get("title", "")) for r in entities[:3]]
        or [_report_title(r) for r in reports[:3]]
        or _find_entities(data).names[:3]
        or ["Unnamed community"]
    )
    findings = (
        [_entity_finding(row, relationships) for row in entities[:5]]
        + [_relationship_finding(row) for row in relationships[:3]]
        + [_report_finding(row) for row in reports[:3]]
    )
    max_words = _number_after(request.instructions, r"report length to (\d+) words", 1500)
    return json.dumps(
        {
            "title": _and_join(names[:2]),
            "summary": _report_summary(names, entities, relationships),
            "rating": round(min(10.0, 1.0 + 0.5 * len(relationships) + 0.25 * len(entities)), 1),
            "rating_explanation": (
                "Offline heuristic: the rating grows with the community's size "
                f"({len(entities)} entities, {len(relationships)} relationships)."
            ),
            "findings": _within_words(findings, lambda f: " ".join(f.values()), max_words),
        }
    )


def _report_summary(names: list[str], entities: list[Row], relationships: list[Row]) -> str:
    """Executive summary: key members, size and the top entity's first sentence."""
    summary = (
        f"The community revolves around {_and_join(names)}, linking {len(entities)} "
        f"entities through {len(relationships)} relationships."
    )
    first = _prose(entities[0].get("description", "")) if entities else []
    if first:
        summary += f" {first[0]}{_citation({'Entities': [_row_id(entities[0])]})}"
    return summary


def _entity_finding(row: Row, relationships: list[Row]) -> dict[str, str]:
    """A finding about one entity, citing it and its relationships."""
    title = row.get("title", "")
    related = [_row_id(r) for r in relationships if title in (r.get("source"), r.get("target"))]
    refs = {"Entities": [_row_id(row)], "Relationships": related}
    description = _join_sentences(_prose(row.get("description", "")), _MAX_DESCRIPTION_WORDS)
    return {
        "summary": f"The role of {_display(title)}",
        "explanation": f"{description}{_citation({k: v for k, v in refs.items() if v})}",
    }


def _relationship_finding(row: Row) -> dict[str, str]:
    """A finding about one relationship."""
    source, target = _display(row.get("source", "")), _display(row.get("target", ""))
    description = _join_sentences(_prose(row.get("description", "")), _MAX_DESCRIPTION_WORDS)
    return {
        "summary": f"{source} and {target}",
        "explanation": f"{description}{_citation({'Relationships': [_row_id(row)]})}",
    }


def _report_title(row: Row) -> str:
    """Title of a sub-community report ('# Title' line of its content)."""
    content = row.get("full_content", "")
    return content.strip().split("\n", 1)[0].lstrip("# ").strip() or "Sub-community"


def _report_finding(row: Row) -> dict[str, str]:
    """A finding summarising a sub-community report."""
    sentences = _prose(row.get("full_content", "").strip().partition("\n")[2])
    return {
        "summary": _report_title(row),
        "explanation": _join_sentences(sentences, _MAX_DESCRIPTION_WORDS)
        + _citation({"Reports": [_row_id(row)]}),
    }


def _table_answer(request: _Request) -> str:
    """Local and basic search: extractive markdown answer with citations."""
    tables = _parse_tables(_section(request.instructions, "---Data tables---", "---Goal---"))
    answer, _ = _compose_answer(tables, request.query)
    return f"{answer}\n\n{OFFLINE_NOTE}"


def _drift_local(request: _Request) -> str:
    """DRIFT local step: JSON with response, score and follow-up queries."""
    instructions = request.instructions
    tables = _parse_tables(_section(instructions, "---Data tables---", "---Goal---"))
    global_query = _section(instructions, "overall research question:", ". Based on your")
    wanted = _number_after(instructions, r"suggest up to (\d+) follow-up", _MAX_FOLLOW_UPS)
    answer, coverage = _compose_answer(tables, f"{request.query} {global_query}")
    names = [r.get("entity", "") for r in _ranked_entities(tables, _terms(request.query))]
    follow_ups = _follow_ups(names, request.query, global_query)[:wanted]
    return json.dumps({"response": answer, "score": coverage, "follow_up_queries": follow_ups})


def _global_map(request: _Request) -> str:
    """Global map step: {"points": [...]} from reports overlapping the query."""
    tables = _parse_tables(_section(request.instructions, "---Data tables---", "---Goal---"))
    reports = tables.get("reports", [])
    terms = _terms(request.query)
    max_words = _number_after(request.instructions, r"response length to (\d+) words", 1000)
    scored = [(_overlap(terms, f"{r.get('title', '')} {_report_text(r)}"), r) for r in reports]
    relevant = [(s, r) for s, r in scored if s > 0]
    if not relevant:  # broad question: offer the highest-ranked reports
        by_rank = sorted(reports, key=lambda r: -_number(r, "rank"))
        relevant = [(0, r) for r in by_rank[:3]]
    points = [_map_point(row, terms, score) for score, row in relevant]
    points.sort(key=lambda p: -p["score"])
    return json.dumps({"points": _within_words(points, lambda p: p["description"], max_words)})


def _report_text(row: Row) -> str:
    """A report row's text: full content, or its summary."""
    return row.get("content") or row.get("full_content") or row.get("summary", "")


def _map_point(row: Row, terms: set[str], matched: int) -> dict[str, Any]:
    """One key point: report title and its most relevant sentences."""
    sentences = sorted(_prose(_report_text(row)), key=lambda s: -_overlap(terms, s))
    body = _join_sentences(sentences[:2], _MAX_DESCRIPTION_WORDS)
    score = min(100, 10 + round(90 * matched / len(terms))) if matched and terms else 5
    citation = _citation({"Reports": [_row_id(row)]})
    return {"description": f"{row.get('title', 'Report')}: {body}{citation}", "score": score}


def _global_reduce(request: _Request) -> str:
    """Global reduce step: merge the ranked key points into one answer."""
    section = _section(request.instructions, "---Analyst Reports---", "---Goal---")
    max_words = _number_after(request.instructions, r"response length to (\d+) words", 2000)
    blocks = re.split(r"^----Analyst \d+----$", section, flags=re.M)
    points = [re.sub(r"^\s*Importance Score:.*", "", b).strip() for b in blocks]
    points = [p for p in points if p]
    if not points:
        return "I don't know: no relevant information was found in the dataset."
    titles = list(dict.fromkeys(f"**{p.split(':', 1)[0]}**" for p in points if ":" in p))
    lead = (
        f"The most relevant findings come from the community reports {_and_join(titles[:3])}."
        if titles
        else ""
    )
    bullets = "\n".join(_within_words([f"- {p}" for p in dict.fromkeys(points)], str, max_words))
    return "\n\n".join(filter(None, [lead, bullets, OFFLINE_NOTE]))


def _drift_primer(request: _Request) -> str:
    """DRIFT primer: intermediate answer, score and follow-up queries as JSON."""
    query = _section(request.instructions, "For the query:", "The top-ranked community summaries:")
    reports = _section(
        request.instructions,
        "The top-ranked community summaries:",
        "Provide the intermediate answer",
    )
    terms = _terms(query)
    sentences = sorted(_prose(reports), key=lambda s: -_overlap(terms, s))[:_MAX_EVIDENCE]
    bullets = "\n".join(f"- {s}" for s in sentences) or "No community summary was provided."
    names = sorted(_find_entities(reports).names, key=lambda n: -_overlap(terms, n))
    follow_ups = _follow_ups(names, query) or [f"What do the sources say about {query}?"]
    return json.dumps(
        {
            "intermediate_answer": f"# Community summaries related to: {query}\n\n{bullets}",
            "score": round(100 * len(terms & _terms(reports)) / len(terms)) if terms else 0,
            "follow_up_queries": follow_ups,
        }
    )


def _hypothetical_answer(request: _Request) -> str:
    """DRIFT query expansion: the query plus matching template sentences."""
    query = _section(request.instructions, "following query:", "\nFormat it")
    template = _section(request.instructions, "structure of the template below:", "Ensure that")
    terms = _terms(query)
    matching = [s for s in _prose(template) if _overlap(terms, s)][:3]
    return "\n\n".join([f"# {query}", *matching])


def _drift_reduce(request: _Request) -> str:
    """DRIFT reduce: the intermediate answers' bullets most relevant to the query."""
    raw = _section(request.instructions, "---Data Reports---", "---Target response length")
    try:
        answers = [str(a) for a in ast.literal_eval(raw)]
    except (ValueError, SyntaxError):
        answers = [raw]
    text = "\n".join(answers)
    terms = _terms(request.query)
    lines: dict[str, str] = {}  # sentence -> its bullet with the most citations
    for line in (part.strip() for part in text.splitlines()):
        key = _CITATION.sub("", line)
        if line.startswith("- ") and len(line) > len(lines.get(key, "")):
            lines[key] = line
    ranked = sorted(lines.values(), key=lambda line: -_overlap(terms, line))
    relevant = [line for line in ranked if _overlap(terms, line)] or ranked
    names = _find_entities(_CITATION.sub("", "\n\n".join(relevant))).names[:3]
    bold = _and_join([f"**{n}**" for n in names]) if names else ""
    lead = f"The findings most relevant to the question concern {bold}." if names else ""
    bullets = "\n".join(relevant[: 2 * _MAX_EVIDENCE]) or "I don't know: no findings were found."
    return "\n\n".join(filter(None, [lead, bullets, OFFLINE_NOTE]))


def _rate_relevancy(request: _Request) -> str:
    """Dynamic community selection: {"reason", "rating"} from word overlap."""
    information = _section(request.instructions, "---Information---", "---Question---")
    question = _section(request.instructions, "---Question---", "---Target response")
    terms = _terms(question)
    matched = _overlap(terms, information)
    return json.dumps(
        {
            "reason": f"The information shares {matched} of the question's {len(terms)} key terms.",
            "rating": max(1, min(5, matched)),
        }
    )


def _fallback(request: _Request) -> str:
    """Unrecognised prompt: the sentences that best match the last message."""
    terms = _terms(request.query)
    pool = _split_sentences(request.instructions)
    best = sorted(pool, key=lambda s: -_overlap(terms, s))[:2]
    return _join_sentences(best, _MAX_DESCRIPTION_WORDS) or "No answer is available offline."


_HANDLERS: tuple[tuple[tuple[str, ...], Callable[[_Request], str]], ...] = (
    (("Answer Y if there are still",), lambda _: "N"),
    (("were missed in the last extraction",), lambda _: COMPLETION_DELIMITER),
    (("Create a hypothetical answer to the following query:",), _hypothetical_answer),
    (("Entity_types:", "-Real Data-"), _extract_graph),
    (("Entity specification:", "Claim description:"), _extract_claims),
    (("Description List:",), _summarize),
    (('"rating_explanation"',), _community_report),
    (("intermediate_answer", "follow_up_queries"), _drift_primer),
    (("follow_up_queries", "---Data tables---"), _drift_local),
    (('"points"', "---Data tables---"), _global_map),
    (("---Analyst Reports---",), _global_reduce),
    (("---Data Reports---",), _drift_reduce),
    (("---Information---", "---Question---"), _rate_relevancy),
    (("---Data tables---",), _table_answer),
)


def message_text(content: Any) -> str:
    """Text of a message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _to_request(messages: Iterable[Any]) -> _Request:
    """Reduce chat messages to instructions and the last user message."""
    items = [m if isinstance(m, dict) else m.model_dump() for m in messages]
    system = "\n".join(message_text(m.get("content")) for m in items if m.get("role") == "system")
    users = [message_text(m.get("content")) for m in items if m.get("role") == "user"]
    query = users[-1] if users else ""
    return _Request(instructions=system or query, query=query)


def _placeholder(annotation: Any, text: str) -> Any:
    """A value of ``annotation``'s type for an unrecognised structured request."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return _placeholder(get_args(annotation)[0], text)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {n: _placeholder(f.annotation, text) for n, f in annotation.model_fields.items()}
    if origin is list or annotation is list:
        return []
    if origin is dict or annotation is dict:
        return {}
    return {str: text, int: 0, float: 0.0, bool: False}.get(annotation, text)


def _answer(messages: Iterable[Any], response_format: type[BaseModel] | None) -> str:
    """Recognise the GraphRAG prompt in ``messages`` and answer it."""
    request = _to_request(messages)
    handler = next(
        (h for markers, h in _HANDLERS if all(m in request.instructions for m in markers)),
        _fallback,
    )
    try:
        text = handler(request)
    except Exception:  # an offline answer must never fail a pipeline
        logger.exception("Offline model could not answer with %s", handler.__name__)
        text = _fallback(request)
    if response_format is None:
        return text
    try:
        response_format.model_validate_json(text)
    except ValidationError:
        return json.dumps(_placeholder(response_format, text))
    return text


# --------------------------------------------------------------------------
# Completion model
# --------------------------------------------------------------------------


def completion_response(
    text: str, model: str, usage: llm_types.LLMCompletionUsage
) -> llm_types.LLMCompletionResponse:
    """A chat completion carrying ``text`` and its token usage."""
    response = create_completion_response(text)
    response.model = model
    response.usage = usage
    return response


def stream_chunks(
    text: str, model: str, usage: llm_types.LLMCompletionUsage | None
) -> list[llm_types.LLMCompletionChunk]:
    """``text`` as word-sized stream chunks, ending with a 'stop' chunk."""

    def chunk(delta: llm_types.LLMChoiceDelta, finish: str | None) -> llm_types.LLMCompletionChunk:
        choice = llm_types.LLMChoiceChunk(index=0, delta=delta, finish_reason=finish)
        return llm_types.LLMCompletionChunk(
            id="offline-chunk",
            object="chat.completion.chunk",
            created=0,
            model=model,
            choices=[choice],
        )

    pieces = [
        chunk(llm_types.LLMChoiceDelta(role="assistant", content=piece), None)
        for piece in re.findall(r"\s*\S+\s*", text)
    ]
    last = chunk(llm_types.LLMChoiceDelta(), "stop")
    last.usage = usage
    return [*pieces, last]


async def async_items(
    items: list[llm_types.LLMCompletionChunk],
) -> AsyncIterator[llm_types.LLMCompletionChunk]:
    """Yield ``items`` asynchronously."""
    for item in items:
        yield item


def _base_completions(
    model: str, tokenizer: Tokenizer
) -> tuple[llm_types.LLMCompletionFunction, llm_types.AsyncLLMCompletionFunction]:
    """Base sync/async completion functions, to be wrapped by the middleware."""

    def _complete(
        **kwargs: Any,
    ) -> llm_types.LLMCompletionResponse | Iterator[llm_types.LLMCompletionChunk]:
        messages = kwargs["messages"]
        text = _answer(messages, kwargs.get("response_format"))
        prompt_tokens = tokenizer.num_prompt_tokens(messages)
        completion_tokens = tokenizer.num_tokens(text)
        usage = llm_types.LLMCompletionUsage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        if not kwargs.get("stream"):
            return completion_response(text, model, usage)
        include_usage = (kwargs.get("stream_options") or {}).get("include_usage", False)
        return iter(stream_chunks(text, model, usage if include_usage else None))

    async def _complete_async(
        **kwargs: Any,
    ) -> llm_types.LLMCompletionResponse | AsyncIterator[llm_types.LLMCompletionChunk]:
        result = _complete(**kwargs)
        return (
            result if isinstance(result, llm_types.LLMCompletionResponse) else async_items(list(result))
        )

    return _complete, _complete_async  # type: ignore[return-value]


class OfflineCompletion(LLMCompletion):
    """Deterministic extractive answers to GraphRAG's prompts; not a language model."""

    def __init__(
        self,
        *,
        model_id: str,
        model_config: ModelConfig,
        tokenizer: Tokenizer,
        metrics_store: MetricsStore,
        metrics_processor: MetricsProcessor | None = None,
        rate_limiter: RateLimiter | None = None,
        retrier: Retry | None = None,
        cache: Cache | None = None,
        cache_key_creator: CacheKeyCreator,
        **kwargs: Any,
    ) -> None:
        """Build the base functions and wrap them in graphrag-llm's middleware."""
        self._model_id = model_id
        self._tokenizer = tokenizer
        self._metrics_store = metrics_store
        self._track_metrics = metrics_processor is not None
        complete, complete_async = self._base_functions(model_config.model, tokenizer)
        self._completion, self._completion_async = with_middleware_pipeline(
            model_config=model_config,
            model_fn=complete,
            async_model_fn=complete_async,
            metrics_processor=metrics_processor,
            cache=cache,
            cache_key_creator=cache_key_creator,
            request_type="chat",
            tokenizer=tokenizer,
            rate_limiter=rate_limiter,
            retrier=retrier,
        )

    def _base_functions(
        self, model: str, tokenizer: Tokenizer
    ) -> tuple[llm_types.LLMCompletionFunction, llm_types.AsyncLLMCompletionFunction]:
        """The sync and async functions that answer a request, before the middleware."""
        return _base_completions(model, tokenizer)

    def completion(
        self, /, **kwargs: Unpack[llm_types.LLMCompletionArgs[llm_types.ResponseFormat]]
    ) -> llm_types.LLMCompletionResponse | Iterator[llm_types.LLMCompletionChunk]:
        """Sync completion."""
        request, response_format, metrics = self._prepare(dict(kwargs))
        try:
            return _structure(self._completion(**request), response_format)
        finally:
            self._record(metrics)

    async def completion_async(
        self, /, **kwargs: Unpack[llm_types.LLMCompletionArgs[llm_types.ResponseFormat]]
    ) -> llm_types.LLMCompletionResponse | AsyncIterator[llm_types.LLMCompletionChunk]:
        """Async completion."""
        request, response_format, metrics = self._prepare(dict(kwargs))
        try:
            return _structure(await self._completion_async(**request), response_format)
        finally:
            self._record(metrics)

    def _prepare(
        self, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], type[BaseModel] | None, llm_types.Metrics | None]:
        """Normalise a request as LiteLLMCompletion does.

        The model id joins the request so GraphRAG's cache keys, built from the
        request arguments alone, never mix offline answers with a real model's.
        """
        messages = kwargs.pop("messages")
        response_format = kwargs.pop("response_format", None)
        if response_format is not None and kwargs.get("stream"):
            msg = "response_format is not supported for streaming completions."
            raise ValueError(msg)
        metrics = kwargs.pop("metrics", None) or {}
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        request = {
            **kwargs,
            "messages": messages,
            "response_format": response_format,
            "metrics": metrics if self._track_metrics else None,
            "model": self._model_id,
        }
        return request, response_format, request["metrics"]

    def _record(self, metrics: llm_types.Metrics | None) -> None:
        """Store one request's metrics."""
        if metrics is not None:
            self._metrics_store.update_metrics(metrics=metrics)

    @property
    def metrics_store(self) -> MetricsStore:
        """The metrics store."""
        return self._metrics_store

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer."""
        return self._tokenizer


def _structure(
    response: llm_types.LLMCompletionResponse | Any, response_format: type[BaseModel] | None
) -> Any:
    """Attach the parsed structured output, as LiteLLMCompletion does."""
    if response_format is not None:
        response.formatted_response = structure_completion_response(
            response.content, response_format
        )
    return response


# --------------------------------------------------------------------------
# Embedding model
# --------------------------------------------------------------------------


def _char_ngrams(word: str) -> Iterator[str]:
    """Character 3- and 4-grams of ``word`` padded with '<' and '>'."""
    padded = f"<{word}>"
    for size in (3, 4):
        for start in range(len(padded) - size + 1):
            yield padded[start : start + size]


def _features(text: str) -> dict[str, float]:
    """Weighted hashing features: unigrams, bigrams, character n-grams."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]
    counts = Counter(f"w:{w}" for w in words)
    counts.update(f"b:{a} {b}" for a, b in pairwise(words))
    counts.update(f"c:{g}" for w in words for g in _char_ngrams(w))
    return {f: _FEATURE_WEIGHTS[f[0]] * (1.0 + math.log(c)) for f, c in counts.items()}


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """Stable index and sign of ``feature`` (blake2b, not Python's hash)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value % dimensions, 1.0 if value >> 63 else -1.0


def _hashed_vector(text: str, dimensions: int = DEFAULT_OFFLINE_DIMENSIONS) -> list[float]:
    """L2-normalised hashed bag-of-words vector; texts sharing words land close."""
    vector = np.zeros(dimensions)
    for feature, weight in _features(text).items():
        index, sign = _bucket(feature, dimensions)
        vector[index] += sign * weight
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:  # no content words: a fixed unit vector keeps cosine defined
        vector[0], norm = 1.0, 1.0
    return (vector / norm).tolist()


def _base_embeddings(
    model: str, tokenizer: Tokenizer, dimensions: int
) -> tuple[llm_types.LLMEmbeddingFunction, llm_types.AsyncLLMEmbeddingFunction]:
    """Base sync/async embedding functions, to be wrapped by the middleware."""

    def _embed(**kwargs: Any) -> llm_types.LLMEmbeddingResponse:
        texts = kwargs["input"]
        texts = [texts] if isinstance(texts, str) else list(texts)
        size = kwargs.get("dimensions") or dimensions
        tokens = sum(tokenizer.num_tokens(t) for t in texts)
        return llm_types.LLMEmbeddingResponse(
            object="list",
            model=model,
            data=[
                llm_types.LLMEmbedding(
                    object="embedding", embedding=_hashed_vector(t, size), index=i
                )
                for i, t in enumerate(texts)
            ],
            usage=llm_types.LLMEmbeddingUsage(prompt_tokens=tokens, total_tokens=tokens),
        )

    async def _embed_async(**kwargs: Any) -> llm_types.LLMEmbeddingResponse:
        return _embed(**kwargs)

    return _embed, _embed_async  # type: ignore[return-value]


class OfflineEmbedding(LLMEmbedding):
    """Deterministic hashed bag-of-words embeddings; no model, no network."""

    def __init__(
        self,
        *,
        model_id: str,
        model_config: ModelConfig,
        tokenizer: Tokenizer,
        metrics_store: MetricsStore,
        metrics_processor: MetricsProcessor | None = None,
        rate_limiter: RateLimiter | None = None,
        retrier: Retry | None = None,
        cache: Cache | None = None,
        cache_key_creator: CacheKeyCreator,
        dimensions: int = DEFAULT_OFFLINE_DIMENSIONS,
        **kwargs: Any,
    ) -> None:
        """Build the base functions and wrap them in graphrag-llm's middleware.

        ``dimensions`` comes from the model's settings.yaml entry.
        """
        self._model_id = model_id
        self._tokenizer = tokenizer
        self._metrics_store = metrics_store
        self._track_metrics = metrics_processor is not None
        embed, embed_async = _base_embeddings(model_config.model, tokenizer, int(dimensions))
        self._embedding, self._embedding_async = with_middleware_pipeline(
            model_config=model_config,
            model_fn=embed,
            async_model_fn=embed_async,
            metrics_processor=metrics_processor,
            cache=cache,
            cache_key_creator=cache_key_creator,
            request_type="embedding",
            tokenizer=tokenizer,
            rate_limiter=rate_limiter,
            retrier=retrier,
        )

    def embedding(
        self, /, **kwargs: Unpack[llm_types.LLMEmbeddingArgs]
    ) -> llm_types.LLMEmbeddingResponse:
        """Sync embedding."""
        request, metrics = self._prepare(dict(kwargs))
        try:
            return self._embedding(**request)
        finally:
            self._record(metrics)

    async def embedding_async(
        self, /, **kwargs: Unpack[llm_types.LLMEmbeddingArgs]
    ) -> llm_types.LLMEmbeddingResponse:
        """Async embedding."""
        request, metrics = self._prepare(dict(kwargs))
        try:
            return await self._embedding_async(**request)
        finally:
            self._record(metrics)

    def _prepare(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], llm_types.Metrics | None]:
        """Add metrics and the model id (kept apart from other models' cache keys)."""
        metrics = kwargs.pop("metrics", None) or {}
        metrics = metrics if self._track_metrics else None
        return {**kwargs, "metrics": metrics, "model": self._model_id}, metrics

    def _record(self, metrics: llm_types.Metrics | None) -> None:
        """Store one request's metrics."""
        if metrics:
            self._metrics_store.update_metrics(metrics=metrics)

    @property
    def metrics_store(self) -> MetricsStore:
        """The metrics store."""
        return self._metrics_store

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer."""
        return self._tokenizer


def register_offline_models() -> None:
    """Register both offline models under ``type: offline``; safe to repeat."""
    register_completion(OFFLINE_TYPE, OfflineCompletion, scope="singleton")
    register_embedding(OFFLINE_TYPE, OfflineEmbedding, scope="singleton")
