"""Where a company's or a place's name goes on past a mark: a legal form after a comma ('Atlântida
Resorts, S.A.'), unless the comma is an address's, and an elided article ("de l'Île Maurice")."""

from __future__ import annotations

import re

from graphrag_mcp_server.providers.offline.lexicon import is_first_name, is_known_place
from graphrag_mcp_server.providers.offline.name_words import is_form_word

_ELIDED = re.compile(r"(?:[dl]|dell|dall|all|nell|sull)['’][^\W\d_]", re.IGNORECASE)


def elided_name_word(word: str) -> bool:
    """A French or Italian article or preposition elided before a capitalised word inside a name
    ("de l'Île Maurice", "Côte d'Ivoire", "Accademia dell'Arte")."""
    return _ELIDED.match(word) is not None and word.split("'")[-1].split("’")[-1][:1].isupper()


_PLACE_ARTICLES = frozenset(["de", "del", "la", "las", "los", "el", "da", "das", "do", "dos"])
"""Romance words inside a place's name before its last word ('San Isidro de las Cuevas')."""


def comma_before_a_form(run: list[str], before: list[str], tokens: list[str]) -> bool:
    """`tokens` start with a comma and a legal form that ends the name `run` ('Atlântida Resorts,
    S.A., the holder', 'Nordwind Logistics, Inc.'); not a country's code or a place after a town
    ('Durban, SA', 'Espargos, Sal'), a role's first word ('Rupert Kline, Company Secretary'), nor
    a region's abbreviation in an address (`_in_an_address`)."""
    if tokens[:1] != [","] or len(tokens) < 2 or not is_form_word(form := tokens[1]):
        return False
    after = tokens[2] if len(tokens) > 2 else ""
    return not (
        _in_an_address(run, before, tokens)
        or (len(form) == 2 and form.isupper())
        or is_known_place(form)
        or is_first_name(form)
        or (after[:1].isupper() and after.isalpha())
    )


def _in_an_address(run: list[str], before: list[str], tokens: list[str]) -> bool:
    """`run` is a town of an address line and the form after its comma a region's abbreviation:
    `run` is a known place, or follows a part of the address and a comma, or a Romance article
    (`before`, the two tokens before it), or the form is followed by a comma and a known place
    ('Calle Zaragoza 100, Tres Cruces, N.L.', 'San Isidro de las Cuevas, N.L.', 'Monterrey,
    N.L., Mexico'); not an appositive's 'the business, Quinta da Serra Alva, Lda.'."""
    part = before[0][:1] if len(before) == 2 and before[1] == "," else ""
    return (
        is_known_place(" ".join(run))
        or part.isupper()
        or part.isdigit()
        or (bool(before) and before[-1] in _PLACE_ARTICLES)
        or (tokens[2:3] == [","] and is_known_place(" ".join(tokens[3:4])))
    )
