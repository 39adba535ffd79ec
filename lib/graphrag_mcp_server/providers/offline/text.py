"""Text utilities shared by the offline answers: terms, sentences, word limits, citations."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from graphrag.index.operations.extract_graph.graph_extractor import (
    RECORD_DELIMITER,
    TUPLE_DELIMITER,
)

from graphrag_mcp_server.providers.offline.labels import FIELD_LABEL
from graphrag_mcp_server.providers.offline.legal_forms import (
    is_legal_form,
)
from graphrag_mcp_server.providers.offline.lexicon import (
    TITLE_ABBREVIATIONS,
    is_first_name,
)

T = TypeVar("T")

MAX_DESCRIPTION_WORDS = 80
ENTITY_DESCRIPTION_WORDS = 20
"""An entity's or relationship's description from one text unit: its first sentences there, short,
so that the local and drift contexts' entity share leaves room for relationships at the default
budget (issue 42: at 30 words drift held the linking relationship for 45% of new_styles' pairs, at
20 for 75%)."""
SUMMARY_WORDS = 40
"""The most words of a summarised description (an entity's or relationship's, merged from its text
units), whatever longer limit graphrag's prompt asks for."""

# fmt: off
# Word lists packed several to a line (the formatter would put one word on each line).
STOPWORDS = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "also", "although", "am",
        "among", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being",
        "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing",
        "down", "during", "each", "either", "else", "even", "ever", "every", "few", "for", "from",
        "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
        "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "least", "less",
        "many", "may", "me", "meanwhile", "might", "more", "most", "much", "must", "my", "neither",
        "no", "nor", "not", "now", "of", "off", "on", "once", "one", "only", "or", "other", "our",
        "ours", "out", "over", "own", "per", "please", "rather", "same", "she", "should", "since",
        "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there",
        "these", "they", "this", "those", "though", "through", "thus", "to", "too", "under",
        "until", "up", "upon", "us", "very", "was", "we", "were", "what", "whatever", "when",
        "where", "whether", "which", "while", "who", "whom", "whose", "why", "will", "with",
        "within", "without", "would", "yet", "you", "your", "yours", "yesterday", "today",
        "tomorrow", "last", "next", "according", "despite", "tell", "know", "known", "say", "says",
        "said", "explain", "describe", "give", "list", "role", "main",
    ]
)
NAME_PARTICLES = frozenset(
    [
        "de", "du", "da", "del", "della", "van", "von", "der", "den", "la", "le",
        # particles and prepositions of names in other languages ('Filarmonica di Roma',
        # 'Casa dos Reis', 'Huis ter Heide', 'Gustaf af Klint')
        "di", "dei", "degli", "delle", "do", "dos", "das", "zu", "zum", "zur", "ter", "ten",
        "af", "av", "des",
    ]
)
"""Particles of names in other languages: written with a capital, they can start a name ('La
Paz', 'De Wit Brouwer Advocaten', 'Van Dijk')."""
JOINERS = NAME_PARTICLES | frozenset(
    [
        "of", "the", "&", "für",  # 'Institut für Physik'
        # 'and' inside a body's name ('Fondazione Ricerca Api e Ambiente', 'Ciencia y Arte')
        "e", "y", "et", "und", "och", "og", "i",  # 'i': Polish, Czech, Croatian
    ]
)
"""Small words inside a name: they join the capitalised words around them."""
_ABBREVIATIONS = TITLE_ABBREVIATIONS | frozenset(["st", "vs", "etc", "e.g", "i.e", "jr", "sr"])
# fmt: on

WORD = re.compile(r"\w+")


CITATION = re.compile(r"\s*\[Data:[^\]]*\]")
_MARK = re.compile(r"^\s*(?:#+|[-*+])\s+")
_HEADING_LINE = re.compile(r"^#.*$", re.M)
_SENTENCE_BREAK = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"”’)]))\s+(?=[\"“(*_\[]*[A-Z0-9])")


def terms_of(text: str) -> set[str]:
    """Lowercase content words of ``text``, lightly singularised."""
    words = (w.lower() for w in WORD.findall(text))
    return {
        w[:-1] if len(w) > 4 and w.endswith("s") else w
        for w in words
        if len(w) > 2 and w not in STOPWORDS
    }


def overlap(terms: set[str], text: str) -> int:
    """Count how many of ``terms`` occur in ``text``."""
    return len(terms & terms_of(text))


