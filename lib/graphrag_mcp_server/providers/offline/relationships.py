"""Relationship records: entities sharing a sentence (a contract's defined terms and a body's short
name count as its mentions); those of a sentence that refers back with the name of the sentence
before it refers to (he/she: its first person, they: its first name) or, where that sentence names
no person, with the person the text is about (a biography's subject); those of a sentence that
starts 'Its ...' with the body or place the sentence before names; a signature or address block's
person with its bodies; people of one family name where the text speaks of kin; and a letter's or
e-mail's writer with its addressee and with whoever the writer speaks of in the first person."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphrag.index.operations.extract_graph.graph_extractor import TUPLE_DELIMITER

from graphrag_mcp_server.providers.offline.blocks import (
    STRONG_PERSON,
    block_lines,
    on_lines,
    role_lines,
)
from graphrag_mcp_server.providers.offline.entities import Mentions, typed
from graphrag_mcp_server.providers.offline.labels import FIELD_LABEL
from graphrag_mcp_server.providers.offline.letters import letter_links
from graphrag_mcp_server.providers.offline.name_forms import without_nicknames, written_whole
from graphrag_mcp_server.providers.offline.patterns import speaker_label
from graphrag_mcp_server.providers.offline.record_links import (
    affiliation_links,
    body_voice_links,
    follows_on,
    form_links,
    record_links,
    speaker_links,
    speaker_turns,
    subject_links,
)
from graphrag_mcp_server.providers.offline.role_links import (
    lead_body,
    named_by_noun,
    owner,
    role_after_name,
    role_holder,
    role_in_short,
    role_opening,
)
from graphrag_mcp_server.providers.offline.structure_words import KIN
from graphrag_mcp_server.providers.offline.text import (
    ENTITY_DESCRIPTION_WORDS,
    PARAGRAPH_BREAK,
    clean_field,
    join_sentences,
    split_sentences,
)

SAME_SENTENCE, NEARBY, LETTER = 2.0, 1.0, 3.0
"""Weight added per piece of evidence: a shared sentence; a sentence referring back to the one
before; a letter's writer and addressee."""
_REFERS_BACK = re.compile(r"\b(?:[Hh]e|[Ss]he|[Tt]hey|[Hh]is|[Hh]er|[Tt]heir|[Hh]im|[Tt]hem)\b")
"""A third-person pronoun: the sentence speaks of someone the sentence before named (its first name,
as "Priya Nair chairs the committee. Last spring she hired Otto Brandt." reads)."""
_GENERIC_BODY = re.compile(
    r"\b[Tt]he\s+(?:[A-Z][\w’']*-(?:based|listed|owned|registered)\s+)?([a-z]+)\b(?!\s+[A-Z])"
)
"""'the club', 'the council', 'the Bergen-based shipbuilder': a body the text names in full
elsewhere ('Ravensworth Rowing Club'), or the one it names nearby."""
_PERSONAL = re.compile(r"\b(?:[Hh]e|[Ss]he|[Hh]is|[Hh]er|[Hh]im|[Hh]ers|[Hh]imself|[Hh]erself)\b")
"""A pronoun that only a person is: it refers to a person, never to a body or a place."""
_GENDERED = {
    "male": re.compile(r"\b(?:[Hh]e|[Hh]is|[Hh]im|[Hh]imself)\b"),
    "female": re.compile(r"\b(?:[Ss]he|[Hh]er|[Hh]ers|[Hh]erself)\b"),
}
"""The personal pronouns of each gender."""
_KIN = re.compile(rf"\b(?:{'|'.join(sorted(KIN | {'parents', 'family'}))})\b", re.IGNORECASE)
"""Words of kin: a sentence with one says how people of one family name are related."""


@dataclass
class _Link:
    weight: float = 0.0
    evidence: list[str] = field(default_factory=list)

    def add(self, weight: float, sentence: str) -> None:
        self.weight += weight
        if sentence not in self.evidence:
            self.evidence.append(sentence)


