"""How names are written inside a sentence: its tokens, and the marks that belong to a name
(a legal form's stops and slash, a possessive before a head noun, an abbreviated Saint)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from graphrag_mcp_server.providers.offline.entity_types import head, single_name_cue
from graphrag_mcp_server.providers.offline.legal_forms import (
    ends_in_legal_form,
    is_legal_form,
    legal_forms,
    written_as_legal_form,
)
from graphrag_mcp_server.providers.offline.lexicon import (
    HONORIFICS,
    LOCATIVE_PARTICLES,
    ORGANISATION_HEADS,
    PLACE_HEADS,
    STREET_WORDS,
    TITLE_ABBREVIATIONS,
    TITLES,
    is_english_word,
    is_first_name,
    is_known_place,
    is_lower_case_body_noun,
)
from graphrag_mcp_server.providers.offline.no_kind import LAW_HEADS, is_common_word, plain_word
from graphrag_mcp_server.providers.offline.patterns import mention_of
from graphrag_mcp_server.providers.offline.structure_words import (
    CALENDAR,
    COMPASS,
    IRREGULAR_PAST,
    SENTENCE_ADVERBS,
)
from graphrag_mcp_server.providers.offline.text import STOPWORDS

_TOKEN = re.compile(r"\w+(?:['’&-]\w+)*|\S")
_DOTTED = re.compile(r"(?:[^\W\d_]{1,2}\.){2,}")
_SPACED_FORMS = re.compile(r"sp\.\s?z\s?o\.\s?o\.|spol\.\s?s\s?r\.\s?o\.")
"""Legal forms written in lower case with spaces: Polish 'sp. z o.o.', Czech 'spol. s r.o.'."""
_TOKEN_OR_DOTTED = re.compile(rf"{_SPACED_FORMS.pattern}|{_DOTTED.pattern}|{_TOKEN.pattern}")
_NAME_ABBREVIATIONS = frozenset(["st", "mt", "ft"])
"""Abbreviations written with a stop inside names: Saint, Mount, Fort."""


def tokens_of(sentence: str) -> list[str]:
    """The sentence's words and marks; a dotted legal form after a word ('Marittima Velaris
    S.p.A.', 'kolejová vozidla a.s.') is one word of the name, and so is one written with spaces
    ('sp. z o.o.'); any other dotted abbreviation ('e.g.', 'U.S.') its letters and stops; a legal
    form written with a slash ('A/S') one word."""
    tokens: list[str] = []
    for token in _TOKEN_OR_DOTTED.findall(sentence):
        if _SPACED_FORMS.fullmatch(token):
            tokens.append(" ".join(token.split()))
        elif _DOTTED.fullmatch(token) and not (_after_a_word(tokens) and is_legal_form(token)):
            tokens.extend(_TOKEN.findall(token))
        elif tokens[-1:] == ["/"] and _slashed_form(tokens, token):
            tokens[-2:] = [f"{tokens[-2]}/{token}"]
        else:
            tokens.append(token)
    return _bracketed_before_a_form(_joined_forms(tokens))


def _after_a_word(tokens: list[str]) -> bool:
    """`tokens` end in a word, or in a capitalised word and a comma ('Atlântida Resorts, S.A.')."""
    return bool(tokens) and (
        tokens[-1][:1].isalpha()
        or (tokens[-1] == "," and len(tokens) > 1 and tokens[-2][:1].isupper())
    )


def _bracketed_before_a_form(tokens: list[str]) -> list[str]:
    """`tokens` with up to three capitalised words in brackets between a capitalised word and a
    legal form made one token ('AquaPure Systems (Mauritius) Ltd', 'Acme (UK) Limited')."""
    return _merged_after_a_name(tokens, _bracket_end, lambda part: f"({' '.join(part[1:-1])})")


def _bracket_end(tokens: list[str], at: int) -> int | None:
    """Where the brackets opening at `at` end (after their closing one), when 1-3 capitalised
    words stand inside them and a legal form follows them; None otherwise."""
    if tokens[at] != "(":
        return None
    for close in range(at + 2, min(at + 5, len(tokens))):
        if tokens[close] == ")":
            inside = tokens[at + 1 : close]
            after = tokens[close + 1 : close + 2]
            named = all(word[:1].isupper() and word.isalpha() for word in inside)
            return close + 1 if named and after and is_form_word(after[0]) else None
    return None


def _joined_forms(tokens: list[str]) -> list[str]:
    """`tokens` with a legal form written in several words with stops and commas after a
    capitalised word made one token ('Co., Ltd.', 'Pte. Ltd.', 'S.A. de C.V.'): the words make one
    form of cleanco's list, or each is a form and only stops and commas stand between them."""
    return _merged_after_a_name(tokens, _form_end, _written)


