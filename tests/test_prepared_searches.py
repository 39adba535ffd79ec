"""Searches prepared once per loaded version: graphrag's objects made once, answers and contexts as
graphrag's own."""

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from graphrag_mcp_server.handlers.prepared import prepared

QUESTIONS = [
    "Who is Leonard Quist?",
    "tidal power",
    "What did the Harrowgate Tidal Cooperative do?",
]


@pytest.fixture
async def loaded(
    built_index: tuple[Path, dict], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any]:
    """The fixture index's config and tables, loaded in this process (graphrag's loader changes the
    working directory: monkeypatch restores it)."""
    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.handlers.tables import load_tables

    root, _ = built_index
    monkeypatch.chdir(root)
    config = load_index_config(root, without_credentials=True)
    return config, await load_tables(config, root)


def _graphrag_builder(config: Any, tables: Any, search_type: str) -> Any:
    """graphrag's own engine over tables read as graphrag.api reads them, for the expected
    figures."""
    from graphrag.query.factory import get_basic_search_engine, get_local_search_engine
    from graphrag.query.indexer_adapters import (
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_reports,
        read_indexer_text_units,
    )
    from graphrag.utils.api import get_embedding_store

    units = read_indexer_text_units(tables.text_units)
    if search_type == "basic":
        store = get_embedding_store(config=config.vector_store, embedding_name="text_unit_text")
        return get_basic_search_engine(
            config=config, text_units=units, text_unit_embeddings=store, response_type=""
        )
    store = get_embedding_store(config=config.vector_store, embedding_name="entity_description")
    return get_local_search_engine(
        config=config,
        reports=read_indexer_reports(tables.community_reports, tables.communities, 2),
        text_units=units,
        entities=read_indexer_entities(tables.entities, tables.communities, 2),
        relationships=read_indexer_relationships(tables.relationships),
        covariates={"claims": []},
        description_embedding_store=store,
        response_type="",
    )


def _unbounded_omitted(
    config: Any, tables: Any, search_type: str, query: str, context: Any
) -> dict[str, int]:
    """What building graphrag's context again without a budget adds to `context`, by kind."""
    from graphrag_mcp_server.handlers.search.context import UNBOUNDED_TOKENS
    from graphrag_mcp_server.handlers.search.run import context_frames

    engine = _graphrag_builder(config, tables, search_type)
    everything = engine.context_builder.build_context(
        query=query, **{**engine.context_builder_params, "max_context_tokens": UNBOUNDED_TOKENS}
    )
    short_of_unit = {unit: short for short, unit in prepared(tables).lookup().unit_ids.items()}
    kept = {
        "entities": {entity.id for entity in context.entities},
        "relationships": {relationship.id for relationship in context.relationships},
        "reports": {report.community for report in context.reports},
        "sources": {short_of_unit[unit.id] for unit in context.text_units},
    }
    added = {
        kind: set(frame["id"].astype(str)) - kept.get(kind, set())
        for kind, frame in context_frames(everything.context_records)
        if "id" in frame.columns
    }
    return {kind: len(ids) for kind, ids in added.items() if ids}


@pytest.mark.parametrize("search_type", ["local", "basic"])
async def test_omitted_counts_what_an_unbounded_build_would_add(
    loaded: tuple[Any, Any], search_type: str
) -> None:
    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import SearchType

    config, tables = loaded
    omitted = []
    for query in QUESTIONS:
        for budget in (500, 1500, 8000):
            context = search_context(
                config, tables, SearchType(search_type), query, max_tokens=budget
            ).context
            assert context.omitted == _unbounded_omitted(
                config, tables, search_type, query, context
            ), (query, budget)
            omitted.append(context.omitted)
    assert any(omitted)


class _Context:
    """graphrag query callbacks keeping the context a search answered from."""

    def __init__(self) -> None:
        from graphrag.callbacks.noop_query_callbacks import NoopQueryCallbacks

        self.records: Any = None
        self.callbacks = NoopQueryCallbacks()
        self.callbacks.on_context = self._keep

    def _keep(self, records: Any) -> None:
        self.records = records