def relationship_records(found: Mentions, text: str) -> list[str]:
    """Records for entities sharing a sentence (weight 2 a sentence), the first name of a sentence
    with the names of the next when that one refers back to it, and a letter's writer (see
    `_letter_links`); each described by the sentences that link them."""
    links: dict[tuple[str, str], _Link] = {}
    order = {name: position for position, name in enumerate(found.names)}

    def link(first: str, second: str, weight: float, sentence: str) -> None:
        if first != second:
            pair = (first, second) if order[first] < order[second] else (second, first)
            links.setdefault(pair, _Link()).add(weight, sentence)

    def near(first: str, second: str, sentence: str) -> None:
        link(first, second, NEARBY, sentence)

    text_sentences = split_sentences(text)
    subject = _subject(found, text_sentences)
    lead = lead_body(found, text_sentences)
    all_sentences: list[str] = []
    all_present: list[list[str]] = []
    # split_sentences(text) is these paragraphs' sentences in turn
    for paragraph in PARAGRAPH_BREAK.split(text):
        sentences = split_sentences(paragraph)
        present = [_in_order(found, sentence) for sentence in sentences]
        referable = [  # a speaker's label is no one 'he' or 'she' means ('LUCIA VEGA: ... He')
            [name for name in names if not speaker_label(name, sentence)]
            for sentence, names in zip(sentences, present, strict=True)
        ]
        chain: str | None = None  # whom the sentence before meant by a pronoun leading it
        for position, (sentence, names) in enumerate(zip(sentences, present, strict=True)):
            for first, name in enumerate(names):
                for other in names[first + 1 :]:
                    link(name, other, SAME_SENTENCE, sentence)
            before = present[position - 1] if position else []
            recent = [
                name for names in present[max(0, position - 3) : position][::-1] for name in names
            ]
            bodies_near = recent  # 'the firm' of a paragraph that names no body: the lead
            if lead and not any(typed(name, found)[0] == "organization" for name in recent):
                bodies_near = [*recent, lead]
            previous = f"{sentences[position - 1]} " if position else ""
            left = _pronouns_left(found, sentence, names)
            referred, back = _referred(found, referable[:position], left)
            if chain and referred and back == 1 and _may_be(chain, left):
                referred = chain  # '... he was apprenticed to George Stannard. Then he moved'
            if subject and referred and _known_as(subject, left) > _known_as(referred, left):
                referred = None  # 'she' of a biography's known woman, not of a name not known
            meant = referred
            if referred:
                for name in names:
                    link(referred, name, NEARBY, f"{sentences[position - back]} {sentence}")
            elif subject and _PERSONAL.search(left) and _may_be(subject, left):
                meant = subject
                for name in names:  # a biography's later sentences: 'In 1934 he led ...'
                    link(subject, name, NEARBY, f"{subject}: {sentence}")
            chain = meant if meant and _pronoun_leads(found, sentence, names) else None
            for name in (
                short
                for short in names
                if not written_whole(short, sentence) and not role_in_short(short, sentence)
            ):  # 'Danescombe considers ...'; not "Wanderers' coach X said", another's role
                for other in before:
                    link(name, other, NEARBY, f"{previous}{sentence}")
            earlier = present[max(0, position - LOOK_BACK) : position]
            if owned := owner(found, earlier, sentence, lead):
                body, back = owned
                said = f"{sentences[position - back]} {sentence}" if back else sentence
                for name in names:  # 'Hallstrom Lines A/S ... Its chief executive, Mette ...'
                    link(body, name, NEARBY, said)
            elif held := role_holder(found, recent, sentence, names, lead) or role_after_name(
                found, recent, sentence, names, lead
            ):
                link(*held, NEARBY, f"{previous}{sentence}")
            else:  # 'CEO Ingrid Haugen said ...' after a sentence naming her company
                for body, holder in role_opening(found, bodies_near, sentence, names):
                    link(body, holder, NEARBY, f"{previous}{sentence}")
            if not (referred or _PERSONAL.search(left)) and follows_on(
                sentences[position - 1] if position else "", sentence, names, before
            ):  # a pronoun's sentence is linked by what it refers to
                for name in names:
                    for other in before:
                        link(name, other, NEARBY, f"{previous}{sentence}")
            for body in _bodies_meant(found, sentence, bodies_near):
                for name in names:
                    link(body, name, NEARBY, sentence)
        _block_links(found, paragraph, sentences, present, link)
        record_links(sentences, present, near)
        all_sentences += sentences
        all_present += present

    def letter(first: str, second: str, sentence: str) -> None:
        link(first, second, LETTER, sentence)

    turns = speaker_turns(found, all_sentences)
    if not letter_links(all_sentences, all_present, order, letter, near):
        body_voice_links(found, all_sentences, all_present, turns, near)
    speaker_links(all_sentences, all_present, turns, near)
    affiliation_links(text, found.names, near)
    form_links(found, all_sentences, all_present, near)
    subject_links(found, all_sentences, all_present, near)
    _kin_links(found, link)
    records = []
    for (source, target), found_link in links.items():
        strength = round(min(10.0, 1.0 + found_link.weight), 1)
        description = clean_field(join_sentences(found_link.evidence, ENTITY_DESCRIPTION_WORDS))
        fields = ['"relationship"', source.upper(), target.upper(), description, str(strength)]
        records.append(f"({TUPLE_DELIMITER.join(fields)})")
    return records


