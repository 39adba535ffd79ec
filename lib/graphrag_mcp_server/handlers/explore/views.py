"""Read-only views of the index's records: entities, communities and text units, for MCP
resources."""

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, Field

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.tables import IndexTables

if TYPE_CHECKING:
    import pandas as pd

MAX_RELATIONSHIPS = 50
DESCRIPTION_CHARS = 300


class RecordNotFoundError(GraphRagMcpError):
    """No entity, community or text unit has the asked-for name or id."""


class EntitySummary(BaseModel):
    """An entity in a listing."""

    name: str
    type: str
    degree: int
    description: str


class Relationship(BaseModel):
    """An edge of the graph."""

    source: str
    target: str
    description: str
    weight: float


class CommunityRef(BaseModel):
    """A community an entity belongs to."""

    id: int
    level: int
    title: str


class EntityDetail(EntitySummary):
    """An entity with its neighbourhood and provenance."""

    relationships: list[Relationship] = Field(
        description=f"Strongest first, at most {MAX_RELATIONSHIPS}"
    )
    communities: list[CommunityRef]
    documents: list[str] = Field(description="Titles of the documents that mention it")


class Finding(BaseModel):
    """One finding of a community report."""

    summary: str
    explanation: str


class CommunityDetail(BaseModel):
    """A community and its report."""

    id: int
    level: int
    title: str
    summary: str
    rating: float | None
    findings: list[Finding]
    members: list[str] = Field(description="Entity names")
    parent: int | None
    children: list[int]


class TextUnitDetail(BaseModel):
    """A chunk of a document as indexed."""

    id: str
    document: str
    text: str
    entities: list[str]


def _short(value: Any) -> str:
    text = str(value or "")
    return (
        text
        if len(text) <= DESCRIPTION_CHARS
        else text[:DESCRIPTION_CHARS].rsplit(" ", 1)[0] + " …"
    )


def top_entities(tables: IndexTables, limit: int = 50) -> list[EntitySummary]:
    """The most connected entities."""
    top = tables.entities.sort_values(["degree", "title"], ascending=[False, True]).head(limit)
    return [
        EntitySummary(
            name=row.title,
            type=str(row.type),
            degree=int(row.degree),
            description=_short(row.description),
        )
        for row in top.itertuples()
    ]


def _documents_of(tables: IndexTables, text_unit_ids: Any) -> list[str]:
    document_of = prepared(tables).lookup().document_of
    return sorted({document_of[unit_id] for unit_id in text_unit_ids if document_of.get(unit_id)})


def _row(frame: "pd.DataFrame", mask: "pd.Series", what: str) -> Any:
    found = frame[mask]
    if found.empty:
        raise RecordNotFoundError(what)
    return found.iloc[0]


def entity_detail(tables: IndexTables, name: str) -> EntityDetail:
    """An entity by name (case-insensitive), with relationships, communities and source
    documents."""
    entities = tables.entities
    entity = _row(
        entities,
        entities["title"].str.casefold() == name.strip().casefold(),
        f"no entity named {name[:200]!r}; list them with the graphrag://entities resource",
    )
    edges = tables.relationships
    touching = edges[(edges["source"] == entity.title) | (edges["target"] == entity.title)]
    touching = touching.sort_values("weight", ascending=False).head(MAX_RELATIONSHIPS)
    communities = tables.communities
    member_of = communities[communities["entity_ids"].map(lambda ids: entity.id in set(ids))]
    return EntityDetail(
        name=entity.title,
        type=str(entity.type),
        degree=int(entity.degree),
        description=str(entity.description or ""),
        relationships=[
            Relationship(
                source=r.source,
                target=r.target,
                description=str(r.description),
                weight=float(r.weight),
            )
            for r in touching.itertuples()
        ],
        communities=[
            CommunityRef(
                id=int(c.community),
                level=int(c.level),
                title=_report_title(tables, int(c.community), c.title),
            )
            for c in member_of.sort_values("level").itertuples()
        ],
        documents=_documents_of(tables, entity.text_unit_ids),
    )


def _report_title(tables: IndexTables, community: int, default: str) -> str:
    reports = tables.community_reports
    titles = reports.loc[reports["community"] == community, "title"]
    return str(titles.iloc[0]) if len(titles) else str(default)


def community_detail(tables: IndexTables, community_id: int) -> CommunityDetail:
    """A community by its number, with its report and member entities."""
    communities = tables.communities
    community = _row(
        communities,
        communities["community"] == community_id,
        f"no community {community_id}; ids run from 0 to {int(communities['community'].max())}",
    )
    reports = tables.community_reports
    matching = reports[reports["community"] == community_id]
    report = matching.iloc[0] if len(matching) else None
    members = tables.entities[tables.entities["id"].isin(list(community.entity_ids))]
    return CommunityDetail(
        id=community_id,
        level=int(community.level),
        title=str(report.title if report is not None else community.title),
        summary=str(report.summary) if report is not None else "",
        rating=float(report["rank"]) if report is not None else None,
        findings=[
            Finding(summary=f["summary"], explanation=f["explanation"]) for f in report.findings
        ]
        if report is not None
        else [],
        members=sorted(members["title"]),
        parent=None if int(community.parent) < 0 else int(community.parent),
        children=[int(child) for child in community.children],
    )


