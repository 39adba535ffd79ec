"""Context-only search: the records graphrag would send the model, within a token budget, with no completion call.

local and basic use graphrag's own context builders; global ranks the community reports of the
chosen level by similarity to the query (where report embeddings exist) and by rating; drift
gives the reports its primer would start from plus the local context. The query embedding is the
only model call.
"""

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.results import (
    ContextEntity,
    ContextRelationship,
    ContextReport,
    ContextTextUnit,
    SearchContext,
    SearchResult,
)
from graphrag_mcp_server.handlers.search import (
    SearchType,
    check_ready,
    context_frames,
    entities_of_types,
    find_sources,
)
from graphrag_mcp_server.handlers.tables import IndexTables
from graphrag_mcp_server.providers.usage import track_usage

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.query.context_builder.builders import ContextBuilderResult

DEFAULT_CONTEXT_TOKENS = 8000
UNBOUNDED_TOKENS = 10_000_000
"""Budget under which a context builder includes every record it selected: what the real budget leaves out."""


@dataclass
class _Part:
    """Records of a context (kind -> DataFrame), the tokens they take, and the ids of every relevant record."""

    records: dict[str, "pd.DataFrame"] = field(default_factory=dict)
    tokens: int = 0
    candidates: dict[str, set[str]] = field(default_factory=dict)

    def add(self, other: "_Part") -> "_Part":
        """Both parts together; a record in both is kept once, where this part has it."""
        import pandas as pd

        records = dict(self.records)
        for kind, frame in other.records.items():
            both = pd.concat([records[kind], frame]) if kind in records else frame
            records[kind] = both.drop_duplicates(subset="id").reset_index(drop=True)
        kinds = {*self.candidates, *other.candidates}
        candidates = {kind: self.candidates.get(kind, set()) | other.candidates.get(kind, set()) for kind in kinds}
        return _Part(records, self.tokens + other.tokens, candidates)

    @property
    def omitted(self) -> dict[str, int]:
        """Relevant records of each kind that are not in the context."""
        counts = {kind: len(ids - _ids(self.records.get(kind))) for kind, ids in self.candidates.items()}
        return {kind: count for kind, count in counts.items() if count}


def search_context(
    config: "GraphRagConfig",
    tables: IndexTables,
    search_type: SearchType,
    query: str,
    *,
    max_tokens: int = DEFAULT_CONTEXT_TOKENS,
    community_level: int = 2,
    entity_types: list[str] | None = None,
) -> SearchResult:
    """The context `search_type` would answer `query` from, within `max_tokens` (blocking: run in a thread)."""
    check_ready(config, tables, search_type, answer=False)
    started = time.perf_counter()
    with track_usage() as usage:
        match search_type:
            case SearchType.BASIC:
                part = _within_budget(_basic_engine(config, tables), query, max_tokens)
            case SearchType.LOCAL:
                part = _within_budget(_local_engine(config, tables, community_level, entity_types), query, max_tokens)
            case SearchType.GLOBAL:
                part = _reports(config, tables, query, community_level, max_tokens, _report_embedder(config))
            case SearchType.DRIFT:
                local = _local_engine(config, tables, community_level, None)
                primer = _reports(config, tables, query, community_level, max_tokens // 2,
                                  local.context_builder.text_embedder, limit=config.drift_search.drift_k_followups)
                part = primer.add(_within_budget(local, query, max_tokens - primer.tokens))
    frames = [(kind, frame) for kind, frame in part.records.items() if not frame.empty]
    return SearchResult(
        type=search_type.value,
        answer=None,
        context=_described(part, tables, max_tokens),
        sources=find_sources("", frames, tables),
        context_counts={kind: len(frame) for kind, frame in frames},
        llm_calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        embedding_calls=usage.embedding_calls,
        seconds=round(time.perf_counter() - started, 3),
    )


class _RememberedEmbedder:
    """An embedding model that embeds each input once: every use of the query within one context shares its embedding."""

    def __init__(self, model: Any) -> None:
        self._model, self._answers = model, {}

    def embedding(self, *, input: list[str], **kwargs: Any) -> Any:  # noqa: A002 - graphrag-llm's argument name
        """The model's embedding response for `input`, asked for once."""
        key = tuple(input)
        if key not in self._answers:
            self._answers[key] = self._model.embedding(input=input, **kwargs)
        return self._answers[key]


