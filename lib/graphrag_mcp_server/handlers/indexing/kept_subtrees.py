"""The previous communities an update's clustering carries whole, with every community below them
(stable_communities.py).

An update's clustering places each community at a level, then splits the large ones, seeding each
split with the community's previous sub-communities. Where a community has the same members as
before and none of them is at a changed relationship, that split keeps the sub-communities as they
were (unless one is now in pieces), and so on down: at 10,000 documents that walk made a subgraph
and a split for 770 communities, for a change that touched 3. Here such a community's whole
subtree is taken from the previous version when everything the walk would check holds for it
(`Subtrees.carried`): the same results, without the walk.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from graphrag_mcp_server.handlers.indexing.edge_graph import EdgeGraph


class Community(NamedTuple):
    """A community of the clustering: its level, number, parent (-1 at the top) and nodes, and
    whether it is carried from the previous version (its nodes in the previous order)."""

    level: int
    community: int
    parent: int
    nodes: list[str]
    carried: bool = False


@dataclass
class Subtrees:
    """The previous partition (`levels`: each level's node -> community; `parents`; `members`:
    each community's nodes in their level's order) as subtrees, checked against the current
    `graph`, the `frontier` (nodes at changed relationships, new nodes) and
    `max_cluster_size`."""

    levels: list[dict[str, int]]
    parents: dict[int, int]
    members: dict[int, list[str]]
    graph: "EdgeGraph"
    frontier: set[str]
    max_cluster_size: int
    _level: dict[int, int] = field(default_factory=dict)
    _children: dict[int, list[int]] = field(default_factory=dict)
    _unsound: set[int] = field(default_factory=set)
    _whole: dict[int, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for level, nodes in enumerate(self.levels):
            self._level.update(dict.fromkeys(set(nodes.values()), level))
        for community, parent in self.parents.items():
            self._children.setdefault(parent, []).append(community)
        self._unsound = self._unsound_children()

    def carried(
        self, community: int, level: int, parent: int, nodes: Sequence[str]
    ) -> list[Community] | None:
        """The previous subtree of `community` (with `parent`) when the walk would make it again:
        the same `nodes` at the same `level`, none at the frontier, and below it every split
        as before; None otherwise."""
        before = self.members.get(community)
        if self._level.get(community) != level or before is None or len(before) != len(nodes):
            return None
        at_level = self.levels[level]
        if any(at_level.get(node) != community for node in nodes):
            return None
        if not self.frontier.isdisjoint(nodes) or not self._splits_as_before(community):
            return None
        return self._subtree(community, parent)

    def _subtree(self, community: int, parent: int) -> list[Community]:
        level, members = self._level[community], self.members[community]
        found = [Community(level, community, parent, members, carried=True)]
        for child in self._children.get(community, []):
            found.extend(self._subtree(child, community))
        return found

    def _splits_as_before(self, community: int) -> bool:
        """Whether the walk splits `community` and everything below it as the previous version
        did: split exactly when max_cluster_size or larger, into two or more sub-communities that
        are its members, whole (in the graph, in one piece)."""
        if (known := self._whole.get(community)) is not None:
            return known
        children = self._children.get(community, [])
        if len(self.members[community]) < self.max_cluster_size:
            whole = not children
        else:
            whole = (
                len(children) > 1
                and sum(len(self.members.get(child, [])) for child in children)
                == len(self.members[community])
                and self._unsound.isdisjoint(children)
                and all(self._splits_as_before(child) for child in children)
            )
        self._whole[community] = whole
        return whole

    def _unsound_children(self) -> set[int]:
        """Sub-communities that the walk would not make again as they were: without members, with
        a member outside their parent or the graph, or in pieces there."""
        import numpy as np

        from graphrag_mcp_server.handlers.indexing.edge_graph import pieces

        unsound = {child for child in self.parents if not self.members.get(child)}
        above: np.ndarray | None = None
        for nodes in self.levels:
            at = self.graph.positions(list(nodes))
            numbers = np.fromiter(nodes.values(), np.int64, len(nodes))
            placed = at >= 0
            community = np.full(len(self.graph.titles), -1, dtype=np.int64)
            community[at[placed]] = numbers[placed]
            if above is not None:
                parents = np.fromiter(
                    (self.parents.get(number, -2) for number in numbers.tolist()),
                    np.int64,
                    len(numbers),
                )
                outside = ~placed
                outside[placed] = above[at[placed]] != parents[placed]
                unsound.update(numbers[outside].tolist())
                unsound.update(pieces(community, self.graph.edges).tolist())
            above = np.where(community >= 0, community, -3)  # -3: in no community above
        return unsound