def _merged_after_a_name(
    tokens: list[str],
    end_of: Callable[[list[str], int], int | None],
    written: Callable[[list[str]], str],
) -> list[str]:
    """`tokens` with each stretch after a capitalised token that `end_of` ends (exclusive; None
    where none starts) made one token, as `written` writes it."""
    merged: list[str] = []
    at = 0
    while at < len(tokens):
        end = end_of(tokens, at) if merged and merged[-1][:1].isupper() else None
        if end is None:
            merged.append(tokens[at])
            at += 1
            continue
        merged.append(written(tokens[at:end]))
        at = end
    return merged


def _form_end(tokens: list[str], start: int) -> int | None:
    """Where a legal form of two words or more starting at `start` ends (exclusive), the longest
    one; None when none starts there."""
    if not is_legal_form(tokens[start]):
        return None
    found, words, marks_only = None, [], True
    for at in range(start, min(start + 8, len(tokens))):
        token = tokens[at]
        if token in (".", ","):
            continue
        if not token[:1].isalpha():
            break
        words.append(token)
        marks_only = marks_only and (at == start or tokens[at - 1] in (".", ","))
        plain = tuple(word.replace(".", "").lower() for word in words)
        listed = plain in legal_forms()
        if len(words) > 1 and (listed or (marks_only and all(map(written_as_legal_form, words)))):
            found = at + 1 + (tokens[at + 1 : at + 2] == ["."])
    return found


def _written(tokens: list[str]) -> str:
    """Tokens of a legal form as written: a stop or comma after its word, a space before a word."""
    text = ""
    for token in tokens:
        text += token if token in (".", ",") or not text else f" {token}"
    return text


def _slashed_form(tokens: list[str], token: str) -> bool:
    """`tokens`' last two ('A', '/') and `token` ('S') make a legal form written with a slash,
    after a capitalised word ('Smørgaard Mejeri A/S')."""
    return len(tokens) > 2 and tokens[-3][:1].isupper() and is_legal_form(f"{tokens[-2]}/{token}")


def is_form_word(word: str) -> bool:
    """`word` (a token) is a company legal form as written after a name, in capitals or not
    ('GmbH', 'a.s.', 's.r.o.', 'sp. z o.o.'; not the English 'as' or 'co', nor an English noun in
    lower case: 'a Norwegian company')."""
    if word.isalpha() and word.islower() and len(word) > 4 and is_english_word(word):
        return False
    return written_as_legal_form(word) or (" " in word and ends_in_legal_form(["_", *word.split()]))


def strip_possessive(token: str) -> tuple[str, bool]:
    """Remove a trailing 's; report whether there was one."""
    for suffix in ("'s", "’s"):
        if token.endswith(suffix) and len(token) > 2:
            return token[: -len(suffix)], True
    return token, False


def possessive_in_name(run: list[str], token: str, following: list[str]) -> bool:
    """`token`'s 's is inside a name: before a body's or place's noun ("St Oswald's Church"), in a
    place the gazetteer knows ("King's Lynn"), or a saint's before up to two more capitalised words
    and such a noun ("St Aidan's Primary School"); not a possessive before another name."""
    after = following[0] if following else ""
    if heads_a_name(after) or (after[:1].isupper() and is_known_place(f"{token} {after}")):
        return True
    if not run or run[-1].rstrip(".").lower() not in ("st", "saint"):
        return False
    for word in following[:3]:
        if not word[:1].isupper():
            return False
        if heads_a_name(word):
            return True
    return False