def _remembering(engine: Any) -> Any:
    """`engine` with its context builder's embedding model remembering what it embedded."""
    engine.context_builder.text_embedder = _RememberedEmbedder(engine.context_builder.text_embedder)
    return engine


def _within_budget(engine: Any, query: str, max_tokens: int) -> _Part:
    """Build the engine's context twice, with the budget and without: the difference is what the budget left out."""
    builder, params = engine.context_builder, engine.context_builder_params
    kept = builder.build_context(query=query, **{**params, "max_context_tokens": max_tokens})
    everything = builder.build_context(query=query, **{**params, "max_context_tokens": UNBOUNDED_TOKENS})
    candidates = {kind: _ids(frame) for kind, frame in _records(everything).items()}
    chunks = kept.context_chunks if isinstance(kept.context_chunks, str) else "\n".join(kept.context_chunks)
    return _Part(_records(kept), engine.tokenizer.num_tokens(chunks), candidates)


def _records(result: "ContextBuilderResult") -> dict[str, "pd.DataFrame"]:
    return {kind: frame for kind, frame in context_frames(result.context_records) if "id" in frame.columns}


def _ids(frame: "pd.DataFrame | None") -> set[str]:
    return set() if frame is None or "id" not in frame.columns else set(frame["id"].astype(str))


def _basic_engine(config: "GraphRagConfig", tables: IndexTables) -> Any:
    from graphrag.config.embeddings import text_unit_text_embedding
    from graphrag.query.factory import get_basic_search_engine
    from graphrag.query.indexer_adapters import read_indexer_text_units
    from graphrag.utils.api import get_embedding_store

    return _remembering(get_basic_search_engine(
        config=config,
        text_units=read_indexer_text_units(tables.text_units),
        text_unit_embeddings=get_embedding_store(config=config.vector_store, embedding_name=text_unit_text_embedding),
        response_type="",
    ))


def _local_engine(config: "GraphRagConfig", tables: IndexTables, level: int, entity_types: list[str] | None) -> Any:
    from graphrag.config.embeddings import entity_description_embedding
    from graphrag.query.factory import get_local_search_engine
    from graphrag.query.indexer_adapters import (
        read_indexer_covariates,
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_reports,
        read_indexer_text_units,
    )
    from graphrag.utils.api import get_embedding_store

    covariates = read_indexer_covariates(tables.covariates) if tables.covariates is not None else []
    return _remembering(get_local_search_engine(
        config=config,
        reports=read_indexer_reports(tables.community_reports, tables.communities, level),
        text_units=read_indexer_text_units(tables.text_units),
        entities=read_indexer_entities(entities_of_types(tables.entities, entity_types), tables.communities, level),
        relationships=read_indexer_relationships(tables.relationships),
        covariates={"claims": covariates},
        description_embedding_store=get_embedding_store(
            config=config.vector_store, embedding_name=entity_description_embedding
        ),
        response_type="",
    ))


def _report_embedder(config: "GraphRagConfig") -> _RememberedEmbedder:
    """The embedding model that ranks reports against the query (DRIFT's, as graphrag's primer uses)."""
    from graphrag_llm.embedding import create_embedding

    return _RememberedEmbedder(create_embedding(config.get_embedding_model_config(config.drift_search.embedding_model_id)))


def _reports(config: "GraphRagConfig", tables: IndexTables, query: str, level: int, max_tokens: int,
             embedder: Any, limit: int | None = None) -> _Part:
    """The level's community reports, most similar to the query first (then highest rated), within the budget."""
    import pandas as pd
    from graphrag.query.indexer_adapters import read_indexer_reports
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    reports = read_indexer_reports(tables.community_reports, tables.communities, level)
    similarity = _report_similarity(config, query, embedder)
    reports.sort(key=lambda report: (similarity.get(report.id, -2.0), report.rank or 0.0), reverse=True)
    candidates = reports[:limit] if limit is not None else reports
    tokenizer = get_tokenizer(config.get_completion_model_config(config.global_search.completion_model_id))
    kept, tokens = [], 0
    for report in candidates:
        cost = tokenizer.num_tokens(f"{report.title}\n{report.full_content}")
        if tokens + cost > max_tokens:
            break
        kept.append(report)
        tokens += cost
    frame = pd.DataFrame(
        [{"id": report.short_id, "title": report.title, "content": report.full_content, "rating": report.rank,
          "similarity": similarity.get(report.id)} for report in kept],
        columns=["id", "title", "content", "rating", "similarity"],
    )
    return _Part({"reports": frame}, tokens, {"reports": {str(report.short_id) for report in candidates}})


