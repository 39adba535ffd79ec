"""A context-only search's records (graphrag's context DataFrames) as typed context entries."""

from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.results import (
    CONTEXT_DOCUMENTS,
    ContextEntity,
    ContextRelationship,
    ContextReport,
    ContextTextUnit,
    SearchContext,
)
from graphrag_mcp_server.handlers.tables import IndexTables

if TYPE_CHECKING:
    import pandas as pd

    from graphrag_mcp_server.handlers.prepared import Lookup


def typed_context(
    records: dict[str, "pd.DataFrame"],
    tables: IndexTables,
    *,
    max_tokens: int,
    tokens: int,
    omitted: dict[str, int],
) -> SearchContext:
    """The records (kind -> DataFrame) as typed context entries, each with the titles of its
    documents."""
    lookup = prepared(tables).lookup()
    return SearchContext(
        entities=[_entity(row, lookup) for row in _rows(records.get("entities"))],
        relationships=[_relationship(row, lookup) for row in _rows(records.get("relationships"))],
        reports=[_report(row, lookup) for row in _rows(records.get("reports"))],
        text_units=[
            unit
            for row in _rows(records.get("sources"))
            if (unit := _text_unit(row, lookup)) is not None
        ],
        max_tokens=max_tokens,
        tokens=tokens,
        omitted=omitted,
    )


def _rows(frame: "pd.DataFrame | None") -> list[dict[str, Any]]:
    return [] if frame is None else frame.to_dict("records")


def _entity(row: dict[str, Any], lookup: "Lookup") -> ContextEntity:
    """An entities record (id, entity, description...)."""
    short_id = str(row["id"])
    title, kind = lookup.entities.get(short_id, ("", None))
    return ContextEntity(
        id=short_id,
        name=str(row.get("entity", title)),
        type=str(kind or ""),
        description=str(row.get("description") or ""),
        **_documents(lookup, lookup.text_units_of["entities"].get(short_id)),
    )


def _relationship(row: dict[str, Any], lookup: "Lookup") -> ContextRelationship:
    """A relationships record (id, source, target, description, weight)."""
    short_id = str(row["id"])
    return ContextRelationship(
        id=short_id,
        source=str(row["source"]),
        target=str(row["target"]),
        description=str(row.get("description") or ""),
        weight=float(row.get("weight") or 0),
        **_documents(lookup, lookup.text_units_of["relationships"].get(short_id)),
    )


def _report(row: dict[str, Any], lookup: "Lookup") -> ContextReport:
    """A reports record (id = community, title, content; rating and similarity when ranked here)."""
    community = str(row["id"])
    rating = row.get("rating", lookup.ratings.get(community))
    return ContextReport(
        community=community,
        title=str(row.get("title") or ""),
        content=str(row.get("content") or ""),
        rating=None if rating is None else float(rating),
        similarity=row.get("similarity"),
        **_documents(lookup, lookup.text_units_of["reports"].get(community)),
    )


def _documents(lookup: "Lookup", unit_ids: Any) -> dict[str, Any]:
    """A record's first CONTEXT_DOCUMENTS document titles and its count of documents."""
    titles = lookup.documents(unit_ids)
    return {"documents": titles[:CONTEXT_DOCUMENTS], "document_count": len(titles)}


def _text_unit(row: dict[str, Any], lookup: "Lookup") -> ContextTextUnit | None:
    """A sources record (id = the text unit's short id, text)."""
    unit_id = lookup.unit_ids.get(str(row["id"]))
    if unit_id is None:
        return None
    return ContextTextUnit(
        id=unit_id, document=lookup.document_of.get(unit_id, ""), text=str(row["text"])
    )
