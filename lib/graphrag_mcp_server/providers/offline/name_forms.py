"""The other ways a text writes a name it has found: the shorter names it ends with, a person's
surname, a body's unambiguous word or its noun after 'the', a company's name without its legal
form, an acronym given in brackets."""

from __future__ import annotations

import itertools
import re
from collections import Counter

from graphrag_mcp_server.providers.offline.entity_types import (
    canonical_type,
    context_cue,
    head,
    type_and_reason,
)
from graphrag_mcp_server.providers.offline.legal_forms import (
    ends_in_legal_form,
    without_legal_form,
)
from graphrag_mcp_server.providers.offline.lexicon import (
    ORGANISATION_HEADS,
    PLACE_HEADS,
    is_first_name,
    is_known_place,
)
from graphrag_mcp_server.providers.offline.no_kind import COMMON_ZIPF, is_common_word
from graphrag_mcp_server.providers.offline.patterns import compiled, mention_of
from graphrag_mcp_server.providers.offline.structure_words import CALENDAR
from graphrag_mcp_server.providers.offline.text import FAMILY_NAME_FIRST
from graphrag_mcp_server.providers.offline.word_frequency import zipf_frequency


def headings_in_capitals(found: dict[str, str], names: set[str], text: str) -> set[str]:
    """The keys of `found`'s names of several words written in capitals ('CONTRACT FOR THE ...'):
    a heading's, unless it names a place, a company by its legal form (a letterhead's 'LANKA
    LEGAL PARTNERS' is the name the running text writes), a person by a first name and rarer
    words as the text's whole first line (a CV's 'PRIYA NAIR'; not 'GRACE PERIOD'), or is one
    of `names` (parties, speakers of a transcript); a body's name by its noun as one of the text's
    first LETTERHEAD_LINES lines is its letterhead ('HALVERSON WOOL COOPERATIVE')."""
    opening = text.strip().split("\n", LETTERHEAD_LINES)[:LETTERHEAD_LINES]
    first_line, letterhead = opening[0].strip(), " ".join(opening)
    return {
        key
        for key, name in found.items()
        if " " in name
        and name.isupper()
        and canonical_type(name, quoted=False, place=False) != "geo"
        and not ends_in_legal_form(name.split())
        and not (name == first_line and _person_in_capitals(name))
        and not (name in letterhead and _body_in_capitals(name))
        and name not in names
        and key not in names
    }


LETTERHEAD_LINES = 2
"""Lines at a text's start that may hold its issuer's name in capitals (a ministry under its
country's)."""


def _body_in_capitals(name: str) -> bool:
    """`name` is a body's by its noun ('... COOPERATIVE', 'MINISTRY OF ...') and holds a word no
    common English, or starts with the noun and 'of': not a heading's 'GENERAL ASSEMBLY'."""
    kind, reason = type_and_reason(name, quoted=False, place=False)
    words = name.split()
    return (
        kind == "organization"
        and reason.startswith("head noun")
        and (
            not all(zipf_frequency()(word.lower(), "en") >= COMMON_ZIPF for word in words)
            or (reason == "head noun first" and words[1:2] == ["OF"])
        )
    )


def _person_in_capitals(name: str) -> bool:
    """`name` is a first name and words no common English: a person's name in capitals."""
    first, *rest = name.split()
    return (
        is_first_name(first)
        and len(rest) < 3
        and not any(map(is_common_word, rest))
        and type_and_reason(name, quoted=False, place=False)[1] == "first name"
    )


def surface_forms(
    names: list[str], tails: dict[str, list[str]], non_people: set[str], lowercase: set[str]
) -> dict[str, list[str]]:
    """Each name, the shorter names it ends with, a person's unambiguous surname and first name, a
    body's unambiguous first or last word ('Athletic's chairman' for Halden Athletic), and a
    company's name without its legal form and its unambiguous words ('Bandeirante' for
    Especiarias Bandeirante Ltda.)."""
    shorter = {
        " ".join(without_legal_form(n.split())) for n in names if ends_in_legal_form(n.split())
    }
    counted = [n for n in names if n not in shorter]
    word_counts = Counter(w for n in counted for w in set(n.split()))  # 'Norvik Biotech (AB)' once
    forms = {}
    for name in names:
        words = name.split()
        kind = canonical_type(name, quoted=False, place=False)
        person = name not in non_people and kind == "person"
        short = [words[-1]] if person and word_counts[words[-1]] == 1 else []
        if person and len(words) > 1 and _stands_for_its_person(words[0], word_counts, lowercase):
            short.append(words[0])  # "Brigid's husband" of Brigid Jeptoo
        if kind == "organization" and len(words) == 2:
            short = [
                word
                for word in words
                if word_counts[word] == 1 and word.isalpha() and word.lower() not in lowercase
            ]
        elif kind == "organization" and len(plain := without_legal_form(words)) < len(words):
            short = [" ".join(plain)] + [  # 'Fjordlaks Havbruk', 'Fjordlaks' of '... AS'
                word
                for word in plain
                if word_counts[word] == 1 and _stands_for_its_company(word, lowercase)
            ]
        forms[name] = [name, *tails[name], *short, *_by_its_noun(name, kind, word_counts)]
    return forms


