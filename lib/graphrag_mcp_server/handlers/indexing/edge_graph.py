"""The relationship graph an update clusters (stable_communities.py), held as arrays.

graphrag's cluster_graph hands its clustering a sorted list of (source, target, weight), and an
update's clustering read it into a dict of dicts: at 10,000 documents 200,000 relationships made
into Python objects on every update, for a change of a few. Here the edges are arrays of positions
in the sorted node titles: a node's neighbours are made into a dict only when the clustering
visits it, and what concerns every node (degrees, the pieces of every community) is computed on
the arrays. The order of a node's neighbours (by title) and of the nodes (as the edge list first
names them) are those of the dict of dicts, so sums of weights are added in the same order.
"""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa


@dataclass(frozen=True)
class EdgeTable:
    """Undirected edges by arrays: `titles` (the nodes' titles, sorted, distinct), `low` and `high`
    (each edge's ends as positions in `titles`, low <= high) and `weight`; a pair once (the last
    of a repeated pair kept, as graphrag's cluster_graph keeps it)."""

    titles: "np.ndarray"
    low: "np.ndarray"
    high: "np.ndarray"
    weight: "np.ndarray"

    @classmethod
    def of(cls, source: Any, target: Any, weight: Any, by_pair: bool = True) -> "EdgeTable":
        """The edges between `source` and `target` (titles, in either direction; an edge missing
        both is left out) with `weight`: sorted by their ends' titles (`by_pair`), else in the
        order given."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        source, target = (_strings(ends) for ends in (source, target))
        titles = pc.unique(pa.concat_arrays([source, target]).drop_null())
        titles = titles.take(pc.sort_indices(titles))
        source_at, target_at = (
            pc.fill_null(pc.index_in(ends, value_set=titles), -1).to_numpy()
            for ends in (source, target)
        )
        # a missing end: the other one at both (pandas' row-wise min and max skip it)
        source_at = np.where(source_at < 0, target_at, source_at).astype(np.int64)
        target_at = np.where(target_at < 0, source_at, target_at).astype(np.int64)
        low, high = np.minimum(source_at, target_at), np.maximum(source_at, target_at)
        order = by_pairs(low, high, len(titles))
        low_by_pair, high_by_pair = low[order], high[order]
        pair_ends = np.r_[
            (low_by_pair[1:] != low_by_pair[:-1]) | (high_by_pair[1:] != high_by_pair[:-1]), True
        ]
        kept = order[pair_ends & (low_by_pair >= 0)]  # the last of each pair
        if not by_pair:
            listed = np.zeros(len(low), dtype=bool)
            listed[kept] = True
            kept = np.flatnonzero(listed)
        return cls(
            np.asarray(titles.to_pylist(), dtype=object),
            low[kept],
            high[kept],
            np.asarray(weight, dtype=np.float64)[kept],
        )

    def weights(self) -> "pd.DataFrame":
        """The weights as a one-column frame (`weight`), in this table's order (fresh_reference
        sums it)."""
        import pandas as pd

        return pd.DataFrame({"weight": self.weight})


def _strings(values: Any) -> "pa.Array":
    """`values` (titles: a list, an array, a pandas or Arrow column) as an Arrow string array."""
    import pyarrow as pa

    if not isinstance(values, pa.Array | pa.ChunkedArray):
        values = pa.array(values, pa.large_string())
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.cast(pa.large_string())


@dataclass(eq=False)
class EdgeGraph(Mapping[str, dict[str, float]]):
    """A weighted undirected graph, node title -> {neighbour title: weight}, read as the dict of
    dicts built from the sorted edge list reads; a node's neighbours made when first asked for.
    Its nodes are `edges.titles` (a community's subgraph holds nodes without edges too)."""

    edges: EdgeTable
    _codes: dict[str, int] | None = field(default=None, repr=False)
    _neighbours: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)
    _by_high: "np.ndarray | None" = field(default=None, repr=False)
    _order: "np.ndarray | None" = field(default=None, repr=False)
    _ordered: list[str] | None = field(default=None, repr=False)
    _arrow_titles: "pa.Array | None" = field(default=None, repr=False)
    _edge_list: "EdgeList | None" = field(default=None, repr=False)

    @classmethod
    def of(cls, edges: Iterable[tuple[str, str, float]]) -> "EdgeGraph":
        """The graph of an edge list as graphrag's cluster_graph hands it."""
        listed = list(edges)
        return cls(
            EdgeTable.of(
                [source for source, _, _ in listed],
                [target for _, target, _ in listed],
                [weight for _, _, weight in listed],
            )
        )

    @property
    def titles(self) -> "np.ndarray":
        """The nodes' titles, sorted."""
        return self.edges.titles

    def code(self, title: str) -> int | None:
        """The node's position in `titles`; None when it is not in the graph."""
        if self._codes is None:
            self._codes = {title: code for code, title in enumerate(self.titles.tolist())}
        return self._codes.get(title)

    def positions(self, titles: list[str]) -> "np.ndarray":
        """Each title's position in `titles` (-1: not in the graph)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self._arrow_titles is None:
            self._arrow_titles = pa.array(self.titles.tolist(), pa.large_string())
        found = pc.index_in(pa.array(titles, pa.large_string()), value_set=self._arrow_titles)
        at: np.ndarray = pc.fill_null(found, -1).to_numpy()
        return at

    def __getitem__(self, title: str) -> dict[str, float]:
        if (found := self._neighbours.get(title)) is None:
            code = self.code(title)
            if code is None:
                raise KeyError(title)
            found = self._neighbours[title] = self._neighbours_of(code)
        return found

    def _neighbours_of(self, code: int) -> dict[str, float]:
        """A node's neighbours by title, in title order (a self-loop once)."""
        import numpy as np

        edges = self.edges
        if self._by_high is None:
            self._by_high = np.argsort(edges.high, kind="stable")
        below = self._by_high[_between(edges.high[self._by_high], code)]
        below = below[edges.low[below] != code]  # a self-loop is listed with the edges above
        above = np.arange(len(edges.low))[_between(edges.low, code)]
        listed = np.concatenate([below, above])
        ends = np.where(edges.low[listed] == code, edges.high[listed], edges.low[listed])
        return dict(zip(self.titles[ends].tolist(), edges.weight[listed].tolist(), strict=True))

    def __iter__(self) -> Iterator[str]:
        if self._ordered is None:
            self._ordered = self.titles[self._node_order()].tolist()
        return iter(self._ordered)

    def __len__(self) -> int:
        return len(self.titles)

    def __contains__(self, title: object) -> bool:
        return isinstance(title, str) and self.code(title) is not None

    def _node_order(self) -> "np.ndarray":
        """The nodes in the order the sorted edge list first names them (a dict of dicts built
        from it holds them so), then those without edges."""
        if self._order is None:
            import numpy as np
            import pandas as pd

            edges = self.edges
            named = pd.unique(np.column_stack([edges.low, edges.high]).ravel())
            alone = np.setdiff1d(np.arange(len(self.titles)), named, assume_unique=True)
            self._order = np.concatenate([named, alone]).astype(np.int64)
        return self._order

    def edge_list(self) -> "EdgeList":
        """The sorted edge list (each edge once, low title first), as graspologic takes it."""
        if self._edge_list is None:
            edges = self.edges
            self._edge_list = EdgeList(
                self.titles[edges.low].tolist(),
                self.titles[edges.high].tolist(),
                edges.weight.tolist(),
            )
        return self._edge_list

    def degrees(self) -> dict[str, float]:
        """Each node's weighted degree, its neighbours' weights added in their order (a
        self-loop once), the nodes in the graph's order."""
        import numpy as np

        edges = self.edges
        total = np.zeros(len(self.titles))
        others = edges.low != edges.high
        np.add.at(total, edges.high[others], edges.weight[others])  # the neighbours below first
        np.add.at(total, edges.low, edges.weight)
        return dict(zip(self, total[self._node_order()].tolist(), strict=True))

    def modularity(self, partition: Mapping[str, int]) -> float | None:
        """graspologic's modularity (resolution 1) of `partition` (every node's community), made
        from the arrays; None when a weight is not a whole number.

        graspologic adds the weights inside communities, then subtracts each community's squared
        degree over twice the weight, by community number, and divides by twice the weight. With
        whole-number weights every sum is exact in any order, and the subtractions and division
        are made here in its order: the same float. Other weights are left to graspologic (its
        order of additions would matter)."""
        import numpy as np

        edges = self.edges
        weight = edges.weight
        if not (np.isfinite(weight).all() and (weight == np.round(weight)).all()):
            return None
        community = np.fromiter(
            (partition[title] for title in self.titles.tolist()), np.int64, len(self.titles)
        )
        others = edges.low != edges.high
        numbers, index = np.unique(community, return_inverse=True)
        inside = 2.0 * float(weight[others & (community[edges.low] == community[edges.high])].sum())
        between = float(weight[others].sum())
        self_links = float(weight[~others].sum())
        degree = np.bincount(edges.low[others], weight[others], len(self.titles)) + np.bincount(
            edges.high[others], weight[others], len(self.titles)
        )
        community_degree = np.bincount(index, degree, len(numbers))
        resolution = 1.0 / (2.0 * (between + self_links))
        quality = inside
        for squared in (community_degree * community_degree).tolist():
            quality -= squared * resolution
        return quality / (2.0 * between + self_links)

    def subgraph(self, nodes: Sequence[str]) -> "EdgeGraph":
        """The graph of `nodes` and the edges between them."""
        import numpy as np

        codes = np.sort(np.fromiter((self.code(node) for node in nodes), np.int64, len(nodes)))
        inside = np.zeros(len(self.titles), dtype=bool)
        inside[codes] = True
        edges = self.edges
        kept = inside[edges.low] & inside[edges.high]
        table = EdgeTable(
            self.titles[codes],
            np.searchsorted(codes, edges.low[kept]),
            np.searchsorted(codes, edges.high[kept]),
            edges.weight[kept],
        )
        return EdgeGraph(table)

    def broken(self, membership: Mapping[str, int]) -> set[int]:
        """The communities of `membership` (every node's) that are in more than one piece."""
        import numpy as np

        community = np.fromiter(
            (membership[title] for title in self.titles.tolist()), np.int64, len(self.titles)
        )
        return set(pieces(community, self.edges).tolist())


