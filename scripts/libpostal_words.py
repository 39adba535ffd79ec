"""Write providers/offline/libpostal_words.json from a libpostal checkout's dictionaries.

libpostal (openvenues/libpostal, MIT licence) keeps, per language, the words of addresses and
names: street types ('rua', 'straße', 'utca') and personal titles ('maître', 'doutora'). The
offline model types and cleans names with them (issue 42: general resources, not a corpus's
words): a title only before a first name and one more word, as many are also names of places,
bodies or people ('Vigo', 'Enga', 'Shree ... School', 'Putri'). This script sorts the words by
how a name uses them and leaves out those that would mistake a name; run it again on a new
libpostal to refresh the file:
`python scripts/libpostal_words.py PATH_TO_LIBPOSTAL_GIT_DIR [REV]`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

from graphrag_mcp_server.providers.offline.legal_forms import legal_forms
from graphrag_mcp_server.providers.offline.lexicon import (
    ORGANISATION_HEADS,
    PLACE_HEADS,
    TITLES,
    is_first_name,
)
from graphrag_mcp_server.providers.offline.text import JOINERS
from graphrag_mcp_server.providers.offline.word_frequency import zipf_frequency

OUT = (
    Path(__file__).resolve().parents[1]
    / "lib/graphrag_mcp_server/providers/offline/libpostal_words.json"
)
TYPE_FIRST = ["ast", "br", "ca", "cs", "cy", "es", "fil", "fr", "ga", "gd", "gl", "hr", "bs"]
TYPE_FIRST += ["id", "it", "ms", "mt", "oc", "pap", "pl", "pt", "ro", "sk", "sl", "sr", "vi"]
"""Languages whose street names start with their type ('Rua Augusta', 'Ulica Długa')."""
TYPE_LAST = ["af", "az", "da", "de", "et", "eu", "fi", "gsw", "hu", "is", "lb", "lt", "lv"]
TYPE_LAST += ["nb", "nl", "sv", "tr"]
"""Languages whose street names end with their type ('Andrássy út', 'Bağdat Caddesi')."""
COMPOUNDING = ["af", "da", "de", "et", "fi", "gsw", "is", "lb", "nb", "nl", "sv"]
"""Languages that write the type joined to the name ('Bahnhofstraße', 'Kerkstraat')."""
SAINTS = {"saint", "sankt", "sankta", "san", "sant", "santa", "santo", "são", "sint", "szent"}
SAINTS |= {"sainte", "święty", "naomh"}
SAINTS |= {"heilige", "heiliger", "heiliges", "sveti", "sveta", "svetog", "svatý", "svata", "sväty"}
SAINTS |= {"svätá", "saints", "santi", "agios", "agiou", "agias", "agion", "muqeddes", "sviatoj"}
"""'Saint' in the titles' languages: a title line holding one of these is left out whole, since
many places' names start with it ('San Marino', 'Sankt Gallen')."""
NOT_TITLES = {"gebroeders", "hermanos", "hermanas", "notre-dame", "onzelievevrouwe", "vrouwe"}
"""Title lines that start bodies' or churches' names ('Hermanos Ruiz', 'Notre-Dame')."""
NOT_TYPES = {"obere", "oberer", "oberes", "untere", "unterer", "unteres", "heiligen", "große"}
NOT_TYPES |= {"großer", "großes", "grosses", "großser"}
"""Street-type lines of adjectives written before a street's name ('Obere Straße')."""
COMMON_ENGLISH_ZIPF = 3.0
"""wordfreq's zipf frequency from which a word is common English ('via', 'plaza', 'me'); rarer
ones are foreign words English borrows now and then ('straße' 2.5, 'rua' 2.6)."""


def latin(word: str) -> bool:
    """Every letter of `word` is a Latin one ('praça', 'ulica'; not 'улица')."""
    letters = [c for c in word if c.isalpha()]
    return bool(letters) and all("LATIN" in unicodedata.name(c, "") for c in letters)


def words_of(text: str, left_out: set[str]) -> set[str]:
    """The one-word forms of a dictionary's lines (every synonym after a '|'), in lower case; a
    line with a form in `left_out` is left out whole."""
    lines = [{form.strip().lower() for form in line.split("|")} for line in text.splitlines()]
    forms = set().union(*(line for line in lines if not line & left_out))
    return {form for form in forms if form.isalpha() and latin(form)}


def english(word: str) -> float:
    """wordfreq's zipf frequency of `word` in English."""
    return zipf_frequency()(word, "en")


def plain(word: str) -> bool:
    """Not common English, not a first name, not a joiner or a head noun: a word no name
    mistakes."""
    return not (
        english(word) >= COMMON_ENGLISH_ZIPF
        or is_first_name(word)
        or word in JOINERS | ORGANISATION_HEADS | PLACE_HEADS
    )


def long_enough(word: str) -> bool:
    """Three letters or more, or two with an accent ('út', 'tér'); not an abbreviation ('av')."""
    return len(word) >= 3 or (len(word) == 2 and not word.isascii())


def main(git_dir: str, rev: str = "HEAD") -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True
        ).stdout

    def dictionary(languages: list[str], file: str, left_out: set[str]) -> set[str]:
        return set().union(
            *(
                words_of(git("show", f"{rev}:resources/dictionaries/{language}/{file}"), left_out)
                for language in languages
            )
        )

    listing = git("ls-tree", "--name-only", rev, "resources/dictionaries/").split()
    languages = [Path(path).name for path in listing if "." not in Path(path).name]
    titles = dictionary(languages, "personal_titles.txt", SAINTS | NOT_TITLES)
    first = {w for w in dictionary(TYPE_FIRST, "street_types.txt", NOT_TYPES) if long_enough(w)}
    last = dictionary(TYPE_LAST, "street_types.txt", NOT_TYPES)
    names_of_bodies = JOINERS | ORGANISATION_HEADS | PLACE_HEADS | first | last
    titles = {
        w
        for w in titles - TITLES - names_of_bodies
        if len(w) >= 2 and (w,) not in legal_forms()  # 'lda': a title and a legal form
    }
    words = {
        "source": f"openvenues/libpostal {git('rev-parse', rev).strip()} resources/dictionaries"
        " (MIT licence), sorted by scripts/libpostal_words.py",
        "titles": sorted(w for w in titles if not is_first_name(w) or english(w) >= 5.0),
        # not 'Inga', 'Irma' of 'Inga Marie Berg'; 'Me' of 'Me Anne Roux' (zipf 6.5)
        "street_types_first": sorted(w for w in first if plain(w)),
        "street_types_first_before_a_joiner": sorted(
            w for w in first if not plain(w) and not is_first_name(w) and w not in JOINERS
        ),
        "street_types_last": sorted(w for w in last if long_enough(w) and plain(w)),
        "street_types_joined": sorted(
            w
            for w in dictionary(COMPOUNDING, "street_types.txt", NOT_TYPES)
            if len(w) >= 3 and plain(w)
        ),
    }
    OUT.write_text(json.dumps(words, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:])
