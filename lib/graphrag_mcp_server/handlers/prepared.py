"""graphrag's query objects and short-id lookups for one loaded version of the index, made once and
reused.

graphrag.api converts every table into graphrag objects again on each search (`read_indexer_*`);
here each conversion is made on first use and kept with the version's IndexTables (a new version
has new tables, so new objects). graphrag's context builders write into the community reports they
rank (`attributes`: matches, weights), so those are lent: a search borrows a set no other search is
using, reset to how graphrag reads them, and gives it back. Relationships are shared: the one
builder that marks them (the local context's links) is search/incident.py's, which keeps its marks
per search.
"""

import threading
import weakref
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from graphrag_mcp_server.handlers.entity_names import EntityNames
from graphrag_mcp_server.handlers.indexer_objects import (
    indexer_entities,
    indexer_text_units,
    optional_int,
    optional_list,
)
from graphrag_mcp_server.handlers.tables import IndexTables

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from graphrag.data_model.community import Community
    from graphrag.data_model.community_report import CommunityReport
    from graphrag.data_model.covariate import Covariate
    from graphrag.data_model.entity import Entity
    from graphrag.data_model.relationship import Relationship
    from graphrag.data_model.text_unit import TextUnit
    from graphrag_vectors import VectorStore

T = TypeVar("T")


class _Attributed(Protocol):
    """A graphrag object a context builder writes into (its `attributes`)."""

    attributes: dict[str, Any] | None


A = TypeVar("A", bound=_Attributed)
DEFAULT_LEVEL = 2
"""The community level the tools search by default: what `warm` prepares."""
KEPT_SETS = 4
"""Sets of lent objects kept for later searches; more searches at once read their own and let them
go."""


def prepared(tables: IndexTables) -> "Prepared":
    """graphrag's query objects and short-id lookups for these tables, made on first use and kept
    with them."""
    kept: Prepared | None = tables.derived.get("prepared")
    if kept is None:
        kept = tables.derived.setdefault("prepared", Prepared(tables))
    return kept