def continues_name(last: str, token: str, following: str) -> bool:
    """`token` belongs to the name being read: the apostrophe of a plural possessive before the
    name's head noun ("Weavers' Association"), the stop of an abbreviated Saint, Mount or Fort
    ('St. Oswald') or of a middle initial ('John F. Halloran')."""
    if token in ("'", "’"):
        return last.endswith("s") and heads_a_name(following)
    abbreviated = last.lower() in _NAME_ABBREVIATIONS or (len(last) == 1 and last.isupper())
    return token == "." and abbreviated and following[:1].isupper()


def is_name_word(word: str) -> bool:
    """A capitalised word without digits that can be part of a name ('I'm' cannot, nor 'R25')."""
    return (
        word[:1].isupper()
        and word.lower() not in CALENDAR
        and word.split("'")[0].split("’")[0] != "I"
        and not any(character.isdigit() for character in word)
    )


def listed_in_a_body(run: list[str], tokens: list[str]) -> bool:
    """`tokens` start with the comma of a list of common words inside a body's name after its
    'of' or 'for', the list ending in 'and' and a word: 'Department for Culture, Media and Sport',
    'Ministry of Agriculture, Fisheries and Food'; not 'Ministry of Defence, Kvaerner and Saab'.
    A brand that wordfreq counts as common English ('Boeing') reads as such a word: 'the
    Ministry of Defence, Boeing and Airbus' is one name (a known limit)."""
    if tokens[:1] != [","]:
        return False  # checked first: this runs on every token after a capitalised word
    heads = [
        index
        for index, (word, joiner) in enumerate(itertools.pairwise(run))
        if joiner in ("of", "for") and word[:1].isupper() and head(word) in ORGANISATION_HEADS
    ]
    if not heads:
        return False
    listed = run[heads[-1] + 2 :]
    for token, following in itertools.pairwise(tokens[1:]):
        if token in ("and", "&"):
            return following[:1].isupper() and all(
                plain_word(word.rstrip(",")) for word in [*listed, following]
            )
        if token != "," and not token[:1].isupper():
            return False
        listed += [token] if token != "," else []
    return False


def closes_a_listed_body(run: list[str], tokens: list[str]) -> bool:
    """`tokens` are the 'and' and the capitalised word that end a list inside a body's name, after
    `listed_in_a_body` joined its commas ('Department for Environment, Food and Rural Affairs')."""
    commas = [index for index, word in enumerate(run) if word.endswith(",")]
    return (
        tokens[:1] == ["and"]
        and len(tokens) == 2
        and tokens[1][:1].isupper()
        and bool(commas)
        and "and" not in run[commas[-1] :]
    )


def past_tense_before_name(words: list[str]) -> bool:
    """A sentence opens with an irregular past tense and a known place or first name after it: a
    log's or diary's sentence without a subject ('Left Lerwick at six', 'Met Anna Berg')."""
    return (
        len(words) > 1
        and words[0].lower() in IRREGULAR_PAST
        and (is_known_place(words[1]) or is_first_name(words[1]))
    )


def heads_a_name(word: str) -> bool:
    """A capitalised organisation's or place's head noun ('Association', 'Church')."""
    return word[:1].isupper() and head(word) in ORGANISATION_HEADS | PLACE_HEADS


def and_in_a_body(run: list[str], tokens: list[str]) -> bool:
    """`run` is one word and `tokens` are 'and' and one or two capitalised words, the last a
    body's noun: 'and' inside the body's name ('Avon and Somerset Police', 'Devon and Cornwall
    Constabulary'); not between two bodies ('Norvik Biotech and Uppsala University')."""
    if tokens[:1] != ["and"] or len(run) != 1 or head(run[0]) in ORGANISATION_HEADS:
        return False
    for word in tokens[1:3]:
        if not word[:1].isupper():
            return False
        if head(word) in ORGANISATION_HEADS:
            return True
    return False