PARAGRAPH_BREAK = re.compile(r"\n\s*\n|\n(?=#)|\n(?=\s*[-*+] )")
"""Where a paragraph ends: a blank line, or a line that starts a heading or a list item."""
SHORT_LINE_WORDS = 8
"""A line of at most this many words ends its sentence (a heading, an address or signature line, a
minutes item's title, an e-mail header) although it has no full stop; longer lines are wrapped
prose."""


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; blank lines, headings, list items and short lines also break."""
    sentences: list[str] = []
    for paragraph in PARAGRAPH_BREAK.split(text):
        if rows := table_rows(paragraph):
            sentences.extend(rows)
            continue
        for block in _short_line_blocks(paragraph):
            block = _MARK.sub("", block).replace("**", "")
            merged: list[str] = []
            for piece in _SENTENCE_BREAK.split(" ".join(block.split())):
                written = merged[-1].rsplit(" ", 1)[-1].rstrip(".") if merged else ""
                last = written.lower()
                if (
                    last in _ABBREVIATIONS
                    or _legal_form_goes_on(written, piece)
                    or _middle_initial(merged[-1] if merged else "")
                    or (last.isdigit() and " " not in merged[-1])
                ):  # '4. Bees': an item
                    merged[-1] = f"{merged[-1]} {piece}"
                elif piece:
                    merged.append(piece)
            sentences.extend(merged)
    return sentences


INITIAL = re.compile(r"[A-Z]\.")
"""An initial with its stop ('F.')."""


def _middle_initial(sentence: str) -> bool:
    """`sentence` ends in an initial after a first name or another initial ('John F.', 'R. K.'):
    the stop ends no sentence, the surname follows."""
    words = sentence.split()
    return (
        len(words) > 1
        and INITIAL.fullmatch(words[-1]) is not None
        and words[-2][:1].isupper()
        and (is_first_name(words[-2].lower()) or INITIAL.fullmatch(words[-2]) is not None)
    )


def _legal_form_goes_on(written: str, piece: str) -> bool:
    """A stop after an abbreviated legal form ('Co.', 'Pte.') does not end the sentence when
    another legal form follows it ('Kestrel Ventures Pte. Ltd. invested')."""
    following = piece.split(" ", 1)[0].strip(".,")
    return (
        written[:1].isupper()
        and not written.isupper()
        and is_legal_form(written)
        and is_legal_form(following)
    )


def table_rows(paragraph: str) -> list[str]:
    """The rows of a table written as text (a CSV's lines, or a Markdown table's), each one a
    sentence whatever its stops ('Smt.', 'V. Deshpande'): a row is one record. Empty for prose:
    a table is 2 lines or more, each with 2 or more of the same separator (a comma with no space
    after it, a tab, '|'), which prose does not write."""
    written = paragraph.strip().split("\n")
    if len(written) < 2:
        return []
    for separator in _CELL_SEPARATORS:
        if all(len(separator.findall(line)) >= 2 for line in written):
            return [" ".join(line.split()) for line in written if line.strip()]
    return []


_CELL_SEPARATORS = (re.compile(r",(?=\S)"), re.compile(r"\t"), re.compile(r"\|"))


LIST_ITEM = re.compile(
    r"\s*(?:(?:[-*+•]|\d{1,2}[.)]|\d{1,2}[:.]\d\d)\s|(?:(?:1[6-9]|20)\d\d(?:\s*[-–]\s*\w+)?|"
    r"\d{1,2}(?:st|nd|rd|th)?\s+(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?)"
    r"[\s,:]+(?:[—–-]\s*)?[A-Z])"
)
"""A line that starts a list item: a bullet, an item's number, a programme's time ('09:30'), or
an entry's year, years or date before a capital (a CV's '2015-2021 Senior Analyst', a log's '12
May — Left Hull'; not wrapped prose's '1987 by Mirela Voss' or '14 June 1991 when')."""


def _short_line_blocks(paragraph: str) -> list[str]:
    """The paragraph cut after each line of at most SHORT_LINE_WORDS words, and before each line
    that starts a field ('Apologies: ...'), a list item or an indented item: a name does not run
    on across them."""
    blocks: list[str] = []
    lines: list[str] = []
    for line in paragraph.split("\n"):
        if lines and (
            FIELD_LABEL.match(line)
            or LIST_ITEM.match(line)
            or _indented_item(lines[-1], line)
            or _register_entry(line)
        ):
            blocks.append("\n".join(lines))
            lines = []
        lines.append(line)
        if len(line.split()) <= SHORT_LINE_WORDS:
            blocks.append("\n".join(lines))
            lines = []
    return [*blocks, "\n".join(lines)] if lines else blocks


def _indented_item(previous: str, line: str) -> bool:
    """`line` starts with a capital, indented deeper than `previous`, which starts with no bullet or
    number: an item under an entry ('2019 - present  Director, Kerr Consulting, Leeds', then '  Led
    a team'), not the hanging indent of a numbered item's next line ('1.1. The Firm ...')."""
    stripped = line.lstrip()
    return (
        stripped[:1].isupper()
        and len(line) - len(stripped) > len(previous) - len(previous.lstrip())
        and not _MARKED_ITEM.match(previous)
    )


def _register_entry(line: str) -> bool:
    """`line` starts with a family name in capitals (its first part 3 letters or more), a comma and
    a first name: an entry of a register or a notice's list ('BRADSHAW, Helen Margaret, 12 Priory
    Road'), one record."""
    entry = FAMILY_NAME_FIRST.match(line)
    return (
        entry is not None
        and len(entry[1].split("-")[0]) > 2
        and is_first_name(entry[2].split()[0].lower())
    )


FAMILY_NAME_FIRST = re.compile(
    r"(?:^|(?<=[|:\t])|(?<=[|:] ))[ \t]*"  # a line's, a cell's or a field value's start
    r"([A-Z][A-Z'’]+(?:-[A-Z][A-Z'’]+)?),[ \t]+([A-Z][a-z'’-]+(?:[ \t]+[A-Z][a-z'’-]+)*)",
    re.MULTILINE,
)
"""A family name in capitals, a comma and capitalised words (the given names): a register's,
a results table's or a notice's way of writing a person ('ARCHER, Judith Mary')."""

_MARKED_ITEM = re.compile(r"\s*(?:[-*+•]|\d{1,2}(?:\.\d{1,2})*[.)]?)\s")
"""A line that starts with a bullet or an item's number ('- ', '2.1. ', '3) ')."""


def prose(text: str) -> list[str]:
    """Sentences of report-like text without its headings and citations."""
    body = CITATION.sub("", _HEADING_LINE.sub("", text))
    return [s for s in split_sentences(body) if len(s.split()) > 2]


def _limit_words(text: str, max_words: int) -> str:
    """Cut ``text`` to at most ``max_words`` words."""
    words = text.split()
    return text if len(words) <= max_words else " ".join(words[:max_words]) + " …"


def within_words(items: list[T], text_of: Callable[[T], str], max_words: int) -> list[T]:
    """Leading ``items`` whose texts total at most ``max_words`` (at least one)."""
    kept: list[T] = []
    words = 0
    for item in items:
        words += len(text_of(item).split())
        if kept and words > max_words:
            break
        kept.append(item)
    return kept


def join_sentences(sentences: Iterable[str], max_words: int) -> str:
    """Join distinct sentences until ``max_words`` would be exceeded."""
    distinct: dict[str, str] = {}
    for sentence in sentences:
        distinct.setdefault(" ".join(sentence.lower().split()), sentence)
    kept = within_words(list(distinct.values()), str, max_words)
    return _limit_words(" ".join(map(_terminated, kept)), max_words)


def _terminated(sentence: str) -> str:
    """``sentence`` ending in punctuation, so joined headings stay separate."""
    return sentence if sentence[-1:] in '.!?…"”’)' else f"{sentence}."


def text_between(text: str, start: str, *ends: str) -> str:
    """Text after the first ``start`` (or all of it), up to the first of ``ends``."""
    _, found, rest = text.partition(start)
    rest = rest if found else text
    cut = min((i for end in ends if (i := rest.find(end)) >= 0), default=len(rest))
    return rest[:cut].strip()


def number_after(text: str, pattern: str, default: int) -> int:
    """The integer captured by ``pattern`` in ``text``, else ``default``."""
    match = re.search(pattern, text)
    return int(match.group(1)) if match else default


def display(name: str) -> str:
    """Readable form of an upper-cased GraphRAG title."""
    if not name.isupper():
        return name
    return " ".join(w.lower() if w.lower() in JOINERS else w.capitalize() for w in name.split())


def and_join(items: list[str]) -> str:
    """Join ``items`` as 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def cite(refs: dict[str, list[str]]) -> str:
    """GraphRAG's '[Data: Entities (1, 2); Sources (4, +more)]' reference."""
    parts = []
    for label, ids in refs.items():
        shown = list(dict.fromkeys(ids))
        more = ", +more" if len(shown) > 5 else ""
        parts.append(f"{label} ({', '.join(shown[:5])}{more})")
    return f" [Data: {'; '.join(parts)}]" if parts else ""


def clean_field(text: str) -> str:
    """Make ``text`` safe inside a delimited extraction record."""
    text = text.replace(TUPLE_DELIMITER, " ").replace(RECORD_DELIMITER, "#")
    return " ".join(text.split())
