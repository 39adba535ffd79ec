"""Finding named entities in text, the sentences mentioning them, and their canonical types."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from graphrag_mcp_server.providers.offline.text import JOINERS, STOPWORDS, split_sentences

_CALENDAR = frozenset(
    """
    january february march april may june july august september october
    november december monday tuesday wednesday thursday friday saturday sunday
    """.split()
)
_TITLES = frozenset(
    """
    dr mr mrs ms miss mx prof professor sir dame lord lady captain capt mayor
    councillor inspector sergeant judge agent agents doctor officer detective
    lieutenant colonel commander chief president senator minister reverend
    """.split()
)
_PLACE_PREPOSITIONS = frozenset({"in", "at", "near"})
_TYPE_CUES = {
    "organization": frozenset(
        """
        cooperative co-operative board works council company co ltd limited inc
        corp corporation institute university college agency committee trust
        engineering foundation association society group bank authority
        ministry department commission union guild partners holdings laboratory
        labs services school hospital party club press gazette network alliance
        federation office bureau fund industries systems technologies inspectorate
        squad team unit division corps force army navy police command agency
        """.split()
    ),
    "geo": frozenset(
        """
        port point estuary bay river street road lane harbour harbor island
        isle lake mount mountain valley sea ocean county city town village quay
        bridge coast sound strait creek marsh hill square avenue province region
        district cape fort peninsula channel rock sands beach head headland shore
        wharf pier dock moor forest
        """.split()
    ),
    "event": frozenset(
        """
        festival storm conference inquiry summit war battle election flood fair
        regatta hearing trial crisis strike ceremony championship games expo
        symposium
        """.split()
    ),
}
_GEO_PREFIXES = frozenset("port point mount lake cape fort isle".split())

_TOKEN = re.compile(r"\w+(?:['’&-]\w+)*|\S")
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,60})[\"”]")
_TITLE_LIKE = re.compile(r"[A-Z][\w'’&-]*(?:\s+[\w'’&-]+){0,5}")


def _strip_possessive(token: str) -> tuple[str, bool]:
    """Remove a trailing 's; report whether there was one."""
    for suffix in ("'s", "’s"):
        if token.endswith(suffix) and len(token) > 2:
            return token[: -len(suffix)], True
    return token, False


def _is_name_word(word: str) -> bool:
    """A capitalised word that can be part of a name."""
    return word[:1].isupper() and word.lower() not in _CALENDAR and word != "I"


def _core_count(words: list[str]) -> int:
    """Number of words in ``words`` that are not joiners."""
    return sum(w.lower() not in JOINERS for w in words)


def _trim_joiners(words: list[str]) -> list[str]:
    """Drop joiners at either end of a name."""
    while words and words[0].lower() in JOINERS:
        words = words[1:]
    while words and words[-1].lower() in JOINERS:
        words = words[:-1]
    return words


def _split_run(words: list[str]) -> list[list[str]]:
    """Split 'Mirela Voss of Harrowgate Board' at joiners after 2+ words."""
    parts: list[list[str]] = [[]]
    for word in words:
        if word.lower() in JOINERS and _core_count(parts[-1]) >= 2:
            parts.append([])
        else:
            parts[-1].append(word)
    return [_trim_joiners(part) for part in parts]


def _is_sentence_opener(word: str) -> bool:
    """A capitalised sentence-initial word unlikely to start a name ('The', 'Building')."""
    lower = word.lower()
    return lower in STOPWORDS or lower.endswith(("ing", "ly"))


def _run_names(words: list[str], at_start: bool, previous: str) -> list[tuple[str, bool]]:
    """Names in one run of capitalised words, each with a place hint."""
    while words and at_start and _is_sentence_opener(words[0]):
        words = words[1:]
    while words and words[0].lower() in _TITLES:
        words = words[1:]
    words = _trim_joiners(words)
    if _core_count(words) == 1 and not at_start and previous in _PLACE_PREPOSITIONS:
        return [] if words[0].lower() in STOPWORDS else [(words[0], True)]
    return [(" ".join(part), False) for part in _split_run(words) if _core_count(part) >= 2]