def and_in_a_law(tokens: list[str]) -> bool:
    """`tokens` are 'and', then one or two capitalised words and a law's noun: 'and' inside a
    law's title ('Financial Services and Markets Act'), which names no body or person."""
    if tokens[:1] != ["and"]:
        return False
    for at, word in enumerate(tokens[1:4], start=1):
        if not word[:1].isupper():
            return False
        if at > 1 and word.lower() in LAW_HEADS:
            return True
    return False


def before_a_form(tokens: list[str]) -> bool:
    """`tokens` start with up to 3 lower-case words and then a legal form: the rest of a company's
    name in a language that capitalises only its first word ('... kolejová vozidla a.s.')."""
    for at, token in enumerate(tokens[:4]):
        if at and is_form_word(token):
            return True
        if not (token.isalpha() and token.islower()):
            return False
    return False


def continues_body(run: list[str], word: str, following: str, following_is_name: bool) -> bool:
    """`word`, in lower case, continues the body's name in `run`: its noun after the capitalised
    start ('Statens vegvesen', 'Bergen kommune'); 'in' between its noun and its place
    ('Uniwersytet Morski w Gdyni', 'Univerzita Karlova v Praze'); or, after the body's noun first,
    a word that is not English or a short one before such a word or a name ('Zavod za gozdove
    Slovenije', 'Sindicato dos trabalhadores agrícolas'); 'for' between a body's noun and a name
    ('Centre for International Research'). Nothing in lower case continues a name after its legal
    form ('Laboratoire Gemmologique SA in Geneva'), nor English 'in' or 'at' after an English
    body's noun."""
    if word == "for":
        body = is_body_noun(run[-1]) or head(run[-1]) in ("centre", "center")
        return following_is_name and body and not ends_in_legal_form(run)
    if is_lower_case_body_noun(word):
        return run[-1][:1].isupper()
    if ends_in_legal_form(run):
        return False  # its legal form ends a company's name
    if word in LOCATIVE_PARTICLES and following_is_name:
        return any(is_body_noun(name_word) for name_word in run)
    if not (word.isalpha() and word.islower() and is_body_noun(run[0])):
        return False
    if word in ("in", "at") and is_english_word(run[0]):
        return False  # 'Museum of Modern Art in New York': a place after an English body's name
    if word in _ENGLISH_ONLY:
        return False  # 'join the Board as Non-Executive Director': English, no particle
    if len(word) <= 3:  # 'za', 'dos': a particle, inside the name only before more of it
        return following_is_name or (following.islower() and not is_english_word(following))
    return not is_english_word(word)


_ENGLISH_ONLY = frozenset(["as", "by", "to", "on", "or", "if", "so", "is", "be", "it"])
"""Short English words that no other language writes inside a body's name (unlike German 'am',
'an', 'im' or Portuguese 'a')."""


def is_body_noun(word: str) -> bool:
    """`word` is a body's noun in any of the languages the lexicon lists ('Uniwersytet', 'kommune',
    'Høgskolen')."""
    return head(word) in ORGANISATION_HEADS or is_lower_case_body_noun(word.lower())


_COMMON_SUFFIXES = (
    "ing",
    "ly",
    "tion",
    "sion",
    "ment",
    "ness",
    "ity",
    "ance",
    "ence",
    "ship",
    "ies",
    "ed",
)


def _is_sentence_opener(word: str) -> bool:
    """A capitalised sentence-initial word unlikely to start a name ('The', 'Building'; 'Added'
    and 'Fixed' of a changelog's items: a past tense of common English). A word in -ing or -ly
    that is a first name or a known place starts one ('Emily', 'Kettering')."""
    lower = word.lower()
    return (
        lower in STOPWORDS
        or lower in SENTENCE_ADVERBS
        or (lower.endswith(("ing", "ly")) and not is_first_name(word) and not is_known_place(word))
        or (lower.endswith("ed") and plain_word(word))
    )


def _rare_word_before_head(words: list[str]) -> bool:
    """A rare word (no common English) that a body's or a place's head noun ends: 'Wellspring
    Foundation', 'Dowling Construction' name a body; 'Rebranding Day' too little to tell."""
    last = words[-1].lower()
    return (
        len(words) > 1
        and words[0].lower().endswith(("ing", "ly"))
        and not plain_word(words[0])
        and (last in ORGANISATION_HEADS or last in PLACE_HEADS or is_legal_form(words[-1]))
    )


