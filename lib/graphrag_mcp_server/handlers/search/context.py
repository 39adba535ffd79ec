"""Context-only search: the records graphrag would send the model, within a token budget, with no
completion call.

local and basic use graphrag's own context builders; global ranks the community reports of the
chosen level by similarity to the query (where report embeddings exist) and by rating; drift
gives the reports its primer would start from plus the local context. The query embedding is the
only model call. `omitted` counts the records the builder ranked for the query that the budget left
out, from the same selection graphrag's builder makes (no second build).
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.results import SearchResult
from graphrag_mcp_server.handlers.search.embedder import RememberedEmbedder
from graphrag_mcp_server.handlers.search.engines import basic_engine, local_engine
from graphrag_mcp_server.handlers.search.entries import typed_context
from graphrag_mcp_server.handlers.search.held_vectors import held_vectors
from graphrag_mcp_server.handlers.search.report_index import (
    WORDS_WEIGHT,
    ReportIndex,
    Scored,
    fused,
    report_text,
)
from graphrag_mcp_server.handlers.search.run import (
    SearchType,
    check_ready,
    context_frames,
    embedding_width_checked,
    find_sources,
    log_to_query_log,
)
from graphrag_mcp_server.handlers.tables import IndexTables
from graphrag_mcp_server.providers.usage import track_usage

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.data_model.community_report import CommunityReport
    from graphrag.query.context_builder.builders import ContextBuilderResult
    from graphrag.query.structured_search.basic_search.basic_context import BasicSearchContext

    from graphrag_mcp_server.handlers.search.incident import IncidentRelationshipsContext

logger = logging.getLogger(__name__)

DEFAULT_CONTEXT_TOKENS = 8000
UNBOUNDED_TOKENS = 10_000_000
"""A budget that holds every record a builder ranked."""


@dataclass
class _Part:
    """Records of a context (kind -> DataFrame), the tokens they take, and the ids of every relevant
    record."""

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
        candidates = {
            kind: self.candidates.get(kind, set()) | other.candidates.get(kind, set())
            for kind in kinds
        }
        return _Part(records, self.tokens + other.tokens, candidates)

    @property
    def omitted(self) -> dict[str, int]:
        """Relevant records of each kind that are not in the context."""
        counts = {
            kind: len(ids - _ids(self.records.get(kind))) for kind, ids in self.candidates.items()
        }
        return {kind: count for kind, count in counts.items() if count}


PRIMER_SHARE = 1 / 3
"""The share of a DRIFT context's budget its primer's reports may take; the local context has the
rest. At a half, the linking relationship of a "What connects A to B?" question was cut from the
local part where local search held it (issue 42: held_out_13 33 of 65 against 43 in local); at a
third, DRIFT holds it as often as local search does, with the same entities and sources."""


def _drift_local(config: "GraphRagConfig") -> "GraphRagConfig":
    """The config DRIFT's local steps search with: as many entities as drift_search maps a
    follow-up to (`local_search_top_k_mapped_entities`, what drift_search's `top_k` sets), and no
    share for community reports: the primer's reports come first in the context, and the local
    builder's would repeat them while the entities' relationships, given the share left after the
    entities, were left out (2 a context on a 40-document corpus, against 24 in local search's)."""
    mapped = config.drift_search.local_search_top_k_mapped_entities
    local = config.local_search.model_copy(update={"top_k_entities": mapped, "community_prop": 0.0})
    return config.model_copy(update={"local_search": local})


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
    """The context `search_type` would answer `query` from, within `max_tokens` (blocking: run in a
    thread)."""
    check_ready(config, tables, search_type, answer=False)
    log_to_query_log(config)
    started = time.perf_counter()
    with track_usage() as usage, embedding_width_checked():
        match search_type:
            case SearchType.BASIC:
                with basic_engine(config, tables) as engine:
                    part = _within_budget(
                        _remembering(engine), query, max_tokens, _basic_candidates
                    )
            case SearchType.LOCAL:
                with local_engine(config, tables, community_level, entity_types) as engine:
                    part = _within_budget(engine, query, max_tokens, _local_candidates)
                part = _mentioning_first(part, tables)
            case SearchType.GLOBAL:
                embedder = _report_embedder(config) if _report_vectors_readable(tables) else None
                with prepared(tables).reports(community_level) as reports:
                    index = _report_index(config, tables, community_level, reports)
                    part = _reports(config, tables, reports, index, query, max_tokens, embedder)
            case SearchType.DRIFT:
                with local_engine(_drift_local(config), tables, community_level) as engine:
                    builder = engine.context_builder
                    reports = list(builder.community_reports.values())
                    primer = _reports(
                        config,
                        tables,
                        reports,
                        _report_index(config, tables, community_level, reports),
                        query,
                        int(max_tokens * PRIMER_SHARE),
                        builder.text_embedder,
                        limit=config.drift_search.drift_k_followups,
                    )
                    part = primer.add(
                        _within_budget(engine, query, max_tokens - primer.tokens, _local_candidates)
                    )
                part = _mentioning_first(part, tables)
    frames = [(kind, frame) for kind, frame in part.records.items() if not frame.empty]
    return SearchResult(
        type=search_type.value,
        answer=None,
        context=typed_context(
            part.records,
            tables,
            max_tokens=max_tokens,
            tokens=part.tokens,
            omitted=part.omitted,
        ),
        sources=find_sources("", frames, tables),
        context_counts={kind: len(frame) for kind, frame in frames},
        llm_calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        embedding_calls=usage.embedding_calls,
        seconds=round(time.perf_counter() - started, 3),
    )


def _mentioning_first(part: _Part, tables: IndexTables) -> _Part:
    """The part with its passages ordered by the context's entities they mention, each entity
    weighing 1/its rank (the entities closest to the question most); graphrag's order breaks
    ties."""
    sources, entities = part.records.get("sources"), part.records.get("entities")
    if sources is None or sources.empty or entities is None or entities.empty:
        return part
    lookup = prepared(tables).lookup()
    weight: dict[str, float] = {}
    for rank, short_id in enumerate(entities["id"].astype(str), 1):
        for unit in lookup.text_units_of["entities"].get(short_id, []):
            weight[unit] = weight.get(unit, 0.0) + 1.0 / rank
    scores = [weight.get(lookup.unit_ids.get(str(short_id), ""), 0.0) for short_id in sources["id"]]
    order = sorted(range(len(scores)), key=lambda position: -scores[position])
    return replace(
        part, records={**part.records, "sources": sources.iloc[order].reset_index(drop=True)}
    )


def _remembering(engine: Any) -> Any:
    """`engine` with its context builder's embedding model remembering what it embedded (basic
    search's; the local and DRIFT builders remember their own: search/incident.py)."""
    engine.context_builder.text_embedder = RememberedEmbedder(engine.context_builder.text_embedder)
    return engine


def _within_budget(
    engine: Any, query: str, max_tokens: int, ranked: Callable[..., dict[str, set[str]]]
) -> _Part:
    """The engine's context within the budget, with the ids of every record its builder `ranked` for
    the query."""
    builder, params = (
        engine.context_builder,
        {**engine.context_builder_params, "max_context_tokens": max_tokens},
    )
    kept = builder.build_context(query=query, **params)
    chunks = (
        kept.context_chunks
        if isinstance(kept.context_chunks, str)
        else "\n".join(kept.context_chunks)
    )
    return _Part(
        _records(kept), engine.tokenizer.num_tokens(chunks), ranked(builder, query, params)
    )


def _local_candidates(
    builder: "IncidentRelationshipsContext", query: str, params: dict[str, Any]
) -> dict[str, set[str]]:
    """Ids of the records graphrag's local builder ranks for `query` (all of them fit an unbounded
    budget): the entities it maps the query to and, where their share of the budget is not zero,
    their reports, text units, claims and the relationships graphrag picks for them."""
    from graphrag_mcp_server.handlers.search.incident import relationship_context

    selected = builder.selected_entities(query, **params)
    community_share, unit_share = params["community_prop"], params["text_unit_prop"]
    candidates: dict[str, set[str]] = {}
    if community_share > 0:
        reports = (
            builder.community_reports.get(community)
            for entity in selected
            for community in entity.community_ids or []
        )
        candidates["reports"] = {
            str(report.short_id)
            for report in reports
            if report is not None
            and report.rank is not None
            and report.rank >= params.get("min_community_rank", 0)
        }
    if unit_share > 0:
        candidates["sources"] = {
            str(builder.text_units[unit].short_id)
            for entity in selected
            for unit in entity.text_unit_ids or []
            if unit in builder.text_units
        }
    if 1 - community_share - unit_share > 0:
        titles = {entity.title for entity in selected}
        candidates["entities"] = {str(entity.short_id) for entity in selected}
        _, relationships = relationship_context(
            selected,
            builder.index,
            builder.tokenizer,
            links=builder.index.no_links(),
            max_context_tokens=UNBOUNDED_TOKENS,
            top_k_relationships=params["top_k_relationships"],
        )
        candidates["relationships"] = _ids(relationships)
        for kind, covariates in builder.covariates.items():
            candidates[kind.lower()] = {
                str(claim.short_id) for claim in covariates if claim.subject_id in titles
            }
    return candidates


def _basic_candidates(
    builder: "BasicSearchContext", query: str, params: dict[str, Any]
) -> dict[str, set[str]]:
    """Short ids of the `k` text units closest to the query, as graphrag's basic builder finds
    them."""
    found = builder.text_unit_embeddings.similarity_search_by_text(
        text=query,
        text_embedder=lambda text: builder.text_embedder.embedding(input=[text]).first_embedding,
        k=params["k"],
    )
    ids = {result.document.id for result in found}
    return {"sources": {str(unit.short_id) for unit in builder.text_units or [] if unit.id in ids}}


def _records(result: "ContextBuilderResult") -> dict[str, "pd.DataFrame"]:
    return {
        kind: frame
        for kind, frame in context_frames(result.context_records)
        if "id" in frame.columns
    }


def _ids(frame: "pd.DataFrame | None") -> set[str]:
    return set() if frame is None or "id" not in frame.columns else set(frame["id"].astype(str))


def _report_embedder(config: "GraphRagConfig") -> RememberedEmbedder:
    """The embedding model that ranks reports against the query (DRIFT's, as graphrag's primer
    uses)."""
    from graphrag_llm.embedding import create_embedding

    return RememberedEmbedder(
        create_embedding(config.get_embedding_model_config(config.drift_search.embedding_model_id))
    )


def _report_vectors_readable(tables: IndexTables) -> bool:
    """Whether the reports' vector table can rank them; if not, context-only global ranks them by
    words alone, and a warning names the table and the rebuild that restores it."""
    from graphrag.config.embeddings import community_full_content_embedding

    problem = tables.vector_problems.get(community_full_content_embedding)
    if problem is not None:
        logger.warning("global context ranked by the question's words only: %s", problem)
    return problem is None


def _report_index(
    config: "GraphRagConfig", tables: IndexTables, level: int, reports: list["CommunityReport"]
) -> ReportIndex:
    """The index of the level's reports, made on the version's first global or drift query at that
    level and kept with it (made anew, not kept, for reports other than the level's)."""
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    model_id = config.global_search.completion_model_id

    def made() -> ReportIndex:
        tokenizer = get_tokenizer(config.get_completion_model_config(model_id))
        return ReportIndex.of(
            {report.id: report_text(report.title, report.full_content) for report in reports},
            tokenizer.num_tokens,
        )

    index = prepared(tables).once(("report_index", level, model_id), made)
    return index if index.indexes(report.id for report in reports) else made()


def _reports(
    config: "GraphRagConfig",
    tables: IndexTables,
    reports: list["CommunityReport"],
    index: ReportIndex,
    query: str,
    max_tokens: int,
    embedder: Any | None,
    limit: int | None = None,
) -> _Part:
    """The level's community reports (`index` holds their words and tokens), most similar to the
    query first (then highest rated), within the budget; without `embedder` by the question's words
    only (the reports' vector table is damaged)."""
    import numpy as np
    import pandas as pd

    similarity = (
        Scored([], np.zeros(0))
        if embedder is None
        else _report_similarity(config, tables, query, embedder)
    )
    words = index.word_scores(query)
    candidates, kept, tokens = _ranked(reports, index, words, similarity, max_tokens, limit)
    frame = pd.DataFrame(
        [
            {
                "id": report.short_id,
                "title": report.title,
                "content": report.full_content,
                "rating": report.rank,
                "similarity": similarity.get(report.id),
            }
            for report in kept
        ],
        columns=["id", "title", "content", "rating", "similarity"],
    )
    return _Part(
        {"reports": frame}, tokens, {"reports": {str(report.short_id) for report in candidates}}
    )


def _ranked(
    reports: list["CommunityReport"],
    index: ReportIndex,
    words: Scored,
    similarity: Scored,
    max_tokens: int,
    limit: int | None,
) -> tuple[list["CommunityReport"], list["CommunityReport"], int]:
    """The first `limit` reports by relevance, then rating (all without a limit), ties in the
    reports' order; those of these that fit `max_tokens`, in order until one does not; and the
    tokens they take."""
    import numpy as np

    relevance = fused([report.id for report in reports], (words, WORDS_WEIGHT), (similarity, 1.0))
    rating = np.fromiter((report.rank or 0.0 for report in reports), float, count=len(reports))
    order = np.lexsort((-rating, -relevance))[:limit]  # stable: ties keep the reports' order
    candidates = [reports[at] for at in order.tolist()]
    kept: list[CommunityReport] = []
    tokens = 0
    for report in candidates:
        cost = index.tokens(report.id, report_text(report.title, report.full_content))
        if tokens + cost > max_tokens:
            break
        kept.append(report)
        tokens += cost
    return candidates, kept, tokens


def _report_similarity(
    config: "GraphRagConfig", tables: IndexTables, query: str, embedder: Any
) -> Scored:
    """The similarity of each report's full content's embedding to the query, for every report
    (of every level, as the vector table holds them): from the vectors held in memory under LanceDB
    (read once per version), else by asking the store for all of them; empty without report
    embeddings."""
    import numpy as np
    from graphrag.config.embeddings import community_full_content_embedding
    from graphrag.utils.api import get_embedding_store

    if community_full_content_embedding not in (config.embed_text.names or []):
        return Scored([], np.zeros(0))
    store = get_embedding_store(
        config=config.vector_store, embedding_name=community_full_content_embedding
    )

    def embedded(text: str) -> list[float]:
        vector: list[float] = embedder.embedding(input=[text]).first_embedding
        return vector

    if (held := held_vectors(prepared(tables), store)) is not None:
        return held.similarity(embedded(query))
    found = store.similarity_search_by_text(
        query, embedded, k=max(store.count(), 1), include_vectors=False
    )
    return Scored.of({str(result.document.id): float(result.score) for result in found})