def _block_links(
    found: Mentions,
    paragraph: str,
    lines: list[str],
    present: list[list[str]],
    link: Callable[[str, str, float, str], None],
) -> None:
    """A signature or address block (blocks.py): each person linked to the bodies on the lines
    after theirs, up to the next person's line ('Dr. Theodora Kalogeropoulou / Secretary General,
    Aegean Science Foundation'), or, where the block names one person, to every body in it
    ('Distribuidora Serra Azul Ltda. / Attn.: Senhor Cláudio Fagundes'). A name on a person's role
    line that only weak evidence types as a person is part of the role ('Gerente de Compras')."""
    written = block_lines(paragraph)
    if written is None:
        return  # a table's rows are records of their own
    present = _by_line(written, lines, present)
    lines = written
    named = on_lines(lines, found.names)
    roles = set(role_lines(lines, named, lambda name: typed(name, found)))
    kinds = [
        [_block_kind(name, found, at in roles) for name in names]
        for at, names in enumerate(present)
    ]
    people = [
        (at, name)
        for at, names in enumerate(present)
        for name, kind in zip(names, kinds[at], strict=True)
        if kind == "person"
    ]
    evidence = "; ".join(lines)
    for at, person in people:
        after = range(at, len(lines)) if len(people) > 1 else range(len(lines))
        for line in after:
            if line > at and any(kind == "person" for kind in kinds[line]):
                break
            for name, kind in zip(present[line], kinds[line], strict=True):
                if kind == "organization":
                    link(person, name, NEARBY, evidence)


def _block_kind(name: str, found: Mentions, on_role_line: bool) -> str:
    """A block name's type, 'role' for a name on a role line that only weak evidence types as a
    person."""
    kind, reason = typed(name, found)
    return "role" if on_role_line and kind == "person" and reason not in STRONG_PERSON else kind


def _by_line(lines: list[str], sentences: list[str], present: list[list[str]]) -> list[list[str]]:
    """The names of each line, from those of its sentences (`present`; a line of short lines can
    hold several: 'Attn.: Exmo. Senhor ...')."""
    names: list[list[str]] = [[] for _ in lines]
    line = 0
    for sentence, found in zip(sentences, present, strict=True):
        while line < len(lines) - 1 and sentence not in lines[line]:
            line += 1
        names[line] += [name for name in found if name not in names[line]]
    return names


