"""`graphrag-mcp query`: each search method answers from the index, naming entities and real
sources."""

from pathlib import Path

import pytest

from conftest import run_cli

QUERY_KEYS = {
    "type",
    "answer",
    "context",
    "sources",
    "context_counts",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "embedding_calls",
    "seconds",
    "index_version",
}


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
@pytest.mark.parametrize(
    ("search_type", "question", "expected"),
    [
        (
            "local",
            "Who designed Old Bessie and which firm built it?",
            ("Tobias Arkwright", "Saltmarsh Engineering Works"),
        ),
        ("basic", "Who inspected the Kelling Point turbine in 1994?", ("Leonard Quist",)),
        ("drift", "What did Ines Halloran study at Marrow Sands?", ("Ines Halloran",)),
        (
            "global",
            "What is the Harrowgate Tidal Cooperative and who founded it?",
            ("Harrowgate Tidal Cooperative",),
        ),
    ],
)
def test_each_search_answers_with_entity_and_sources(
    built_index: tuple[Path, dict],
    corpus_titles: set[str],
    search_type: str,
    question: str,
    expected: tuple[str, ...],
) -> None:
    """Each search answers naming an entity that answers the question (any one, for a question in
    two parts) and cites documents of the corpus."""
    root, _ = built_index
    result = run_cli(
        "query", question, "--index-path", root, "--type", search_type, "--format", "json"
    )
    assert result.code == 0, result.stderr
    answer = result.json()
    assert set(answer) == QUERY_KEYS
    assert answer["type"] == search_type
    assert any(name.lower() in answer["answer"].lower() for name in expected), answer["answer"]
    assert answer["sources"], "an answer without sources"
    assert {source["document"] for source in answer["sources"]} <= corpus_titles
    assert all(source["text_unit_id"] for source in answer["sources"])
    assert sum(answer["context_counts"].values()) > 0
    assert answer["llm_calls"] >= 1
    assert answer["prompt_tokens"] > 0 and answer["completion_tokens"] > 0
    # stderr: this project's cost line, no graphrag record, no tqdm bar (drift drew them, issue 43)
    assert "%|" not in result.stderr and " graphrag." not in result.stderr, result.stderr


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_local_search_sources_point_at_the_right_document(built_index: tuple[Path, dict]) -> None:
    root, _ = built_index
    result = run_cli(
        "query",
        "Who is Leonard Quist?",
        "--index-path",
        root,
        "--type",
        "local",
        "--format",
        "json",
    )
    assert result.code == 0, result.stderr
    documents = [source["document"] for source in result.json()["sources"]]
    assert "04_inspection_report_1994.md" in documents


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_text_format_prints_answer_and_source_titles(built_index: tuple[Path, dict]) -> None:
    root, _ = built_index
    result = run_cli(
        "query", "Who is Beatrix Fenn?", "--index-path", root, "--type", "basic", "--top-k", "3"
    )
    assert result.code == 0, result.stderr
    assert "Beatrix Fenn" in result.stdout
    assert "Sources: " in result.stdout and "08_newspaper_profile_2012.txt" in result.stdout
    assert "LLM calls" in result.stderr
