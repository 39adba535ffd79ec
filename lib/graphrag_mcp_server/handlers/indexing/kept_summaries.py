"""The description summaries of `extract_graph_kept` (kept_extraction.py), carried over by name.

graphrag summarises every entity's and relationship's description list on every run. Here a row
whose name (`summary_name`) the extraction did not name as changed has the same list as in the
previous version, so its summary is the one the previous version wrote: taken from that version's
entities and relationships tables by whole columns (a join of names), its memo entry kept without
being decoded. Only the other rows are keyed by their descriptions and looked up in the memo, and
only those without a stored summary are handed to graphrag's `summarize_descriptions` operation
(or hub_summaries.py). Keying, looking up and decoding each of 220,000 rows was most of a
one-document update's summary step at 10,000 documents.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.extracted_rows import (
    ENTITY,
    NAMED_BY,
    RELATIONSHIP,
    Merged,
    summary_names,
)
from graphrag_mcp_server.handlers.indexing.hub_summaries import (
    Identity,
    fits_one_call,
    hub_summaries,
    usable_tokens,
)
from graphrag_mcp_server.handlers.indexing.memos import (
    CarriedOver,
    Memo,
    Step,
    input_hash,
    text_digest,
)
from graphrag_mcp_server.handlers.tables import READ_OPTIONS

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

PreviousSummaries = dict[int, tuple["pa.Array", "pa.Array"]]
"""The previous version's summaries by kind (ENTITY, RELATIONSHIP): the names of its rows
(`summary_names`) and their descriptions."""

TABLES = {ENTITY: "entities", RELATIONSHIP: "relationships"}
"""Each kind's output table."""


