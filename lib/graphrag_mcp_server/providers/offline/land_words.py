"""Words of land and places that decide a name's type: the first words of places' names in other
languages ('Puerto Cortés', 'Sveti Stefan'), and nouns of land that are also family names
('Helena Marsh', 'Denis Padilla Wood')."""

from graphrag_mcp_server.providers.offline.lexicon import (
    ORGANISATION_HEADS,
    PLACE_HEADS,
    is_first_name,
    is_known_place,
)

FOREIGN_PLACE_FIRST_WORDS = frozenset(
    [
        # port, cape, point, mount, lake, island, bay, beach, lagoon, gulf, range, hill, valley,
        # quarter, in Spanish, Portuguese, Italian, French and Catalan
        "puerto", "porto", "cabo", "capo", "cap", "punta", "ponta", "pointe", "monte", "mont",
        "lago", "lac", "lagoa", "laguna", "isla", "ilha", "isola", "île", "ile", "illa", "bahía",
        "baía", "baie", "playa", "praia", "plage", "golfo", "sierra", "serra", "cerro", "valle",
        "vale", "barrio", "bairro", "río", "rio", "rivière", "fiume",
        # a saint's name that names a place ('Sveti Stefan', 'Sankt Gallen', 'São Tomé')
        "san", "santa", "santo", "são", "sankt", "sint", "szent", "sveti", "sveta", "svatý",
        # island, mountain, river, village, cape in Malay, Indonesian and Filipino
        "pulau", "gunung", "bukit", "sungai", "kampung", "kampong", "tanjung", "barangay",
    ]
)  # fmt: skip
"""First words that make a name a place's in other languages (general knowledge of each
language's place names). Many are also first names ('Rio', 'Isla', 'Monte', 'Santa', 'Serra'):
such a word types only a name of three words or more ('Rio Bons Sinais', not 'Isla Fisher'). A
title before a name, or a context that makes it a person's, types it first."""


def foreign_place_first(words: list[str]) -> bool:
    """`words` (lower case) start with one of FOREIGN_PLACE_FIRST_WORDS and name a place by it: a
    word that is also a first name only in a name of three words or more."""
    if len(words) < 2 or words[0] not in FOREIGN_PLACE_FIRST_WORDS:
        return False
    return len(words) > 2 or not is_first_name(words[0])


LAND_SURNAMES = frozenset(
    [
        "marsh", "wood", "woods", "hill", "hills", "brook", "brooks", "green", "moor", "heath",
        "dale", "field", "fields", "ford", "lake", "glen", "banks", "rivers", "forest", "shore",
        "hall",
    ]
)  # fmt: skip
"""Nouns of land, water and buildings that are also common English family names ('Helena Marsh',
'Ann Wood', 'Stuart Hall')."""


def family_name_of_land(words: list[str], place: bool) -> bool:
    """A first name, perhaps a second name, and a noun of LAND_SURNAMES, not written after 'in' or
    'at': a person ('Helena Marsh', 'Denis Padilla Wood'), not a place ('in Primrose Hill'); the
    second name no noun that names a body or a place ('Anna Lee Hall', not 'Mary Abbey Hall'), and
    the three words no place the gazetteer knows ('Beau Bassin-Rose Hill')."""
    if place or len(words) not in (2, 3) or not is_first_name(words[0]):
        return False
    if len(words) == 3 and is_known_place(" ".join(words)):
        return False
    middle = words[1:-1]
    return words[-1] in LAND_SURNAMES and not set(middle) & (ORGANISATION_HEADS | PLACE_HEADS)