def _kin_links(found: Mentions, link: Callable[[str, str, float, str], None]) -> None:
    """Two or three people of the text with the same family name, where a sentence naming one
    of them speaks of kin ('his father', 'her nephew'): linked, the shared name the evidence."""
    families: dict[str, list[str]] = {}
    for name in found.names:
        if " " in name and typed(name, found)[0] == "person":
            families.setdefault(name.split()[-1], []).append(name)
    for family, people in families.items():
        if not 2 <= len(people) <= 3 or len(family) < 3:
            continue
        if any(_KIN.search(sentence) for person in people for sentence in found.sentences[person]):
            for first, person in enumerate(people):
                for other in people[first + 1 :]:
                    link(person, other, NEARBY, f"{person} and {other} share the name {family}.")


def _referred(found: Mentions, earlier: list[list[str]], pronouns: str) -> tuple[str | None, int]:
    """Whom a sentence's pronouns that refer back (`_pronouns_left`) refer to, and how many
    sentences back it is named (of the paragraph's `earlier` sentences' names): he/she/his/her the
    first person of the nearest of the LOOK_BACK sentences before that names one whose first name
    is not of the other gender ('Harriet Doyle married Tom Price. He ran a pub': Tom Price; 'She
    studied at X. In 1968 she joined Y': the woman named before X), they/their the first name of
    the sentence before; (None, 0) without a pronoun or such a name."""
    if _PERSONAL.search(pronouns):
        for back, names in enumerate(earlier[::-1][:LOOK_BACK], start=1):
            people = [name for name in names if typed(name, found)[0] == "person"]
            if fitting := [name for name in people if _may_be(name, pronouns)]:
                return fitting[0], back
            if people:  # the nearest person is of the other gender: no one further back
                return None, 0
        return None, 0
    if earlier and earlier[-1] and _REFERS_BACK.search(pronouns):
        return earlier[-1][0], 1
    return None, 0


LOOK_BACK = 3
"""Sentences a personal pronoun looks back for its person (past sentences that name none)."""


def _pronoun_leads(found: Mentions, sentence: str, names: list[str]) -> bool:
    """A personal pronoun comes before every person the sentence names: the sentence is about whom
    it means, and the next sentence's 'he' or 'she' means the same person."""
    pronoun = _PERSONAL.search(sentence)
    return pronoun is not None and all(
        _first_at(name, sentence) > pronoun.start()
        for name in names
        if typed(name, found)[0] == "person"
    )


def _known_as(person: str, sentence: str) -> bool:
    """The sentence's personal pronouns are of one gender, and the person's first name is known
    as that gender's."""
    said = _pronouns_gender(sentence)
    return said is not None and said == _first_name_gender(person)


def _may_be(person: str, sentence: str) -> bool:
    """The sentence's personal pronouns may refer to `person`: they are of both genders, or of
    one and the person's first name is not known as the other's."""
    said, known = _pronouns_gender(sentence), _first_name_gender(person)
    return said is None or known is None or known == said


def _pronouns_gender(sentence: str) -> str | None:
    """'male' or 'female' when the sentence's personal pronouns are all of one gender, else
    None."""
    said = [gender for gender, pronouns in _GENDERED.items() if pronouns.search(sentence)]
    return said[0] if len(said) == 1 else None


def _first_name_gender(person: str) -> str | None:
    """'male' or 'female' when gender-guesser's dictionary gives the person's first name that
    gender (or mostly), else None."""
    known = _gender_detector().get_gender(person.split()[0])
    return str(known).removeprefix("mostly_") if known.endswith(("male", "female")) else None


@functools.cache
def _gender_detector() -> Any:
    """gender-guesser's detector (its dictionary of first names of many countries)."""
    import gender_guesser.detector

    return gender_guesser.detector.Detector()


def _subject(found: Mentions, sentences: list[str]) -> str | None:
    """The person a text is about: the one its first sentence that names anything starts with (a
    biography's title or opening, after a heading such as 'OBITUARY'), or the only person that
    sentence names, right before 'was', 'is' or a bracket ('Born in Cobh in 1941, Siobhán Ní
    Bhriain was ...', 'Dr Amaka Okonkwo (born 1962) is ...'); else None. `sentences`: the
    text's."""
    first = next((sentence for sentence in sentences if _in_order(found, sentence)), "")
    people = [name for name in _in_order(found, first) if typed(name, found)[0] == "person"]
    opening = without_nicknames(first)  # 'Margaret "Peggy" Doyle, who ...'
    label = FIELD_LABEL.match(opening)  # 'Obituary: Margaret Ellison, 1938-2026'
    for start in (opening, opening[label.end() :].lstrip() if label else ""):
        for name in people:
            if start.startswith(name):
                return name
    if len(people) == 1 and re.search(rf"{re.escape(people[0])}\s*(?:\(|was\b|is\b)", first):
        return people[0]
    return None