def previous_summaries(version: Path | None) -> PreviousSummaries | None:
    """The summaries the version in `version` wrote (None: no version, or tables it cannot give)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if version is None:
        return None
    summaries: PreviousSummaries = {}
    try:
        for kind, name in TABLES.items():
            read = [*NAMED_BY[kind][1], "description"]
            table = pq.read_table(version / f"{name}.parquet", columns=read, **READ_OPTIONS)
            summaries[kind] = (summary_names(table, kind), table["description"].combine_chunks())
    except (OSError, KeyError, pa.ArrowException):
        return None
    return summaries


def described(table: "pa.Table", summaries: "pa.Array | pa.ChunkedArray") -> "pd.DataFrame":
    """Merged groups (`Merged.table`) with each group's summary as its description, as the frame
    finalize_graph_kept reads (Arrow-backed columns: no Python object a row; it reads them back
    as Arrow, stable_ids.py)."""
    import pandas as pd

    return table.append_column("description", summaries).to_pandas(types_mapper=pd.ArrowDtype)


async def summarized(
    carried: CarriedOver,
    entities: Merged,
    relationships: Merged,
    callbacks: Any,
    model: Any,
    max_summary_length: int,
    max_input_tokens: int,
    prompt: str,
    num_threads: int,
    changed: set[str] | None = None,
    previous: PreviousSummaries | None = None,
) -> "tuple[pa.ChunkedArray, pa.ChunkedArray]":
    """The summary of each group of `entities` and of `relationships` (extracted_rows.grouped),
    graphrag's where the previous version has none. A row not named in `changed` has the previous
    version's key for its name (its input is the same): its summary is taken from `previous` when
    that version wrote it, else looked up by that key; the other rows are keyed by their
    descriptions (None: every row keyed so)."""
    from graphrag.index.operations.summarize_descriptions.summarize_descriptions import (
        summarize_descriptions,
    )

    memo = carried[Step.SUMMARY]

    def key(identity: Identity, descriptions: Any) -> str:  # graphrag hands on the set, sorted
        return _summary_key(
            identity, sorted(set(descriptions)), max_summary_length, max_input_tokens, prompt
        )

    settings = input_hash(max_summary_length, max_input_tokens, text_digest(prompt))
    kinds = ((ENTITY, entities), (RELATIONSHIP, relationships))
    named = [
        _Named.of(groups.table, kind, settings, changed, (previous or {}).get(kind))
        for kind, groups in kinds
    ]
    parts = [
        _Keyed.of(groups, kind, memo, rows, carried, (previous or {}).get(kind), key)
        for (kind, groups), rows, carried in zip(
            kinds, named, _kept(memo, named, settings, changed), strict=True
        )
    ]
    missing = [[found is None for found in memo.take_many(part.keys)] for part in parts]
    usable = usable_tokens(model, prompt, max_input_tokens)
    long = [
        part.too_long(absent, model, usable) for part, absent in zip(parts, missing, strict=True)
    ]
    await hub_summaries(
        [hub for part, rows in zip(parts, long, strict=True) for hub in part.hubs(rows)],
        relationships.table,
        memo,
        key,
        model,
        usable,
        lambda identity, top: _summary_of(
            identity, top, model, max_summary_length, max_input_tokens, prompt
        ),
        num_threads,
    )
    for absent, rows in zip(missing, long, strict=True):
        for row in rows:
            absent[row] = False
    if any(map(any, missing)):  # graphrag answers row by row, in order
        frames = [part.frame(absent) for part, absent in zip(parts, missing, strict=True)]
        new = await _summarized_by_parts(
            frames,
            lambda nodes, edges, told: summarize_descriptions(
                nodes,
                edges,
                told,
                model,
                max_summary_length,
                max_input_tokens,
                prompt,
                num_threads,
            ),
            callbacks,
        )
        for part, absent, summaries in zip(parts, missing, new, strict=True):
            picked = [found for found, chosen in zip(part.keys, absent, strict=True) if chosen]
            for found, summary in zip(picked, summaries, strict=True):
                memo.put(found, summary)
    entity_summaries, relationship_summaries = (
        part.summaries(memo.take_many(part.keys)) for part in parts
    )
    return entity_summaries, relationship_summaries


SUMMARIZED_AT_ONCE = 16384
"""Rows handed to graphrag's summarize_descriptions in one call. It makes a task for every row it
is handed before the first runs: the 206,000 relationships of a 10,000-document cold build at
once were hundreds of MB of tasks and sorted description lists, alive together."""


async def _summarized_by_parts(
    frames: "list[pd.DataFrame]", summarize: Any, callbacks: Any
) -> list[list[Any]]:
    """The summaries graphrag gives the rows of `frames` (entities, relationships), in order,
    asked SUMMARIZED_AT_ONCE rows at a time (`summarize(nodes, edges, callbacks)`), its progress
    told as one count over all of them."""
    from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks
    from graphrag.logger.progress import Progress

    total, done = sum(len(frame) for frame in frames), 0

    class Told(NoopWorkflowCallbacks):
        def progress(self, progress: Progress) -> None:
            callbacks.progress(
                Progress(
                    description=progress.description,
                    total_items=total,
                    completed_items=done + (progress.completed_items or 0),
                )
            )

    found: list[list[Any]] = [[] for _ in frames]
    for kind, frame in enumerate(frames):
        for start in range(0, len(frame), SUMMARIZED_AT_ONCE):
            part = frame.iloc[start : start + SUMMARIZED_AT_ONCE]
            asked = [part if at == kind else other.iloc[0:0] for at, other in enumerate(frames)]
            answered = await summarize(*asked, Told())
            found[kind] += _column(answered[kind])
            done += len(part)
    return found


@dataclass
class _Named:
    """One kind's rows by name: their names and the settings their memo names begin with
    (`stored_as`), the row of each name in the previous version's table (`at`, -1 where none),
    and the rows whose names are unchanged."""

    names: "pa.Array"
    settings: str
    at: "np.ndarray"
    unchanged: "np.ndarray"

    def stored_as(self, rows: "np.ndarray") -> "pa.Array":
        """The memo names of the rows at `rows` (joined for those only: an update takes few)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        return pc.binary_join_element_wise(
            pa.scalar(self.settings, pa.large_string()),
            self.names.take(pa.array(rows, pa.int64())),
            pa.scalar("\x00", pa.large_string()),
        )

    @property
    def written(self) -> "np.ndarray":
        """The unchanged rows whose names the previous version wrote."""
        written: np.ndarray = self.unchanged[self.at[self.unchanged] >= 0]
        return written

    @classmethod
    def of(
        cls,
        table: "pa.Table",
        kind: int,
        settings: str,
        changed: set[str] | None,
        previous: "tuple[pa.Array, pa.Array] | None",
    ) -> "_Named":
        """The names of `table`'s rows (of `kind`) and those the previous version wrote."""
        import numpy as np
        import pyarrow.compute as pc

        names = summary_names(table, kind)
        at = np.full(len(names), -1)
        if previous is not None:
            at = pc.fill_null(pc.index_in(names, value_set=previous[0]), -1).to_numpy()
        unchanged = np.flatnonzero(_unchanged(table, kind, names, changed))
        return cls(names, settings, at, unchanged)


