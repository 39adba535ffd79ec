"""Links from a role in a body to its holder, when the sentence does not name the body: 'its
owner, X' further on in a sentence, "the council's project manager, Ing. X", 'The chair, X'
opening one, 'X, the firm's founder', a role opening one before the name ('CEO Ingrid Haugen
said', 'Trustees include Owen Price and Lena Marsh'). The body is the one name of the text
ending in the noun ('the council'), else the nearest body named in the last three sentences.
Also whose something a sentence opening with 'Its' speaks of (`owner`), and the body a text is
about (`lead_body`), whom such words mean in a paragraph that names no body."""

from __future__ import annotations

import itertools
import re

from graphrag_mcp_server.providers.offline.entities import ROLE_HEADS, Mentions, typed
from graphrag_mcp_server.providers.offline.entity_types import head
from graphrag_mcp_server.providers.offline.legal_forms import without_legal_form
from graphrag_mcp_server.providers.offline.lexicon import ORGANISATION_HEADS, PLACE_HEADS, TITLES
from graphrag_mcp_server.providers.offline.structure_words import BODY_NOUNS

_OWNED = re.compile(r"(?:^[\"“(]*|(?:,[\"”]|[\"”],)\s+)(?:[Ii]ts|[Tt]he\s+([a-z]+)(?:'s|’s))\s")
"""'Its chief executive, ...', "The company's owner, ...", '"...," its manager, ... said' at the
start of a sentence: something of a body or a place named in the sentences before (`owner`;
'its' further on can mean a thing of this sentence: 'the frame had shifted on its mounting')."""


def lead_body(found: Mentions, sentences: list[str]) -> str | None:
    """The body a text is about: the organisation named in more of its sentences than any other
    (its name with a legal form and without it counted as one: 'Quinta da Serra Alva' and
    'Quinta da Serra Alva, Lda.'), when its opening (the first two sentences that name anything: a
    heading and a lead) names it, by the name the opening writes; else None. A later paragraph's
    'the company's chairman, X' or 'the firm' means it when that paragraph names no body
    ('Lindqvist Ferries names a chief executive ... She joins from Baltic Rail. [paragraph] The
    company's chairman, Henrik Aalto, said ...')."""
    bodies: dict[str, list[str]] = {}
    for name in found.names:
        if typed(name, found)[0] == "organization":
            bodies.setdefault(" ".join(without_legal_form(name.split())), []).append(name)
    named = {
        plain: len({s for name in names for s in found.sentences[name]})
        for plain, names in bodies.items()
    }
    ranked = sorted(named, key=named.__getitem__, reverse=True)
    if not ranked or (len(ranked) > 1 and named[ranked[1]] == named[ranked[0]]):
        return None
    naming = (s for s in sentences if any(s in found.sentences[name] for name in found.names))
    opening = list(itertools.islice(naming, 2))
    written = (name for name in bodies[ranked[0]] if set(opening) & set(found.sentences[name]))
    return next(written, None)


def owner(
    found: Mentions, earlier: list[list[str]], sentence: str, lead: str | None = None
) -> tuple[str, int] | None:
    """Whose something a sentence speaks of by 'its' or "the company's" (an organisation's or a
    place's noun), and how many sentences back it is named (0: not counted): the one name of the
    text ending in the noun ("the hospital's" of Akademiska Hospital), else the first body or
    place of the nearest of the `earlier` sentences (a paragraph's last three) that names one
    ('Founded by Mark Hollins, Hollins Engineering builds bridges. He ran it for years. Its
    largest contract ...'), when this one names none before the 'its' (a body named after it is
    another: 'Its managing director, Somchai Wongsakul, told Krungthep Business Daily ...');
    else, for "the company's", the text's `lead` body (`lead_body`), 0 sentences back ('its' may
    be a thing's); else None."""
    match = _OWNED.search(sentence)
    if not match or (match[1] and head(match[1]) not in ORGANISATION_HEADS | PLACE_HEADS):
        return None
    kinds = ("organization",) if match[1] else ("organization", "geo")
    named_before = sentence[: match.start()]
    if any(typed(name, found)[0] in kinds for name in found.names if name in named_before):
        return None  # '"...," its manager said': 'its' of the body the quote names
    if match[1] and (body := one_named_by_noun(found, match[1])):
        return body, 0  # "The hospital's ..." of the one name ending in 'Hospital'
    for back, names in enumerate(earlier[::-1], start=1):
        if body := next((name for name in names if typed(name, found)[0] in kinds), None):
            return body, back
    return (lead, 0) if lead and match[1] else None