def text_unit_detail(tables: IndexTables, text_unit_id: str) -> TextUnitDetail:
    """A text unit by id, with its document and the entities found in it."""
    units = tables.text_units
    unit = _row(units, units["id"] == text_unit_id, f"no text unit {text_unit_id[:200]!r}")
    entity_ids = [] if unit.entity_ids is None else list(unit.entity_ids)
    names = tables.entities.loc[tables.entities["id"].isin(entity_ids), "title"]
    document = prepared(tables).lookup().document_of.get(unit.id, "")
    return TextUnitDetail(
        id=unit.id, document=document, text=str(unit.text), entities=sorted(names)
    )


COMPLETIONS = 100
"""Most values one completion answer lists (the MCP limit)."""


def completed(candidates: list[str], partial: str) -> tuple[list[str], int]:
    """The candidates that start with `partial` (case aside), then those that contain it, in the
    candidates' order; at most COMPLETIONS of them, and how many matched in all."""
    wanted = partial.casefold()
    starting = [value for value in candidates if value.casefold().startswith(wanted)]
    containing = [
        value
        for value in candidates
        if wanted in value.casefold() and not value.casefold().startswith(wanted)
    ]
    matched = starting + containing
    return matched[:COMPLETIONS], len(matched)


def entity_names(tables: IndexTables) -> list[str]:
    """Every entity's name, the most connected first."""
    return [
        str(title)
        for title in tables.entities.sort_values("degree", ascending=False, kind="stable")["title"]
    ]


def community_ids(tables: IndexTables) -> list[str]:
    """Every community's number, the broadest first."""
    return [str(number) for number in _broadest_first(tables)["community"]]


def _broadest_first(tables: IndexTables) -> "pd.DataFrame":
    """The communities with their `size` (member entities), by level, then the largest, then by
    number."""
    frame = tables.communities.assign(size=tables.communities["entity_ids"].map(len))
    return frame.sort_values(
        ["level", "size", "community"], ascending=[True, False, True], kind="stable"
    )


def community_titles(tables: IndexTables) -> dict[int, str]:
    """community number -> its report's title (the community's own title where it has no report)."""
    titles = {int(row.community): str(row.title) for row in tables.communities.itertuples()}
    titles.update(
        {int(row.community): str(row.title) for row in tables.community_reports.itertuples()}
    )
    return titles


def community_levels(tables: IndexTables) -> list[str]:
    """The community levels, from the broadest."""
    return [str(level) for level in sorted(tables.communities["level"].unique())]


Item = TypeVar("Item", bound=BaseModel)
PAGE_SIZE = 100
"""Records per page of the graphrag://documents and graphrag://communities listings."""


class DocumentSummary(BaseModel):
    """A document as listed: its title (the file's name), id and text units."""

    title: str
    id: str
    text_units: int


class CommunitySummary(BaseModel):
    """A community as listed: its number, level, report title, size and parent."""

    id: int
    level: int
    title: str
    size: int = Field(description="Member entities")
    parent: int | None


class Page(BaseModel, Generic[Item]):
    """One page of a listing, and where the next one is."""

    page: int
    pages: int
    total: int
    next: str | None = Field(description="URI of the next page; null on the last")
    items: list[Item]


def _page(items: list[Item], page: int, uri: str) -> Page[Item]:
    pages = max(1, -(-len(items) // PAGE_SIZE))
    if not 1 <= page <= pages:
        raise RecordNotFoundError(f"no page {page}: {uri}/page/N runs from 1 to {pages}")
    return Page[Item](
        page=page,
        pages=pages,
        total=len(items),
        next=f"{uri}/page/{page + 1}" if page < pages else None,
        items=items[(page - 1) * PAGE_SIZE : page * PAGE_SIZE],
    )


def document_page(tables: IndexTables, page: int = 1) -> Page[DocumentSummary]:
    """The documents by title, PAGE_SIZE a page."""
    rows = tables.documents.sort_values("title", kind="stable").itertuples()
    documents = [
        DocumentSummary(title=str(row.title), id=str(row.id), text_units=len(row.text_unit_ids))
        for row in rows
    ]
    return _page(documents, page, "graphrag://documents")


def community_page(tables: IndexTables, page: int = 1) -> Page[CommunitySummary]:
    """The communities, broadest first (by level, then size), PAGE_SIZE a page."""
    titles = community_titles(tables)
    communities = [
        CommunitySummary(
            id=int(row.community),
            level=int(row.level),
            title=titles[int(row.community)],
            size=int(row.size),
            parent=None if int(row.parent) < 0 else int(row.parent),
        )
        for row in _broadest_first(tables).itertuples()
    ]
    return _page(communities, page, "graphrag://communities")
