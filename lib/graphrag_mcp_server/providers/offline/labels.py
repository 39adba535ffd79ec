"""Capitalised words that label a document's parts rather than name anything: field labels and a
contract's defined terms (the latter bound to the party they stand for)."""

from __future__ import annotations

import re
from collections.abc import Callable

from graphrag_mcp_server.providers.offline.patterns import compiled

FIELD_LABEL = re.compile(
    r"^[ \t>*#-]*\**([A-Z][\w'’ -]{0,30}?)\**(?:\s*\([^)\n]*\))?\s*:", re.MULTILINE
)
"""A field label: a capitalised word or two and a colon at a line's start ('Curator:', 'Find
spot:', 'Agent (Kofi Mensah):'), in catalogues, abstracts, transcripts and forms."""
_PARTIES = (
    "Claimants?|Defendants?|Appellants?|Respondents?|Applicants?|Petitioners?|Plaintiffs?"
    "|Interveners?|Lessor|Lessee|Licensor|Licensee|Landlord|Tenant|Employer|Contractor"
    "|Subcontractor|Buyer|Seller|Vendor|Purchaser|Borrower|Lender|Guarantor|Supplier|Customer"
)
"""Designations of a party in legal English, written in brackets after its name without quotes:
'GREYFRIARS LOGISTICS LIMITED (Claimant)'."""
_PARTY_FIELD = re.compile(rf"^[ \t*]*((?i:{_PARTIES}))[ \t]*:[ \t]*(?=\S)", re.MULTILINE)
"""A party's designation as a field label, its name after it: a judgment's 'Respondent: ...'."""
_LEAD = (
    r"(?:(?:the|my|our|your|his|her|its|their|each|a|an|together|collectively|jointly"
    r"|hereinafter|herein|referred|called|to|as|and),?\s+)*"
)
"""Words legal English writes before a defined term in its brackets: '(my "Executors")', '(each
a "Party")', '(hereinafter referred to as the "Buyer")', '(together, the "Sellers")'."""
_TERM = r"[\"“](?:the\s+)?([A-Z][\w ]{1,40}?)[\"”]"
_DEFINED_TERM = re.compile(
    rf"\(\s*{_LEAD}(?:({_TERM}(?:,?\s+(?:and|or)\s+{_LEAD}{_TERM})*)|({_PARTIES}))\s*\)"
    rf"|{_TERM}\s+(?:means|shall mean|refers to)\s+(?:the\s+)?"
)
"""A contract's defined terms: 'Nordhavn Rederi AS (the "Owner")', 'X Limited ("the Company")',
'(each a "Party" and together the "Parties")', '"Supplier" means ...', and a party's
designation ('(Defendant)')."""
_CAPITALS_BEFORE = re.compile(r"([A-Z][A-Z'’.&-]+(?:[ \t]+[A-Z][A-Z'’.&-]+)+)\s*$")


def defined_terms(text: str) -> list[tuple[str, int]]:
    """Each defined term and where its party's name is to be found: before the parenthesis, or
    after 'means' or a party's field label (a negative position: the name follows: 'Respondent:
    Corran Logistics Limited')."""
    found: list[tuple[str, int]] = [
        (match[1].capitalize(), -match.end()) for match in _PARTY_FIELD.finditer(text)
    ]
    for match in _DEFINED_TERM.finditer(text):
        if match[1]:
            found += [(term[1], match.start()) for term in re.finditer(_TERM, match[1])]
        elif match[4]:
            found.append((match[4], match.start()))
        else:
            found.append((match[5], -match.end()))
    return found


def parties_in_capitals(text: str, terms: list[tuple[str, int]]) -> set[str]:
    """Names written in capitals right before a defined term of `terms` (`defined_terms`), as a
    court's heading or a deed's parties write them ('MARCUS DELACROIX-HALE (Defendant)'): names,
    not headings."""
    return {
        found[1]
        for _, position in terms
        if position >= 0
        and (found := _CAPITALS_BEFORE.search(text[max(0, position - 80) : position]))
    }


def bound_roles(text: str, terms: list[tuple[str, int]], names: list[str]) -> dict[str, list[str]]:
    """Each defined term of `terms` (`defined_terms`) bound to the party it names: the name right
    before '(the "Owner")' or right after '"Supplier" means'; a term no name stands beside is
    bound to none."""
    roles: dict[str, list[str]] = {}
    for term, position in terms:
        near = text[max(0, position - 80) : position] if position >= 0 else text[-position:][:80]
        placed = [
            (near.rfind(name) if position >= 0 else -near.find(name), name)
            for name in names
            if name in near and name.lower() != term.lower()
        ]
        if placed:
            roles.setdefault(max(placed)[1], []).append(term)
    return roles


def speakers(found: dict[str, str], text: str, by_first_name: Callable[[str], bool]) -> set[str]:
    """The keys of `found` that label a speaker's lines twice or more and are a person's name by
    its first name ('Jack Hohaia:', 'LUCIA VEGA:'; a parliament's 'The Minister for Transport
    (Simon Lightwood):' too): a transcript's speakers, names and not field labels, also where the
    text writes them only in capitals."""
    return {
        key
        for key, name in found.items()
        if " " in name
        and by_first_name(name)
        and len(
            compiled(
                rf"^\W*{re.escape(key)}\W*:|\({re.escape(key)}\):", re.IGNORECASE | re.MULTILINE
            ).findall(text)
        )
        > 1
    }


_SIDE = r"[A-Z][\w'’.&-]*(?: [A-Z&][\w'’.&-]*){0,3}"
_SCORE_LINE = re.compile(
    rf"\W*(?:[A-Z][\w ]{{0,30}}:\s*)?(?:(?P<home>{_SIDE}) \d{{1,3}},? (?P<away>{_SIDE}) \d{{1,3}}"
    rf"|(?P<first>{_SIDE}) \d{{1,3}} ?[-–] ?\d{{1,3}} (?P<second>{_SIDE}))\W*"
)
"""A results line: two sides and their scores ('Harrogate Town 2 Morecambe 1', 'Leeds 24-18
Wigan'), as match reports and results tables head a game, after a label or not ('Match report:
...')."""


def score_side(line: str, name: str) -> bool:
    """`name` is one of the two sides of a results line: a team, whatever its words say (a town's
    name, 'Town', 'County' or a first name: 'Crewe Alexandra')."""
    score = _SCORE_LINE.fullmatch(line.strip())
    return score is not None and name.casefold() in {
        side.casefold() for side in score.groupdict().values() if side is not None
    }
