"""The local context over only the relationships incident to the query's entities, its links counted
in one pass (issue 40), is graphrag's own: the same text and records for every question, budget
and conversation as graphrag's LocalSearchMixedContext over every relationship."""

from typing import Any

import pandas as pd
import pytest

from test_prepared_searches import loaded  # noqa: F401 (a fixture)


def _questions(tables: Any) -> list[str]:
    """A question naming each of the index's ten most connected entities, and two vaguer ones."""
    hubs = tables.entities.sort_values("degree", ascending=False).title.head(10)
    return [f"What did {title.title()} do, and with whom?" for title in hubs] + [
        "tidal power",
        "Who argued with the fishermen?",
    ]


@pytest.mark.slow
def test_narrowed_builds_equal_graphrags(
    loaded: tuple[Any, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """For every question, at four budgets, with a conversation and with graphrag's candidate
    records: the narrowed builder's context text and records (relationship `links` and
    `in_context` marks included) equal those of graphrag's own builder, made
    of the same state, over every relationship, given the entities the question names
    (`include_entity_names`, entity_names.naming_first); it hands graphrag fewer relationships
    than the index holds. Passages are offered to graphrag one more at a time (FIRST_PASSAGES 1,
    each retry four times more), so that a table is made from a prefix often."""
    from graphrag.query.context_builder.conversation_history import ConversationHistory
    from graphrag.query.structured_search.local_search.mixed_context import (
        LocalSearchMixedContext,
    )

    from graphrag_mcp_server.handlers.entity_names import naming_first
    from graphrag_mcp_server.handlers.search import incident
    from graphrag_mcp_server.handlers.search.engines import local_engine
    from graphrag_mcp_server.handlers.search.incident import IncidentRelationshipsContext

    monkeypatch.setattr(incident, "FIRST_PASSAGES", 1)
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
        every = len(builder.index.relationships)
        graphrags = LocalSearchMixedContext.__new__(LocalSearchMixedContext)
        vars(graphrags).update(vars(builder))
        graphrags.relationships = {rel.id: rel for rel in builder.index.relationships}
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
                named = naming_first(builder.names, question, params)
                plain = graphrags.build_context(query=question, **named)
                for rel in builder.index.relationships:  # graphrag's marks, left by its builder
                    rel.attributes = None
                assert narrowed.context_chunks == plain.context_chunks, (question, budget)
                assert set(narrowed.context_records) == set(plain.context_records)
                for kind, frame in plain.context_records.items():
                    pd.testing.assert_frame_equal(narrowed.context_records[kind], frame)
                selected = builder.selected_entities(question, **params)
                seen.append(len(builder.index.incident(entity.title for entity in selected)))
    assert max(seen) < every


def _relationships(seed: int) -> list[Any]:
    """Random relationships among 40 entities, two of them hubs, ranks with ties, a self-loop."""
    import random

    from graphrag.data_model.relationship import Relationship

    chance = random.Random(seed)
    names = [f"E{n}" for n in range(40)]
    pairs = [(chance.choice(names[:2] * 5 + names), chance.choice(names)) for _ in range(300)]
    pairs.append(("E3", "E3"))
    return [
        Relationship(
            id=f"r{n}",
            short_id=str(n),
            source=source,
            target=target,
            description=f"{source} and {target}",
            rank=chance.randint(1, 6),
        )
        for n, (source, target) in enumerate(pairs)
    ]


@pytest.mark.parametrize("seed", range(8))
def test_chosen_relationships_are_graphrags(seed: int) -> None:
    """For random relationships and selections (hubs, ties in rank, a self-loop, a title with no
    relationship), the index chooses graphrag's _filter_relationships' relationships in its order
    and writes the links graphrag writes into the relationships' attributes."""
    import random

    from graphrag.data_model.entity import Entity
    from graphrag.query.context_builder.local_context import _filter_relationships

    from graphrag_mcp_server.handlers.search.incident import chosen_relationships
    from graphrag_mcp_server.handlers.search.relationship_index import RelationshipIndex

    relationships = _relationships(seed)
    index = RelationshipIndex.of(relationships)
    chance = random.Random(seed)
    for size in (1, 2, 3, 5, 8):
        titles = chance.sample([f"E{n}" for n in range(40)] + ["NOBODY"], size)
        selected = [Entity(id=title, short_id=title, title=title) for title in titles]
        for rel in relationships:
            rel.attributes = None
        links = index.no_links()
        chosen = chosen_relationships(selected, index, 4, links)
        expected = _filter_relationships(selected, relationships, 4, "rank")
        assert [relationships[p].id for p in chosen] == [rel.id for rel in expected]
        marked = {rel.id: rel.attributes["links"] for rel in relationships if rel.attributes}
        assert {relationships[p].id: int(links[p]) for p in (links >= 0).nonzero()[0]} == marked


def test_incident_positions_are_in_the_index_order() -> None:
    """incident() of unknown titles is empty; of a title, the positions of exactly the
    relationships it is an end of, ascending; a self-loop once."""
    from graphrag_mcp_server.handlers.search.relationship_index import RelationshipIndex

    relationships = _relationships(0)
    index = RelationshipIndex.of(relationships)
    assert len(index.incident(["NO SUCH ENTITY"])) == 0
    for title in ("E0", "E3", "E17"):
        expected = [n for n, rel in enumerate(relationships) if title in (rel.source, rel.target)]
        assert index.incident([title]).tolist() == expected
    both = index.incident(["E0", "E1"]).tolist()
    assert both == sorted(set(index.incident(["E0"]).tolist() + index.incident(["E1"]).tolist()))


@pytest.mark.slow
def test_a_question_is_embedded_and_searched_once(loaded: tuple[Any, Any]) -> None:  # noqa: F811
    """One build_context maps the question twice (here and in graphrag) from one embedding and one
    search of the entities' vectors (held in memory: LanceDB's table is not searched); a second
    question is searched anew."""
    from graphrag_vectors.lancedb import LanceDBVectorStore

    from graphrag_mcp_server.handlers.search.engines import local_engine

    config, tables = loaded
    with local_engine(config, tables, 2) as engine:
        builder = engine.context_builder
        held = builder.entity_text_embeddings._held
        searched: list[int] = []
        nearest = held.nearest
        store_searches: list[str] = []
        store_search = LanceDBVectorStore.similarity_search_by_vector
        embedded = builder.text_embedder._model
        embed = embedded.embedding
        inputs: list[list[str]] = []
        object.__setattr__(
            held, "nearest", lambda vector, k: searched.append(k) or nearest(vector, k)
        )
        LanceDBVectorStore.similarity_search_by_vector = lambda self, *a, **kw: (  # type: ignore[method-assign]
            store_searches.append(self.index_name) or store_search(self, *a, **kw)
        )
        embedded.embedding = lambda *, input, **kwargs: (
            inputs.append(input) or embed(input=input, **kwargs)
        )
        try:
            for question in ("Who is Leonard Quist?", "tidal power"):
                builder.build_context(query=question, **engine.context_builder_params)
        finally:
            object.__delattr__(held, "nearest")
            LanceDBVectorStore.similarity_search_by_vector = store_search  # type: ignore[method-assign]
            del embedded.embedding
    assert len(searched) == 2 and not store_searches
    assert inputs == [["Who is Leonard Quist?"], ["tidal power"]]


@pytest.mark.parametrize("fitting", [0, 1, 5, 31, 32, 33, 128, 129, 300])
def test_a_prefix_of_passages_gives_graphrags_table(fitting: int) -> None:
    """fitting_passages gives build_text_unit_context's text and table over all 300 passages, at a
    budget where `fitting` of them fit (none, a few, around each retry's size, all)."""
    import litellm  # noqa: F401  (points tiktoken at its bundled encodings: no download)
    from graphrag.data_model.text_unit import TextUnit
    from graphrag.query.context_builder.source_context import build_text_unit_context
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    from graphrag_mcp_server.handlers.search.incident import fitting_passages

    tokenizer = get_tokenizer()
    units = [
        TextUnit(id=f"u{n}", short_id=str(n), text=f"passage {n} about the harbour")
        for n in range(300)
    ]
    settings: dict[str, Any] = {"tokenizer": tokenizer, "context_name": "Sources"}
    header = tokenizer.num_tokens("-----Sources-----\nid|text\n")
    rows = [tokenizer.num_tokens(f"{unit.short_id}|{unit.text}\n") for unit in units]
    budget = header + sum(rows[:fitting])
    text, data = fitting_passages(units, max_context_tokens=budget, **settings)
    whole_text, whole_data = build_text_unit_context(
        text_units=units, shuffle_data=False, max_context_tokens=budget, **settings
    )
    assert text == whole_text
    assert len(data["sources"]) == fitting
    pd.testing.assert_frame_equal(data["sources"], whole_data["sources"])
