"""Streets' names in other languages, by libpostal's street types (lexicon.LIBPOSTAL): 'Rua dos
Salineiros' and 'Ulica Długa' start with their type, 'Andrássy út' and 'Bağdat Caddesi' end with
it, 'Mainzer Landstraße' and 'Kerkstraat' join it to their last word. None of these words is
common English or a first name (scripts/libpostal_words.py leaves those out)."""

from __future__ import annotations

from graphrag_mcp_server.providers.offline.lexicon import (
    LIBPOSTAL,
    is_english_word,
    is_first_name,
)
from graphrag_mcp_server.providers.offline.text import NAME_PARTICLES

TYPES_FIRST = frozenset(LIBPOSTAL["street_types_first"])
"""Types that start a street's name in the Romance, Slavic, Celtic and Malay languages."""
TYPES_FIRST_BEFORE_A_JOINER = frozenset(LIBPOSTAL["street_types_first_before_a_joiner"])
"""Types that are also common English words ('Plaza', 'Via', 'Place'): a street's only before
a Romance or Slavic joiner ('Plaza de Armas', 'Place du Marché')."""
TYPES_LAST = frozenset(LIBPOSTAL["street_types_last"])
"""Types that end a street's name in the Germanic, Finnic, Baltic, Hungarian and Turkic
languages."""
TYPES_JOINED = tuple(LIBPOSTAL["street_types_joined"])
"""Types that the Germanic and Finnic languages join to a street's last word."""
_JOINERS = frozenset(["de", "da", "do", "dos", "das", "del", "della", "delle", "dei", "degli"])
_JOINERS |= {"di", "du", "des", "la", "le", "les", "d'", "pod", "na", "nad", "u", "w", "v", "e"}
"""Romance and Slavic words between a street's type and its name ('Rua das Flores', 'Trg pod
Lipom'); not English 'of' or 'the' ('Most of the time')."""
JOINED_REST = 3
"""Letters a joined name has besides its type, at least ('Hofweg', not 'Weg')."""


def street_name(name: str) -> bool:
    """`name` is a street's by a type of another language before, after or joined to it."""
    words = name.lower().split()
    if len(words) > 1 and (
        words[0] in TYPES_FIRST
        or (words[0] in TYPES_FIRST_BEFORE_A_JOINER and words[1] in _JOINERS)
    ):
        return True
    if len(words) > 1 and lower_case_type(name.split()[-1]):
        return True  # 'Alberta iela': no person's name ends in a lower-case word
    if len(words) > 1 and (is_first_name(words[0]) or words[0] in NAME_PARTICLES):
        return False  # 'Jan Kamp', 'Ruben Vlaskamp', 'Van Dijk': a surname, not a street
    return words[-1] in TYPES_LAST or _joined(words[-1])


def lower_case_type(word: str) -> bool:
    """`word` is a street's type written in lower case after its name ('Kossuth utca', 'Bağdat
    caddesi'): the name goes on over it."""
    return word.islower() and word in TYPES_LAST


def _joined(word: str) -> bool:
    """A word that ends in a joined type, is no first name and is not English ('Landstraße')."""
    return (
        word.endswith(TYPES_JOINED)  # one C call before the lengths: most words end in none
        and any(len(word) - len(t) >= JOINED_REST for t in TYPES_JOINED if word.endswith(t))
        and not is_first_name(word)
        and not is_english_word(word)
    )
