"""Capitalised names of things that none of graphrag's default entity types (organization, person,
geo, event) covers: laws and kinds of document ('Copyright Act', 'Incident Report'), and languages
and the adjectives of countries' peoples ('Finnish', 'Kenyan', 'South African'). An LLM given
those types leaves them out; the offline extractor did not. Agreements, contracts, protocols and
treaties stay: one named by the parties ('Slack Water Protocol') is often what a story turns on.

The lists are general: the head nouns of documents are English vocabulary, the languages are
pycountry's of ISO 639-1 (the 184 with a two-letter code), and the adjectives are made from
pycountry's country names by the suffixes English forms them with, kept when wordfreq knows the
word as English's. A name the gazetteer holds is a place whatever these say ('Nauru', 'Tonga').
"""

import functools
import re

from graphrag_mcp_server.providers.offline.lexicon import (
    is_english_word,
    is_first_name,
    is_known_place,
)

# fmt: off
DOCUMENT_HEADS = frozenset(
    [
        "act", "acts", "directive", "regulation", "regulations", "decree", "ordinance", "statute",
        "report", "certificate", "licence", "license", "permit", "invoice", "manual", "handbook",
        "specification", "clause", "annex", "appendix", "minutes", "bulletin", "newsletter",
        "brochure", "questionnaire", "checklist",
    ]
)
# fmt: on
"""Last words of the name of a law or of a kind of document (English nouns)."""

_SUFFIXES = ("n", "an", "ian", "ean", "ese", "i")
"""The endings English makes a country's adjective with ('Kenya' -> 'Kenyan', 'Brazil' ->
'Brazilian', 'Chile' -> 'Chilean', 'Malta' -> 'Maltese', 'Oman' -> 'Omani')."""


def has_no_kind(name: str) -> bool:
    """`name` (as written) names a law, a kind of document, a language or a people's adjective: no
    entity of graphrag's default types; a known place never."""
    words = name.split()
    if len(words) > 1 and words[-1].lower() in DOCUMENT_HEADS:
        return True
    folded = name.casefold()
    return (folded in _languages() or folded in _adjectives()) and not is_known_place(name)


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