def _sentence_names(sentence: str) -> list[tuple[str, bool]]:
    """Capitalised multi-word names (and places after in/at/near) in a sentence."""
    tokens = _TOKEN.findall(sentence)
    names: list[tuple[str, bool]] = []
    run: list[str] = []
    start = 0

    def flush() -> None:
        if run:
            at_start = not any(t[0].isalnum() for t in tokens[:start])
            previous = tokens[start - 1].lower() if start else ""
            names.extend(_run_names(run.copy(), at_start, previous))
            run.clear()

    for index, token in enumerate(tokens):
        word, possessive = _strip_possessive(token)
        joins = bool(run) and (
            word.lower() in JOINERS
            or (_YEAR.match(word) is not None and run[-1].lower() in JOINERS)
        )
        if _is_name_word(word) or joins:
            if not run:
                start = index
            run.append(word)
            if possessive:
                flush()
        else:
            flush()
    flush()
    return names


def _quoted_names(text: str) -> list[str]:
    """Title-like quoted terms such as "Slack Water Protocol"."""
    names = []
    for term in (m.group(1).strip() for m in _QUOTED.finditer(text)):
        words = term.split()
        if _TITLE_LIKE.fullmatch(term) and all(
            w[0].isupper() or w.lower() in JOINERS for w in words
        ):
            names.append(term)
    return names


@dataclass
class Mentions:
    """Named entities of a text and the sentences mentioning each."""

    names: list[str]
    quoted: set[str]
    places: set[str]
    sentences: dict[str, list[str]]


def find_entities(text: str) -> Mentions:
    """Find names in ``text`` and the sentences that mention them."""
    sentences = split_sentences(text)
    found: dict[str, str] = {}
    places: set[str] = set()
    for sentence in sentences:
        for name, is_place in _sentence_names(sentence):
            found.setdefault(name.upper(), name)
            if is_place:
                places.add(found[name.upper()])
    given_names = {name.split()[0].upper() for name in found.values() if " " in name}
    for given in given_names & {place.upper() for place in places}:
        places.discard(found.pop(given))  # 'looked at Alex' names Alex Mercer, not a place
    quoted = {found.setdefault(q.upper(), q) for q in _quoted_names(text)}
    tails = _tail_names(list(found.values()))
    names = [n for n in found.values() if not any(n in t for t in tails.values())]
    forms = _surface_forms(names, tails, quoted | places)
    mentions = {
        name: [s for s in sentences if any(_mentions(s, f) for f in forms[name])] for name in names
    }
    return Mentions(names, quoted, places, mentions)


def _tail_names(names: list[str]) -> dict[str, list[str]]:
    """Shorter names ending a longer one ('Harbour Board' of 'Port Harbour Board')."""
    return {name: [n for n in names if n != name and name.endswith(f" {n}")] for name in names}


def _surface_forms(
    names: list[str], tails: dict[str, list[str]], non_people: set[str]
) -> dict[str, list[str]]:
    """Each name, the shorter names it ends with, and a person's unambiguous surname."""
    word_counts = Counter(w for n in names for w in set(n.split()))
    forms = {}
    for name in names:
        surname = name.split()[-1]
        person = (
            name not in non_people and canonical_type(name, quoted=False, place=False) == "person"
        )
        short = [surname] if person and word_counts[surname] == 1 else []
        forms[name] = [name, *tails[name], *short]
    return forms


def _mentions(sentence: str, form: str) -> bool:
    """Whether ``form`` occurs as whole words in ``sentence``."""
    return re.search(rf"(?<!\w){re.escape(form)}(?!\w)", sentence) is not None


def canonical_type(name: str, *, quoted: bool, place: bool) -> str:
    """Guess organization / geo / event / person from simple cues."""
    words = [w.lower() for w in name.split()]
    cues = _TYPE_CUES
    if any(_YEAR.match(w) for w in words) or words[-1] in cues["event"]:
        return "event"
    if words[-1] in cues["organization"]:
        return "organization"
    if place or words[-1] in cues["geo"] or words[0] in _GEO_PREFIXES:
        return "geo"
    for kind in ("organization", "event", "geo"):
        if any(w in cues[kind] for w in words):
            return kind
    plain = all(w.isalpha() for w in words) and not set(words) & JOINERS
    if not quoted and 2 <= len(words) <= 3 and plain:
        return "person"
    return "organization"