async def _graphrag_api(
    config: Any, tables: Any, search_type: str, query: str, types: list[str]
) -> tuple[str, Any]:
    import graphrag.api as api

    graph = {
        "entities": tables.entities,
        "communities": tables.communities,
        "community_reports": tables.community_reports,
        "community_level": 2,
    }
    common = {"config": config, "response_type": "Multiple Paragraphs", "query": query}
    if search_type == "basic":
        return await api.basic_search(**common, text_units=tables.text_units)
    if search_type == "global":
        return await api.global_search(**common, **graph, dynamic_community_selection=False)
    if search_type == "drift":
        return await api.drift_search(
            **common, **graph, text_units=tables.text_units, relationships=tables.relationships
        )
    if types:
        graph["entities"] = tables.entities[
            tables.entities["type"].str.casefold().isin([t.casefold() for t in types])
        ]
    return await api.local_search(
        **common,
        **graph,
        text_units=tables.text_units,
        relationships=tables.relationships,
        covariates=tables.covariates,
    )


@pytest.mark.parametrize(
    ("search_type", "types"),
    [
        ("local", []),
        ("local", ["person"]),
        ("basic", []),
        ("global", []),
        pytest.param("drift", [], marks=pytest.mark.slow),  # 8 s or more on 2 cores
    ],
)
async def test_answers_and_their_contexts_are_graphrag_apis(
    loaded: tuple[Any, Any], search_type: str, types: list[str]
) -> None:
    """Prepared objects reused across searches (graphrag writes into some of them) answer as
    graphrag.api does. DRIFT's local steps run concurrently, so graphrag's own DRIFT gives rows in
    an order, and answers from them in words, that differ from run to run (four runs of one
    question: up to four answers): its records are compared by id, its answer only for being
    one."""
    from graphrag_mcp_server.handlers.search.run import SearchType, run_search

    config, tables = loaded
    for query in [*QUESTIONS, QUESTIONS[0]]:
        seen = _Context()
        ours = await run_search(
            config,
            tables,
            SearchType(search_type),
            query,
            entity_types=types,
            callbacks=[seen.callbacks],
        )
        answer, context = await _graphrag_api(config, tables, search_type, query, types)
        assert ours.answer == answer or (search_type == "drift" and ours.answer and answer)
        assert set(seen.records) == set(context)
        for kind, frame in context.items():
            if search_type == "drift":
                pd.testing.assert_frame_equal(_by_id(seen.records[kind]), _by_id(frame))
            else:
                pd.testing.assert_frame_equal(seen.records[kind], frame)