@dataclass(frozen=True)
class EdgeList(Sequence[tuple[str, str, float]]):
    """An edge list, (source, target, weight), each edge's tuple made as it is read: graspologic
    reads them once, and a list of 200,000 tuples (10,000 documents) was held and walked by the
    garbage collector, a young generation of its own several times over."""

    sources: list[str]
    targets: list[str]
    weights: list[float]

    @overload
    def __getitem__(self, at: int) -> tuple[str, str, float]: ...

    @overload
    def __getitem__(self, at: slice) -> "list[tuple[str, str, float]]": ...

    def __getitem__(
        self, at: int | slice
    ) -> "tuple[str, str, float] | list[tuple[str, str, float]]":
        if isinstance(at, slice):
            return list(zip(self.sources[at], self.targets[at], self.weights[at], strict=True))
        return self.sources[at], self.targets[at], self.weights[at]

    def __len__(self) -> int:
        return len(self.sources)

    def __iter__(self) -> Iterator[tuple[str, str, float]]:
        return zip(self.sources, self.targets, self.weights, strict=True)


def by_pairs(low: "np.ndarray", high: "np.ndarray", count: int) -> "np.ndarray":
    """The order of the pairs (`low`, `high`: positions among `count`) by low then high, pairs that
    are equal in the order given: two stable sorts, radix sorts while positions fit 16 bits."""
    import numpy as np

    small = np.uint16 if count < 2**16 else np.int64
    order = np.argsort(high.astype(small), kind="stable")
    ordered: np.ndarray = order[np.argsort(low[order].astype(small), kind="stable")]
    return ordered