class Prepared:
    """One version's graphrag objects (made on first use, then kept) and short-id lookups."""

    def __init__(self, tables: IndexTables) -> None:
        # a proxy: the tables hold this object (`derived`), and a cycle between them would leave
        # a replaced version to the collector, whose full walk stalls a server (0.5 s at 10,000
        # documents); without one the version is freed as soon as no search holds it
        self._tables = weakref.proxy(tables)
        # reentrant: a lent set can come back from a generator finalised under it
        self._lock = threading.RLock()
        self._objects: dict[Hashable, Any] = {}
        self._lent: dict[Hashable, list[list[Any]]] = {}

    def once(self, key: Hashable, make: Callable[[], T]) -> T:
        """`make()` the first time `key` is asked for (once, whatever the threads); the same object
        after."""
        with self._lock:
            if key not in self._objects:
                self._objects[key] = make()
            made: T = self._objects[key]  # what `make` returned for this key
            return made

    @contextmanager
    def _borrowed(self, key: Hashable, make: Callable[[], list[A]]) -> Iterator[list[A]]:
        """A set of objects graphrag writes into that no other search holds: kept from earlier
        searches (reset), or made anew when every kept set is in use (then kept if fewer than
        KEPT_SETS are)."""
        with self._lock:
            kept = self._lent.setdefault(key, [])
            objects = kept.pop() if kept else None
        if objects is None:
            objects = make()
        for item in objects:
            item.attributes = None  # how graphrag's readers leave them
        try:
            yield objects
        finally:
            with self._lock:
                if len(kept) < KEPT_SETS:
                    kept.append(objects)

    def text_units(self) -> list["TextUnit"]:
        """Every text unit (local search copies those it ranks; basic search only reads)."""
        return self.once("text_units", lambda: indexer_text_units(self._tables.text_units))

    def entities(self, level: int, entity_types: list[str] | None = None) -> list["Entity"]:
        """The entities with their communities up to `level`; only those of `entity_types` if given
        (any case)."""
        tables = self._tables
        entities = self.once(
            ("entities", level),
            lambda: indexer_entities(tables.entities, tables.communities, level),
        )
        if not entity_types:
            return entities
        wanted = {entity_type.casefold() for entity_type in entity_types}
        return [
            entity
            for entity in entities
            if entity.type is not None and entity.type.casefold() in wanted
        ]

    def communities(self) -> list["Community"]:
        """The communities that have a report (global search's dynamic selection walks them)."""
        from graphrag.query.indexer_adapters import read_indexer_communities

        tables = self._tables
        return self.once(
            "communities",
            lambda: read_indexer_communities(tables.communities, tables.community_reports),
        )

    def covariates(self) -> list["Covariate"]:
        """The claims, if the index extracted any."""
        from graphrag.query.indexer_adapters import read_indexer_covariates

        covariates = self._tables.covariates
        return self.once(
            "covariates",
            lambda: read_indexer_covariates(covariates) if covariates is not None else [],
        )

    def relationships(self) -> "RelationshipRows":
        """Every relationship, in the table's order. Shared by every search: graphrag's local
        context marks the relationships it ranks with their links, search/incident.py's keeps
        those marks per search instead."""
        return self.once("relationships", lambda: indexer_relationships(self._tables.relationships))

    def local_lookups(self, level: int, entity_types: list[str] | None = None) -> "LocalLookups":
        """What a local context at `level` looks its entities and passages up in (`entity_types`:
        only those entities), made once per version (graphrag's builder makes these dicts on every
        search)."""
        entities = self.entities(level, entity_types)
        return LocalLookups(
            entities=(
                {entity.id: entity for entity in entities}
                if entity_types
                else self.once(("entities_by_id", level), lambda: {e.id: e for e in entities})
            ),
            names=(
                EntityNames.of(entities)
                if entity_types
                else self.once(("entity_names", level), lambda: EntityNames.of(entities))
            ),
            text_units=self.once(
                "text_units_by_id", lambda: {unit.id: unit for unit in self.text_units()}
            ),
            rankings=self.once("passage_rankings", dict),
        )

    def reports(
        self, level: int, *, dynamic: bool = False, embeddings: "VectorStore | None" = None
    ) -> AbstractContextManager[list["CommunityReport"]]:
        """The reports graphrag searches at `level` (all levels up to it with `dynamic` community
        selection), with their full-content embeddings from `embeddings` (DRIFT's primer) if given;
        lent to one search."""
        from graphrag.query.indexer_adapters import (
            read_indexer_report_embeddings,
            read_indexer_reports,
        )

        tables = self._tables

        def make() -> list["CommunityReport"]:
            reports = read_indexer_reports(
                tables.community_reports, tables.communities, level, dynamic
            )
            if embeddings is not None:
                read_indexer_report_embeddings(reports, embeddings)
            return reports

        return self._borrowed(("reports", level, dynamic, embeddings is not None), make)

    def lookup(self) -> "Lookup":
        """The version's short-id lookups."""
        return self.once("lookup", lambda: Lookup(self._tables))

    def warm(self, level: int = DEFAULT_LEVEL) -> None:
        """Make what a local or basic search at `level` and the lookups need, so the first search
        finds it made."""
        self.text_units()
        self.entities(level)
        self.covariates()
        self.lookup()
        self.local_lookups(level)
        with self.reports(level):
            pass


@dataclass(frozen=True)
class LocalLookups:
    """One version's entities and text units by id for a local context, and its entities' titles
    to find in a question (entity_names.py); `rankings`, each entity id -> its passages
    ranked for a context, is filled as searches first ask for them (search/incident.py)."""

    entities: dict[str, "Entity"]
    names: EntityNames
    text_units: dict[str, "TextUnit"]
    rankings: dict[str, list[str]]


class Lookup:
    """Index tables keyed by the short ids graphrag's context records and citations carry."""

    def __init__(self, tables: IndexTables) -> None:
        units = tables.text_units
        titles = dict(
            zip(tables.documents["id"], tables.documents["title"].astype(str), strict=True)
        )
        self.document_of: dict[str, str] = {
            unit: titles.get(document, "")
            for unit, document in zip(units["id"], units["document_id"], strict=True)
        }
        """text unit id -> its document's title"""
        self.unit_ids = _keyed(units, "human_readable_id", "id")
        """text unit short id -> text unit id"""
        self.entities = _keyed(tables.entities, "human_readable_id", "title", "type")
        """entity short id -> (title, type)"""
        self.ratings = _keyed(tables.community_reports, "community", "rank")
        """community short id -> its report's rating"""
        self.text_units_of = {
            "entities": _keyed(tables.entities, "human_readable_id", "text_unit_ids"),
            "relationships": _keyed(tables.relationships, "human_readable_id", "text_unit_ids"),
            "reports": _keyed(tables.communities, "community", "text_unit_ids"),
        }
        """record kind -> short id -> text unit ids behind the record"""

    def documents(self, unit_ids: Any) -> list[str]:
        """Distinct titles of the documents of these text units, in order."""
        titles = (
            self.document_of.get(unit_id)
            for unit_id in list(unit_ids if unit_ids is not None else [])
        )
        return list(dict.fromkeys(title for title in titles if title))


