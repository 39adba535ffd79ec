"""Memos of the steps whose results an update carries over from the previous version
(carry_over.py)."""

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from graphrag.index.typing.context import PipelineRunContext


@dataclass
class Memo:
    """Results by input hash: the previous version's (as stored: decoded only when used), and those
    this run used (stored for the next; a carried one keeps its stored form, so it is not encoded
    again)."""

    previous: Mapping[str, Any] = field(default_factory=dict)
    decode: Callable[[Any], Any] = lambda stored: stored
    used: dict[str, Any] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)
    """Keys of previous results taken (`take_many`): stored again as the previous version stored
    them."""
    kept: set[str] = field(default_factory=set)
    """Keys of previous results stored again without being decoded (`keep`)."""
    fresh: dict[str, None] = field(default_factory=dict)
    """Keys of the results this run put (`put`), in order: stored unless carried over too."""
    identities: dict[str, str] = field(default_factory=dict)
    """Key -> what the result is of (`name`), stored with it so that the next run can find the
    key of an unchanged input without computing it (`previous_keys`)."""
    kept_named: int = 0
    """Previous results stored again by their names or rows (`keep_named`, `keep_all_but`), not
    by key."""
    computed: int = 0
    reused: int = 0
    """Results this run took from the previous version."""

    def take(self, key: str) -> Any:
        """The stored result for `key`, or None; a previous version's result taken is counted as
        reused and kept for the next version (so this is no pure lookup)."""
        return self.take_many([key])[0]

    def take_many(self, keys: list[str]) -> list[Any]:
        """`take` of each key, the previous version's results looked up and decoded at once
        (`_stored`): per-row calls were most of an update's summary step at 10,000 documents,
        where 220,000 rows each take a summary."""
        used = self.used
        wanted = [key for key in dict.fromkeys(keys) if used.get(key) is None]
        found, results = self._stored(wanted) if wanted else ([], [])
        used.update(zip(found, results, strict=True))
        self.taken.update(found)
        self.reused += len(found)
        return list(map(used.get, keys))

    def _stored(self, keys: list[str], taking: bool = True) -> tuple[list[str], list[Any]]:
        """The keys of `keys` the previous version stored a result for, and those results decoded
        (a stored table looks them up and decodes them at once, and reads only theirs:
        stored_results.StoredResults); `taking`: the table stores them again."""
        taken = getattr(self.previous, "taken", None)
        if taken is not None:
            decoded: tuple[list[str], list[Any]] = taken(keys, self.decode, taking)
            return decoded
        forms = {key: form for key in keys if (form := self.previous.get(key)) is not None}
        return list(forms), decode_all(self.decode, list(forms.values()))

    def peek(self, key: str) -> Any:
        """The result for `key` (this run's, else the previous version's), or None, without
        taking it."""
        return self.peek_many([key])[0]

    def peek_many(self, keys: list[str]) -> list[Any]:
        """`peek` of each key, the previous version's results found and decoded at once
        (`_stored`)."""
        found = list(map(self.used.get, keys))
        missing = [position for position, result in enumerate(found) if result is None]
        stored = dict(zip(*self._stored([keys[at] for at in missing], taking=False), strict=True))
        for position in missing:
            found[position] = stored.get(keys[position])
        return found

    def keep(self, key: str) -> bool:
        """Store the previous version's result for `key` again without decoding it (its caller
        has the result already); False when the previous version has none."""
        if key in self.used or key in self.kept:
            return True
        if key not in self.previous:
            return False
        self.kept.add(key)
        self.reused += 1
        return True

    def keep_named(self, identities: "pa.Array") -> "np.ndarray":
        """`keep` of the previous result each identity names (`name`), all at once where the
        previous results are a stored table (stored_results.StoredResults.kept_by_name); whether
        each was kept."""
        import numpy as np

        kept_by_name = getattr(self.previous, "kept_by_name", None)
        if kept_by_name is None:
            keys = self.previous_keys(identities.to_pylist())
            return np.array([key is not None and self.keep(key) for key in keys], dtype=bool)
        kept: np.ndarray = kept_by_name(identities)
        self.kept_named += int(kept.sum())
        self.reused += int(kept.sum())
        return kept

    def keep_named_except(self, prefix: str, names: "pa.Array", most: int) -> int | None:
        """`keep` of every previous result named (`name`) with `prefix` but those of `names`, at
        once, where the previous results are a stored table and they are at most `most`; how many
        were kept (None: none kept, the caller keeps them otherwise)."""
        kept_named_except = getattr(self.previous, "kept_named_except", None)
        if kept_named_except is None:
            return None
        kept: int | None = kept_named_except(prefix, names, most)
        if kept is not None:
            self.kept_named += kept
            self.reused += kept
        return kept

    def keep_all_but(self, keys: list[str]) -> None:
        """`keep` of every previous result but those of `keys`, at once where the previous results
        are a stored table (stored_results.StoredResults.kept_except: no key computed)."""
        kept_except = getattr(self.previous, "kept_except", None)
        if kept_except is None:
            left_out = set(keys)
            for key in [key for key in self.previous if key not in left_out]:
                self.keep(key)
            return
        added: int = kept_except(keys)
        self.kept_named += added
        self.reused += added

    def name(self, key: str, identity: str) -> None:
        """Store `identity` with the result of `key` (see `identities`)."""
        self.identities[key] = identity

    def previous_keys(self, identities: list[str]) -> list[str | None]:
        """The key under which the previous version stored the result of each identity, if it
        stored one with it (None otherwise)."""
        keys_of = getattr(self.previous, "keys_of", None)
        return keys_of(identities) if keys_of is not None else [None] * len(identities)

    def put(self, key: str, result: Any, counted: bool = True) -> None:
        """Remember a result computed by this run (`counted` False: one taken or computed under
        another key, remembered under this one too)."""
        self.used[key] = result
        self.fresh[key] = None
        self.computed += counted


