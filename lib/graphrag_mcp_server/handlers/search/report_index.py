"""The community reports of one level, indexed once per loaded version for context-only global
and drift: each report's word counts (postings by word), its length in words and its cost in
tokens, so that a query's BM25 walks only the postings of its own words and no report is
tokenised again per query. The index lives with the version's prepared objects
(handlers/prepared.py): a new version indexes its reports anew on its first global or drift query.
"""

import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

FUSION_RANK_OFFSET = 5
"""Reciprocal rank fusion's k: a report's relevance is 1/(k + its rank by embedding) + 1/(k + its
rank by words)."""
WORDS_WEIGHT = 2.0
"""The weight of the rank by words against the rank by embedding (1): the question's rare words (a
topic's own terms) are the surer sign; the embedding adds what is said in other words."""
BM25_K1, BM25_B = 1.2, 0.75
"""BM25's term-frequency saturation and length normalisation."""

_WORD = re.compile(r"[^\W\d_]+")


def words(text: str) -> list[str]:
    """Lower-case words of three letters or more, a plural's s dropped."""
    return [
        word[:-1] if len(word) > 4 and word.endswith("s") else word
        for word in _WORD.findall(text.lower())
        if len(word) > 2
    ]


def report_text(title: str, content: str) -> str:
    """What a report puts in a context, as it is ranked by words and counted in tokens."""
    return f"{title}\n{content}"


@dataclass(frozen=True)
class Scored:
    """Scores by id, higher better: `scores[i]` is `ids[i]`'s, ids in the scoring's order."""

    ids: Sequence[str]
    scores: "np.ndarray"
    known_places: Mapping[str, int] | None = None
    """Each id's place in `ids`, when the scorer holds it (made on first use otherwise)."""

    @classmethod
    def of(cls, scores: dict[str, float]) -> "Scored":
        """The scoring of a dict of scores by id."""
        import numpy as np

        return cls(list(scores), np.fromiter(scores.values(), dtype=float, count=len(scores)))

    @cached_property
    def places(self) -> Mapping[str, int]:
        """Each id's place in `ids`."""
        if self.known_places is not None:
            return self.known_places
        return {key: place for place, key in enumerate(self.ids)}

    def get(self, key: str) -> float | None:
        """The score of `key`; None when it is not scored."""
        place = self.places.get(key)
        return None if place is None else float(self.scores[place])

    def as_dict(self) -> dict[str, float]:
        """Id -> score, in the scoring's order."""
        return dict(zip(self.ids, self.scores.tolist(), strict=True))

    def shares(self, ids: Sequence[str], weight: float) -> "np.ndarray":
        """Each of `ids`' share of reciprocal rank fusion: weight / (k + its rank here), rank 1
        the highest score, ties in the scoring's order; 0 for an id not scored."""
        import numpy as np

        order = np.argsort(-self.scores, kind="stable")
        by_place = np.zeros(len(order) + 1)  # the last: an id not scored
        by_place[order] = weight / (FUSION_RANK_OFFSET + np.arange(1, len(order) + 1))
        places = self.places
        at = np.fromiter((places.get(key, -1) for key in ids), dtype=np.int64, count=len(ids))
        shares: np.ndarray = by_place[at]
        return shares


def fused(ids: Sequence[str], *weighted: tuple[Scored, float]) -> "np.ndarray":
    """Weighted reciprocal rank fusion of the scorings, for each of `ids` (a scoring that lacks an
    id adds nothing for it); by whole arrays, as a query ranks thousands of reports."""
    import numpy as np

    relevance = np.zeros(len(ids))
    for scored, weight in weighted:
        relevance += scored.shares(ids, weight)
    return relevance


@dataclass(frozen=True)
class ReportIndex:
    """Reports' words and token costs, each counted once: `ids` in the reports' order, `postings`
    word -> (positions in `ids` of the reports holding it, its count in each), `lengths` in words;
    a report's cost in tokens is counted by `count_tokens` the first time a context reaches it
    (`tokens`), so that indexing costs no tokenising of reports no budget reaches."""

    ids: list[str]
    postings: dict[str, tuple["array[int]", "array[int]"]]
    lengths: "array[int]"
    count_tokens: Callable[[str], int]
    counted: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, texts: dict[str, str], count_tokens: Callable[[str], int]) -> "ReportIndex":
        """The index of `texts` (report id -> text), each costing `count_tokens(text)`."""
        postings: dict[str, tuple[array[int], array[int]]] = {}
        lengths: array[int] = array("q")
        for position, text in enumerate(texts.values()):
            counts = Counter(words(text))
            lengths.append(counts.total())
            for word, count in counts.items():
                holding = postings.setdefault(word, (array("q"), array("q")))
                holding[0].append(position)
                holding[1].append(count)
        return cls(list(texts), postings, lengths, count_tokens)

    def tokens(self, report_id: str, text: str) -> int:
        """The cost in tokens of the report `report_id`, whose text is `text` (kept once
        counted)."""
        if report_id not in self.counted:
            self.counted[report_id] = self.count_tokens(text)
        return self.counted[report_id]

    def indexes(self, report_ids: Iterable[str]) -> bool:
        """Whether these are the indexed reports, in the same order."""
        return list(report_ids) == self.ids

    def word_scores(self, query: str, k1: float = BM25_K1, b: float = BM25_B) -> Scored:
        """BM25 of the query's words in each report (in the reports' order; reports sharing none
        of its words left out): words rare among the reports weigh most, as an
        embedding of a whole report does not weigh them. Adds up only the postings of the query's
        words, each word's at once (a hub's name and the common words are in most reports)."""
        import numpy as np

        total = len(self.ids)
        lengths = np.frombuffer(self.lengths, dtype=np.int64) if total else np.zeros(0)
        average = float(lengths.sum()) / max(total, 1)
        scores, shared = np.zeros(total), np.zeros(total, dtype=bool)
        for word in set(words(query)):
            if word not in self.postings:
                continue
            positions, counts = (
                np.frombuffer(found, dtype=np.int64) for found in self.postings[word]
            )
            weight = math.log(1 + (total - len(positions) + 0.5) / (len(positions) + 0.5))
            scores[positions] += (
                weight
                * counts
                * (k1 + 1)
                / (counts + k1 * (1 - b + b * lengths[positions] / average))
            )
            shared[positions] = True
        hits = np.flatnonzero(shared)
        return Scored([self.ids[hit] for hit in hits.tolist()], scores[hits])
