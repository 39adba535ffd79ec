"""Capitalised names of things that none of graphrag's default entity types (organization, person,
geo, event) covers: laws and kinds of document ('Copyright Act', 'Incident Report'), ships named
with their prefix ('MV Northern Lark', 'RV Polarstern'), languages and the adjectives of
countries' peoples ('Finnish', 'Kenyan', 'South African'), and phrases of common English words
that nothing types ('Product Recall Notice'). An LLM given
those types leaves them out; the offline extractor did not. Agreements, contracts, protocols and
treaties stay: one named by the parties ('Slack Water Protocol') is often what a story turns on.

The lists are general: the head nouns of documents are English vocabulary, the languages are
pycountry's of ISO 639-1 (the 184 with a two-letter code), and the adjectives are made from
pycountry's country names by the suffixes English forms them with, kept when wordfreq knows the
word as English's. A name the gazetteer holds is a place whatever these say ('Nauru', 'Tonga').
"""

import functools
import itertools
import re

from graphrag_mcp_server.providers.offline.lexicon import (
    ORGANISATION_HEADS,
    is_english_word,
    is_first_name,
    is_known_place,
)
from graphrag_mcp_server.providers.offline.text import JOINERS
from graphrag_mcp_server.providers.offline.word_frequency import zipf_frequency

# fmt: off
LAW_HEADS = frozenset(
    ["act", "acts", "directive", "regulation", "regulations", "decree", "ordinance", "statute"]
)
"""The last word of a law's title ('Data Protection Act')."""
DOCUMENT_HEADS = LAW_HEADS | frozenset(
    [
        "report", "certificate", "licence", "license", "permit", "invoice", "manual", "handbook",
        "specification", "clause", "annex", "appendix", "minutes", "bulletin", "newsletter",
        "brochure", "questionnaire", "checklist", "notice", "memo", "memorandum", "circular",
        "announcement", "factsheet", "datasheet",
        # a document's parts and sections ('Table of Contents', 'Media Contact', 'Key Findings')
        "contents", "summary", "overview", "contact", "contacts", "agenda", "notes", "findings",
        "introduction", "conclusion", "conclusions", "recommendations", "references", "glossary",
        "bibliography", "acknowledgements", "acknowledgments", "preface", "foreword", "abstract",
        "changelog", "transcript", "timeline", "resume", "résumé", "vitae", "comments",
        # a record's identifier ('Station ID')
        "id",
        # times and periods ('Commencement Date', 'Bank Holiday', 'Bronze Age')
        "date", "deadline", "holiday", "age", "era",
    ]
)
# fmt: on
"""Last words of the name of a law, of a kind of document, of a document's part or of a time
(English nouns)."""

# fmt: off
VESSEL_PREFIXES = frozenset(
    [
        "MV", "MS", "MT", "MY", "RMS", "HMS", "HMAS", "HMCS", "HMNZS", "USS", "USNS", "RV", "FV",
        "SV", "SY", "NRP", "CCGS", "HNLMS", "KRI", "RNLB",
    ]
)
# fmt: on
"""Prefixes written before a ship's name (merchant, naval, research, fishing, sailing, yachts:
the English-language conventions, navies' and lifeboats' own), in capitals as written; not 'SS'
or 'PS', which also start clubs' names ('SS Lazio') and postscripts. A name all in capitals
('MS JANE DOE') is a heading's, not a ship's."""

_SUFFIXES = ("n", "an", "ian", "ean", "ese", "i")
"""The endings English makes a country's adjective with ('Kenya' -> 'Kenyan', 'Brazil' ->
'Brazilian', 'Chile' -> 'Chilean', 'Malta' -> 'Maltese', 'Oman' -> 'Omani')."""


OFFICES = frozenset(
    [
        "minister", "secretary", "president", "chancellor", "ambassador", "commissioner",
        "governor", "mayor", "consul", "envoy", "spokesman", "spokeswoman", "spokesperson",
        "director", "chairman", "chairwoman", "treasurer", "officer", "engineer", "manager",
        # public, legal and working roles (general English nouns of a post)
        "inspector", "judge", "magistrate", "registrar", "clerk", "superintendent", "supervisor",
        "coordinator", "administrator", "auditor", "surveyor", "warden", "steward", "constable",
        "sergeant", "coroner", "bailiff", "attorney", "solicitor", "counsel", "adviser", "advisor",
        "assistant", "nurse", "teacher", "lecturer", "librarian", "accountant", "technician",
        "controller", "planner", "analyst", "consultant", "invigilator", "examiner", "verifier",
    ]
)  # fmt: skip
"""The last words of an office's title written as a phrase ('Foreign Minister', 'Chief Financial
Officer'): a role, not a name, when the words before it are common English."""


def has_no_kind(name: str) -> bool:
    """`name` (as written) names a law, a kind of document, an office, a ship, a language or a
    people's adjective: no entity of graphrag's default types; a known place never."""
    words = name.split()
    if words[-1].lower() in DOCUMENT_HEADS and (len(words) > 1 or not is_known_place(name)):
        return True  # 'Supply Agreement', and a heading's 'Changelog' alone
    if len(words) > 1 and words[-1] == "CV" and all(map(is_common_word, words[:-1])):
        return True  # 'Academic CV', 'Full CV': a curriculum vitae, no Dutch company's 'CV'
    if len(words) > 1 and words[0] in VESSEL_PREFIXES and not name.isupper():
        return True
    if len(words) > 1 and words[-1].lower() in OFFICES and all(map(office_word, words[:-1])):
        return True  # 'French Foreign Minister', 'Prime Minister': an office, not its holder
    return peoples_word(name) and not is_known_place(name)


