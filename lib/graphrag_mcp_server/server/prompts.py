"""MCP prompts: ready-made requests that lead the client's model through the right tools."""

import re
from typing import Annotated, Any
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from pydantic import Field


def register_prompts(server: MCPServer, max_chars: int) -> None:
    """Add the analyze, explore, compare and summarize prompts; text arguments are at most
    `max_chars` long."""

    def text(description: str) -> Any:
        return Field(min_length=1, max_length=max_chars, description=description)

    @server.prompt(
        title="Analyse a topic",
        description="Analyse a topic across the corpus: themes first, then the entities behind "
        "them",
    )
    def analyze(topic: Annotated[str, text("Topic to analyse")]) -> str:
        return (
            f'Analyse the topic "{topic}" in my documents.\n'
            f'1. Call global_search with query "What do the documents say about {topic}? '
            'What are the main themes?" to get the corpus-wide picture.\n'
            "2. For the two or three entities most central to those themes, call local_search to "
            "get specifics.\n"
            "3. Write the analysis: themes, key entities and how they relate, open questions. Cite "
            "the source documents each tool result lists."
        )

    @server.prompt(
        title="Explore an entity",
        description="Explore one entity: what it is, what it is connected to, where it is "
        "mentioned",
    )
    def explore(
        entity: Annotated[str, text("Name of a person, place, organisation or thing")],
    ) -> str:
        return (
            f'Explore "{entity}" in my documents.\n'
            f'1. Call get_entity with name "{entity}" (or read the resource '
            f"graphrag://entities/{quote(entity)}) for its description, relationships and "
            "communities (if it is not found, read graphrag://entities or call local_search for "
            "the closest name).\n"
            f'2. Call local_search with query "Who or what is {entity}, '
            'and how is it connected to the others?".\n'
            "3. For its strongest relationships, read the reports of the communities it belongs to "
            "(get_community with their numbers, or graphrag://communities/{id}).\n"
            "4. Summarise: what it is, its main connections, the documents that mention it."
        )

    @server.prompt(title="Compare two entities", description="Compare two entities or topics")
    def compare(
        a: Annotated[str, text("First entity or topic")],
        b: Annotated[str, text("Second entity or topic")],
    ) -> str:
        return (
            f'Compare "{a}" and "{b}" using my documents.\n'
            f'1. Call local_search for "What is {a}?" and for "What is {b}?".\n'
            f'2. Call local_search with "How are {a} and {b} related?"; '
            "if the answer is thin, try drift_search with the same question.\n"
            "3. Present similarities, differences and connections in a short table followed by a "
            "paragraph, citing the sources each result lists."
        )

    @server.prompt(
        title="Summarise the corpus",
        description="Summarise the whole corpus at a chosen level of detail",
    )
    def summarize(
        level: Annotated[
            str,
            Field(description="Community level: 0 for the broadest view, higher for finer detail"),
        ] = "0",
    ) -> str:
        if not re.fullmatch(r"[0-9]{1,2}", level):
            raise ValueError(f"level must be a community level (0, 1, 2...), not {level[:100]!r}")
        return (
            "Summarise my documents.\n"
            '1. Call global_search with query "Summarise the main topics, actors and events" '
            f"and community_level {level}.\n"
            "2. Call get_statistics to say how large the corpus and graph are.\n"
            "3. Write a structured summary: one heading per main topic, key entities in bold, "
            "sources cited."
        )
