"""Prompt tuning (issue 30): `graphrag-mcp tune` and the tune_prompts tool run graphrag's prompt
tuning (the offline model answers its prompts from the corpus), keep the previous prompts, and the
next index computes again exactly the work that depends on the prompts that changed, saying so
first."""

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from conftest import CORPUS, run_cli
from mcp_client import IN_PROCESS, mcp_session

TUNED = [
    "prompts/extract_graph.txt",
    "prompts/summarize_descriptions.txt",
    "prompts/community_report_graph.txt",
]


def _copy(built_index: tuple[Path, dict], tmp_path: Path) -> Path:
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    return root


def _update(root: Path) -> tuple[dict, list[str]]:
    """An incremental build in this process: its summary and what it told before spending calls."""
    from graphrag_mcp_server.config.runtime import prepare_models
    from graphrag_mcp_server.handlers.indexing.build import build, index_config

    prepare_models()  # LiteLLM first: its bundled tiktoken encodings (no network here)
    told: list[str] = []
    start = Path.cwd()
    try:
        summary = asyncio.run(build(index_config(root, CORPUS), root, notice=told.append))
    finally:
        os.chdir(start)
    return summary.model_dump(mode="json"), told


@pytest.mark.slow  # an index update of its own
def test_tune_writes_prompts_and_the_next_index_recomputes_what_depends_on_them(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root = _copy(built_index, tmp_path)
    before = {name: (root / name).read_text(encoding="utf-8") for name in TUNED}

    refused = run_cli("tune", root)  # no terminal to ask on, no --yes: refused before any call
    assert refused.code == 1 and "--yes" in refused.stderr and "Traceback" not in refused.stderr
    assert "Generating" not in refused.stderr and "Chunking" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert {name: (root / name).read_text(encoding="utf-8") for name in TUNED} == before

    # no --data-path and no documents in ROOT/input: the folder the served version was built from
    started = time.perf_counter()
    tuned = run_cli("tune", root, "--yes", "--format", "json")
    wall = time.perf_counter() - started
    assert tuned.code == 0, tuned.stderr
    result = tuned.json()
    assert result["changed"] == TUNED and result["written"] and result["llm_calls"] > 5
    assert "Generating entity types" in tuned.stderr  # graphrag's stages, as they run
    assert "Limit out of range" not in tuned.stderr  # no --limit given: nothing to warn of
    assert result["seconds"] > 0.5 * wall, (result["seconds"], wall)  # the whole run
    backup = root / result["backup"]
    assert {
        name: (backup / Path(name).name).read_text(encoding="utf-8") for name in TUNED
    } == before
    extraction = (root / TUNED[0]).read_text(encoding="utf-8")
    real_data = extraction[extraction.rfind("-Real Data-") :]
    assert (
        "entity_types: [person, organization, place]" in real_data
    )  # the extractor's types, most frequent first
    assert '("entity"<|>TOBIAS ARKWRIGHT' in extraction  # examples drawn from the corpus
    report_prompt = (root / TUNED[2]).read_text(encoding="utf-8")
    assert "You are an expert analyst of" in report_prompt and "rating_explanation" in report_prompt

    indexed = run_cli("index", CORPUS, "--index-path", root, "--format", "json")
    assert indexed.code == 0, indexed.stderr
    assert (
        "prompts changed since the last version (extract_graph, summarize_descriptions, "
        "community_report_graph)"
    ) in indexed.stderr
    summary = indexed.json()
    assert (
        summary["computed"]["extraction"] == summary["text_units"]
        and summary["carried_over"]["extraction"] == 0
    )
    assert (
        summary["computed"]["report"] == summary["community_reports"] and summary["llm_calls"] > 0
    )
    assert (
        summary["entities"] == built_index[1]["entities"]
    )  # the tuned prompts still extract the graph

    unchanged, told = _update(root)
    assert (
        unchanged["llm_calls"] == 0 and not told
    )  # the version records the prompts it was built with

    report = root / TUNED[2]
    report.write_text(
        report.read_text(encoding="utf-8") + "\nWrite for a harbour historian.\n", encoding="utf-8"
    )
    reports_only, told = _update(root)
    assert told == [
        "prompts changed since the last version (community_report_graph): this run "
        "computes again the "
        "community reports; the rest is carried over as for any update"
    ]
    assert reports_only["computed"]["extraction"] == 0 and reports_only["computed"]["summary"] == 0
    assert reports_only["computed"]["report"] == reports_only["community_reports"]
    assert reports_only["llm_calls"] == reports_only["community_reports"]


def test_tune_names_the_folder_to_give_when_there_are_no_documents(tmp_path: Path) -> None:
    root = tmp_path / "index"
    assert run_cli("init", "--index-path", root, "--provider", "offline").code == 0
    (root / "input").mkdir(exist_ok=True)
    told = run_cli("tune", root, "--yes")  # an empty input/ and no version to take the folder of
    assert told.code == 1 and "Traceback" not in told.stderr
    assert "no documents to tune from" in told.stderr and "--data-path" in told.stderr
    assert len(told.stderr.strip().splitlines()) == 1, told.stderr


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
async def test_the_tune_prompts_tool_runs_as_a_job(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root = _copy(built_index, tmp_path)
    async with mcp_session(root, IN_PROCESS, data_path=CORPUS) as session:
        for bad in ({"limit": -3}, {"selection_method": "best"}, {"max_tokens": 10}):
            with pytest.raises(MCPError) as refused:  # invalid params, before any job
                await session.call_tool("tune_prompts", {"data_path": str(CORPUS), **bad})
            assert f"tune_prompts: {next(iter(bad))}:" in str(refused.value), refused.value
        result = await session.call_tool(
            "tune_prompts",
            {
                "data_path": str(CORPUS),
                "domain": "Tidal energy",
                "language": "English",
                "selection_method": "top",
                "limit": 3,
                "discover_entity_types": False,
            },
        )
        assert not result.is_error, result.content
        job = result.structured_content
        if (
            job["state"] == "running"
        ):  # past the server's wait: the job goes on; index_status follows it
            while job["state"] == "running":
                await asyncio.sleep(0.5)
                job = (
                    await session.call_tool("index_status", {"job_id": job["job_id"]})
                ).structured_content
        statistics = (await session.call_tool("get_statistics", {})).structured_content
    assert job["state"] == "succeeded" and job["mode"] == "tune", job
    assert job["tuned"]["changed"] == TUNED and job["tuned"]["written"]
    assert "Tidal energy" in (root / TUNED[2]).read_text(
        encoding="utf-8"
    )  # the domain given, not guessed
    assert statistics["costs"]["tune_prompts"]["llm_calls"] == job["tuned"]["llm_calls"] > 0
    assert (
        json.loads(json.dumps(job))["workflows_done"] > 5
    )  # graphrag's stages were reported as progress
