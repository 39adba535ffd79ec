"""`graphrag-mcp index` and `stats` on the fixture corpus: real pipeline, real LanceDB, offline
model."""

import json
from pathlib import Path

import lancedb
import pandas as pd
import pytest

from conftest import CORPUS, run_cli
from graphrag_mcp_server.providers import OFFLINE_EMBEDDING_REVISION

SUMMARY_KEYS = {
    "documents",
    "text_units",
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "documents_added",
    "documents_updated",
    "documents_deleted",
    "documents_renamed",
    "documents_read",
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "embedding_calls",
    "seconds",
    "mode",
    "skipped",
    "unreadable",
    "carried_over",
    "computed",
    "vectors_written",
    "clustering",
    "workflows",
}
STATS_KEYS = {
    "documents",
    "text_units",
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "community_levels",
    "covariates",
    "index_updated_at",
    "models",
    "vector_store",
    "issues",
    "workflows",
}


def test_index_summary_reports_what_was_built(built_index: tuple[Path, dict]) -> None:
    _, summary = built_index
    assert set(summary) == SUMMARY_KEYS
    assert summary["mode"] == "full"
    assert summary["documents_read"] == summary["documents"]  # a cold build reads every file
    # graphrag's standard pipeline (documents handed in), this project's workflows in place of eight
    assert summary["workflows"] == [
        "create_base_text_units_kept",
        "create_final_documents_kept",
        "extract_graph_kept",
        "finalize_graph_kept",
        "extract_covariates",
        "create_communities_kept",
        "cluster_unclustered_entities",
        "create_final_text_units_kept",
        "create_community_reports_kept",
        "generate_text_embeddings_kept",
    ]
    # a full build takes nothing from a previous version
    assert not any(summary["carried_over"].values())
    assert (
        summary["clustering"] is None and summary["computed"]["extraction"] == summary["text_units"]
    )
    assert sum(summary["vectors_written"].values()) == (
        summary["text_units"] + summary["entities"] + summary["community_reports"]
    )
    assert summary["documents"] == summary["documents_added"] == len(list(CORPUS.iterdir()))
    for key in ("text_units", "entities", "relationships", "communities", "community_reports"):
        assert summary[key] > 0, key
    assert summary["llm_calls"] > 0
    assert summary["prompt_tokens"] > summary["llm_calls"]
    assert summary["completion_tokens"] > 0
    assert (
        summary["embedding_calls"] > 0
    )  # text units, entity descriptions and reports were embedded


def test_workflows_are_timed_without_tracing_every_allocation(
    built_index: tuple[Path, dict],
) -> None:
    """graphrag's stats.json still times each workflow, but tracemalloc (3.5x slower builds) is
    off."""
    root, _ = built_index
    workflows = json.loads((root / "output" / "stats.json").read_text(encoding="utf-8"))[
        "workflows"
    ]
    assert {
        "create_base_text_units_kept",
        "extract_graph_kept",
        "create_community_reports_kept",
        "finalize_graph_kept",
        "create_communities_kept",
        "generate_text_embeddings_kept",
    } <= set(workflows)  # graphrag's pipeline, this project's in place of six
    for name, metrics in workflows.items():
        assert metrics["tracemalloc_overhead_bytes"] == 0, name
        assert metrics["overall"] >= 0, name
        assert metrics["peak_memory_bytes"] > 100 * 2**20, (
            name
        )  # the process's peak resident memory
    assert sum(metrics["overall"] for metrics in workflows.values()) > 0


