"""The type of a name (person, organization, geo, event) from general knowledge and its context.

The order of the evidence, strongest first: a year or an event word at the end; a company legal
form; the head noun at the end (an organisation's or a place's); the gazetteer; a body's noun
first ('Office de Protection ...', 'Fondazione ...'); what the text says around the name (a title
or a verb of speech: a person; 'joined X', 'founded X', "X's managing director", 'X announced': an
organisation); 'in/at X': a place; a known first name: a person; any head noun in the name; 'the
X': an organisation. A plain name of two or three words that nothing types gets DEFAULT_TYPE, and
the reason says so (docs/benchmarks.md measures how often that is right). Such a name made of
common English words only is no entity at all (no_kind.vocabulary_phrase).
"""

from __future__ import annotations

import re

from graphrag_mcp_server.providers.offline.labels import score_side
from graphrag_mcp_server.providers.offline.land_words import (
    family_name_of_land,
    foreign_place_first,
)
from graphrag_mcp_server.providers.offline.legal_forms import (
    ends_in_legal_form,
    written_as_legal_form,
)
from graphrag_mcp_server.providers.offline.lexicon import (
    HONORIFICS,
    ORGANISATION_HEADS,
    ORGANISATION_ROLES,
    ORGANISATION_VERBS,
    PLACE_FIRST_WORDS,
    PLACE_HEADS,
    SPEECH_VERBS,
    TITLE_ABBREVIATIONS,
    TITLES,
    is_english_word,
    is_first_name,
    is_known_place,
    is_lower_case_body_noun,
)
from graphrag_mcp_server.providers.offline.no_kind import (
    DOCUMENT_HEADS,
    is_common_word,
    is_nation,
    peoples_word,
)
from graphrag_mcp_server.providers.offline.patterns import compiled, mention_of
from graphrag_mcp_server.providers.offline.street_names import street_name
from graphrag_mcp_server.providers.offline.structure_words import (
    BODY_NOUNS,
    COMPASS,
    KIN,
    ROLE_WORDS,
)
from graphrag_mcp_server.providers.offline.text import JOINERS, STOPWORDS

# fmt: off
_PEERAGES = frozenset([  # titles of nobility that name a person with 'of' and a place
    "duke", "duchess", "earl", "countess", "marquess", "marchioness", "viscount", "viscountess",
    "baron", "baroness", "prince", "princess", "lord", "lady"])
EVENT_HEADS = frozenset(
    [
        "festival", "storm", "conference", "inquiry", "summit", "war", "battle", "election",
        "flood", "fair", "hearing", "crisis", "strike", "ceremony", "championship", "games",
        "expo", "symposium", "olympics", "tournament", "cup", "revolution", "earthquake",
    ]
)
# fmt: on
"""Last words of an event's name."""
DEFAULT_TYPE = "person"
"""The type of a plain name of two or three words that no rule types: most such names in prose
are people's (measured in docs/benchmarks.md, 'typed by default')."""
COMPETITOR = "side of a results line"
"""context_cue's answer for a name that a results line gives a score (labels.score_side): a team."""
TITLED = "titled person"
"""context_cue's answer for a single word written after a title ('Cllr Barnes', 'Mr. Harlan'): a
person, whatever else the word can be (a place the gazetteer knows, a common word)."""
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")
_AFTER = re.compile(r"^(?:'s|’s)?\s*,?\s*(\w+)?(?:\s+(\w+))?")
_BEFORE = re.compile(r"(\w+)\W+(?:(\w+)\W+)?(?:(\w+)\W+)?$")


