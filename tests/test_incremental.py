"""Incremental indexing: after any change the index equals a full rebuild; versions switch atomically."""

import asyncio
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import lancedb
import pandas as pd
import pytest

from conftest import CORPUS, REPO, cli_env, run_cli
from mcp_client import IN_PROCESS, mcp_session

pytestmark = pytest.mark.slow  # every test builds indexes of its own

sys.path.insert(0, str(REPO / "tests" / "benchmarks"))  # the scale benchmark's corpus generator

FILES = ["01_founding_of_the_cooperative.txt", "04_inspection_report_1994.md", "05_the_january_gale_of_1999.txt",
         "08_newspaper_profile_2012.txt"]


def _corpus(folder: Path, names: list[str] = FILES) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy(CORPUS / name, folder / name)
    return folder


def _index(data: Path, root: Path, *flags: str) -> dict:
    result = run_cli("index", data, "--index-path", root, "--offline", "--format", "json", *flags)
    assert result.code == 0, result.stderr
    return result.json()


def _table(root: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(root / "output" / f"{name}.parquet")


def _content(root: Path) -> dict[str, object]:
    """What a full rebuild must reproduce: documents, text units, graph, communities, vectors."""
    units = _table(root, "text_units").set_index("id")["text"]
    entities = _table(root, "entities")
    relationships = _table(root, "relationships")
    communities = _table(root, "communities")
    title_of = entities.set_index("id")["title"]
    db = lancedb.connect(root / "output" / "lancedb")
    return {
        "documents": sorted(zip(*(_table(root, "documents")[c] for c in ("title", "text")), strict=True)),
        "text_units": sorted(units),
        "entities": sorted(
            (e.title, e.type, tuple(sorted(units[u] for u in e.text_unit_ids))) for e in entities.itertuples()
        ),
        "relationships": sorted(
            (r.source, r.target, tuple(sorted(units[u] for u in r.text_unit_ids))) for r in relationships.itertuples()
        ),
        "communities": sorted((c.level, tuple(sorted(title_of[i] for i in c.entity_ids))) for c in communities.itertuples()),
        "descriptions": sorted(zip(entities["title"], entities["description"], strict=True))
        + sorted(zip(relationships["source"], relationships["target"], relationships["description"], strict=True)),
        "reports": sorted(_table(root, "community_reports")["full_content"]),
        "vectors": sorted(db.open_table("text_unit_text").to_pandas()["id"]) == sorted(units.index)
        and db.open_table("entity_description").count_rows() == len(entities),
    }


def _titles(root: Path) -> set[str]:
    return set(_table(root, "entities")["title"])


def test_every_change_leaves_the_index_equal_to_a_full_rebuild(tmp_path: Path) -> None:
    data, root = _corpus(tmp_path / "data"), tmp_path / "index"
    _index(data, root)
    assert "LEONARD QUIST" in _titles(root) and "BEATRIX FENN" in _titles(root)

    def step(name: str, change: object) -> dict:
        summary = _index(data, root, "--incremental")
        rebuild = tmp_path / f"rebuild_{name}"
        full = _index(data, rebuild, "--full")
        assert _content(root) == _content(rebuild), name
        assert summary["llm_calls"] < full["llm_calls"], (name, summary["llm_calls"], full["llm_calls"])
        return summary

    report = data / "04_inspection_report_1994.md"
    report.write_text(report.read_text().replace("Leonard Quist", "Leopold Quaranta"))
    edited = step("edit", report)
    assert edited["documents_updated"] == 1 and edited["documents_added"] == edited["documents_deleted"] == 0
    assert min(edited["carried_over"].values()) > 0, edited["carried_over"]
    assert "LEOPOLD QUARANTA" in _titles(root) and "LEONARD QUIST" not in _titles(root)

    reports_before = set(_table(root, "community_reports")["full_content"])
    first = data / _table(root, "documents").sort_values("human_readable_id")["title"].iloc[0]
    first.write_text(first.read_text() + "\nOttilie Vance, a visiting painter, sketched the quay that summer.\n")
    renumbered = step("a new name in the first document", first)  # every later entity's number shifts by one
    unchanged = len(reports_before & set(_table(root, "community_reports")["full_content"]))
    assert renumbered["carried_over"]["report"] > unchanged, (renumbered["carried_over"], unchanged)

    shutil.copy(CORPUS / "10_annual_meeting_minutes_2023.md", data)
    added = step("add", data)
    assert added["documents_added"] == 1 and "NADIA FERROW" in _titles(root)

    (data / "05_the_january_gale_of_1999.txt").rename(data / "05_the_great_gale.txt")
    renamed = step("rename", data)
    assert renamed["documents_renamed"] == 1 and renamed["documents_added"] == renamed["documents_deleted"] == 0
    assert "05_the_great_gale.txt" in set(_table(root, "documents")["title"])

    (data / "08_newspaper_profile_2012.txt").unlink()
    deleted = step("delete", data)
    assert deleted["documents_deleted"] == 1
    assert "BEATRIX FENN" not in _titles(root) and "EVANDER GAZETTE" not in _titles(root)
    assert not any("Beatrix Fenn" in text for text in _table(root, "text_units")["text"])
    vectors = lancedb.connect(root / "output" / "lancedb").open_table("text_unit_text").to_pandas()
    assert set(vectors["id"]) == set(_table(root, "text_units")["id"])

    answer = run_cli("query", "Who is Beatrix Fenn?", "--index-path", root, "--type", "basic", "--format", "json").json()
    assert "08_newspaper_profile_2012.txt" not in {source["document"] for source in answer["sources"]}
    assert "Beatrix Fenn" not in answer["answer"]
    assert len(list((root / "versions").iterdir())) <= 2


@pytest.mark.slow
def test_an_edit_in_a_larger_corpus_leaves_the_index_equal_to_a_full_rebuild(tmp_path: Path) -> None:
    """The scale benchmark's generated corpus (one chain of people over 120 documents, ~40 communities):
    a renamed person shifts the numbers of every later record and Leiden moves some unrelated ones
    between communities; the update still equals a rebuild, carrying most reports over."""
    from bench_scale import generate_corpus, rename

    data, root = tmp_path / "data", tmp_path / "index"
    generate_corpus(data, 120)
    cold = _index(data, root)
    rename(data, 30, 1, "Ottilie Vance")
    edited = _index(data, root, "--incremental")
    _index(data, tmp_path / "rebuild", "--full")
    assert _content(root) == _content(tmp_path / "rebuild")
    assert "OTTILIE VANCE" in _titles(root)
    assert edited["carried_over"]["report"] > cold["community_reports"] / 2, edited["carried_over"]
    assert edited["llm_calls"] < cold["llm_calls"] / 5, (edited["llm_calls"], cold["llm_calls"])


async def test_queries_during_an_update_see_one_version_or_the_other(tmp_path: Path) -> None:
    data, root = _corpus(tmp_path / "data"), tmp_path / "index"
    _index(data, root)
    async with mcp_session(root, IN_PROCESS) as session:
        old = (await session.call_tool("get_statistics", {})).structured_content
        shutil.copy(CORPUS / "10_annual_meeting_minutes_2023.md", data)
        update = asyncio.create_task(asyncio.to_thread(_index, data, root, "--incremental"))
        seen = []
        while not update.done():
            stats = (await session.call_tool("get_statistics", {})).structured_content
            seen.append((stats["documents"], stats["text_units"], stats["entities"], stats["index_version"]))
            answer = await session.call_tool("local_search", {"query": "Who is Mirela Voss?"})
            assert not answer.is_error and "Mirela Voss" in answer.structured_content["answer"]
        new = await update
        final = (await session.call_tool("get_statistics", {})).structured_content
    versions = {(old["documents"], old["text_units"], old["entities"], old["index_version"]),
                (final["documents"], final["text_units"], final["entities"], final["index_version"])}
    assert final["documents"] == new["documents"] == old["documents"] + 1
    assert seen and set(seen) <= versions


@pytest.mark.e2e  # kill -9
def test_a_run_killed_midway_leaves_the_previous_version_serving(tmp_path: Path) -> None:
    data, root = _corpus(tmp_path / "data"), tmp_path / "index"
    before = _index(data, root)
    shutil.copy(CORPUS / "10_annual_meeting_minutes_2023.md", data)
    run = subprocess.Popen(
        [sys.executable, "-m", "graphrag_mcp_server", "index", str(data), "--index-path", str(root), "--offline"],
        env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not any((v / "text_units.parquet").exists() for v in (root / "versions").iterdir() if v != (root / "output").resolve()):
        assert time.monotonic() < deadline and run.poll() is None, "the run never got to write its tables"
        time.sleep(0.05)
    os.kill(run.pid, signal.SIGKILL)
    run.wait()

    stats = run_cli("stats", "--index-path", root, "--format", "json")
    assert stats.code == 0 and stats.json()["documents"] == before["documents"]
    answer = run_cli("query", "Who is Leonard Quist?", "--index-path", root, "--type", "local", "--format", "json")
    assert answer.code == 0 and "Leonard Quist" in answer.json()["answer"]

    after = _index(data, root)
    assert after["documents"] == before["documents"] + 1 and after["documents_added"] == 1
    assert len(list((root / "versions").iterdir())) <= 2  # the killed run's leftovers are gone


@pytest.mark.e2e  # index --watch and SIGINT
def test_watch_turns_a_burst_of_saves_into_one_run_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    data, root = _corpus(tmp_path / "data", FILES[:2]), tmp_path / "index"
    watcher = subprocess.Popen(
        [sys.executable, "-m", "graphrag_mcp_server", "index", str(data), "--index-path", str(root), "--offline",
         "--watch", "--format", "json"],
        env={**cli_env(), "GRAPHRAG_MCP_WATCH_SETTLE_SECONDS": "1.5", "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert _read_summary(watcher)["documents"] == 2
        time.sleep(1)  # the observer is running
        notes = data / "12_harbour_notes.txt"
        for save in range(100):  # 100 saves in 2 seconds, plus files the watcher must ignore
            notes.write_text(f"Draft {save}. Hector Lyle of the Port Evander Harbour Board checked the moorings.")
            time.sleep(0.02)
        (data / ".hidden.txt").write_text("Secret Person wrote this.")
        (data / "notes.txt.swp").write_text("Swap File")
        summary = _read_summary(watcher)
        assert summary["documents"] == 3 and summary["documents_added"] == 1
        assert not _has_output(watcher, timeout=5), "a second run followed one burst"
        assert "HECTOR LYLE" in _titles(root) and "SECRET PERSON" not in _titles(root)
    finally:
        watcher.send_signal(signal.SIGINT)
        try:
            watcher.wait(timeout=30)
        except subprocess.TimeoutExpired:
            watcher.send_signal(signal.SIGABRT)  # faulthandler writes every thread's stack to stderr
            _, errors = watcher.communicate(timeout=30)
            pytest.fail(f"the watcher did not stop on Ctrl-C within 30 s; its stderr:\n{errors[-8000:]}")
    assert watcher.returncode == 0
    assert "Stopped watching" in watcher.stderr.read()


def _has_output(process: subprocess.Popen, timeout: float) -> bool:
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    return bool(selector.select(timeout))


def _read_summary(process: subprocess.Popen, timeout: float = 120) -> dict:
    assert _has_output(process, timeout), "no index run reported in time"
    return json.loads(process.stdout.readline())


@pytest.mark.e2e  # serve --watch over stdio
async def test_serve_watch_picks_up_a_change_while_serving(tmp_path: Path) -> None:
    data, root = _corpus(tmp_path / "data", FILES[:2]), tmp_path / "index"
    _index(data, root)
    async with mcp_session(root, env={"GRAPHRAG_MCP_WATCH_SETTLE_SECONDS": "0.5"}, watch=data) as session:
        assert (await session.call_tool("get_statistics", {})).structured_content["documents"] == 2
        shutil.copy(CORPUS / "08_newspaper_profile_2012.txt", data)
        deadline = time.monotonic() + 90
        while (await session.call_tool("get_statistics", {})).structured_content["documents"] == 2:
            assert time.monotonic() < deadline, "the change was not indexed"
            await asyncio.sleep(0.5)
        answer = (await session.call_tool("basic_search", {"query": "Who is Beatrix Fenn?"})).structured_content
        assert "Beatrix Fenn" in answer["answer"]
        while (status := (await session.call_tool("index_status", {})).structured_content)["state"] == "running":
            await asyncio.sleep(0.2)  # the version is switched in just before the job's process ends
        assert status["state"] == "succeeded" and status["summary"]["documents_added"] == 1
