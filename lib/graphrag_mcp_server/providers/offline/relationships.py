"""Relationship records: entities of one paragraph, weighted by how close they are, and a letter's or e-mail's
writer with its addressee and with whoever the writer speaks of in the first person."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graphrag.index.operations.extract_graph.graph_extractor import TUPLE_DELIMITER

from graphrag_mcp_server.providers.offline.entities import Mentions
from graphrag_mcp_server.providers.offline.text import (
    MAX_DESCRIPTION_WORDS,
    PARAGRAPH_BREAK,
    clean_field,
    join_sentences,
    split_sentences,
)

SAME_SENTENCE, NEARBY, LETTER = 2.0, 1.0, 3.0
"""Weight added per piece of evidence: a shared sentence; sentences of one paragraph (divided by their
distance); a letter's writer and addressee."""
WINDOW = 2
"""Sentences of one paragraph at most this far apart relate their entities (a paragraph-wide clique would
merge communities, and an edit would then touch most of them)."""
_SIGN_OFF = re.compile(r"^(?:yours\s+(?:sincerely|faithfully|truly)|(?:kind|best|warm|warmest)\s+(?:regards|wishes)"
                       r"|regards|many thanks|with thanks|thanks|best)\b[,.!]?\s*", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:I|[Mm]e|[Mm]y|[Ww]e|[Uu]s|[Oo]ur)\b")


@dataclass
class _Link:
    weight: float = 0.0
    evidence: list[str] = field(default_factory=list)

    def add(self, weight: float, sentence: str) -> None:
        self.weight += weight
        if sentence not in self.evidence:
            self.evidence.append(sentence)


def relationship_records(found: Mentions, text: str) -> list[str]:
    """Records for entities of nearby sentences of a paragraph (a shared sentence weighs most, then the nearer the
    more) and
    for a letter's writer, its addressee and the people and bodies the writer speaks of as "I" or "we"."""
    links: dict[tuple[str, str], _Link] = {}
    order = {name: position for position, name in enumerate(found.names)}

    def link(first: str, second: str, weight: float, sentence: str) -> None:
        if first != second:
            pair = (first, second) if order[first] < order[second] else (second, first)
            links.setdefault(pair, _Link()).add(weight, sentence)

    for paragraph in PARAGRAPH_BREAK.split(text):
        sentences = split_sentences(paragraph)
        present = [[name for name in found.names if sentence in found.sentences[name]] for sentence in sentences]
        for first, names in enumerate(present):
            for second in range(first, min(first + WINDOW + 1, len(sentences))):
                distance = second - first
                for name in names:
                    for other in present[second]:
                        if distance == 0:
                            link(name, other, SAME_SENTENCE / 2, sentences[first])  # each pair seen twice
                        else:
                            link(name, other, NEARBY / distance, f"{sentences[first]} {sentences[second]}")
    _letter_links(found, text, link)
    records = []
    for (source, target), found_link in links.items():
        strength = round(min(10.0, 1.0 + found_link.weight), 1)
        description = clean_field(join_sentences(found_link.evidence, MAX_DESCRIPTION_WORDS))
        fields = ['"relationship"', source.upper(), target.upper(), description, str(strength)]
        records.append(f"({TUPLE_DELIMITER.join(fields)})")
    return records


def _letter_links(found: Mentions, text: str, link: object) -> None:
    """A letter's or e-mail's writer (the name after its sign-off, or its From: line) linked to its addressee
    (its To: line or salutation) and to the names of its first-person sentences."""
    sentences = split_sentences(text)
    writers, addressees = [], []
    for position, sentence in enumerate(sentences):
        names = [name for name in found.names if sentence in found.sentences[name]]
        if sentence.lower().startswith("from:"):
            writers += names
        elif sentence.lower().startswith(("to:", "dear ")):
            addressees += names
        elif _SIGN_OFF.match(sentence) and (rest := _SIGN_OFF.sub("", sentence, count=1)) != sentence:
            signed = [name for name in found.names if rest and rest in found.sentences.get(name, [])
                      or any(later in found.sentences[name] for later in sentences[position + 1:position + 2])]
            writers += [name for name in names + signed if name not in writers][:1]
    for writer in dict.fromkeys(writers):
        for addressee in dict.fromkeys(addressees):
            link(writer, addressee, LETTER, f"{writer} wrote to {addressee}.")
        for sentence in sentences:
            if _FIRST_PERSON.search(sentence) and not sentence.lower().startswith(("from:", "to:", "dear ")):
                for name in found.names:
                    if sentence in found.sentences[name]:
                        link(writer, name, NEARBY, f"{writer} wrote: {sentence}")