def test_stats_agree_with_parquet_and_lancedb(built_index: tuple[Path, dict]) -> None:
    root, summary = built_index
    result = run_cli("stats", "--index-path", root, "--format", "json")
    assert result.code == 0, result.stderr
    stats = result.json()
    assert set(stats) == STATS_KEYS
    output = root / "output"
    for table in (
        "documents",
        "text_units",
        "entities",
        "relationships",
        "communities",
        "community_reports",
    ):
        assert (
            stats[table] == len(pd.read_parquet(output / f"{table}.parquet")) == summary[table]
        ), table
    assert (
        stats["community_levels"]
        == pd.read_parquet(output / "communities.parquet")["level"].nunique()
    )
    assert stats["models"] == {
        "completion": ["offline/offline-extractive"],
        "embedding": [f"offline/offline-hashing (revision {OFFLINE_EMBEDDING_REVISION})"],
    }
    assert stats["index_updated_at"] is not None
    assert stats["issues"] == []
    assert list(stats["workflows"]) == summary["workflows"] and all(
        s >= 0 for s in stats["workflows"].values()
    )

    db = lancedb.connect(output / "lancedb")
    vector_tables = {name: db.open_table(name).count_rows() for name in db.list_tables().tables}
    assert stats["vector_store"] == {"type": "lancedb", "tables": vector_tables}
    assert vector_tables["text_unit_text"] == stats["text_units"]
    assert vector_tables["entity_description"] == stats["entities"]
    assert vector_tables["community_full_content"] == stats["community_reports"]


def test_stats_text_format(built_index: tuple[Path, dict]) -> None:
    root, summary = built_index
    result = run_cli("stats", "--index-path", root)
    assert result.code == 0, result.stderr
    assert f"entities: {summary['entities']}" in result.stdout
    assert "community reports: " in result.stdout and "{" not in result.stdout, (
        "readable, not Python dicts"
    )
    assert "vector store: type lancedb, tables community_full_content " in result.stdout


@pytest.mark.slow
def test_incremental_run_adds_a_new_document(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in sorted(p.name for p in CORPUS.iterdir())[:3]:
        (data / name).write_text((CORPUS / name).read_text())
    root = tmp_path / "index"
    first = run_cli("index", data, "--index-path", root, "--offline", "--format", "json")
    assert first.code == 0, first.stderr
    assert first.json()["mode"] == "full"

    (data / "12_visiting_delegation.txt").write_text(
        "In May 2024 Oskar Lindqvist led a delegation from the Baltic Tidal Forum to Port Evander. "
        "Oskar Lindqvist met Mirela Voss at the Harrowgate Tidal Cooperative and studied "
        "the Slack Water Protocol."
    )
    second = run_cli(
        "index", data, "--index-path", root, "--incremental", "--offline", "--format", "json"
    )
    assert second.code == 0, second.stderr
    summary = second.json()
    assert summary["mode"] == "incremental"
    assert summary["documents"] == first.json()["documents"] + 1 and summary["documents_added"] == 1
    entities = pd.read_parquet(root / "output" / "entities.parquet")
    assert "OSKAR LINDQVIST" in set(entities["title"].str.upper())
    assert summary["llm_calls"] < first.json()["llm_calls"]

    unchanged = run_cli("index", data, "--index-path", root, "--offline", "--format", "json")
    assert unchanged.code == 0, unchanged.stderr
    assert (
        unchanged.json()["mode"] == "incremental"
        and unchanged.json()["documents"] == summary["documents"]
    )
    assert unchanged.json()["llm_calls"] == unchanged.json()["prompt_tokens"] == 0

    cached = _cached(root)
    rebuilt = run_cli(
        "index", data, "--index-path", root, "--full", "--offline", "--format", "json"
    )
    assert rebuilt.code == 0, rebuilt.stderr
    assert rebuilt.json()["mode"] == "full" and rebuilt.json()["entities"] == summary["entities"]
    # graphrag's LLM cache answers every extraction and summary request: no new cache entry; the
    # update kept its communities (issue 24) and their rows' order, where the rebuild clusters
    # anew, so a report whose context lists its rows otherwise (its members may be the same) is
    # asked again: at most one call a report
    asked = {step: entries - cached[step] for step, entries in _cached(root).items()}
    assert not asked["extract_graph"] and not asked["summarize_descriptions"]
    assert rebuilt.json()["llm_calls"] == len(asked["community_reporting"])
    assert rebuilt.json()["llm_calls"] <= rebuilt.json()["computed"]["report"]


def _cached(root: Path) -> dict[str, set[str]]:
    """The entries of graphrag's LLM cache in the index root, by step."""
    steps = ("extract_graph", "summarize_descriptions", "community_reporting")
    return {step: {path.name for path in (root / "cache" / step).glob("*")} for step in steps}