STALE_SHARE, STALE_ROWS = 0.01, 16
"""How far the stored names kept at once (`_kept`) may outnumber the rows that name them before
they are looked up one by one, which leaves out the names no row uses."""


def _kept(
    memo: Memo, kinds: "list[_Named]", settings: str, changed: set[str] | None
) -> "list[np.ndarray]":
    """Whether each row of each kind is carried: written by the previous version, its memo entry
    kept. Every stored summary named under these settings but a changed name is kept at once
    (Memo.keep_named_except: no name looked up) while they are about as many as the rows written
    (STALE_SHARE, STALE_ROWS: a name no row uses any more, such as a relationship whose entity is
    gone, stays stored until they are not); else each written row's entry is looked up by name,
    every kind's at once (one lookup of the step's stored names)."""
    import numpy as np
    import pyarrow as pa

    written = [named.written for named in kinds]
    expected = sum(len(rows) for rows in written)
    at_once = False
    if changed is not None and expected:
        prefix = f"{settings}\x00"
        names = pa.array([prefix + name for name in changed], pa.large_string())
        most = int(expected * (1 + STALE_SHARE)) + STALE_ROWS
        kept = memo.keep_named_except(prefix, names, most)
        at_once = kept is not None and kept >= expected * (1 - STALE_SHARE) - STALE_ROWS
    if at_once:
        found_rows = np.ones(expected, dtype=bool)
    else:
        wanted = [named.stored_as(rows) for named, rows in zip(kinds, written, strict=True)]
        found_rows = memo.keep_named(pa.concat_arrays(wanted))
    ends = np.cumsum([len(rows) for rows in written])[:-1]
    carried = []
    for named, rows, found in zip(kinds, written, np.split(found_rows, ends), strict=True):
        carried.append(np.zeros(len(named.at), dtype=bool))
        carried[-1][rows[found]] = True
    return carried


@dataclass
class _Keyed:
    """One kind's rows and their summaries so far: those carried from the previous version
    (`carried`: each row's place in the previous version's summaries `previous`, -1 for the
    others), and the others (`rows`), each with its identity as graphrag names it, its memo key
    and its descriptions."""

    table: "pa.Table"
    kind: int
    carried: "np.ndarray"
    previous: "pa.Array"
    rows: "np.ndarray"
    identities: list[Identity]
    keys: list[str]
    lists: list[list[str]]

    @classmethod
    def of(
        cls,
        groups: Merged,
        kind: int,
        memo: Memo,
        named: _Named,
        carried: "np.ndarray",
        previous: "tuple[pa.Array, pa.Array] | None",
        key: Any,
    ) -> "_Keyed":
        """The groups' rows (of `kind`): `carried` ones with the previous version's summaries,
        the others keyed (by the previous version's key for an unchanged name)."""
        import numpy as np
        import pyarrow as pa

        table, at = groups.table, named.at
        rest = named.unchanged[~carried[named.unchanged]]
        found = memo.previous_keys(named.stored_as(rest).to_pylist())
        prior = {row: key for row, key in zip(rest.tolist(), found, strict=True) if key is not None}
        written = pa.array([], pa.large_string())
        if previous is not None:
            written = previous[1].cast(pa.large_string())
        others = np.flatnonzero(~carried)
        identities = _identities(table, kind, others)
        lists = groups.lists(others)
        keys = [
            prior.get(row) or key(identity, descriptions)
            for row, identity, descriptions in zip(others.tolist(), identities, lists, strict=True)
        ]
        memo.identities.update(zip(keys, named.stored_as(others).to_pylist(), strict=True))
        return cls(table, kind, np.where(carried, at, -1), written, others, identities, keys, lists)

    def too_long(self, missing: list[bool], model: Any, usable: int) -> list[int]:
        """The places (in `rows`) of the missing rows whose descriptions graphrag would summarise
        in more than one call (hub_summaries.py's rows)."""
        return [
            place
            for place, (absent, listed) in enumerate(zip(missing, self.lists, strict=True))
            if absent and not fits_one_call(sorted(set(listed)), model, usable)
        ]

    def hubs(self, places: list[int]) -> list[Any]:
        """hub_summaries.py's input for the rows at `places`: identity, the whole list's memo
        key, descriptions and the text units that state them."""
        units = _strings(self.table["text_unit_ids"], self.rows[places])
        return [
            (self.identities[place], self.keys[place], self.lists[place], stated)
            for place, stated in zip(places, units, strict=True)
        ]

    def frame(self, chosen: list[bool]) -> "pd.DataFrame":
        """The chosen rows as graphrag's summarize_descriptions reads them."""
        import pandas as pd

        picked = [
            (identity, listed)
            for identity, listed, keep in zip(self.identities, self.lists, chosen, strict=True)
            if keep
        ]
        if self.kind == ENTITY:
            return pd.DataFrame(
                {"title": [title for title, _ in picked], "description": [d for _, d in picked]}
            )
        return pd.DataFrame(
            {
                "source": [pair[0] for pair, _ in picked],
                "target": [pair[1] for pair, _ in picked],
                "description": [listed for _, listed in picked],
            }
        )

    def summaries(self, taken: list[Any]) -> "pa.ChunkedArray":
        """Every row's summary: the carried ones, and `taken` for `rows`; slices of the previous
        version's summaries where they keep their order (slices.py: 27 MB of relationship
        descriptions at 10,000 documents, not copied)."""
        import numpy as np
        import pyarrow as pa

        from graphrag_mcp_server.handlers.indexing.slices import taken as taken_rows

        order = self.carried.copy()
        order[self.rows] = len(self.previous) + np.arange(len(self.rows))
        values = pa.chunked_array(
            [self.previous, pa.array(taken, pa.large_string())], pa.large_string()
        )
        return taken_rows(values, order)


