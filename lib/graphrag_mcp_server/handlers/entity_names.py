"""The entities a question names by their titles, which a local or DRIFT context puts first.

graphrag maps a question to entities by the similarity of its embedding to theirs only, so 'Who is
Ada Merrow?' can rank entities whose descriptions resemble the question above Ada Merrow herself
(with the offline model's hashing embedding, often). graphrag's own `include_entity_names` puts
named entities first; here they are the titles written in the question, the longest first, whole
words, in any case (a single word only when written with a capital: 'Who is Ada?', not 'is it
ready?').
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag.data_model.entity import Entity

MAX_WORDS = 8
"""The most words of a title looked for in a question."""

_EDGES = "\"'“”‘’()[]{}.,;:!?"
"""Marks a word of a question or a title is compared without, at either end."""


def _plain(word: str) -> str:
    """A word as names are compared: without its edge marks, in one case."""
    return word.strip(_EDGES).casefold()


@dataclass(frozen=True)
class EntityNames:
    """A version's entity titles by their words as compared (`_plain`), joined by spaces."""

    titles: dict[str, str]

    @classmethod
    def of(cls, entities: Iterable["Entity"]) -> "EntityNames":
        """The titles of `entities`."""
        titles: dict[str, str] = {}
        for entity in entities:
            words = entity.title.split()
            key = " ".join(map(_plain, words))
            if key.strip() and len(words) <= MAX_WORDS:  # a longer title fits no word window
                titles.setdefault(key, entity.title)
        return cls(titles)

    def in_text(self, text: str) -> list[str]:
        """The titles `text` writes, in its order, each once; at each word the longest."""
        words = text.split()
        plain = [_plain(word) for word in words]
        found: dict[str, None] = {}
        at = 0
        while at < len(words):
            for size in range(min(MAX_WORDS, len(words) - at), 0, -1):
                title = self.titles.get(" ".join(plain[at : at + size]))
                if title is not None and (size > 1 or words[at].strip(_EDGES)[:1].isupper()):
                    found[title] = None
                    at += size
                    break
            else:
                at += 1
        return list(found)


def naming_first(names: EntityNames, query: str, params: dict[str, Any]) -> dict[str, Any]:
    """graphrag's build_context keyword arguments `params` with the entities `query` names added to
    `include_entity_names` (first in the context) and to `exclude_entity_names` (so the similarity
    search does not list them again); an entity the caller excludes stays out."""
    excluded = list(params.get("exclude_entity_names") or [])
    named = [title for title in names.in_text(query) if title not in excluded]
    included = list(params.get("include_entity_names") or [])
    return {
        **params,
        "include_entity_names": included + [title for title in named if title not in included],
        "exclude_entity_names": excluded + named,
    }
