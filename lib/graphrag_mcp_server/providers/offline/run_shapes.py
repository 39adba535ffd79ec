"""What a run of capitalised words is besides a name, or where a name in it starts: a title or
structure word before it, a heading's label before a number, a dateline, an office's holders, a
degree's subject, a title's field of work, a role's word that is a surname."""

from __future__ import annotations

from itertools import takewhile

from graphrag_mcp_server.providers.offline.entity_types import (
    family_name_first,
    head,
    type_and_reason,
)
from graphrag_mcp_server.providers.offline.lexicon import (
    HONORIFICS,
    LIBPOSTAL_TITLES,
    ORGANISATION_HEADS,
    ORGANISATION_ROLES,
    PLACE_HEADS,
    TITLES,
    TWO_WORD_TITLES,
    is_first_name,
    is_known_place,
)
from graphrag_mcp_server.providers.offline.name_runs import core_count
from graphrag_mcp_server.providers.offline.name_words import heads_a_name
from graphrag_mcp_server.providers.offline.no_kind import is_common_word
from graphrag_mcp_server.providers.offline.structure_words import (
    DEGREES,
    KIN,
    NOT_NAMES,
    ROLE_WORDS,
)
from graphrag_mcp_server.providers.offline.text import JOINERS
from graphrag_mcp_server.providers.offline.word_frequency import zipf_frequency


def is_name_start(words: list[str]) -> bool:
    """The first of `words` is not a title, role, greeting or structure word: a name can start with
    it. A title that is also a first name ('Dean', 'Major') is one only before two more words
    ahead of any 'of'; an honorific ('Mr', 'Dr') is one even before '&' ('Mr & Mrs Hale'),
    another title not ('Mwalimu & Kessy')."""
    lower = words[0].lower()
    if lower in HONORIFICS or lower in ROLE_WORDS or lower in NOT_NAMES or lower in DEGREES:
        return False
    if lower in LIBPOSTAL_TITLES and core_count(words[1:]) >= 2 and is_first_name(words[1]):
        return False  # 'Me Anne Roux', 'Padre Luis Ortega'
    if words[1:2] == ["&"]:
        return True  # a name before '&' is a firm's ('Mwalimu & Kessy'), a title never is
    named = list(takewhile(lambda word: word != "of", words[1:]))  # 'Selvi Murugan of the ...'
    return lower not in TITLES or (core_count(named) < 2 and is_first_name(lower))


def two_word_title(words: list[str]) -> bool:
    """`words` open with a title of two words (TWO_WORD_TITLES) before a name of two or more."""
    pair = tuple(word.lower() for word in words[:2])
    return pair in TWO_WORD_TITLES and core_count(words[2:]) >= 2


def qualifies_title(words: list[str]) -> bool:
    """The first of `words` qualifies the title after it, before a name of two words or more
    ('Executive Engineer Vinayak Deshpande', 'Ward Officer ...', 'Civil Surgeon ...')."""
    second = words[1].lower() if len(words) > 3 else ""
    return (
        core_count(words[2:]) >= 2
        and (second in ROLE_WORDS or second in TITLES)
        and (second in ROLE_WORDS or not is_first_name(words[0]) or is_first_name(words[2]))
    )  # a role word is never a name's ('Ward Officer'); a title can be ('Frank Major Hale')


def dateline(word: str, after: str) -> bool:
    """`word`, opening its line, is a known place in capitals before a comma or a bracket: a news
    dispatch's dateline ('AMSTERDAM, 4 March (Reuters) -', 'LIMA (AP) -')."""
    return word.isupper() and after in (",", "(") and is_known_place(word)


def numbered_label(word: str, after: str) -> bool:
    """`word` is very common English before a number: a heading's label ('Lot 1 - Pipes', though
    the gazetteer knows a Lot), not a body's name before a year ('Arup 2024 review')."""
    return after[:1].isdigit() and zipf_frequency()(word, "en") >= _LABEL_ZIPF


_LABEL_ZIPF = 4.0
"""wordfreq's zipf frequency from which a word before a number is a label's ('lot', 'phase')."""


def plural_title(word: str) -> bool:
    """A title in the plural ('Mayors', 'Bishops'), not of kin ('Sisters of Mercy': an order)."""
    lower = word.lower()
    return lower.endswith("s") and lower[:-1] in TITLES - KIN