def words_of_longer_names(
    text: str, names: list[str], lowercase: set[str], places: set[str]
) -> set[str]:
    """The words (in capitals) by which a one-word name written alone stands for a longer name:
    any word of a person's name ('Ms Qureshi' of Amina Qureshi), and a word of a company's name
    that no other name holds where the words around it call it a body and none calls it a place
    (`places`): 'Corvane' of Corvane Biotech, in "Corvane's head of research" and 'Corvane
    employs'; not 'Kestlewick' of Kestlewick Residents Trust, the village. Such a word is that
    name, not a second entity."""
    kinds = {name: canonical_type(name, quoted=False, place=False) for name in names if " " in name}
    people = {
        word.upper() for name, kind in kinds.items() if kind == "person" for word in name.split()
    }
    held = Counter(
        word for name, kind in kinds.items() if kind == "organization" for word in set(name.split())
    )
    alone = {name for name in names if " " not in name}  # context_cue reads the whole text
    return people | {
        word.upper()
        for word, count in held.items()
        if count == 1
        and word in alone
        and word not in places
        and _stands_for_its_company(word, lowercase)
        and context_cue(text, word) == "organization"
    }


def _by_its_noun(name: str, kind: str, word_counts: Counter[str]) -> list[str]:
    """A body's name by its noun after 'the' ('the Trust', 'The Trust' of Tayside Water Trust),
    when no other name of the text ends in that noun: how a text goes on to name a body it has
    introduced in full."""
    words = name.split()
    noun = words[-1]
    if kind != "organization" or len(words) < 2 or word_counts[noun] > 1:
        return []
    if not noun.istitle() or head(noun) not in ORGANISATION_HEADS:
        return []
    return [f"the {noun}", f"The {noun}"]


def _stands_for_its_person(word: str, word_counts: Counter[str], lowercase: set[str]) -> bool:
    """A person's first name can name them alone: a known first name that no other name of the
    text holds and that the text never writes in lower case ('Brigid'; not 'Will' beside 'will')."""
    return (
        word_counts[word] == 1
        and word.isalpha()
        and word.lower() not in lowercase
        and is_first_name(word)
    )


def _stands_for_its_company(word: str, lowercase: set[str]) -> bool:
    """A word of a company's name can be its short name: a word of its own, not a place, a first
    name, a body's noun or a word the text writes in lower case ('Fjordlaks', 'Bandeirante'; not
    'Bergen' or 'Anna')."""
    return (
        word.isalpha()
        and word.lower() not in lowercase
        and not is_known_place(word)
        and not is_first_name(word)
        and head(word) not in ORGANISATION_HEADS
    )


def acronyms(text: str, names: list[str]) -> list[tuple[str, str]]:
    """Each name of two words or more that the text follows with its acronym in brackets ('Zavod
    za gozdove Slovenije (ZGS)'): the acronym's letters are the words' first letters, in order
    (small words may be left out)."""
    found = []
    for name in names:
        if " " not in name or name not in text:
            continue
        for acronym in compiled(rf"{re.escape(name)}\s*\(([A-Z][A-Z0-9&]{{1,7}})\)").findall(text):
            if _initials_hold(name, acronym):
                found.append((name, acronym))
    return found


def _initials_hold(name: str, acronym: str) -> bool:
    """The letters of `acronym` are first letters of `name`'s words, in order, taking every
    capitalised word's."""
    letters = iter(acronym.lower())
    wanted = next(letters, None)
    for word in name.split():
        if wanted is not None and word[:1].lower() == wanted:
            wanted = next(letters, None)
        elif word[:1].isupper():
            return False
    return wanted is None


def tail_names(names: list[str], places: set[str], text: str) -> dict[str, list[str]]:
    """Shorter names ending a longer one ('Harbour Board' of 'Port Harbour Board'), but for a place
    the text also names by itself ('in Kamenná Lhota', not only 'Nemocnice Kamenná Lhota') and a
    name after 'of' that the text also writes by itself ('Abbotsfield Library' of 'Friends of
    Abbotsfield Library')."""
    return {
        name: [
            n
            for n in names
            if n != name
            and name.endswith(f" {n}")
            and not (name.endswith(f" of {n}") and text.count(n) > text.count(name))
            and n not in places
        ]
        for name in names
    }


