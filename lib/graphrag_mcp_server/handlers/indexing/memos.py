"""Memos of the steps whose results an update carries over from the previous version (carry_over.py)."""

import hashlib
import json
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


@dataclass
class Memo:
    """Results by input hash: the previous version's, and those this run used (stored for the next)."""

    previous: dict[str, Any] = field(default_factory=dict)
    used: dict[str, Any] = field(default_factory=dict)
    computed: int = 0
    reused: int = 0
    """Results this run took from the previous version."""

    def get(self, key: str) -> Any:
        """The stored result for `key` (now counted as used), or None."""
        found = self.used.get(key)
        if found is None and (found := self.previous.get(key)) is not None:
            self.used[key] = found
            self.reused += 1
        return found

    def put(self, key: str, result: Any) -> None:
        """Remember a result computed by this run."""
        self.used[key] = result
        self.computed += 1


class Step(StrEnum):
    """The steps whose results are carried over (the `step` column of the table)."""

    EXTRACTION = "extraction"
    SUMMARY = "summary"
    REPORT_CONTEXT = "report_context"
    REPORT = "report"
    EMBEDDING = "embedding"


CarriedOver = dict[Step, Memo]
current: ContextVar[CarriedOver | None] = ContextVar("carried_over", default=None)
"""The memos of the run in progress (None: graphrag's own steps run as they are)."""


def input_hash(*parts: Any) -> str:
    """sha256 of the parts as canonical JSON: a step's input as a memo key."""
    text = json.dumps(parts, default=str, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
