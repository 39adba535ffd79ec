"""The entities a question names come first in its local and DRIFT contexts (entity_names.py):
graphrag's `include_entity_names`, filled with the titles the question writes."""

from types import SimpleNamespace
from typing import Any

import pytest

from graphrag_mcp_server.handlers.entity_names import EntityNames, naming_first
from test_prepared_searches import loaded  # noqa: F401 (a fixture)

NAMES = EntityNames.of(
    SimpleNamespace(title=title)  # only the title is read
    for title in ["ADA MERROW", "MERROW", "BROUWER HOLDING B.V.", "PORT EVANDER", "READY"]
)


def test_a_question_names_titles_in_any_case_the_longest_first() -> None:
    """Whole words in any case, the longest title at each word, each once, in the question's
    order; edge marks ('?', '"', a final stop) do not count; one word only with a capital."""
    assert NAMES.in_text("Who is Ada Merrow? And ada merrow's partner?") == ["ADA MERROW"]
    assert NAMES.in_text("Did Merrow sell Brouwer Holding B.V to Port Evander?") == [
        "MERROW",
        "BROUWER HOLDING B.V.",
        "PORT EVANDER",
    ]
    assert NAMES.in_text("is it ready for port evander") == ["PORT EVANDER"]
    assert NAMES.in_text("tidal power") == []


def test_named_entities_are_included_first_and_not_listed_again() -> None:
    """The named titles join the caller's `include_entity_names` and `exclude_entity_names`; a
    title the caller excludes stays out."""
    params = naming_first(NAMES, "What did Ada Merrow and Port Evander agree?", {"top_k": 3})
    assert params["include_entity_names"] == ["ADA MERROW", "PORT EVANDER"]
    assert params["exclude_entity_names"] == ["ADA MERROW", "PORT EVANDER"]
    assert params["top_k"] == 3
    kept_out = naming_first(
        NAMES, "Ada Merrow and Port Evander", {"exclude_entity_names": ["PORT EVANDER"]}
    )
    assert kept_out["include_entity_names"] == ["ADA MERROW"]
    assert kept_out["exclude_entity_names"] == ["PORT EVANDER", "ADA MERROW"]


@pytest.mark.parametrize("search_type", ["local", "drift"])
def test_a_context_lists_the_entity_the_question_names_first(
    loaded: tuple[Any, Any],  # noqa: F811
    search_type: str,
) -> None:
    """For each of the fixture index's twenty most connected entities, 'Who is X?' puts X first
    among the context's entities, once, whatever the similarity search ranks first."""
    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import SearchType

    config, tables = loaded
    titles = tables.entities.sort_values("degree", ascending=False).title.head(20)
    for title in titles:
        context = search_context(config, tables, SearchType(search_type), f"Who is {title}?")
        names = [entity.name for entity in context.context.entities]
        assert names[:1] == [title], (title, names[:3])
        assert names.count(title) == 1