def _unchanged(
    table: "pa.Table", kind: int, names: "pa.Array", changed: set[str] | None
) -> "np.ndarray":
    """Whether each row's name is not in `changed` (all False for None); a title extracted with
    two types is two rows, neither unchanged (its name is not one row's)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if changed is None:
        return np.zeros(len(names), dtype=bool)
    named = pc.is_in(names, value_set=pa.array(list(changed), pa.large_string()))
    unchanged: np.ndarray = ~named.to_numpy(zero_copy_only=False)
    if kind == ENTITY:
        codes = pc.dictionary_encode(table["title"]).combine_chunks().indices.to_numpy()
        unchanged &= np.bincount(codes, minlength=1)[codes] == 1
    return unchanged


def _strings(column: Any, rows: "np.ndarray") -> list[Any]:
    """The values of `column` at `rows`, as Python objects."""
    import pyarrow as pa

    values: list[Any] = column.take(pa.array(rows, pa.int64())).to_pylist()
    return values


def _identities(table: "pa.Table", kind: int, rows: "np.ndarray") -> list[Identity]:
    """The identities graphrag gives the rows at `rows`: a title, or (source, target)."""
    if kind == ENTITY:
        titles: list[Identity] = _strings(table["title"], rows)
        return titles
    sources, targets = (_strings(table[end], rows) for end in ("source", "target"))
    return list(zip(sources, targets, strict=True))


async def _summary_of(
    identity: Identity,
    descriptions: list[str],
    model: Any,
    max_summary_length: int,
    max_input_tokens: int,
    prompt: str,
) -> str:
    """graphrag's summary of one row's descriptions."""
    from graphrag.index.operations.summarize_descriptions.summarize_descriptions import (
        run_summarize_descriptions,
    )

    result = await run_summarize_descriptions(
        identity, descriptions, model, max_summary_length, max_input_tokens, prompt
    )
    return str(result.description)


def _column(frame: "pd.DataFrame") -> list[Any]:
    """The summaries graphrag returned (an empty frame when it was handed no row)."""
    return list(frame["description"]) if len(frame) else []


def _summary_key(
    identity: Identity,
    descriptions: list[str],
    max_summary_length: int,
    max_input_tokens: int,
    prompt: str,
) -> str:
    """The memo key of one entity's or relationship's summary, from graphrag's input to it."""
    return input_hash(
        identity, descriptions, max_summary_length, max_input_tokens, text_digest(prompt)
    )
