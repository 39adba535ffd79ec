"""Where a run of capitalised words splits into names: at joiners ('of', 'the', particles) after
a name of two words or more, never inside a body's name that starts with its noun, and never over
a bare 'the'."""

from __future__ import annotations

from graphrag_mcp_server.providers.offline.entity_types import head
from graphrag_mcp_server.providers.offline.legal_forms import (
    ends_in_legal_form,
)
from graphrag_mcp_server.providers.offline.lexicon import (
    ORGANISATION_HEADS,
    is_first_name,
    is_known_place,
)
from graphrag_mcp_server.providers.offline.structure_words import POST_NOMINALS
from graphrag_mcp_server.providers.offline.text import INITIAL, JOINERS, NAME_PARTICLES


def core_count(words: list[str]) -> int:
    """Number of words in ``words`` that are not joiners."""
    return sum(w.lower() not in JOINERS for w in words)


def trim_joiners(words: list[str]) -> list[str]:
    """Drop joiners at either end of a name; a particle written with a capital before the rest of
    the name starts it ('La Paz', 'De Wit Brouwer')."""
    while words and words[0].lower() in JOINERS and not starts_with_particle(words):
        words = words[1:]
    while words and words[-1].lower() in JOINERS:
        words = words[:-1]
    return words


def starts_with_particle(words: list[str]) -> bool:
    """`words` start with a name's particle written with a capital, before a capitalised word."""
    return (
        len(words) > 1
        and words[0][:1].isupper()
        and words[0].lower() in NAME_PARTICLES
        and words[1][:1].isupper()
    )


def split_run(words: list[str]) -> list[list[str]]:
    """Split 'Mirela Voss of Harrowgate Board' at joiners after 2+ words (never at '&': 'Pennock &
    Sons'); not a body's name before one more word ('Maritime Museum of Gothenburg'), nor a name
    that starts with its body's noun ('Museo Municipal de Paleontología de Villa Ocre') until its
    legal form ends it. A body's name ending in its noun goes on over 'of' and up to three more
    words that do not start with a first name ('Lübeck Museum of European Hanse')."""
    parts: list[list[str]] = [[]]
    for word in words:
        if word == "the" and parts[-1] and parts[-1][-1].lower() not in JOINERS:
            parts.append([word])  # 'pay Calloway the Fees': no name joins over a bare 'the'
        elif (
            word.lower() in JOINERS
            and word != "&"
            and core_count(parts[-1]) >= 2
            and (
                head(trim_joiners(parts[-1])[0]) not in ORGANISATION_HEADS
                or ends_in_legal_form(parts[-1])  # 'Laboratoire Gemmologique SA in Geneva'
            )
        ):
            parts.append([word])
        else:
            parts[-1].append(word)
    merged = [parts[0]]
    for part in parts[1:]:
        if (
            _continues_body(part)
            and head(merged[-1][-1]) in ORGANISATION_HEADS
            and not ends_in_legal_form(merged[-1])
        ):
            merged[-1] += part
        else:
            merged.append(part)
    return [
        without_post_nominals(_without_middle_initials(trim_joiners(part))) for part in merged
    ]  # 'Tom Hale CBE of Leeds'


def without_post_nominals(words: list[str]) -> list[str]:
    """A name of two words or more without the letters written after it (POST_NOMINALS: honours,
    degrees, professional bodies': 'Obi SAN', 'Marsh QC', 'Harriet Doyle RIAI')."""
    while len(words) > 2 and words[-1] in POST_NOMINALS:
        words = words[:-1]
    return words


def only_letters(words: list[str]) -> bool:
    """`words` are only letters written after a name: POST_NOMINALS and abbreviations with
    capitals inside ('CEng MIStructE', 'BSc CEng'), which name nobody."""
    return any(word in POST_NOMINALS for word in words) and all(
        word in POST_NOMINALS or sum(map(str.isupper, word)) > 1 for word in words
    )


def _without_middle_initials(words: list[str]) -> list[str]:
    """A name without the initials between its first and last words ('John F. Halloran' -> 'John
    Halloran'): the form the text also writes, so one person, not two; initials that open a name
    stay ('R. K. Narayan')."""
    if len(words) < 3 or INITIAL.fullmatch(words[0]):
        return words
    return [words[0], *(word for word in words[1:-1] if not INITIAL.fullmatch(word)), words[-1]]


def _continues_body(part: list[str]) -> bool:
    """`part` ('of' and the words after it) can end a body's name: one word, or up to three that
    neither start with a first name (not 'Board of Mirela Voss') nor name a known place (kept apart:
    'Kellerman Trust' of 'New Zealand')."""
    core = [word for word in part if word.lower() not in JOINERS]
    return len(core) == 1 or (
        part[0] == "of"
        and 1 < len(core) <= 3
        and not is_first_name(core[0].lower())
        and not is_known_place(" ".join(core))
    )
