"""Regular expressions made from a text's names, compiled once each.

The rules match each name of a text several times, with patterns made from the name. re's own
cache holds 512 patterns: a chunk's names turned it over, and its static patterns were compiled
again in every chunk (a tenth of a cold build's CPU at 1,000 archive documents).
"""

import functools
import re

CACHED = 1 << 14
"""Patterns kept: a build's distinct names, many times re's 512."""


@functools.lru_cache(maxsize=CACHED)
def compiled(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, once a source."""
    return re.compile(source, flags)


def mention_of(name: str) -> re.Pattern[str]:
    """`name` written as whole words: no word character either side."""
    return compiled(rf"(?<!\w){re.escape(name)}(?!\w)")


def written_in(sentence: str, form: str) -> bool:
    """Whether `form` occurs as whole words in `sentence`."""
    return form in sentence and mention_of(form).search(sentence) is not None


def speaker_label(name: str, sentence: str) -> bool:
    """`sentence` starts with `name` as a speaker's label ('LUCIA VEGA:')."""
    label = compiled(rf"\W*{re.escape(name)}\W*:", re.I)
    return ":" in sentence and label.match(sentence) is not None
