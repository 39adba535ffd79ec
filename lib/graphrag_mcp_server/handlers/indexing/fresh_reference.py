"""The floor check's reference for the whole graph, carried from version to version: the
modularity of the last fresh Leiden run on the whole graph, and how far the change since can
have moved it (`drift`).

stable_communities.py checks each kept partition against a fresh Leiden run on the same graph.
On the whole graph of a 10,000-document archive (200,000 relationships) that run took about a
second of every update, to check a change of a few relationships. A change of little weight
moves every partition's modularity little. With total edge weight m, adding or removing weight
w changes a fixed partition's modularity by at most 3w/m: at most w/m in the share of weight
inside its communities and 2w/m in the share expected by chance (`change_bound`). While the kept
partition passes the floor against the last fresh score plus every bound since (the highest the
change can have taken that partition), no fresh run is made. Once it does not pass, a fresh run
is made and becomes the reference.

The reference is the score a fresh run found, moved by what the change can do to it; a fresh
run on today's graph may find another partition (Leiden is a heuristic), but the change cannot
have made the one it found before score more than that.
"""

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from graphrag_mcp_server.handlers.indexing.frontier_moves import Edge, Graph

FILE = "clustering.json"
"""A version's reference, written beside its tables by an update that clustered."""


@dataclass(frozen=True)
class FreshReference:
    """The last fresh Leiden run's modularity on the whole graph and the bound on how far the
    changes since can have moved it."""

    modularity: float
    drift: float = 0.0

    @property
    def highest(self) -> float:
        """The most that the partition the fresh run found can score on today's graph."""
        return self.modularity + self.drift

    def moved(self, bound: float) -> "FreshReference":
        """The reference after a change bounded by `bound` (`change_bound`)."""
        return FreshReference(self.modularity, self.drift + bound)


def read(version: Path) -> FreshReference | None:
    """The reference a version recorded; None when it recorded none (a full build, a version
    made before this file) or it cannot be read."""
    try:
        recorded = json.loads((version / FILE).read_text(encoding="utf-8"))
        reference = FreshReference(float(recorded["modularity"]), float(recorded["drift"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return reference if math.isfinite(reference.highest) else None


def write(reference: FreshReference, version: Path) -> None:
    """Record `reference` in the version being built."""
    recorded = {"modularity": reference.modularity, "drift": reference.drift}
    (version / FILE).write_text(json.dumps(recorded), encoding="utf-8")


def change_bound(
    previous: "pd.DataFrame",
    current: "pd.DataFrame",
    changed: "dict[Edge, float | None]",
    graph: "Graph",
) -> float:
    """The most that any partition's modularity can move between the previous edges and the
    current ones (`low`, `high`, `weight` frames; `changed` maps each changed edge to its previous
    weight, `graph` holds the current ones): 3 times the weight changed over the smaller total
    (infinite when a total is not positive)."""
    changed_weight = sum(
        abs(graph.get(low, {}).get(high, 0.0) - (before or 0.0))
        for (low, high), before in changed.items()
    )
    smaller = min(float(previous["weight"].sum()), float(current["weight"].sum()))
    if changed_weight == 0:
        return 0.0
    return 3 * changed_weight / smaller if smaller > 0 else math.inf