def opens_sentence(words: list[str]) -> bool:
    """The first of a sentence's capitalised words is no name's: `_is_sentence_opener` unless a
    head noun makes the run a body's or a place's name or the run starts with a known place's
    ('United Kingdom officials'), or a word before a courtesy title ('Saw Mrs Dunmore', 'Thanks
    Dr Okoro': a verb or a greeting)."""
    return (
        _is_sentence_opener(words[0])
        and not _rare_word_before_head(words)
        and not any(is_known_place(" ".join(words[:size])) for size in (2, 3) if len(words) >= size)
    ) or (
        len(words) > 2
        and words[1].lower().rstrip(".") in HONORIFICS | TITLE_ABBREVIATIONS
        and words[0].lower() not in TITLES
    )


def is_single_name(word: str) -> bool:
    """A capitalised word left by `_run_names` (no title, role or structure word) that can be a name
    by itself (a place: 'Hartsmere'; 'Kettering' and 'Worthing', places the gazetteer holds and
    no common English, though they end as common words do)."""
    lower = word.lower()
    return (
        lower not in STOPWORDS
        and not written_as_legal_form(word)
        and (
            not lower.endswith(_COMMON_SUFFIXES)
            or (is_known_place(word) and not is_common_word(word))
        )
        and lower not in CALENDAR
        and lower.removesuffix("s") not in CALENDAR
        and word.isalpha()
        and len(word) > 2
    )


def cued_single_name(word: str, sentence: str) -> bool:
    """A single word that is no common word or first name, followed where the sentence writes it
    by words that make it a name (entity_types.single_name_cue)."""
    if plain_word(word) or is_first_name(word):
        return False
    found = mention_of(word).search(sentence)
    return found is not None and single_name_cue(sentence[found.end() : found.end() + 60])


_CIVIC = frozenset(["mayor", "residents", "population", "inhabitants", "outskirts", "centre"])
"""What a place has ('Carrowmore's residents'), besides its places (lexicon.PLACE_HEADS)."""


def in_place(tokens: list[str], start: int, length: int) -> bool:
    """The run of `length` tokens at `start` stands where a place does: after 'north of' (or
    another point of the compass), or written with 's before what a place has ("Carrowmore's
    harbour", "Kilbeg's residents"; not "Corvane's head of research": a role)."""
    end = start + length
    after, then = (tokens[at].lower() if at < len(tokens) else "" for at in (end, end + 1))
    return (start > 1 and tokens[start - 1] == "of" and tokens[start - 2].lower() in COMPASS) or (
        tokens[end - 1].endswith(("'s", "’s"))
        and (head(after) in PLACE_HEADS or after in _CIVIC)
        and (after, then) != ("head", "of")
    )


def address_towns(text: str, names: list[str], candidates: list[str]) -> set[str]:
    """The `candidates` written after a street's name (one of `names` ending in a street's word)
    and a comma: an address's town ('12 Orchard Close, Kirkby Lonsdale'); not one opening with a
    first name ('In Downing Street, Keir Starmer said')."""
    streets = [name for name in names if name.split()[-1].lower() in STREET_WORDS]
    return {
        name
        for name in candidates
        if not is_first_name(name.split()[0].lower())
        and any(f"{street}, {name}" in text for street in streets)
    }


def words_before(text: str, name: str) -> set[str]:
    """The lower-cased words written right before each mention of `name` ('the', 'in', ...), not
    where a longer name goes on after it ('the Wilhelmina Barns-Graham Trust')."""
    words, start = set(), text.find(name)
    while start >= 0:
        end = start + len(name)
        if not re.match(r"(?:\w| [A-Z])", text[end : end + 2]) and (
            match := _LAST_WORD.search(text[max(0, start - 30) : start])
        ):
            words.add(match.group(1).lower())
        start = text.find(name, end)
    return words


_LAST_WORD = re.compile(r"(\w+)\s+$")
