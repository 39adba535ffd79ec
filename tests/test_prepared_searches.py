"""Searches prepared once per loaded version: graphrag's objects made once, answers and contexts as
graphrag's own."""

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
    ("search_type", "types"), [("local", []), ("local", ["person"]), ("basic", []), ("global", [])]
)
async def test_answers_and_their_contexts_are_graphrag_apis(
    loaded: tuple[Any, Any], search_type: str, types: list[str]
) -> None:
    """Prepared objects reused across searches (graphrag writes into some of them) answer as
    graphrag.api does."""
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
        assert ours.answer == answer
        assert set(seen.records) == set(context)
        for kind, frame in context.items():
            pd.testing.assert_frame_equal(seen.records[kind], frame)


async def test_graphrag_objects_are_made_once_per_version(
    built_index: tuple[Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import graphrag.query.indexer_adapters as adapters

    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import SearchType, run_search
    from graphrag_mcp_server.server.state import IndexState

    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    monkeypatch.chdir(root)
    reads: list[int] = []
    read = adapters.read_indexer_relationships
    monkeypatch.setattr(
        adapters,
        "read_indexer_relationships",
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


async def test_objects_graphrag_writes_into_are_lent_to_one_search_at_a_time(
    loaded: tuple[Any, Any],
) -> None:
    _, tables = loaded
    objects = prepared(tables)
    with objects.relationships() as first:
        first[0].attributes = {"links": 3}  # as graphrag's local context marks them
        with objects.relationships() as second:
            assert second is not first
    with objects.relationships() as again:
        assert again in (first, second)
        assert all(relationship.attributes is None for relationship in again)
