"""The relationships and text units inside each community of a clustering, listed as graphrag's
create_communities lists them (kept_communities.py `communities_rows`): a relationship is inside a
community when both its ends are members; each community's relationship ids and their text unit
ids, sorted and distinct.

graphrag joins every relationship to each level's communities twice and aggregates lists one group
at a time. Here each relationship's community at a level is found by its ends' positions, and the
lists are made by sorting: only the relationships inside some community (a third of them at
10,000 documents) are sorted, once, by id, their text units by unit, and a level's lists are those
relationships grouped by community, already in order.
"""

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

Communities = list[tuple[int, int, int, list[str]]]
"""graphrag's cluster_graph result: (level, community, parent, entity titles)."""

Listed = tuple[int, int, int, list[str], list[str]]
"""A community with relationships inside it: level, number, parent, relationship ids, text unit
ids."""


def inside_lists(clusters: Communities, relationships: "pa.Table") -> Iterator[Listed]:
    """Each community of `clusters` with a relationship inside it (`relationships`: id, source,
    target, text_unit_ids), by level (in the clusters' order), then by number."""
    ends = _Ends.of(relationships)
    levels = [
        _Level.of([cluster for cluster in clusters if cluster[0] == level], ends)
        for level in dict.fromkeys(level for level, _, _, _ in clusters)
    ]
    if not levels:
        return
    import numpy as np

    inside = np.flatnonzero(np.logical_or.reduce([level.inside >= 0 for level in levels]))
    ordered = _Ordered.of(relationships, inside)
    for level in levels:
        community = level.inside[ordered.relationships]
        listed = community >= 0
        ids = _grouped(community[listed], ordered.id_rank[listed], ordered.ids)
        at_unit = community[ordered.unit_relationship]
        units = dict(
            _grouped(at_unit[at_unit >= 0], ordered.unit_rank[at_unit >= 0], ordered.units)
        )
        for index, relationship_ids in ids:
            number = level.numbers[index]
            yield (
                level.level,
                number,
                level.parents[number],
                relationship_ids,
                units.get(index, []),
            )


@dataclass(frozen=True)
class _Ends:
    """Each relationship's ends as positions in `titles` (-1: no title)."""

    titles: "pd.Index"
    source: "np.ndarray"
    target: "np.ndarray"

    @classmethod
    def of(cls, relationships: "pa.Table") -> "_Ends":
        import pandas as pd
        import pyarrow as pa
        import pyarrow.compute as pc

        source, target = (
            relationships.column(end).combine_chunks().cast(pa.large_string())
            for end in ("source", "target")
        )
        titles = pc.unique(pa.concat_arrays([source, target]).drop_null())

        def positions(ends: "pa.Array") -> "np.ndarray":
            found: np.ndarray = pc.fill_null(pc.index_in(ends, value_set=titles), -1).to_numpy()
            return found

        return cls(pd.Index(titles.to_pylist()), positions(source), positions(target))


@dataclass(frozen=True)
class _Level:
    """A level's communities (`numbers`, sorted; their parents) and each relationship's community
    there as an index in `numbers` (`inside`; -1: its ends are not in one community)."""

    level: int
    numbers: list[int]
    parents: dict[int, int]
    inside: "np.ndarray"

    @classmethod
    def of(cls, at_level: Communities, ends: _Ends) -> "_Level":
        import numpy as np

        numbers = sorted({community for _, community, _, _ in at_level})
        index = {number: at for at, number in enumerate(numbers)}
        titles = list(itertools.chain.from_iterable(nodes for _, _, _, nodes in at_level))
        listed = np.repeat(
            np.asarray([index[community] for _, community, _, _ in at_level], dtype=np.int64),
            [len(nodes) for _, _, _, nodes in at_level],
        )
        at = ends.titles.get_indexer(titles)
        _, first = np.unique(at, return_index=True)  # a title in two communities: the first
        first = first[at[first] >= 0]
        community = np.full(len(ends.titles) + 1, -1, dtype=np.int64)  # the last slot: -1
        community[at[first]] = listed[first]
        source = community[ends.source]
        inside = np.where(source == community[ends.target], source, -1)
        parents = {community: parent for _, community, parent, _ in at_level}
        return cls(at_level[0][0], numbers, parents, inside)


@dataclass(frozen=True)
class _Ordered:
    """The relationships inside some community sorted by id (`relationships`: their rows; `ids`,
    each id's rank among the distinct ones) and their (relationship, text unit) pairs sorted by
    unit (`unit_relationship`: the relationship's place in that order; `units`, `unit_rank`)."""

    relationships: "np.ndarray"
    ids: "np.ndarray"
    id_rank: "np.ndarray"
    unit_relationship: "np.ndarray"
    units: "np.ndarray"
    unit_rank: "np.ndarray"

    @classmethod
    def of(cls, relationships: "pa.Table", inside: "np.ndarray") -> "_Ordered":
        import numpy as np
        import pyarrow.compute as pc

        ids = relationships.column("id").combine_chunks().take(inside)
        by_id = pc.sort_indices(ids).to_numpy()
        ordered = inside[by_id]
        ids, id_rank = _distinct(ids.take(by_id))
        listed = relationships.column("text_unit_ids").combine_chunks().take(ordered)
        flat = pc.list_flatten(listed)
        units = pc.unique(flat)
        units = units.take(pc.sort_indices(units))
        unit_rank = pc.index_in(flat, value_set=units).to_numpy(zero_copy_only=False)
        by_unit = _stable_order(unit_rank)
        return cls(
            ordered,
            ids,
            id_rank,
            pc.list_parent_indices(listed).to_numpy()[by_unit],
            np.asarray(units.to_pylist(), dtype=object),
            unit_rank[by_unit],
        )


def _distinct(ordered: "pa.Array") -> "tuple[np.ndarray, np.ndarray]":
    """The distinct values of `ordered` (sorted) and each value's rank among them."""
    import numpy as np
    import pyarrow.compute as pc

    first = np.ones(len(ordered), dtype=bool)
    if len(ordered) > 1:
        differs = pc.not_equal(ordered.slice(1), ordered.slice(0, len(ordered) - 1))
        first[1:] = differs.to_numpy(zero_copy_only=False)
    distinct = np.asarray(ordered.filter(first).to_pylist(), dtype=object)
    return distinct, np.cumsum(first) - 1


def _grouped(
    community: "np.ndarray", ranks: "np.ndarray", values: "np.ndarray"
) -> "list[tuple[int, list[Any]]]":
    """Each community index (`community`, one per item; the items sorted by their `ranks`) with
    the distinct values at those ranks, sorted."""
    import numpy as np

    if not len(community):
        return []
    order = _stable_order(community)
    community, ranks = community[order], ranks[order]
    first = np.r_[True, (community[1:] != community[:-1]) | (ranks[1:] != ranks[:-1])]
    community, ranks = community[first], ranks[first]
    listed = values[ranks].tolist()
    starts = np.flatnonzero(np.r_[True, community[1:] != community[:-1]])
    bounds = [*starts.tolist(), len(listed)]
    return [(int(community[start]), listed[start:end]) for start, end in itertools.pairwise(bounds)]


def _stable_order(numbers: "np.ndarray") -> "np.ndarray":
    """The stable sorting order of non-negative `numbers`: a radix sort while they fit 16 bits."""
    import numpy as np

    small = np.uint16 if not len(numbers) or numbers.max() < 2**16 else np.int64
    order: np.ndarray = np.argsort(numbers.astype(small), kind="stable")
    return order
