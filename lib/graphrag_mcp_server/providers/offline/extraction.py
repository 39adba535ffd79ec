"""Answers to GraphRAG's graph and claim extraction prompts, as delimited records."""

from __future__ import annotations

from graphrag.index.operations.extract_graph.graph_extractor import (
    COMPLETION_DELIMITER,
    TUPLE_DELIMITER,
)

from graphrag_mcp_server.providers.offline.entities import Mentions, find_entities, typed
from graphrag_mcp_server.providers.offline.relationships import relationship_records
from graphrag_mcp_server.providers.offline.request import Request
from graphrag_mcp_server.providers.offline.text import (
    ENTITY_DESCRIPTION_WORDS,
    clean_field,
    join_sentences,
    split_sentences,
    text_between,
)

_DEFAULT_ENTITY_TYPES = ("organization", "person", "geo", "event")
_TYPE_SYNONYMS = {
    "organization": ("organization", "organisation", "company", "institution"),
    "geo": ("geo", "location", "place", "country", "city", "region"),
    "event": ("event",),
    "person": ("person", "people", "individual"),
}


def extract_graph(request: Request) -> str:
    """Entity and relationship records for GraphExtractor (graphrag's prompt, or a prompt tuned by
    graphrag's prompt tuning, which writes `entity_types: [...]`, `text:` and `output:` in lower
    case)."""
    return graph_records(request.instructions)


def graph_records(prompt: str) -> str:
    """The records answering an extraction prompt: its `-Real Data-` section's text, with its entity
    types."""
    real = prompt[prompt.rfind("-Real Data-") :]
    types_line = text_between(
        real.replace("entity_types:", "Entity_types:"), "Entity_types:", "\n"
    ).strip("[]")
    entity_types = [t.strip().strip("'\"") for t in types_line.split(",") if t.strip()]
    real = real.replace("\ntext:", "\nText:").replace("\noutput:", "\nOutput:")
    text = text_between(real, "Text:", "######################\nOutput:", "\nOutput:")
    found = find_entities(text)
    records = [
        _entity_record(name, found, entity_types or list(_DEFAULT_ENTITY_TYPES))
        for name in found.names
    ]
    records += relationship_records(found, text)
    return "\n##\n".join([*records, COMPLETION_DELIMITER])


WARM_UP_PASSAGE = (
    "Dr Ada Moreau, the director of Harbour Works Ltd, met Tomas Berg in Lisbon on Monday. "
    "They signed the Supply Agreement for the English firm."
)
"""A passage whose extraction reads every word list and gazetteer the offline model loads on
first use (names, places, legal forms, common words, peoples)."""


def warm_up() -> None:
    """Load the word lists and gazetteers the offline extraction reads, by extracting from one
    short passage: about 1.3 s that a worker started ahead spends before its job, not in it."""
    found = find_entities(WARM_UP_PASSAGE)
    for name in found.names:
        typed(name, found)
    relationship_records(found, WARM_UP_PASSAGE)


def _entity_record(name: str, found: Mentions, entity_types: list[str]) -> str:
    """One '("entity"<|>NAME<|>TYPE<|>description)' record."""
    canonical, _ = typed(name, found)
    description = join_sentences(found.sentences[name], ENTITY_DESCRIPTION_WORDS)
    fields = [
        '"entity"',
        name.upper(),
        _entity_type(canonical, entity_types).upper(),
        clean_field(description or f"{name} is mentioned in the text."),
    ]
    return f"({TUPLE_DELIMITER.join(fields)})"


def _entity_type(canonical: str, entity_types: list[str]) -> str:
    """Map a canonical type onto the configured entity types."""
    for wanted in (canonical, "organization"):
        for entity_type in entity_types:
            if entity_type.lower() in _TYPE_SYNONYMS[wanted]:
                return entity_type
    return entity_types[0]


def extract_claims(request: Request) -> str:
    """One claim per sentence naming an entity, in ClaimExtractor's format."""
    real = text_between(request.instructions, "-Real Data-")
    text = text_between(real, "Text:", "\nOutput:")
    found = find_entities(text)
    claims = []
    for sentence in split_sentences(text):
        names = [n.upper() for n in found.names if sentence in found.sentences[n]]
        if names:
            subject, target = names[0], (names[1] if len(names) > 1 else "NONE")
            clean = clean_field(sentence)
            fields = [subject, target, "STATEMENT", "SUSPECTED", "NONE", "NONE", clean, clean]
            claims.append(f"({TUPLE_DELIMITER.join(fields)})")
    return "\n##\n".join(claims) + f"\n{COMPLETION_DELIMITER}"