def peoples_word(word: str) -> bool:
    """`word` is a language's name or a people's adjective ('English', 'Welsh', 'Kenyan')."""
    folded = word.casefold()
    return folded in _languages() or folded in _adjectives()


def office_word(word: str) -> bool:
    """A word of an office's title before its title word: a people's adjective ('French') or
    common English that names no body ('Foreign', 'Prime'; not 'Bank')."""
    return peoples_word(word) or (is_common_word(word) and word.lower() not in ORGANISATION_HEADS)


def vocabulary_phrase(
    name: str, reason: str, institution: bool = False, heading: bool = False, quoted: bool = False
) -> bool:
    """`name` is typed only by default (entity_types' reason) or by 'the' before it and never
    written in quotes (a program's part: 'the Query Planner'; not 'the "Slack Water Protocol"'),
    or only by a plural last word and never written after 'the' ('New Features', 'Bug Fixes'; not
    'the United Nations'), or only by its head noun and written only as a heading's whole line
    ('Rural Bus Services'), and is a phrase of two words or more, each common English vocabulary:
    no first name, place, language or people's adjective, and no two of them a place ('Product
    Recall Notice', 'Quality Assurance', 'Work Scheme'; not 'East Africa' or 'Immigration New
    Zealand'), or whose first word is a common word in -ing (a
    title: 'Mapping the Medway Marshes', 'Living with Floods'). Such a phrase is a heading, a
    product, a programme or a field's value, not a person's or a body's name; a cue (a title, a
    verb of speech, 'joined X', 'in X') types it instead."""
    words = name.split()
    if reason == "default" and len(words) > 1 and words[0].endswith("ing"):
        return plain_word(words[0])  # a work's or project's title: 'Mapping the Medway Marshes'
    return (
        (
            reason == "default"
            or (reason == "'the X'" and not quoted)
            or (reason == "plural noun" and not institution)
            or (reason == "head noun" and heading and not institution)
        )
        and len(words) > 1
        and all(
            is_common_word(word) and not _names_a_place_or_people(word)
            for word in words
            if word.lower() not in JOINERS  # 'of' ('Limitation of Liability'), a Turkish town
        )
        and not any(is_known_place(f"{one} {two}") for one, two in itertools.pairwise(words))
    )


def heading_only(name: str, text: str) -> bool:
    """Every line of `text` that writes `name` is `name` alone, as a heading (not a list's item)."""
    lines = [line for line in text.splitlines() if name in line]
    return bool(lines) and all(line.strip(" \t#*") == name for line in lines)


def plain_word(word: str) -> bool:
    """`word` is common English vocabulary and no place the gazetteer holds: a heading's first
    word such as 'Episode' or 'Summary', not 'Reading' or 'Porto'."""
    return is_common_word(word) and not is_known_place(word)


@functools.lru_cache(maxsize=1 << 14)
def is_common_word(word: str) -> bool:
    """`word` is common English vocabulary and no first name: letters only, wordfreq's frequency
    of at least COMMON_ZIPF ('notice', 'golden', 'lark'; not 'granola', 'Okafor' or 'Rose')."""
    plain = word.replace("-", "").replace("'", "").replace("’", "")
    return (
        plain.isalpha() and zipf_frequency()(word, "en") >= COMMON_ZIPF and not is_first_name(word)
    )


COMMON_ZIPF = 3.0
"""wordfreq's zipf frequency from which a word is common English (about a use a million words)."""


def _names_a_place_or_people(word: str) -> bool:
    """`word` is a place the gazetteer holds, a language or a people's adjective."""
    return is_known_place(word) or peoples_word(word)


@functools.cache
def _languages() -> frozenset[str]:
    """The names of the languages with an ISO 639-1 code, in lower case, without what pycountry
    writes in brackets ('Malay (macrolanguage)' -> 'malay')."""
    import pycountry

    return frozenset(
        re.sub(r"\s*\(.*\)", "", language.name).casefold()
        for language in pycountry.languages
        if hasattr(language, "alpha_2")
    )


@functools.cache
def _adjectives() -> frozenset[str]:
    """Adjectives of countries' peoples made by `_SUFFIXES` from pycountry's country names (or
    their stems without one or two last letters: 'Belgium' -> 'Belgian'), in lower case: kept when
    no shorter than the name, wordfreq knows the last word as English's and it is no first name
    (not 'Cameron' of 'Cameroon', 'Kenan' of 'Kenya')."""
    import pycountry

    made: set[str] = set()
    for country in pycountry.countries:
        name = getattr(country, "common_name", None) or country.name
        if "," in name or "(" in name:
            continue
        for stem in (name, name[:-1], name[:-2]):
            made.update(
                word
                for suffix in _SUFFIXES
                if len(word := f"{stem}{suffix}".casefold()) >= len(name)
                and is_english_word(last := word.split()[-1])
                and not is_first_name(last)
            )
    return frozenset(made)


def is_nation(word: str) -> bool:
    """`word` is a country's name or a country's nation's ('Scotland'; pycountry's)."""
    return word.casefold() in _nations()


@functools.cache
def _nations() -> frozenset[str]:
    import pycountry

    names = {getattr(c, f, c.name) for c in pycountry.countries for f in ("name", "common_name")}
    names |= {part.name for part in pycountry.subdivisions if part.type == "Country"}
    return frozenset(name.casefold() for name in names)