def _in_order(found: Mentions, sentence: str) -> list[str]:
    """The names a sentence mentions, in the order it first mentions them (a name's surface forms
    counted)."""
    names = [name for name in found.names if sentence in found.sentences[name]]
    return sorted(names, key=lambda name: _first_at(name, sentence))


def _first_at(name: str, sentence: str) -> int:
    """Where a sentence first writes `name` or its first or last word (its length: nowhere)."""
    return min(
        (
            at
            for form in (name, name.split()[-1], name.split()[0])
            if (at := sentence.find(form)) >= 0
        ),
        default=len(sentence),
    )


def _pronouns_left(found: Mentions, sentence: str, named: list[str]) -> str:
    """The sentence's pronouns that no name of the same sentence (`named`) before them can be,
    joined by spaces: those that refer back. he/she is a person named before it of that gender or
    of none known ('Anna Berg said she ...'; in 'Ruth said that she would hold him to it' only
    'him' is left), they/their a body or two names ('Rovers equalised, and their captain ...')."""
    left = []
    pronouns = {
        m.start(): m for m in [*_REFERS_BACK.finditer(sentence), *_PERSONAL.finditer(sentence)]
    }
    for _, pronoun in sorted(pronouns.items()):
        before = [name for name in named if _first_at(name, sentence) < pronoun.start()]
        if _PERSONAL.fullmatch(pronoun[0]):
            said = next(g for g, pattern in _GENDERED.items() if pattern.fullmatch(pronoun[0]))
            if not any(
                typed(name, found)[0] == "person" and _first_name_gender(name) in (None, said)
                for name in before
            ):
                left.append(pronoun[0])
        elif len(before) < 2 and not any(typed(n, found)[0] == "organization" for n in before):
            left.append(pronoun[0])
    return " ".join(dict.fromkeys(left))


def _bodies_meant(found: Mentions, sentence: str, recent: list[str]) -> list[str]:
    """The bodies a sentence means by 'the club', 'the council'...: the one name of the text ending
    in that word; by 'the company', 'the firm' (a body's noun no name ends in), the one body the
    last three sentences name (`recent`), if they name one."""
    meant = []
    for word in _GENERIC_BODY.findall(sentence):
        ending = named_by_noun(found, word)
        if not ending and (word in _BODY_WORDS or word.endswith(_TRADE_ENDINGS)):
            bodies = {name for name in recent if typed(name, found)[0] == "organization"}
            ending = list(bodies)
        if len(ending) == 1 and ending[0] not in sentence:
            meant.append(ending[0])
    return meant


_BODY_WORDS = frozenset(
    [
        "company", "firm", "business", "group", "charity", "organisation", "organization",
        "retailer", "supermarket", "lender", "insurer", "airline", "carrier", "brewer", "chain",
        "conglomerate", "startup", "start-up", "consultancy", "wholesaler", "distributor",
        "club", "institute", "university", "museum", "ministry", "hospital", "orchestra",
        "choir", "academy", "federation", "association", "foundation",
    ]
)  # fmt: skip
"""Nouns a text names any body by once it has named it ('the company', 'the retailer', 'the
club' of 'Real Oviedo', 'the institute' of 'Institut Pasteur de Lille'): general English of
companies, charities and institutions, not of one text; nouns that also name a thing ('the
archive', 'the construction') are left out."""
_TRADE_ENDINGS = ("maker", "builder", "producer", "manufacturer", "supplier", "operator")
"""Ends of the nouns a business is named by for its trade: 'the carmaker', 'the shipbuilder'."""