_ITS_ROLE = re.compile(
    r"(?:\b[Ii]ts|\b[Tt]he\s+([a-z]+)(?:'s|’s)|^[\"“]?The)\s+(?:[a-z]+\s+)?([a-z]+),\s+"
)
"""'its owner, ', "the operator's managing director, " before a name, further on in a
sentence; 'The chair, ' opening one."""
_NAMED_ROLE = re.compile(r"[\"“]?([A-Z][a-z]+)(?:'s|’s)\s+(?:[a-z]+\s+)?([a-z]+),\s+")
""""Town's manager, " opening a sentence: a role in the one body whose name ends in that word
('Harrowgate Town'), as sports reports name a club once they have named it in full."""


def role_holder(
    found: Mentions, before: list[str], sentence: str, names: list[str], lead: str | None = None
) -> tuple[str, str] | None:
    """The body named before (`before`: the last three sentences' names, nearest first) and the
    person named as its role holder further on in this sentence ('... thanked its owner, Samuel
    Greaves, for ...'), when this sentence names no body before the 'its'; else None. `lead`: the
    text's lead body, meant by "the company's" when `before` names no body."""
    match = _ITS_ROLE.search(sentence) or _NAMED_ROLE.match(sentence)
    if not match or match[2] not in ROLE_HEADS:
        return None
    noun = match[1].lower() if match[1] else None
    if match.re is _NAMED_ROLE:  # "Town's manager, X": the noun is the last word of one name
        if one_named_by_noun(found, noun or "") is None:
            return None
    elif not _a_body(noun):
        return None
    holder = next(
        (name for name in names if _TITLES.fullmatch(_between(sentence, match, name))), None
    )
    named_before = sentence[: match.start()]
    if (
        holder is None
        or typed(holder, found)[0] != "person"
        or any(typed(name, found)[0] == "organization" for name in names if name in named_before)
    ):
        return None
    body = _body_meant(found, before, noun, lead)
    return (body, holder) if body else None


_ROLE_AFTER = re.compile(r",\s+(?:the\s+([a-z]+)(?:'s|’s)|its|their)\s+(?:[a-z]+\s+)?([a-z]+)\b")
"""', the firm's founder', ', its chair' after a person's name."""


def role_after_name(
    found: Mentions, before: list[str], sentence: str, names: list[str], lead: str | None = None
) -> tuple[str, str] | None:
    """A person named with a role in a body after their name ('Kovalenko, the firm's founder,
    stepped down') and that body: the one the noun names, else the nearest one named before
    (`before`: the last three sentences' names, nearest first), else for "the firm's" the text's
    `lead` body; None when this sentence names a body itself."""
    if any(typed(name, found)[0] == "organization" for name in names):
        return None
    for name in names:
        at = sentence.find(name)
        match = _ROLE_AFTER.match(sentence, at + len(name)) if at >= 0 else None
        if (
            match
            and match[2] in ROLE_HEADS
            and typed(name, found)[0] == "person"
            and _a_body(match[1])
        ):
            body = _body_meant(found, before, match[1], lead)
            return (body, name) if body else None
    return None


_OPENING_WORD = re.compile(r"(?:[A-Z][a-z]+|[A-Z]{2,4})\s+")
_LIST_VERB = re.compile(r"(?:include|includes|included|are|were)\s+")