def _report_similarity(config: "GraphRagConfig", query: str, embedder: Any) -> dict[str, float]:
    """Report id -> similarity of its full content's embedding to the query; empty without report embeddings."""
    from graphrag.config.embeddings import community_full_content_embedding
    from graphrag.utils.api import get_embedding_store

    if community_full_content_embedding not in (config.embed_text.names or []):
        return {}
    store = get_embedding_store(config=config.vector_store, embedding_name=community_full_content_embedding)
    found = store.similarity_search_by_text(
        query, lambda text: embedder.embedding(input=[text]).first_embedding, k=max(store.count(), 1),
        include_vectors=False,
    )
    return {str(result.document.id): float(result.score) for result in found}


def _described(part: _Part, tables: IndexTables, max_tokens: int) -> SearchContext:
    """The part's records as typed context entries, each with the titles of its documents."""
    lookup = _Lookup(tables)
    records = part.records
    return SearchContext(
        entities=[lookup.entity(row) for row in _rows(records.get("entities"))],
        relationships=[lookup.relationship(row) for row in _rows(records.get("relationships"))],
        reports=[lookup.report(row) for row in _rows(records.get("reports"))],
        text_units=[unit for row in _rows(records.get("sources")) if (unit := lookup.text_unit(row)) is not None],
        max_tokens=max_tokens,
        tokens=part.tokens,
        omitted=part.omitted,
    )


def _rows(frame: "pd.DataFrame | None") -> list[dict[str, Any]]:
    return [] if frame is None else frame.to_dict("records")


class _Lookup:
    """Index tables keyed by the short ids graphrag's context records carry."""

    def __init__(self, tables: IndexTables) -> None:
        titles = tables.documents.set_index("id")["title"].astype(str)
        self._document_of = tables.text_units.set_index("id")["document_id"].map(titles).to_dict()
        self._units = _by_short_id(tables.text_units, "human_readable_id")
        self._entities = _by_short_id(tables.entities, "human_readable_id")
        self._relationships = _by_short_id(tables.relationships, "human_readable_id")
        self._communities = _by_short_id(tables.communities, "community")
        self._ratings = _by_short_id(tables.community_reports, "community")

    def documents(self, unit_ids: Any) -> list[str]:
        """Distinct titles of the documents of these text units, in order."""
        titles = (self._document_of.get(unit_id) for unit_id in list(unit_ids if unit_ids is not None else []))
        return list(dict.fromkeys(title for title in titles if title))

    def entity(self, row: dict[str, Any]) -> ContextEntity:
        """An entities record (id, entity, description...)."""
        entity = self._entities.get(str(row["id"]), {})
        return ContextEntity(
            id=str(row["id"]), name=str(row.get("entity", entity.get("title", ""))), type=str(entity.get("type") or ""),
            description=str(row.get("description") or ""), documents=self.documents(entity.get("text_unit_ids")),
        )

    def relationship(self, row: dict[str, Any]) -> ContextRelationship:
        """A relationships record (id, source, target, description, weight)."""
        relationship = self._relationships.get(str(row["id"]), {})
        return ContextRelationship(
            id=str(row["id"]), source=str(row["source"]), target=str(row["target"]),
            description=str(row.get("description") or ""), weight=float(row.get("weight") or 0),
            documents=self.documents(relationship.get("text_unit_ids")),
        )

    def report(self, row: dict[str, Any]) -> ContextReport:
        """A reports record (id = community, title, content; rating and similarity when ranked here)."""
        community = str(row["id"])
        rating = row.get("rating", self._ratings.get(community, {}).get("rank"))
        return ContextReport(
            community=community, title=str(row.get("title") or ""), content=str(row.get("content") or ""),
            rating=None if rating is None else float(rating), similarity=row.get("similarity"),
            documents=self.documents(self._communities.get(community, {}).get("text_unit_ids")),
        )

    def text_unit(self, row: dict[str, Any]) -> ContextTextUnit | None:
        """A sources record (id = the text unit's short id, text)."""
        unit = self._units.get(str(row["id"]))
        if unit is None:
            return None
        return ContextTextUnit(id=str(unit["id"]), document=self._document_of.get(unit["id"], ""), text=str(row["text"]))


def _by_short_id(table: "pd.DataFrame", column: str) -> dict[str, dict[str, Any]]:
    return {str(row[column]): row for row in table.to_dict("records")}