def _keyed(table: "pd.DataFrame", key: str, *columns: str) -> dict[str, Any]:
    """str(key) -> the row's value of `columns` (a tuple of them when several); the first row
    wins."""
    # columns as lists: iterating a column of pyarrow strings makes each value on its own (0.8 s
    # of a reload at 10,000 documents)
    values = (
        zip(*(table[column].tolist() for column in columns), strict=True)
        if len(columns) > 1
        else table[columns[0]].tolist()
    )
    keyed: dict[str, Any] = {}
    for short_id, value in zip(table[key].astype(str).tolist(), values, strict=True):
        keyed.setdefault(short_id, value)
    return keyed


def indexer_relationships(frame: "pd.DataFrame") -> "RelationshipRows":
    """graphrag's `read_indexer_relationships(frame)` by columns: a sequence of the same
    Relationship objects, each made when first asked for (graphrag makes all of them from a dict
    per row checked value by value: 3 s of the first search after a new version at 10,000
    documents' 208,000 relationships, of which a search reads a few hundred;
    tests/test_prepared_searches.py compares the two)."""
    import pandas as pd

    missing = {"id", "source", "target"} - set(frame.columns)
    if missing:
        msg = f"Column [{sorted(missing)[0]}] not found in data"  # graphrag's words
        raise ValueError(msg)

    def column(name: str) -> "Sequence[Any]":
        if name not in frame.columns:
            return [None] * len(frame)
        values = frame[name]
        # a column of strings is kept as its array (each read makes its str): 208,000 relationships'
        # ids, ends and descriptions as Python strings took 0.1-0.3 s of a version's load
        kept: Sequence[Any] = (
            values.array if isinstance(values.dtype, pd.StringDtype) else values.tolist()
        )
        return kept

    return RelationshipRows(
        *(
            column(name)
            for name in (
                "id",
                "human_readable_id",
                "source",
                "target",
                "description",
                "weight",
                "text_unit_ids",
                "combined_degree",
            )
        )
    )


class RelationshipRows(Sequence["Relationship"]):
    """A version's relationships as graphrag's query objects, made from the table's columns when
    first read and kept (the same object each time: graphrag's builders may write into it)."""

    def __init__(self, *columns: "Sequence[Any]") -> None:
        (
            self.ids,
            self.numbers,
            self.sources,
            self.targets,
            self.descriptions,
            self.weights,
            self.units,
            self.degrees,
        ) = columns
        self._made: list[Relationship | None] = [None] * len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, position: int) -> "Relationship": ...

    @overload
    def __getitem__(self, position: slice) -> list["Relationship"]: ...

    def __getitem__(self, position: int | slice) -> "Relationship | list[Relationship]":
        if isinstance(position, slice):
            return [self[at] for at in range(len(self))[position]]
        made = self._made[position]
        if made is None:
            made = self._made[position] = self._made_at(position)
        return made

    def ranks(self) -> "np.ndarray":
        """Each relationship's rank as graphrag's local context sorts by it (`rank or 0.0`): at once
        where every combined degree is an integer (graphrag's typed table), else value by value."""
        import numpy as np

        degrees = np.asarray(self.degrees)
        if degrees.dtype.kind in "iu":
            return degrees.astype(float)
        return np.array([float(optional_int(degree) or 0.0) for degree in self.degrees])

    def _made_at(self, at: int) -> "Relationship":
        from graphrag.data_model.relationship import Relationship

        number, description, weight = self.numbers[at], self.descriptions[at], self.weights[at]
        return Relationship(
            id=str(self.ids[at]),
            short_id=None if number is None else str(number),
            source=str(self.sources[at]),
            target=str(self.targets[at]),
            description=None if description is None else str(description),
            description_embedding=None,
            weight=None if weight is None else float(weight),
            text_unit_ids=optional_list(self.units[at], str),
            rank=optional_int(self.degrees[at]),
            attributes=None,
        )