def head(word: str) -> str:
    """A lower-case word in its singular ('laboratories' -> 'laboratory')."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _is_head(word: str, heads: frozenset[str]) -> bool:
    return word.lower() in heads or head(word) in heads or _works_compound(word, heads)


def _works_compound(word: str, heads: frozenset[str]) -> bool:
    """A closed compound of an English word and 'works' ('Boatworks', 'Ironworks', 'Glassworks'),
    where `heads` holds 'works' (the bodies' head nouns)."""
    lower = word.lower()
    return (
        "works" in heads
        and lower.endswith("works")
        and len(lower) > 7
        and is_english_word(lower.removesuffix("works"))
    )


def _names_a_body(last: list[str]) -> bool:
    """The words before an appositive (nearest first) end in a body's noun after an article or a
    possessive ('the operator, X', 'its parent company, X', 'his company, X'), or after 'joined a
    ...' ('joined a competitor, X')."""
    articles = ("a", "an", "the", "its", "their", "his", "her", "our", "my", "your")
    if not last:
        return False
    if last[1:3] and last[1] in articles and last[2:3] == ["joined"]:
        return True
    body = last[0] not in ROLE_WORDS | ORGANISATION_ROLES and (
        _is_head(last[0], ORGANISATION_HEADS) or last[0] in BODY_NOUNS
    )  # not 'its chief executive, X'
    return body and any(word in articles for word in last[1:3])


_ROLE_OF = re.compile(
    r",\s+(?:(?:the|its|their)\s+\w+(?:'s|’s)|its|their)\s+(?:\w+\s+)?(\w+)", re.IGNORECASE
)
"""', the firm's founder', ', its chief executive' after a mention: the last word the role."""


def single_name_cue(rest: str) -> bool:
    """The words after a single capitalised word say it names someone or a body: a body's verb
    ('Zentrix announced'), ', who' or a role in a body (', the firm's founder')."""
    following = _words(rest)[:1]
    return (
        (
            bool(following)
            and not rest.lstrip().startswith(",")
            and following[0] in ORGANISATION_VERBS
        )
        or re.match(r",\s+who\b", rest) is not None
        or _held_role(rest)
    )


_APPOSITIVE = re.compile(
    r"^,\s+(?:the|a|an)\s+(?:[\w'’-]+\s+){0,3}?([\w-]+)\s*"
    r"(?:[,.;:)]|$|that\b|which\b|based\b|(?:in|at|near|from|with|founded|owned|run)\s)"
)
"""', the Swansea accountancy firm.', ', a design firm in Graz' after a mention: the appositive's
noun, its last word or the word before a place, an owner or a founder."""


def _body_appositive(rest: str) -> bool:
    """The words after a mention call it a body: ', the Swansea accountancy firm', ', a
    family-owned company that ...' (a body's noun, no role's: not ', a company director')."""
    found = _APPOSITIVE.match(rest)
    noun = found[1].lower() if found else ""
    return noun not in ROLE_WORDS | ORGANISATION_ROLES and (
        _is_head(noun, ORGANISATION_HEADS) or noun in BODY_NOUNS
    )


def _held_role(rest: str) -> bool:
    """The words after a mention give it a role in a body: ', the firm's founder', ', its chief
    executive'... (a person's appositive)."""
    found = _ROLE_OF.match(rest)
    return found is not None and found[1].lower() in ROLE_WORDS | ORGANISATION_ROLES


_WORD = re.compile(r"[\w'’]+")


def _words(text: str) -> list[str]:
    """The lower-case words of `text`."""
    return [word.lower() for word in _WORD.findall(text)]


_WORKS_FOR = [
    [preposition, verb]
    for preposition, verbs in (
        ("for", ("worked", "works", "working", "played", "plays", "playing", "signed")),
        ("by", ("employed",)),
    )
    for verb in verbs
]
"""A verb and its preposition before a body, nearest word first ('worked for X', 'signed for X')."""


_BODY_AFTER = frozenset(["brand", "brands", "subsidiary", "franchise", "chain", "label"])
"""Nouns written right after a name that make it a business's ('our Bakewell Kitchen brand')."""


def context_cue(text: str, name: str) -> str | None:
    """'person' or 'organization' where the words around a mention of `name` on its line say so
    (before it: a title, a verb of speech, 'joined', 'founded', 'worked for', 'director of'; after
    it: "'s managing director", a verb of speech, 'announced', ', who', a legal form, after a
    comma or not), else None."""
    votes = {"person": 0, "organization": 0}
    titled = False
    for match in mention_of(name).finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if score_side(text[line_start:].split("\n", 1)[0], name):
            return COMPETITOR
        before = re.split(r"[.;:!?()]", text[max(line_start, match.start() - 60) : match.start()])
        last = _words(before[-1])[::-1][:3]  # nearest first
        rest = text[match.end() : match.end() + 40].split("\n")[0]
        possessive = rest.startswith(("'s", "’s"))
        following = _words(rest.removeprefix("'s").removeprefix("’s"))[:2]
        right_after = bool(following) and not rest.lstrip(" 's’").startswith(",")
        appositive = before[-1].rstrip().endswith(",") and _names_a_body(last)
        if (
            last[:1] in (["joined"], ["founded"])
            or (possessive and any(w in ORGANISATION_ROLES for w in following))
            or appositive
            or _body_appositive(rest)
        ):
            votes["organization"] += 1
        elif last[:1] in (["of"], ["for"]) and any(w in ORGANISATION_ROLES for w in last[1:]):
            votes["organization"] += 1  # 'managing director of X', 'chairman for X'
        elif last[:2] in _WORKS_FOR:
            votes["organization"] += 1  # 'worked for X', 'employed by X', 'played for X'
        if right_after and not possessive and following[0] in ORGANISATION_VERBS | _BODY_AFTER:
            votes["organization"] += 1  # 'X announced', 'our Bakewell Kitchen brand'
        if not before[-1].strip() and _its_after(name, rest):
            votes["organization"] += 1  # 'X has since retrained its officers'
        if possessive and last[:1] in (["at"], ["from"]) and _owns_nothing(rest):
            votes["organization"] += 1  # 'bought ribbon at Whitworth's': a shop's premises
        opens_line = len(_words(text[line_start : match.start()])) < 2  # '- Added Dark Mode'
        if (right_after and following[0] in SPEECH_VERBS) or (
            last and last[0] in SPEECH_VERBS and not opens_line
        ):
            votes["person"] += 1
        titled = (
            titled
            or honorific_before(text, match.start())
            or _kin_before(last)
            or _speaker_in_brackets(text[line_start : match.start()], rest)
        )
        if following[:1] == ["who"] or (last and last[0] in TITLES) or _held_role(rest):
            votes["person"] += 1
        elif last[:1] == ["dear"]:
            votes["person"] += 1  # 'Dear Jedediah,': a letter's addressee
        if (form := _LEGAL_FORM_AFTER.match(rest)) and _legal_form_after(form, rest):
            votes["organization"] += 2  # 'Penedela Vinhos, Lda.', a short name's full form
    best = max(votes, key=lambda kind: votes[kind])
    if titled and " " not in name and best == "person":
        return TITLED
    return best if votes[best] > min(votes.values()) else None


_ITS = re.compile(
    r"^\s+(?:(?:has|had|have|will|would|also|now|since|then|later)\s+){0,2}(\w+)\s+its\b"
)


def _its_after(name: str, rest: str) -> bool:
    """A verb after the name, then 'its' ('X has since retrained its officers', 'X sold its
    depot'), the name opening the sentence (else 'its' may stand for a body named before it) and
    no first name: what the name stands for owns things as a body does, not as a person."""
    verb = _ITS.match(rest)
    return (
        verb is not None
        and verb[1].islower()
        and verb[1] not in STOPWORDS
        and not is_first_name(name.split()[0])
    )


def _owns_nothing(rest: str) -> bool:
    """The words after a possessive name no thing it owns ("at Whitworth's for ...", "from
    Harrods's."): the name stands for a business's premises."""
    after = rest[2:].lstrip()
    return not after[:1].isalpha() or _words(after)[0] in STOPWORDS


def premises(text: str, name: str) -> bool:
    """`text` writes the single word `name` as a business's premises ("bought ribbon at
    Whitworth's for Lizzie"): a body, though 'at' stands before it."""
    return any(
        _owns_nothing(text[match.end() :])
        for match in compiled(rf"\b(?:at|from) {re.escape(name)}(?=['’]s\b)").finditer(text)
    )


def honorific_before(text: str, start: int) -> bool:
    """A title that only ever stands before a person ('Dr', 'Mrs', 'Cllr.') is written right before
    `start`, on its line."""
    line_start = text.rfind("\n", 0, start) + 1
    title = re.search(r"([\w'’]+)\.?\s+$", text[max(line_start, start - 20) : start])
    return title is not None and title[1].lower() in HONORIFICS | TITLE_ABBREVIATIONS


_KIN_BEFORE = KIN | frozenset(["fiancé", "fiancée", "stepson", "stepdaughter"])
"""Nouns before a name that make it a person's, whatever else it names ('his sister Anna')."""
_POSSESSIVES = frozenset(["his", "her", "their", "my", "our", "your", "whose"])


def _kin_before(last: list[str]) -> bool:
    """The words before a mention (nearest first) are a possessive and a kinship noun ('her
    brother Tomas'): the name is a person's."""
    return len(last) >= 2 and last[0] in _KIN_BEFORE and last[1] in _POSSESSIVES


def _speaker_in_brackets(line_before: str, rest: str) -> bool:
    """A mention in brackets after a role that labels a line ('Agent (Sofia):' of a transcript):
    the speaker, a person."""
    return (
        rest.startswith(("):", ") :"))
        and re.fullmatch(r"[ \t>*-]*[A-Z][\w'’ -]{0,30}\(", line_before) is not None
    )


def _legal_form_after(form: re.Match[str], rest: str) -> bool:
    """The word after a mention is a legal form, not the first word of a role ('Rupert Kline,
    Company Secretary')."""
    role = _words(rest[form.end() :])[:1]
    return written_as_legal_form(form[1]) and not (
        role and role[0] in ROLE_WORDS | ORGANISATION_ROLES
    )


def type_and_reason(
    name: str,
    *,
    quoted: bool,
    place: bool,
    institution: bool = False,
    cue: str | None = None,
) -> tuple[str, str]:
    """The canonical type of `name` and the evidence that gave it (see the module's docstring)."""
    words = [w.lower() for w in name.split()]
    if cue == COMPETITOR:
        if not is_first_name(words[0]):
            return "organization", "results line"
        cue = None  # 'Jonas Weber 45, Ida Berg 39': people and their ages
    if any(_YEAR.match(w) for w in words) or _is_head(words[-1], EVENT_HEADS):
        return "event", "event word"
    if ends_in_legal_form(name.split()):
        return "organization", "legal form"
    if (_family_name_in_s(words) or family_name_of_land(words, place)) and not institution:
        return "person", "first name"  # 'Tyrone Banks': a family name, not a bank
    if _is_head(words[-1], ORGANISATION_HEADS) or is_lower_case_body_noun(name.split()[-1]):
        return "organization", "head noun"  # 'Redwater Shipping', 'Hellevik lensmannskontor'
    if len(words) > 2 and _is_head(words[-2], ORGANISATION_HEADS) and is_known_place(words[-1]):
        return "organization", "head noun before a place"  # 'Trinity College Dublin'
    if len(words) > 2 and words[1] == "of" and _is_head(words[0], ORGANISATION_HEADS):
        return "organization", "head noun first"  # 'Friends of Shibden Hall', 'Museum of the Gorge'
    if _is_head(words[-1], PLACE_HEADS) or words[0] in PLACE_FIRST_WORDS or street_name(name):
        return "geo", "head noun"  # also 'Rua das Flores', 'Andrássy út', 'Mainzer Landstraße'
    if cue == TITLED:
        return "person", "title"
    if foreign_place_first(words) and cue != "person":
        return "geo", "head noun first"  # 'Puerto Cortés', 'Sveti Matej', 'Rio Bons Sinais'
    if len(words) == 3 and words[0] in _PEERAGES and words[1] == "of":
        return "person", "peerage"  # 'the Earl of Harewood', 'the Prince of Wales'
    if is_known_place(name) or _place_and_compass(name.split()):
        return "geo", "gazetteer"  # also 'Cardiff North', 'West Cardiff': a place's part
    if len(words) == 2 and words[0] in ("st", "st.", "saint"):
        return "geo", "saint's name"  # 'St Just', 'St Kilda': a town or a parish, not the saint
    if len(words) > 1 and (
        _is_head(words[0], ORGANISATION_HEADS)
        or ("of" in words[1:-1] and _is_head(words[words.index("of") - 1], ORGANISATION_HEADS))
    ):  # 'Office de Protection ...', 'Museo Civico', 'Glasgow School of Art'
        return "organization", "head noun first"
    if cue:
        return cue, "context"
    if len(words) == 1 and _INNER_CAPITAL.search(name):
        return "organization", "inner capital"  # 'in PagerDuty': a brand, not a place
    if place:
        return "geo", "after in/at"
    particles = set(words[1:-1]) & JOINERS - _BODY_PREPOSITIONS  # 'Pieter van Damme'
    plain = all(
        w.replace("-", "").replace("'", "").replace("’", "").isalpha() for w in words
    ) and not (set(words) & JOINERS - particles)
    short = 2 <= len(words) <= 3 + len(particles)
    if plain and short and is_first_name(words[0]) and not institution:
        return "person", "first name"
    if any(map(_INNER_CAPITAL.search, name.split())):
        return "organization", "inner capital"  # 'Esri ArcGIS Pro'; not 'Jo McKenzie', typed above
    if plain and 2 <= len(words) <= 4 and family_name_first(words) and not institution:
        return "person", "family name first"  # 'Nguyễn Thị Thu Hà', 'Kovács János'
    if plain and len(words) > 1 and _place_last(name.split()) and not institution:
        return "organization", "place last"  # 'Ordnance Survey Ireland', 'Sport England'
    if plain and len(words) == 2 and is_nation(words[1]) and not institution:
        return "organization", "nation last"  # 'Tenovus Scotland': no first name before it
    if len(words) > 1 and words[-1].endswith("ing") and len(words[-1]) > 5:
        return "organization", "trade in -ing"  # 'Harlow Printing', 'Kell Shipping'
    if len(words) > 1 and _plural_noun(words[-1]):
        return "organization", "plural noun"  # 'Kaimana Seafoods', 'Kirkton Rovers'
    for kind, heads in (("organization", ORGANISATION_HEADS), ("geo", PLACE_HEADS)):
        if any(_is_head(word, heads) for word in words):
            return kind, "head noun inside"
    if institution or quoted:
        return "organization", "'the X'" if institution else "quoted"
    if plain and short and peoples_word(words[0]):
        return "organization", "people's word first"  # 'Welsh Water', 'English Heritage'
    if plain and short:
        return DEFAULT_TYPE, "default"
    return "organization", "default"


_INNER_CAPITAL = re.compile(r"^(?!Mc|Mac|O[’']|D[’']|De|Di|Da|Du|La|Le|Van|Von|Fitz)\w*[a-z][A-Z]")
"""A capital inside a word after a small letter ('PagerDuty', 'GitHub'): a brand's spelling;
family names' prefixes ('McAllen', 'DeKalb', 'LaSalle') excepted."""


def _place_last(words: list[str]) -> bool:
    """Common English words, no first name, then a known place ('Ordnance Survey Ireland',
    'Immigration New Zealand', 'Visit Belfast'): a body named for where it works. Not after a
    rarer word: many family names are a city's ('Okonkwo Preston'), and another language's
    street is no body ('Avenida Colón'); a place's name is in the gazetteer whole."""
    for split in range(len(words) - 1, max(len(words) - 3, 0), -1):
        before, place = words[:split], " ".join(words[split:])
        if is_known_place(place) and not any(map(is_known_place, before)):
            return all(map(is_common_word, before)) and not any(
                _is_head(word.lower(), PLACE_HEADS) for word in before
            )  # 'County Clare' is a place
    return False


def publisher(name: str) -> str | None:
    """The body or place that names a document after itself ('St Brigid's Parish' of 'St Brigid's
    Parish Bulletin', 'Westmere Rowing Club' of 'Westmere Rowing Club Newsletter'): the words
    before a document's noun when their own head noun, legal form or the gazetteer types them."""
    words = name.split()
    if len(words) < 3 or words[-1].lower() not in DOCUMENT_HEADS:
        return None
    rest = " ".join(words[:-1])
    reason = type_and_reason(rest, quoted=False, place=False)[1]
    return rest if reason in ("head noun", "legal form", "gazetteer") else None


def _place_and_compass(words: list[str]) -> bool:
    """A known place and a point of the compass, either way round ('Bridport North')."""
    if len(words) != 2:
        return False
    first, second = words
    return (second.lower() in COMPASS and is_known_place(first)) or (
        first.lower() in COMPASS and is_known_place(second)
    )


def _family_name_in_s(words: list[str]) -> bool:
    """A first name and a plural of a head noun: a family name ('Banks', 'Fields', 'Woods')."""
    last = words[-1]
    return (
        len(words) == 2
        and is_first_name(words[0])
        and last.endswith("s")
        and last.lower() not in ORGANISATION_HEADS | PLACE_HEADS  # 'Acme Holdings', 'X Falls'
        and (_is_head(last[:-1], ORGANISATION_HEADS) or _is_head(last[:-1], PLACE_HEADS))
    )


def _plural_noun(word: str) -> bool:
    """`word` (lower case) is the plural of an English noun that is no first name: a business's
    trade or a team's players ('seafoods', 'rovers'), not a family name in -s ('stevens')."""
    singular = word[:-1]
    return (
        len(word) > 3  # 'maps', 'arts'
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and is_english_word(singular)
        and not is_first_name(singular)
        and not is_first_name(word)
    )


def family_name_first(words: list[str]) -> bool:
    """A person's name written family name first: a first word that is neither English nor a first
    name, then a first name."""
    return (
        not is_english_word(words[0])
        and not is_first_name(words[0])
        and any(is_first_name(word) for word in words[1:])
    )


def canonical_type(
    name: str, *, quoted: bool, place: bool, institution: bool = False, cue: str | None = None
) -> str:
    """Guess organization / geo / event / person (see `type_and_reason`)."""
    return type_and_reason(name, quoted=quoted, place=place, institution=institution, cue=cue)[0]


_LEGAL_FORM_AFTER = re.compile(r"\s*,?\s+([\w./]+)(?=[\s,;:)]|$)")
"""The word after a mention, a comma between them or not ('co' of 'co-founded' is none)."""
_BODY_PREPOSITIONS = frozenset(["für", "zum", "zur", "dei", "degli", "delle"])
"""Joiners of bodies' and places' names that no person's name holds ('Institut für Physik')."""