def decode_all(decode: Callable[[Any], Any], stored: list[Any]) -> list[Any]:
    """`decode` of each stored result; JSON texts decoded as one array (one call, not one a
    result)."""
    if decode is json.loads and all(isinstance(text, str) for text in stored):
        decoded: list[Any] = json.loads(f"[{','.join(stored)}]")
        return decoded
    return list(map(decode, stored))


class Step(StrEnum):
    """The steps whose results are carried over (the `step` column of the table)."""

    CHUNKS = "chunks"
    EXTRACTION = "extraction"
    SUMMARY = "summary"
    REPORT_CONTEXT = "report_context"
    REPORT = "report"
    COMMUNITY = "community"
    """A community's record signature -> its context's and report's keys and its report."""
    EMBEDDING = "embedding"


CarriedOver = dict[Step, Memo]
CARRIED = "carried_over"
"""The key of a run's memos in the state graphrag hands its workflows."""


_CANONICAL = json.JSONEncoder(default=str, sort_keys=True, ensure_ascii=False)
"""json.dumps(..., default=str, sort_keys=True, ensure_ascii=False) made once (json.dumps makes
an encoder per call with these options: a fifth of a key's cost, over 200,000 keys an update)."""


def input_hash(*parts: Any) -> str:
    """sha256 of the parts as canonical JSON: a step's input as a memo key."""
    return hashlib.sha256(f"[{', '.join(map(_canonical, parts))}]".encode()).hexdigest()


def _canonical(part: Any) -> str:
    """`_CANONICAL.encode(part)`: an ASCII string by the ASCII encoder, which writes the same text
    in half the time (an update hashes every document and text unit whole)."""
    if type(part) is str and part.isascii():
        return encode_basestring_ascii(part)
    return _CANONICAL.encode(part)


@cache
def text_digest(text: str) -> str:
    """sha256 of a text, once per text: a prompt in memo keys (hashed again for each of 10,000 rows,
    it cost a third of a second of a 2000-document update)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


SAMPLE_ROWS = 5
"""Rows a workflow returns as its result."""


def sample(frame: "pd.DataFrame") -> list[dict[str, Any]]:
    """A workflow's result: its table's first rows. graphrag's api.build_index holds every
    workflow's result until the run ends, so a whole table returned stays in memory through every
    later workflow (at 10,000 archive documents the extraction's and the finalized graph's)."""
    rows: list[dict[str, Any]] = frame.head(SAMPLE_ROWS).to_dict("records")
    return rows


def run_state(context: "PipelineRunContext", key: str) -> Any:
    """What the index run handed its workflows under `key` (graphrag.api.build_index's
    `additional_context`); None when the run handed nothing (a workflow then runs as graphrag's)."""
    return context.state.get("additional_context", {}).get(key)
