"""Terms a text writes in quotes: a title-like term is a name ("Slack Water Protocol"); a title
that opens with an article is a work's (a play, a book, a talk), no entity."""

from __future__ import annotations

import re

from graphrag_mcp_server.providers.offline.text import JOINERS

QUOTED = re.compile(r"[\"“]([^\"”\n]{2,60})[\"”]")
_TITLE_LIKE = re.compile(r"[A-Z][\w'’&-]*(?:\s+[\w'’&-]+){0,5}")


def quoted_names(text: str) -> list[str]:
    """Title-like quoted terms such as "Slack Water Protocol" (not a work's title)."""
    names = []
    for term in (m.group(1).strip() for m in QUOTED.finditer(text)):
        words = term.split()
        if (
            _TITLE_LIKE.fullmatch(term)
            and all(w[0].isupper() or w.lower() in JOINERS for w in words)
            and not a_work(term)
        ):
            names.append(term)
    return names


def a_work(term: str) -> bool:
    """A quoted title that opens with an article and two words more: a play's, a book's or a
    talk's ("The Lighthouse Keeper's Daughter", "A Winter Crossing"), no entity."""
    words = term.split()
    return len(words) >= 3 and words[0] in ("The", "A", "An") and words[1][:1].isupper()


def outside_works(text: str) -> str:
    """`text` without its quoted works' titles (`a_work`)."""
    return QUOTED.sub(lambda quoted: " " if a_work(quoted[1].strip()) else quoted[0], text)
