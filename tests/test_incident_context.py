"""The local context over only the relationships incident to the query's entities, its links counted
in one pass (issue 40), is graphrag's own: the same text and records for every question, budget
and conversation as graphrag's LocalSearchMixedContext over every relationship."""

from typing import Any

import pandas as pd
import pytest

from test_prepared_searches import loaded  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow


def BUDGETS_AND_HISTORY(history: Any) -> list[tuple[int, Any]]:
    return [(1500, None), (8000, None), (8000, history), (30000, None)]


def _questions(tables: Any) -> list[str]:
    """A question naming each of the index's ten most connected entities, and two vaguer ones."""
    hubs = tables.entities.sort_values("degree", ascending=False).title.head(10)
    return [f"What did {title.title()} do, and with whom?" for title in hubs] + [
        "tidal power",
        "Who argued with the fishermen?",
    ]


def test_narrowed_builds_equal_graphrags(loaded: tuple[Any, Any]) -> None:  # noqa: F811
    """For every question, at three budgets, with a conversation and with graphrag's candidate
    records: the narrowed builder's context text and records (relationship `links` and
    `in_context` marks included) equal those of graphrag's own builder, made
    of the same state, over every relationship; it hands graphrag fewer relationships than the
    index holds."""
    from graphrag.query.context_builder.conversation_history import ConversationHistory
    from graphrag.query.structured_search.local_search.mixed_context import (
        LocalSearchMixedContext,
    )

    from graphrag_mcp_server.handlers.search.engines import local_engine
    from graphrag_mcp_server.handlers.search.incident import IncidentRelationshipsContext

    config, tables = loaded
    history = ConversationHistory.from_list(
        [
            {"role": "user", "content": "Tell me about Old Bessie."},
            {"role": "assistant", "content": "Old Bessie is a tidal turbine."},
        ]
    )
    seen: list[int] = []
    with local_engine(config, tables, 2) as engine:
        builder = engine.context_builder
        assert isinstance(builder, IncidentRelationshipsContext)
        every = len(builder.every_relationship)
        graphrags = LocalSearchMixedContext.__new__(LocalSearchMixedContext)
        vars(graphrags).update(vars(builder))
        graphrags.relationships = builder.by_id
        for question in _questions(tables):
            for budget, conversation, candidates in (
                (1500, None, False),
                (8000, None, False),
                (8000, history, False),
                (30000, None, False),
                (8000, None, True),
            ):
                params = {
                    **engine.context_builder_params,
                    "max_context_tokens": budget,
                    "conversation_history": conversation,
                    "return_candidate_context": candidates,
                }
                narrowed = builder.build_context(query=question, **params)
                plain = graphrags.build_context(query=question, **params)
                assert narrowed.context_chunks == plain.context_chunks, (question, budget)
                assert set(narrowed.context_records) == set(plain.context_records)
                for kind, frame in plain.context_records.items():
                    pd.testing.assert_frame_equal(narrowed.context_records[kind], frame)
                selected = builder.selected_entities(question, **params)
                seen.append(len(builder.incident(entity.title for entity in selected)))
    assert max(seen) < every


def test_a_title_with_no_relationships_narrows_to_none(loaded: tuple[Any, Any]) -> None:  # noqa: F811
    """incident() of unknown titles is empty; of a relationship's source, that relationship among
    those it returns, in the index's order."""
    from graphrag_mcp_server.handlers.search.engines import local_engine

    config, tables = loaded
    with local_engine(config, tables, 2) as engine:
        builder = engine.context_builder
        assert builder.incident(["NO SUCH ENTITY"]) == {}
        first = builder.every_relationship[0]
        picked = list(builder.incident([first.source]).values())
        assert picked[0] is first
        order = [builder.every_relationship.index(rel) for rel in picked]
        assert order == sorted(order)
        assert all(first.source in (rel.source, rel.target) for rel in picked)


def test_a_question_is_embedded_and_searched_once(loaded: tuple[Any, Any]) -> None:  # noqa: F811
    """One build_context maps the question twice (here and in graphrag) from one embedding and one
    search of the entities' vectors; a second question is searched anew."""
    from graphrag_mcp_server.handlers.search.engines import local_engine

    config, tables = loaded
    with local_engine(config, tables, 2) as engine:
        builder = engine.context_builder
        store = builder.entity_text_embeddings._store
        searched: list[str] = []
        search = store.similarity_search_by_text

        def counted(text: str, *args: Any, **kwargs: Any) -> Any:
            searched.append(text)
            return search(text, *args, **kwargs)

        store.similarity_search_by_text = counted
        embedded = builder.text_embedder._model
        embed = embedded.embedding
        inputs: list[list[str]] = []
        embedded.embedding = lambda *, input, **kwargs: (
            inputs.append(input) or embed(input=input, **kwargs)
        )
        try:
            for question in ("Who is Leonard Quist?", "tidal power"):
                builder.build_context(query=question, **engine.context_builder_params)
        finally:
            del store.similarity_search_by_text, embedded.embedding
    assert searched == ["Who is Leonard Quist?", "tidal power"]
    assert inputs == [["Who is Leonard Quist?"], ["tidal power"]]
