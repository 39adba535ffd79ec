"""Relationship records for entities mentioned in the same sentences."""

from __future__ import annotations

from itertools import combinations

from graphrag.index.operations.extract_graph.graph_extractor import TUPLE_DELIMITER

from graphrag_mcp_server.providers.offline.entities import Mentions
from graphrag_mcp_server.providers.offline.text import (
    MAX_DESCRIPTION_WORDS,
    clean_field,
    join_sentences,
)


def relationship_records(found: Mentions) -> list[str]:
    """Records for entities sharing a sentence, strength from co-occurrences."""
    shared: dict[tuple[str, str], list[str]] = {}
    for sentence in dict.fromkeys(s for v in found.sentences.values() for s in v):
        present = [n for n in found.names if sentence in found.sentences[n]]
        for pair in combinations(present, 2):
            shared.setdefault(pair, []).append(sentence)
    records = []
    for (source, target), sentences in shared.items():
        strength = min(10, 3 + 2 * len(sentences))
        description = clean_field(join_sentences(sentences, MAX_DESCRIPTION_WORDS))
        fields = ['"relationship"', source.upper(), target.upper(), description, str(strength)]
        records.append(f"({TUPLE_DELIMITER.join(fields)})")
    return records