_NICKNAME = r"[\"“]([A-Z][a-z]+)[\"”]"
"""A nickname in quotes ('"Peggy"')."""
_NICKNAMED = re.compile(rf"\b([A-Z][a-z]+)\s+{_NICKNAME}\s+([A-Z][\w'’-]+)")
_INSIDE_A_NAME = re.compile(rf"\s+{_NICKNAME}(?=\s)")


def nicknames(text: str) -> list[tuple[str, str]]:
    """Each person written with a nickname in quotes between first name and surname (Margaret
    "Peggy" Doyle), as the full name without it and the nickname: one person, not three names."""
    return [
        (f"{first} {surname}", nickname)
        for first, nickname, surname in _NICKNAMED.findall(text)
        if is_first_name(first)
    ]


def names_written_apart(text: str) -> list[tuple[str, str]]:
    """People whose names the text writes apart, each as its full name and the form the text
    writes: surname first in capitals at the start of a line, a table's cell or a field's value in
    a notice, a register or a results table ('ARCHER, Judith Mary': 'Judith Mary Archer'; the
    given names are the first names after the comma, so a dateline's 'LONDON, Ontario' is none;
    'in the UK, Emily Carter said' is written in order), and a first name before another that
    shares its surname ('Alasdair and Morag Fraser': 'Alasdair Fraser'), unless the text gives
    that first name another surname."""
    apart = []
    for surname, written_given in FAMILY_NAME_FIRST.findall(text):
        given = " ".join(itertools.takewhile(_given_name, written_given.split()))
        if given and len(surname) > 2:
            apart.append((f"{given} {surname.title()}", f"{surname}, {given}"))
    for match in _SHARED_SURNAME.finditer(text):
        first, second, surname = match.groups()
        if re.search(r"[A-Z][\w'’-]*[ \t]$", text[: match.start()]):
            continue  # 'Keelan Giles and Rhys Webb': a surname before 'and', not a first name
        other = re.search(rf"\b{first} (?!{surname}\b)[A-Z][a-z]", text)
        heads = head(surname) in ORGANISATION_HEADS | PLACE_HEADS  # 'Tom and Mary Street'
        if _given_name(first) and _given_name(second) and not heads and other is None:
            apart.append((f"{first} {surname}", match[0]))
    return apart


def written_whole(name: str, sentence: str) -> bool:
    """`sentence` writes `name` whole: as it is, or family name first in capitals ('BRADSHAW, Helen
    Margaret'), a register's entry, not a short form that refers back."""
    *given, family = name.split()
    return name in sentence or bool(given) and f"{family.upper()}, {' '.join(given)}" in sentence


_SHARED_SURNAME = re.compile(r"\b([A-Z][a-z]+) and ([A-Z][a-z]+) ([A-Z][a-z'’-]+)\b")


def _given_name(word: str) -> bool:
    """A first name that is no month or day ('GENEVA, May 14' is a dateline)."""
    return is_first_name(word) and word.lower() not in CALENDAR


def without_nicknames(text: str) -> str:
    """`text` without the nicknames in quotes inside names, read as it writes the name whole
    ('Margaret Doyle, who ...' of 'Margaret "Peggy" Doyle, who ...')."""
    return _INSIDE_A_NAME.sub("", text)


def first_bearers(names: list[str], non_people: set[str]) -> dict[str, list[str]]:
    """People who share a surname with others the text names after them, each with the others:
    the first named is the one the surname alone stands for (a biography's subject before the
    relatives it names later: 'Wilhelm Brandt ... His father, Heinrich Brandt ... Brandt
    sailed'), where no name other than a person's holds the word."""
    words = Counter(word for name in names for word in set(name.split()))
    people = [
        name
        for name in names
        if " " in name
        and name not in non_people
        and canonical_type(name, quoted=False, place=False) == "person"
    ]
    bearers: dict[str, list[str]] = {}
    for name in people:
        bearers.setdefault(name.split()[-1], []).append(name)
    return {
        named[0]: named[1:]
        for surname, named in bearers.items()
        if len(named) > 1 and words[surname] == len(named)
    }


def alone(sentence: str, name: str, others: list[str]) -> bool:
    """`sentence` writes `name`'s surname where it is not the end of one of `others` (the people
    who share it)."""
    surname = name.split()[-1]
    for match in mention_of(surname).finditer(sentence):
        if not any(sentence[: match.end()].endswith(other) for other in others):
            return True
    return False


def title_before_surname(name: str, found: dict[str, str], text: str) -> bool:
    """`name` is a word and a family name ('PCSO Tregarthen') of a person the text also names in
    full after that word ('PCSO Liam Tregarthen'): their title, not a second person."""
    words = name.split()
    if len(words) != 2:
        return False
    title, surname = words
    return any(
        len(other.split()) > 1 and other.split()[-1] == surname and f"{title} {other}" in text
        for other in found.values()
        if other != name
    )