def role_opening(
    found: Mentions, before: list[str], sentence: str, names: list[str]
) -> list[tuple[str, str]]:
    """The body named before (`before`: the last three sentences' names, nearest first) and each
    person a role opening this sentence names ('CEO Ingrid Haugen said ...', 'Trustees include
    Owen Price and Lena Marsh'), when this sentence names no body; else none."""
    end = _role_end(sentence, len(sentence) - len(sentence.lstrip('"“')))
    if end is None or any(typed(name, found)[0] != "person" for name in names):
        return []
    holders = [name for name in names if sentence.find(name) >= end]
    if not holders or sentence.find(holders[0]) != end:
        return []
    body = _body_meant(found, before, None)
    return [(body, holder) for holder in holders] if body else []


_ROLE_MODIFIERS = frozenset(["managing", "general", "acting", "interim", "founding", "lead"])
_OPENING_ROLE_WORDS = ROLE_HEADS | _ROLE_MODIFIERS


def _role_end(sentence: str, start: int) -> int | None:
    """Where the role opening `sentence` at `start` (after its opening quote) ends ('CEO ',
    'Managing Director ', 'Trustees include '): up to three words, the last a role word, the
    others role words or modifiers; the longest such; None when it opens with none."""
    end, found = start, None
    for _ in range(3):
        word = _OPENING_WORD.match(sentence, end)
        if word is None or word[0].strip().lower() not in _OPENING_ROLE_WORDS:
            break
        end = word.end()
        if word[0].strip().lower() in ROLE_HEADS:
            verb = _LIST_VERB.match(sentence, end)
            found = verb.end() if verb else end
    return found


def _a_body(noun: str | None) -> bool:
    """'its' (None), or a noun of a body: 'the firm's', "the operator's"."""
    return noun is None or head(noun) in ORGANISATION_HEADS or noun in BODY_NOUNS


def _body_meant(
    found: Mentions, before: list[str], noun: str | None, lead: str | None = None
) -> str | None:
    """The body a role belongs to: the one body of the text whose name ends in `noun` ('the
    council' -> '... City Council'), else the first of `before` (the names of the last three
    sentences, the nearest sentence's first), else for a noun ("the company's") the `lead` body
    ('its' may be a thing's)."""
    if noun and (body := one_named_by_noun(found, noun)):
        return body
    body = next((name for name in before if typed(name, found)[0] == "organization"), None)
    return body or (lead if noun else None)


def role_in_short(name: str, sentence: str) -> bool:
    """The sentence writes `name` short (its last word) with a role in it: "Wanderers' coach Ian
    Tully said ..." names someone else of that body, not the subject of the sentence before."""
    short = re.escape(name.split()[-1])
    roles = re.finditer(rf"\b{short}(?:'s|’s|'|’)\s+(?:[a-z]+\s+)?([a-z]+)\b", sentence)
    return any(role[1] in ROLE_HEADS | TITLES for role in roles)  # 'coach', 'captain'


def one_named_by_noun(found: Mentions, noun: str) -> str | None:
    """The one name of the text ending in `noun` ('the council' -> '... City Council'), else
    None (none, or two)."""
    ending = named_by_noun(found, noun)
    return ending[0] if len(ending) == 1 else None


def named_by_noun(found: Mentions, noun: str) -> list[str]:
    """The text's names ending in `noun`: the bodies 'the council' may mean."""
    return [name for name in found.names if name.lower().endswith(f" {noun}")]


_TITLES = re.compile(r"(?:[A-Z][a-z]{0,4}\.?\s+){0,2}")
"""What may stand between a role and its holder's name: up to two titles ('Ing. ', 'Dr ')."""


def _between(sentence: str, match: re.Match[str], name: str) -> str:
    """The text from the end of `match` to `name`'s first mention after it ('\\n', which no
    title matches, when there is none)."""
    at = sentence.find(name, match.end())
    return sentence[match.end() : at] if at >= 0 else "\n"
