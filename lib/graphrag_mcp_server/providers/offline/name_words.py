"""How names are written inside a sentence: its tokens, and the marks that belong to a name
(a legal form's stops and slash, a possessive before a head noun, an abbreviated Saint)."""

from __future__ import annotations

import re

from graphrag_mcp_server.providers.offline.entity_types import head
from graphrag_mcp_server.providers.offline.lexicon import (
    ORGANISATION_HEADS,
    PLACE_HEADS,
    is_legal_form,
)

_TOKEN = re.compile(r"\w+(?:['’&-]\w+)*|\S")
_DOTTED = re.compile(r"(?:[^\W\d_]{1,2}\.){2,}")
_TOKEN_OR_DOTTED = re.compile(rf"{_DOTTED.pattern}|{_TOKEN.pattern}")
_NAME_ABBREVIATIONS = frozenset(["st", "mt", "ft"])
"""Abbreviations written with a stop inside names: Saint, Mount, Fort."""


def tokens_of(sentence: str) -> list[str]:
    """The sentence's words and marks; a dotted legal form after a capitalised word ('Marittima
    Velaris S.p.A.', 'Hokuto Aerial K.K.') is one word of the name, any other dotted abbreviation
    ('e.g.', 'U.S.') its letters and stops; a legal form written with a slash ('A/S') one word."""
    tokens: list[str] = []
    for token in _TOKEN_OR_DOTTED.findall(sentence):
        if _DOTTED.fullmatch(token) and not (
            tokens and tokens[-1][:1].isupper() and is_legal_form(token)
        ):
            tokens.extend(_TOKEN.findall(token))
        elif tokens[-1:] == ["/"] and _slashed_form(tokens, token):
            tokens[-2:] = [f"{tokens[-2]}/{token}"]
        else:
            tokens.append(token)
    return tokens


def _slashed_form(tokens: list[str], token: str) -> bool:
    """`tokens`' last two ('A', '/') and `token` ('S') make a legal form written with a slash,
    after a capitalised word ('Smørgaard Mejeri A/S')."""
    return len(tokens) > 2 and tokens[-3][:1].isupper() and is_legal_form(f"{tokens[-2]}/{token}")


def strip_possessive(token: str) -> tuple[str, bool]:
    """Remove a trailing 's; report whether there was one."""
    for suffix in ("'s", "’s"):
        if token.endswith(suffix) and len(token) > 2:
            return token[: -len(suffix)], True
    return token, False


def continues_name(last: str, token: str, following: str) -> bool:
    """`token` belongs to the name being read: the apostrophe of a plural possessive before the
    name's head noun ("Weavers' Association") or the stop of an abbreviated Saint, Mount or Fort
    ('St. Oswald')."""
    if token in ("'", "’"):
        return last.endswith("s") and heads_a_name(following)
    return token == "." and last.lower() in _NAME_ABBREVIATIONS and following[:1].isupper()


def heads_a_name(word: str) -> bool:
    """A capitalised organisation's or place's head noun ('Association', 'Church')."""
    return word[:1].isupper() and head(word) in ORGANISATION_HEADS | PLACE_HEADS
