"""Terms a text writes in quotes: a title-like term is a name ("Slack Water Protocol"); a work's
title (a play, a book, a song, a report) is no entity: one that opens with an article, or one
that a word for a work or for making one comes right before ('her new play, "Salt Roads"',
'wrote "Salt Roads"')."""

from __future__ import annotations

import re

from graphrag_mcp_server.providers.offline.text import JOINERS

QUOTED = re.compile(r"[\"“]([^\"”\n]{2,60})[\"”]")
_TITLE_LIKE = re.compile(r"[A-Z][\w'’&-]*(?:\s+[\w'’&-]+){0,5}")
# fmt: off
WORK_WORDS = frozenset(
    [
        "play", "plays", "novel", "novels", "book", "books", "album", "albums", "song", "songs",
        "single", "film", "films", "movie", "opera", "poem", "poems", "collection", "series",
        "episode", "exhibition", "show", "essay", "story", "stories", "memoir", "biography",
        "painting", "paintings", "symphony", "musical", "documentary", "podcast", "paper",
        "article", "lecture", "talk", "speech", "sermon", "hymn", "ballad", "anthem", "sculpture",
        "photograph", "installation", "report", "cantata", "oratorio", "suite", "sonata",
        "concerto", "novella", "anthology", "sequel", "premiere", "production", "revival",
        "titled", "entitled", "wrote", "writes", "written", "co-wrote", "authored", "published",
        "directed", "composed", "premiered", "recorded",
    ]
)
# fmt: on
"""A noun naming a work, or a verb of writing, publishing or recording one: a quoted title right
after it is a work's ('the album "Low Tide"', 'directed "Salt Roads"'); not 'painted' or
'called', which also stand before a name given to a thing ('painted "Old Bessie" on the
frame')."""
_WORD_BEFORE = re.compile(r"([A-Za-z-]+)(?:\s+(?:[Nn]o\.\s*)?#?\d+)?[\s,:]*$")
"""The word before a quoted title, over a number after it ('episode 112: "Salt and Steel"')."""


def quoted_names(text: str, works: set[str]) -> list[str]:
    """Title-like quoted terms such as "Slack Water Protocol", not one of `works`
    (`work_titles`)."""
    names = []
    for term in (m.group(1).strip() for m in QUOTED.finditer(text)):
        words = term.split()
        if (
            _TITLE_LIKE.fullmatch(term)
            and all(w[0].isupper() or w.lower() in JOINERS for w in words)
            and term not in works
        ):
            names.append(term)
    return names


def a_work(term: str) -> bool:
    """A quoted title that opens with an article and two words more: a play's, a book's or a
    talk's ("The Lighthouse Keeper's Daughter", "A Winter Crossing"), no entity."""
    words = term.split()
    return len(words) >= 3 and words[0] in ("The", "A", "An") and words[1][:1].isupper()


def work_titles(text: str) -> set[str]:
    """The quoted terms of `text` that are works' titles: `a_work`, or written right after a word
    for a work or for making one (WORK_WORDS) at least once."""
    works = set()
    for quoted in QUOTED.finditer(text):
        term = quoted[1].strip()
        before = _WORD_BEFORE.search(text[max(0, quoted.start() - 40) : quoted.start()])
        if a_work(term) or (before is not None and before[1].lower() in WORK_WORDS):
            works.add(term)
    return works


def outside_works(text: str, works: set[str]) -> str:
    """`text` without the quoted titles of `works` (`work_titles`)."""
    return QUOTED.sub(lambda quoted: " " if quoted[1].strip() in works else quoted[0], text)
