"""Company legal forms of every country (cleanco's, and a few it lacks), and how a text writes one:
'Nordhavn Rederi AS' ends in a form, 'Known As' does not; 'Tatra SRO' does, 'Nadia Vos' does not.

Nothing here comes from a benchmark corpus (issue 42). The list loads once, on first use.
"""

from __future__ import annotations

import functools

from graphrag_mcp_server.providers.offline.lexicon import folded_ascii

# fmt: off
_SHORT_WORDS = frozenset(
    [
        "a", "i", "am", "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it",
        "me", "my", "no", "of", "oh", "ok", "on", "or", "so", "to", "up", "us", "we",
    ]
)
"""English words of one or two letters: a legal form spelled like one counts only in capitals."""
# fmt: on


@functools.cache
def legal_forms() -> frozenset[tuple[str, ...]]:
    """Company legal forms of every country (cleanco's terms: 'gmbh', 'ltd', 'pty ltd', 'ab'), and
    those cleanco's list lacks (_MORE_LEGAL_FORMS)."""
    from cleanco import prepare_default_terms

    return frozenset(tuple(words) for _, words in prepare_default_terms()) | _MORE_LEGAL_FORMS


_MORE_LEGAL_FORMS = frozenset(
    (form,)
    for form in [
        "ry",  # Finnish registered association
        "cyf", "cyfyngedig", "ccc",  # Welsh: limited, public limited
        "teoranta", "dac", "clg", "ulc",  # Irish: limited, designated activity, by guarantee
        "pvt", "tbk", "jsc", "pjsc", "eood", "ug", "slu", "limitada",  # Indian ... Portuguese
    ]
)  # fmt: skip
"""Legal forms cleanco's list lacks: Wales', Ireland's, India's 'Pvt', Indonesia's 'Tbk',
Russia's 'JSC' and 'PJSC', Bulgaria's 'EOOD', Germany's 'UG', Spain's 'SLU', 'Limitada'."""


def ends_in_legal_form(words: list[str]) -> bool:
    """Whether the words of a name of 2+ words end in a company legal form (one that is also an
    English word of two letters or fewer only in capitals: 'Nordhavn Rederi AS', not 'Known As';
    one that cleanco spells only with dots, with them, in capitals or in mixed case: 'Tatra SRO',
    'Velaris SpA', not 'Nadia Vos'; 'Saaristo Sähkö Oy')."""
    plain = [word.strip("().,").replace(".", "") for word in words]  # 'S.p.A.': 'SpA'
    plain = [word for word in plain if word]
    forms = legal_forms()
    for size in range(1, min(4, len(plain) - 1) + 1):
        tail = plain[-size:]
        short = size == 1 and _read_as_name(words[-1])  # 'as', not 'a.s.'
        if not short and tuple(word.lower() for word in tail) in forms:
            return True
    return False


def without_legal_form(words: list[str]) -> list[str]:
    """The words of a company's name before its legal form ('Fjordlaks Havbruk AS' -> 'Fjordlaks
    Havbruk', `_before_the_form`); all of them where it ends in none."""
    plain = [word.strip("().,").replace(".", "").lower() for word in words]
    for start in range(max(1, len(words) - 4), len(words)):
        if tuple(plain[start:]) in legal_forms() and not (
            start == len(words) - 1 and _read_as_name(words[-1])
        ):
            return _before_the_form(words[:start])
    return words


def bracketed(word: str) -> bool:
    """`word` is a token of words in brackets ('(Mauritius)', name_words.tokens_of)."""
    return len(word) > 2 and word[0] + word[-1] == "()"


def _before_the_form(words: list[str]) -> list[str]:
    """The words of a name before its legal form, less a comma or a country in brackets between
    ('Acme, Inc.' and 'Acme (UK) Ltd' -> 'Acme')."""
    while len(words) > 1 and bracketed(words[-1]):
        words = words[:-1]
    return [*words[:-1], words[-1].rstrip(",")]


def written_as_legal_form(word: str) -> bool:
    """`word` by itself is a legal form, and not an English short word in lower case ('as', 'co'
    are forms only as 'AS', 'Co') nor a dotted form written as a name ('Vos', 'Ong'), nor one of
    STOP_WRITTEN without its stop ('Teo')."""
    return is_legal_form(word) and not _read_as_name(word)


STOP_WRITTEN = frozenset(["teo"])
"""Forms that are abbreviations always written with their stop ('Teo.', Ireland's 'Teoranta');
without it the word is a name ('Marcus Teo')."""


def _read_as_name(word: str) -> bool:
    """A legal form, as written (its stop and brackets too), is read as a name's word: written as
    a word (`_read_as_name_word`), or one of STOP_WRITTEN without its stop."""
    bare = word.strip("(),")
    return _read_as_name_word(word.strip("().,")) or (
        bare.lower() in STOP_WRITTEN and not bare.endswith(".")
    )


def _read_as_name_word(word: str) -> bool:
    """A legal form written as a word and not as the form: an English short word
    (`_read_as_english`), or a form that cleanco spells only as a dotted abbreviation ('v.o.s.',
    's.p.a.') written without its dots as a word is, in lower case or with a capital first only
    ('Vos', 'Ong', 'Sha': surnames; 'VOS', 'SpA' and 'v.o.s.' are the form)."""
    if _read_as_english(word):
        return True
    as_word = "." not in word.rstrip(".") and (word.istitle() or word.islower())
    return as_word and word.lower().rstrip(".") in _dotted_forms()


@functools.cache
def _dotted_forms() -> frozenset[str]:
    """The one-word legal forms cleanco spells only with dots inside ('v.o.s.' -> 'vos', 'd.o.o.',
    'b.v.'), without them; not those it also spells without ('ltd', 'ag', 'kft.')."""
    from cleanco import termdata

    spellings: dict[str, set[str]] = {}
    for terms in (*termdata.terms_by_type.values(), *termdata.terms_by_country.values()):
        for term in terms:
            if " " not in term.strip():
                spellings.setdefault(term.replace(".", "").lower(), set()).add(term)
    return frozenset(
        form
        for form, written in spellings.items()
        if all("." in spelling.rstrip(".") for spelling in written)
    )


def _read_as_english(word: str) -> bool:
    """A word spelled like an English word of one or two letters and not written in capitals
    ('as', 'As'; not 'AS'): a legal form only in capitals."""
    return not word.isupper() and word.lower() in _SHORT_WORDS


def is_legal_form(word: str) -> bool:
    """Whether `word` by itself is a legal form ('Pty', 'GmbH', 'S.p.A.'), also one written with
    letters cleanco's list has without their accents ('A.Ş.', Turkish, is its 'AS')."""
    plain = word.strip("().,").replace(".", "")
    if (plain.lower(),) in legal_forms():
        return True
    return not plain.isascii() and (folded_ascii(plain),) in legal_forms()  # ASCII: the same lookup