def _between(sorted_codes: "np.ndarray", code: int) -> slice:
    """The positions of `code` in a sorted array."""
    import numpy as np

    start, end = np.searchsorted(sorted_codes, [code, code + 1])
    return slice(int(start), int(end))


def pieces(community: "np.ndarray", edges: EdgeTable) -> "np.ndarray":
    """The communities (`community`: each node's, -1 for none) whose nodes are not all connected
    by the `edges` between them."""
    import numpy as np

    inside = (community[edges.low] == community[edges.high]) & (community[edges.low] >= 0)
    labels = component_labels(len(community), edges.low[inside], edges.high[inside])
    placed = community >= 0
    pairs = np.unique(community[placed] * len(community) + labels[placed])
    found, counts = np.unique(pairs // len(community), return_counts=True)
    broken: np.ndarray = found[counts > 1]
    return broken


def component_labels(count: int, low: "np.ndarray", high: "np.ndarray") -> "np.ndarray":
    """Each of `count` nodes' connected component by the edges `low`-`high`, named by its
    smallest node: roots hooked under the smaller root of each edge, then paths halved, until
    every edge joins one component."""
    import numpy as np

    labels = np.arange(count)
    while True:
        ends = labels[low], labels[high]
        if np.array_equal(*ends):
            return labels
        smaller = np.minimum(*ends)
        for end in ends:
            np.minimum.at(labels, end, smaller)
        while not np.array_equal(jumped := labels[labels], labels):
            labels = jumped