def all_common(words: list[str]) -> bool:
    """`words`, besides joiners, are common English ('Civil Engineering', 'Market Oversight')."""
    return bool(words) and all(
        is_common_word(word) for word in words if word.lower() not in JOINERS
    )


def names_a_field(words: list[str]) -> bool:
    """`words` name a field of work, not a body: common English, besides joiners, at least one an
    abstract noun ('Enforcement and Market Oversight', 'Public Prosecutions'; not 'National Grid'),
    and no head noun last."""
    return (
        all_common(words)
        and any(word.lower().removesuffix("s").endswith(_ABSTRACT_ENDINGS) for word in words)
        and not heads_a_name(words[-1])
    )


_ABSTRACT_ENDINGS = ("ment", "tion", "sion", "ance", "ence", "ity", "ship", "ness", "ogy")
"""Endings of English abstract nouns, read on the singular ('enforcement', 'operations',
'leadership')."""


def role_as_surname(words: list[str]) -> bool:
    """`words` are a first name and a role's word that is no title, its surname ('Mark Steward',
    'Ann Warden'): the role words at a name's end are not taken off."""
    return len(words) == 2 and is_first_name(words[0]) and words[1].lower() in ROLE_WORDS - TITLES


def is_common_head(word: str) -> bool:
    """A word that starts 'W of Name' without being part of the name (not a body's or a place's
    head noun, a title, a first name or a place)."""
    return not (
        word.lower() in ORGANISATION_HEADS  # 'Friends of ...'
        or head(word) in ORGANISATION_HEADS
        or head(word) in PLACE_HEADS
        or word.lower() in TITLES
        or is_first_name(word)
        or is_known_place(word)
    )


_FORM_REASONS = frozenset(["event word", "legal form", "head noun", "gazetteer"])
"""Reasons that type a name by its own words as something other than a person."""


def person_after_title(words: list[str]) -> list[str]:
    """A person's name written after words no title list holds ('Staff Nurse Moira Lennox', 'GM
    Bram Oosterhuis', 'Fourteen-year-old Yusuf Demirci'): the words from its first first name on,
    when nothing before that is a first name (an abbreviation in capitals before mixed case, or a
    small word such as 'his', is none) and they make a person's name of two or three words, not
    ending in a role. Any other run is returned unchanged: a name that starts with a first name,
    a body's or place's name by its own words ('Royal Albert Hall', 'Mount Saint Helens'), and a
    family name written before given names only ('Nguyễn Thị Thu Hà'; a word no list holds before
    a first name and a surname is a title: 'Politiførstebetjent Rune Eidsvåg')."""
    if len(words) < 3:
        return words
    reason = type_and_reason(" ".join(words), quoted=False, place=False)[1]
    if reason in _FORM_REASONS:
        return words
    if reason == "head noun first" and words[1].lower() in JOINERS:
        return words  # 'COOPERATIVA DOS SALINEIROS DE ...': not 'DE ...', as 'De' is a first name
    if family_name_first(words) and all(is_first_name(word) for word in words[1:]):
        return words  # 'Nguyễn Thị Thu Hà': a family name, then given names only
    for start in range(1, len(words) - 1):
        if not _before_a_name(words[start - 1], words[start]):
            return words
        rest = words[start:]
        if rest[0][:1].isupper() and is_first_name(rest[0]) and not _abbreviation(rest[0], rest[1]):
            typed = type_and_reason(" ".join(rest), quoted=False, place=False)[1]
            role = rest[-1].lower() in ORGANISATION_ROLES | TITLES  # 'Ashgrove Lane Lawyers'
            return rest if typed == "first name" and not role else words
    return words


def _before_a_name(word: str, following: str) -> bool:
    """`word` can stand in front of a name without being part of it: not a first name, unless it
    is an abbreviation or a small word."""
    lower = word.lower()
    return not is_first_name(word) or _abbreviation(word, following) or lower in _SMALL_WORDS


def _abbreviation(word: str, following: str) -> bool:
    """An abbreviation in capitals ('GM', 'PC', 'IM') before a word in mixed case: a title, not a
    first name in capitals."""
    return word.isupper() and len(word) <= 4 and not following.isupper()


_SMALL_WORDS = frozenset(["his", "her", "their", "our", "my", "your", "the", "a", "an", "to"])
"""Words that start a title ('His Honour', 'Her Excellency') and some first-name lists hold."""