def _by_id(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("id").reset_index(drop=True) if "id" in frame.columns else frame


async def test_graphrag_objects_are_made_once_per_version(
    built_index: tuple[Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphrag_mcp_server.handlers import prepared as adapters
    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import SearchType, run_search
    from graphrag_mcp_server.server.state import IndexState

    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    monkeypatch.chdir(root)
    reads: list[int] = []
    read = adapters.indexer_relationships
    monkeypatch.setattr(
        adapters,
        "indexer_relationships",
        lambda frame: reads.append(len(frame)) or read(frame),
    )
    state = IndexState(root)

    first = await state.snapshot()
    assert len(reads) == 1  # made as the version loaded
    for search_type in SearchType:
        search_context(first.config, first.tables, search_type, "Who is Leonard Quist?")
    await run_search(first.config, first.tables, SearchType.LOCAL, "Who is Leonard Quist?")
    assert len(reads) == 1 and (await state.snapshot()).tables is first.tables

    settings = root / "settings.yaml"
    os.utime(
        settings, ns=(settings.stat().st_atime_ns, settings.stat().st_mtime_ns + 10**9)
    )  # a new version
    second = await state.snapshot()
    assert second.tables is not first.tables and prepared(second.tables) is not prepared(
        first.tables
    )
    assert len(reads) == 2


async def test_a_loaded_offline_index_has_its_embeddings_word_frequencies_loaded(
    built_index: tuple[Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's load of an index on the offline embedding also loads the word frequencies that
    embedding weighs words by, so that the first search does not (wordfreq: ~0.6 s)."""
    from graphrag_mcp_server.providers.offline.word_frequency import zipf_frequency
    from graphrag_mcp_server.server import state as state_module

    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    monkeypatch.chdir(root)
    zipf_frequency.cache_clear()
    state = state_module.IndexState(root)
    state.start_warm_up()
    await state.snapshot()
    assert zipf_frequency.cache_info().currsize == 1


async def test_a_replaced_version_is_freed_and_its_memory_given_back(
    built_index: tuple[Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a new version is loaded (here by the poll that watches the disk), the one it replaced
    (searched, warmed up first) is freed as soon as nothing holds it, and what it held is given
    back to the operating system."""
    import weakref

    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import SearchType, run_search
    from graphrag_mcp_server.server import state as state_module

    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    monkeypatch.chdir(root)
    given: list[int] = []
    monkeypatch.setattr(state_module, "give_back_memory", lambda: given.append(1))
    state = state_module.IndexState(root)
    state.start_warm_up()
    first = await state.snapshot()
    for search_type in SearchType:
        search_context(first.config, first.tables, search_type, "Who is Leonard Quist?")
    await run_search(first.config, first.tables, SearchType.LOCAL, "Who is Leonard Quist?")
    freed, version = weakref.ref(first.tables), first.version
    del first
    state.start_polling(0.05)

    settings = root / "settings.yaml"
    os.utime(settings, ns=(settings.stat().st_atime_ns, settings.stat().st_mtime_ns + 10**9))
    for _ in range(600):  # the switch, then the replaced version freed (at most 30 s)
        await asyncio.sleep(0.05)
        if state.current is not None and state.current.version != version and given:
            break
    state.stop_polling()

    assert state.current is not None and state.current.version != version
    assert freed() is None and given == [1]


async def test_objects_graphrag_writes_into_are_lent_to_one_search_at_a_time(
    loaded: tuple[Any, Any],
) -> None:
    _, tables = loaded
    objects = prepared(tables)
    with objects.reports(2) as first:
        first[0].attributes = {"matches": 3}  # as graphrag's global context marks them
        with objects.reports(2) as second:
            assert second is not first
    with objects.reports(2) as again:
        assert again in (first, second)
        assert all(report.attributes is None for report in again)


async def test_a_local_search_leaves_the_shared_relationships_unmarked(
    loaded: tuple[Any, Any],
) -> None:
    """The local context's links are kept per search: after a search about the most connected
    entity, whose out-network relationships graphrag ranks by links, no shared relationship
    carries them, and the context's relationship table has its `links` column."""
    from graphrag_mcp_server.handlers.search.engines import local_engine

    config, tables = loaded
    objects = prepared(tables)
    hub = tables.entities.sort_values("degree", ascending=False).title.iloc[0]
    with local_engine(config, tables, 2) as engine:
        result = engine.context_builder.build_context(
            query=f"What did {hub.title()} do?", **engine.context_builder_params
        )
        assert (engine.context_builder.links >= 0).any()
    assert "links" in result.context_records["relationships"].columns
    assert all(relationship.attributes is None for relationship in objects.relationships())


def _counted_bm25(query: str, texts: dict[str, str], k1: float = 1.2, b: float = 0.75) -> dict:
    """BM25 counting every text's words for the query: what context-only global computed on each
    query before its reports were indexed once per version."""
    import math
    from collections import Counter

    from graphrag_mcp_server.handlers.search.report_index import words

    counted = {key: Counter(words(text)) for key, text in texts.items()}
    lengths = {key: counts.total() for key, counts in counted.items()}
    average = sum(lengths.values()) / max(len(counted), 1)
    scores: dict[str, float] = {}
    for word in set(words(query)):
        holding = [key for key, counts in counted.items() if word in counts]
        weight = math.log(1 + (len(counted) - len(holding) + 0.5) / (len(holding) + 0.5))
        for key in holding:
            count = counted[key][word]
            scores[key] = scores.get(key, 0.0) + weight * count * (k1 + 1) / (
                count + k1 * (1 - b + b * lengths[key] / average)
            )
    return scores


async def test_indexed_reports_score_and_cost_as_counted_on_each_query(
    loaded: tuple[Any, Any],
) -> None:
    """The report index of each level gives the scores (same values, in the reports' order) and
    token costs that counting every report's words and tokens on each query gives."""
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.search.context import _report_index
    from graphrag_mcp_server.handlers.search.report_index import report_text

    config, tables = loaded
    tokenizer = get_tokenizer(
        config.get_completion_model_config(config.global_search.completion_model_id)
    )
    questions = [*QUESTIONS, "the harbour", "Quist tidal cooperative power", "zzz unknown"]
    for level in (0, 1, 2):
        with prepared(tables).reports(level) as reports:
            texts = {
                report.id: report_text(report.title, report.full_content) for report in reports
            }
            index = _report_index(config, tables, level, reports)
        assert index.ids == list(texts) and len(texts) > 1
        assert {key: index.tokens(key, text) for key, text in texts.items()} == {
            key: tokenizer.num_tokens(text) for key, text in texts.items()
        }
        for question in questions:
            scores = index.word_scores(question).as_dict()
            assert scores == _counted_bm25(question, texts), (level, question)
            assert list(scores) == [key for key in texts if key in scores]
        assert index.word_scores(QUESTIONS[0]).ids  # the fixtures' reports name Quist


async def test_reports_are_indexed_once_per_version_and_level_whatever_the_threads(
    loaded: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Global and drift searches of one version share one index of a level's reports, made once
    even when searches start together."""
    from concurrent.futures import ThreadPoolExecutor

    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.report_index import ReportIndex
    from graphrag_mcp_server.handlers.search.run import SearchType

    config, tables = loaded
    made: list[int] = []
    make = ReportIndex.of.__func__  # type: ignore[attr-defined]

    def counted(cls: type, texts: dict, count_tokens: Any) -> ReportIndex:
        made.append(len(texts))
        return make(cls, texts, count_tokens)

    monkeypatch.setattr(ReportIndex, "of", classmethod(counted))
    searches = [(SearchType.GLOBAL, 2), (SearchType.DRIFT, 2)] * 3 + [(SearchType.GLOBAL, 1)]
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(
                lambda search: search_context(
                    config, tables, search[0], QUESTIONS[1], community_level=search[1]
                ),
                searches,
            )
        )
    assert all(result.context.reports for result in results)
    assert len(made) == 2  # level 2 (global and drift), level 1


async def test_report_similarity_is_the_stores_without_searching_it(
    loaded: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Context-only global and drift rank every report by the similarity LanceDB's search gives it
    (the same scores, to float32 rounding, in the same order), from the vectors read once per
    version: no context-only global, drift or local query searches a LanceDB table."""
    from graphrag.config.embeddings import community_full_content_embedding
    from graphrag.utils.api import get_embedding_store
    from graphrag_vectors.lancedb import LanceDBVectorStore

    from graphrag_mcp_server.handlers.search import context
    from graphrag_mcp_server.handlers.search.run import SearchType

    config, tables = loaded
    embedder = context._report_embedder(config)
    store = get_embedding_store(
        config=config.vector_store, embedding_name=community_full_content_embedding
    )
    for question in QUESTIONS:
        found = store.similarity_search_by_text(
            question,
            lambda text: embedder.embedding(input=[text]).first_embedding,
            k=store.count(),
            include_vectors=False,
        )
        searched = {str(result.document.id): float(result.score) for result in found}
        held = context._report_similarity(config, tables, question, embedder).as_dict()
        assert set(held) == set(searched) and len(held) > 3
        assert max(abs(held[key] - searched[key]) for key in held) < 1e-5
        assert sorted(held, key=held.__getitem__, reverse=True) == list(searched)

    searches: list[str] = []
    search = LanceDBVectorStore.similarity_search_by_vector

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        searches.append(self.index_name)
        return search(self, *args, **kwargs)

    monkeypatch.setattr(LanceDBVectorStore, "similarity_search_by_vector", counted)
    for search_type in (SearchType.GLOBAL, SearchType.DRIFT, SearchType.LOCAL):
        for question in QUESTIONS:
            result = context.search_context(config, tables, search_type, question)
            assert result.context.reports or result.context.entities
    assert not searches


async def test_held_entity_vectors_find_what_the_store_finds(loaded: tuple[Any, Any]) -> None:
    """The entities' vectors held in memory give the store's nearest entities for each question:
    the same ids in the same order, the same scores to float32 rounding."""
    from graphrag.config.embeddings import entity_description_embedding
    from graphrag.utils.api import get_embedding_store

    from graphrag_mcp_server.handlers.search import context
    from graphrag_mcp_server.handlers.search.held_vectors import held_vectors

    config, tables = loaded
    embedder = context._report_embedder(config)
    store = get_embedding_store(
        config=config.vector_store, embedding_name=entity_description_embedding
    )
    held = held_vectors(prepared(tables), store)
    assert held is not None
    for question in QUESTIONS:
        vector = embedder.embedding(input=[question]).first_embedding
        found = store.similarity_search_by_vector(vector, k=20)
        near = held.nearest(vector, 20)
        assert max(abs(a.score - b.score) for a, b in zip(near, found, strict=True)) < 1e-5
        assert _untied_ids(near) == _untied_ids(found)


def _untied_ids(results: list[Any]) -> list[str | None]:
    """Each result's id, None where its score ties a neighbour's (to float32 rounding): entities
    sharing nothing with the question all score -1, in an order neither side decides."""
    scores = [result.score for result in results]

    def tied(at: int) -> bool:
        return any(
            abs(scores[at] - scores[near]) < 1e-5
            for near in (at - 1, at + 1)
            if 0 <= near < len(scores)
        )

    return [None if tied(at) else result.document.id for at, result in enumerate(results)]


def test_relationships_are_graphrags_objects(built_index: tuple[Path, dict]) -> None:
    """The relationships made by columns equal graphrag's read_indexer_relationships, field by
    field, on the fixtures index and on rows with a missing description, weight and unit list;
    each is made once (the same object each time) and the local context's index made from the
    columns equals the one made from graphrag's objects."""
    import numpy as np
    import pyarrow as pa
    from graphrag.query.indexer_adapters import read_indexer_relationships

    from graphrag_mcp_server.handlers.prepared import indexer_relationships
    from graphrag_mcp_server.handlers.search.relationship_index import RelationshipIndex

    frame = pd.read_parquet(built_index[0] / "output" / "relationships.parquet")
    assert len(frame) > 100
    rows, theirs = indexer_relationships(frame), read_indexer_relationships(frame)
    assert list(rows) == theirs and rows[5] is rows[5] and rows[2:4] == theirs[2:4]
    by_columns, by_objects = RelationshipIndex.of_rows(rows), RelationshipIndex.of(theirs)
    assert by_columns.codes == by_objects.codes
    for name in ("sources", "targets", "ranks"):
        assert np.array_equal(getattr(by_columns, name), getattr(by_objects, name))
    assert by_columns.positions.keys() == by_objects.positions.keys()
    halves = pd.concat([frame.iloc[:50], frame.iloc[50:]], ignore_index=True)  # Arrow in 2 chunks
    assert pa.chunked_array(pa.array(halves["source"].array)).num_chunks >= 2
    assert RelationshipIndex.of_rows(indexer_relationships(halves)).codes == by_objects.codes
    as_objects = frame.astype({"source": object, "target": object})
    as_objects.loc[as_objects.index[1], "target"] = None  # numbered as its str, as `of` does
    rows = indexer_relationships(as_objects)
    assert RelationshipIndex.of_rows(rows).codes == RelationshipIndex.of(list(rows)).codes
    sparse = frame.head(3).astype({"description": object, "text_unit_ids": object})
    sparse.loc[sparse.index[0], "description"] = None
    sparse.loc[sparse.index[1], "text_unit_ids"] = None
    sparse.loc[sparse.index[2], "weight"] = 2
    assert list(indexer_relationships(sparse)) == read_indexer_relationships(sparse)
    with pytest.raises(TypeError):
        indexer_relationships(sparse.assign(combined_degree="many"))[0]
    with pytest.raises(ValueError, match="source"):
        indexer_relationships(sparse.drop(columns=["source"]))
