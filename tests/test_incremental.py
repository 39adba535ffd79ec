"""Incremental indexing: after any change the index equals a full rebuild but for how communities
are drawn (kept from the previous version, sound, as modular as a fresh clustering); versions switch
atomically."""

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

from conftest import CORPUS, REPO, cli_env, index_digest, run_cli
from mcp_client import IN_PROCESS, mcp_session

pytestmark = pytest.mark.slow  # every test builds indexes of its own

sys.path.insert(0, str(REPO / "tests" / "benchmarks"))  # the scale benchmark's corpus generator

FILES = [
    "01_founding_of_the_cooperative.txt",
    "04_inspection_report_1994.md",
    "05_the_january_gale_of_1999.txt",
    "08_newspaper_profile_2012.txt",
]


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
    """What an update must share with a full rebuild: documents, text units, entities, relationships
    and their descriptions, and vectors for each (communities may be drawn differently: `_sound`
    checks them)."""
    units = _table(root, "text_units").set_index("id")["text"]
    entities = _table(root, "entities")
    relationships = _table(root, "relationships")
    db = lancedb.connect(root / "output" / "lancedb")
    entity_vectors = db.open_table("entity_description").to_pandas().set_index("id")["vector"]
    return {
        "documents": sorted(
            zip(*(_table(root, "documents")[c] for c in ("title", "text")), strict=True)
        ),
        "text_units": sorted(units),
        "entities": sorted(
            (e.title, e.type, tuple(sorted(units[u] for u in e.text_unit_ids)))
            for e in entities.itertuples()
        ),
        "relationships": sorted(
            (r.source, r.target, tuple(sorted(units[u] for u in r.text_unit_ids)))
            for r in relationships.itertuples()
        ),
        "descriptions": sorted(zip(entities["title"], entities["description"], strict=True))
        + sorted(
            zip(
                relationships["source"],
                relationships["target"],
                relationships["description"],
                strict=True,
            )
        ),
        "text_unit_vectors": sorted(
            (units[row.id], tuple(row.vector))
            for row in db.open_table("text_unit_text").to_pandas().itertuples()
        ),
        "entity_vectors": sorted(
            (e.title, tuple(entity_vectors[e.id])) for e in entities.itertuples()
        ),
    }


def _full_content(root: Path) -> dict[str, object]:
    """`_content` with the communities and their reports: what `index --full` must share with a
    rebuild."""
    entities = _table(root, "entities")
    title_of = entities.set_index("id")["title"]
    communities = _table(root, "communities")
    return {
        **_content(root),
        "communities": sorted(
            (c.level, tuple(sorted(title_of[i] for i in c.entity_ids)))
            for c in communities.itertuples()
        ),
        "reports": sorted(_table(root, "community_reports")["full_content"]),
    }


def _sound(root: Path, gone: set[str] = frozenset()) -> None:
    """Every entity in one community at the top level and in one child of each community split
    below; a report for each community and none naming an entity in `gone`; each vector table
    holding its table's rows."""
    entities, communities = _table(root, "entities"), _table(root, "communities")
    reports = _table(root, "community_reports")
    assert sorted(
        i for ids in communities[communities["level"] == 0]["entity_ids"] for i in ids
    ) == sorted(entities["id"])
    members = {c.community: list(c.entity_ids) for c in communities.itertuples()}
    for community in communities[communities["children"].map(len) > 0].itertuples():
        below = [i for child in community.children for i in members[int(child)]]
        assert sorted(below) == sorted(members[community.community]), community.community
    assert sorted(reports["community"]) == sorted(communities["community"])
    assert not {
        name for name in gone for text in reports["full_content"] if name.lower() in text.lower()
    }
    db = lancedb.connect(root / "output" / "lancedb")
    for vectors, table in (
        ("text_unit_text", "text_units"),
        ("entity_description", "entities"),
        ("community_full_content", "community_reports"),
    ):
        ids = db.open_table(vectors).to_pandas()["id"]
        assert ids.is_unique and set(ids) == set(_table(root, table)["id"]), vectors


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
        _sound(root)
        assert summary["llm_calls"] < full["llm_calls"], (
            name,
            summary["llm_calls"],
            full["llm_calls"],
        )
        return summary

    report = data / "04_inspection_report_1994.md"
    report.write_text(report.read_text().replace("Leonard Quist", "Leopold Quaranta"))
    edited = step("edit", report)
    assert (
        edited["documents_updated"] == 1
        and edited["documents_added"] == edited["documents_deleted"] == 0
    )
    # only the edited document is chunked again (its text units equal the rebuild's, above)
    chunked = (edited["computed"]["chunks"], edited["carried_over"]["chunks"])
    assert chunked == (1, edited["documents"] - 1), edited
    # every community of these 4 documents holds an entity whose description quotes the renamed
    # person, so no report is carried here; the next step (a name added) carries reports
    assert min(edited["carried_over"][step] for step in ("extraction", "summary")) > 0, edited
    rewrite = (
        edited["text_units"] + edited["entities"] + edited["community_reports"]
    )  # every vector table's rows
    assert sum(edited["vectors_written"].values()) < rewrite, (
        edited
    )  # (a changed row: one deleted, one written)
    assert "LEOPOLD QUARANTA" in _titles(root) and "LEONARD QUIST" not in _titles(root)

    reports_before = set(_table(root, "community_reports")["full_content"])
    numbers_before = dict(
        zip(*(_table(root, "entities")[c] for c in ("title", "human_readable_id")), strict=True)
    )
    first = data / _table(root, "documents").sort_values("human_readable_id")["title"].iloc[0]
    first.write_text(
        first.read_text() + "\nOttilie Vance, a visiting painter, sketched the quay that summer.\n"
    )
    renumbered = step(
        "a new name in the first document", first
    )  # a rebuild would shift every later number
    numbers = dict(
        zip(*(_table(root, "entities")[c] for c in ("title", "human_readable_id")), strict=True)
    )
    assert {title: numbers[title] for title in numbers_before} == numbers_before
    assert numbers["OTTILIE VANCE"] > max(numbers_before.values())
    unchanged = len(reports_before & set(_table(root, "community_reports")["full_content"]))
    assert unchanged >= renumbered["carried_over"]["report"] > 0, (
        renumbered["carried_over"],
        unchanged,
    )

    shutil.copy(CORPUS / "10_annual_meeting_minutes_2023.md", data)
    added = step("add", data)
    assert added["documents_added"] == 1 and "NADIA FERROW" in _titles(root)

    damaged = (
        root / "output" / "lancedb" / "text_unit_text.lance"
    )  # its data files lost: the next update rewrites it
    damaged.chmod(0o755)
    shutil.rmtree(damaged / "data")
    (data / "05_the_january_gale_of_1999.txt").rename(data / "05_the_great_gale.txt")
    renamed = step("rename", data)  # no text unit changes: only the damage makes this table written
    assert renamed["vectors_written"]["text_unit_text"] == renamed["text_units"], renamed[
        "vectors_written"
    ]
    assert (
        renamed["documents_renamed"] == 1
        and renamed["documents_added"] == renamed["documents_deleted"] == 0
    )
    assert "05_the_great_gale.txt" in set(_table(root, "documents")["title"])

    (data / "08_newspaper_profile_2012.txt").unlink()
    deleted = step("delete", data)
    assert deleted["documents_deleted"] == 1
    assert "BEATRIX FENN" not in _titles(root) and "EVANDER GAZETTE" not in _titles(root)
    assert not any("Beatrix Fenn" in text for text in _table(root, "text_units")["text"])
    vectors = lancedb.connect(root / "output" / "lancedb").open_table("text_unit_text").to_pandas()
    assert set(vectors["id"]) == set(_table(root, "text_units")["id"])

    answer = run_cli(
        "query", "Who is Beatrix Fenn?", "--index-path", root, "--type", "basic", "--format", "json"
    ).json()
    assert "08_newspaper_profile_2012.txt" not in {
        source["document"] for source in answer["sources"]
    }
    assert "Beatrix Fenn" not in answer["answer"]
    assert len(list((root / "versions").iterdir())) <= 2


def _build(data: Path, root: Path, mode: str = "incremental") -> dict:
    """One index run in this process (graphrag imported once per worker: a recurring corpus needs
    many runs)."""
    from graphrag_mcp_server.handlers.indexing.build import IndexMode, build, index_config

    summary = asyncio.run(build(index_config(root, data, offline=True), root, IndexMode(mode)))
    return summary.model_dump()


def _modularity_share(root: Path) -> float:
    """The top level's modularity over that of a fresh Leiden run on the same graph (graphrag's
    parameters)."""
    import graspologic_native as gn

    relationships = _table(root, "relationships")
    edges: dict[tuple[str, str], float] = {}
    for source, target, weight in zip(
        relationships["source"], relationships["target"], relationships["weight"], strict=True
    ):
        edges[(min(source, target), max(source, target))] = float(weight)
    edge_list = sorted((source, target, weight) for (source, target), weight in edges.items())
    title_of = _table(root, "entities").set_index("id")["title"]
    top = _table(root, "communities").query("level == 0")
    nodes = {node for edge in edges for node in edge}
    partition = {
        title_of[i]: int(c.community)
        for c in top.itertuples()
        for i in c.entity_ids
        if title_of[i] in nodes
    }
    fresh, _ = gn.leiden(
        edge_list,
        seed=0xDEADBEEF,
        resolution=1.0,
        randomness=0.001,
        iterations=1,
        use_modularity=True,
    )
    return gn.modularity(edge_list, partition) / fresh


def test_hub_summaries_follow_their_top_descriptions_as_a_rebuild_does(tmp_path: Path) -> None:
    """With a summary budget small enough that several description lists need more than one call
    (hub_summaries.py), an edit of a hub's document leaves the index equal to a rebuild, and each
    hub whose list changed costs at most one summary call."""
    data, root = _corpus(tmp_path / "data"), tmp_path / "index"
    assert run_cli("init", "--index-path", root, "--provider", "offline").code == 0
    settings = root / "settings.yaml"
    settings.write_text(
        settings.read_text().replace(
            "  max_length: 500\n", "  max_length: 500\n  max_input_tokens: 175\n"
        )
    )
    assert "max_input_tokens: 175" in settings.read_text()  # about 40 tokens of descriptions
    _index(data, root)
    before = _table(root, "entities").set_index("title")
    report = data / "04_inspection_report_1994.md"
    report.write_text(report.read_text() + "\nLeonard Quist met Zora Quillfeather at the pier.\n")
    edited = _index(data, root, "--incremental")
    rebuild = tmp_path / "rebuild"
    shutil.copytree(root, rebuild, ignore=shutil.ignore_patterns("output", "versions", "cache"))
    _index(data, rebuild, "--full")
    assert _content(root) == _content(rebuild)
    after = _table(root, "entities").set_index("title")
    assert "ZORA QUILLFEATHER" in after.index
    hubs = [title for title in before.index if len(after.loc[title, "text_unit_ids"]) > 2]
    assert hubs, "no entity whose descriptions (20 words a unit) overflow 40 tokens"
    assert edited["llm_calls"] < 12, edited  # extraction, a few summaries and reports


@pytest.mark.slow
def test_updates_of_a_recurring_corpus_keep_communities_and_follow_the_change(
    tmp_path: Path,
) -> None:
    """300 documents whose board of 12 recurs throughout: an edit, an added document, two deleted
    ones and an entity renamed everywhere each cost a few model calls, keep >= 90% of the reports,
    and leave an index equal to a rebuild but for its communities, which are sound and as modular as
    a fresh clustering's; `index --full` is a rebuild again."""
    from corpora import BOARD, recurring_corpus, rename

    data, root, rebuild = tmp_path / "data", tmp_path / "index", tmp_path / "rebuild"
    recurring_corpus(data, 300)
    cold = _build(data, root, "full")

    def step(name: str, gone: set[str] = frozenset(), share: float = 0.02) -> dict:
        """Update, check against a rebuild, and bound what it cost: model calls within `share` of
        the cold build's, vector rows written within 10 times that share of all rows, >= 90% of the
        reports kept."""
        previous_vectors = index_digest(root / "output" / "lancedb")
        previous = (root / "output").resolve()
        summary = _build(data, root)
        _build(data, rebuild, "full")
        assert _content(root) == _content(rebuild), name
        _sound(root, gone)
        assert index_digest(previous / "lancedb") == previous_vectors, (
            f"{name}: the previous version's vectors changed"
        )
        assert _modularity_share(root) >= 0.97, name
        assert summary["clustering"]["seeded"], (name, summary["clustering"])
        assert (root / "output" / "clustering.json").is_file(), name  # the next one's reference
        assert summary["llm_calls"] <= share * cold["llm_calls"], (
            name,
            summary["llm_calls"],
            cold["llm_calls"],
        )
        rows = summary["text_units"] + summary["entities"] + summary["community_reports"]
        assert 0 < sum(summary["vectors_written"].values()) <= 10 * share * rows, (
            name,
            summary["vectors_written"],
        )
        return summary

    rename(data, 150, 2, "Ottilie Vance")  # document 150's board sentence names this person
    edited = step("edit")
    assert edited["documents_updated"] == 1 and "OTTILIE VANCE" in _titles(root)

    (data / "doc_9000.txt").write_text(
        "Record 9000\n\nPerpetua Quimby of the Harbour Commission met Lysander Oakhurst at "
        "the pier. "
        f"Lysander Oakhurst wrote to {BOARD[3]} about the harbour dues.\n",
        encoding="utf-8",
    )
    added = step("add")
    assert added["documents_added"] == 1 and {"PERPETUA QUIMBY", "LYSANDER OAKHURST"} <= _titles(
        root
    )
    # the edit made the first fresh run; the add passed against it, moved by the add's bound
    assert edited["clustering"]["fresh_drift"] == 0 < added["clustering"]["fresh_drift"] < 0.01
    for summary in (edited, added):
        kept = summary["clustering"]["kept"] / summary["clustering"]["communities"]
        assert (
            kept >= 0.9 and summary["carried_over"]["report"] >= 0.9 * summary["community_reports"]
        ), summary

    (data / "doc_9000.txt").unlink()
    (data / "doc_0100.txt").unlink()
    deleted = step("delete", gone={"Perpetua Quimby", "Lysander Oakhurst"})
    assert deleted["documents_deleted"] == 2 and not {
        "PERPETUA QUIMBY",
        "LYSANDER OAKHURST",
    } & _titles(root)

    member = BOARD[7]
    for path in data.iterdir():
        path.write_text(
            path.read_text(encoding="utf-8").replace(member, "Horatio Blackthorne"),
            encoding="utf-8",
        )
    renamed = step("rename an entity", gone={member}, share=0.25)  # 25 documents changed
    assert member.upper() not in _titles(root) and "HORATIO BLACKTHORNE" in _titles(root)
    assert renamed["documents_updated"] == 25

    full = _build(data, root, "full")
    assert full["clustering"] is None and _full_content(root) == _full_content(rebuild)


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
            seen.append(
                (stats["documents"], stats["text_units"], stats["entities"], stats["index_version"])
            )
            answer = await session.call_tool("local_search", {"query": "Who is Mirela Voss?"})
            assert not answer.is_error and "Mirela Voss" in answer.structured_content["answer"]
        new = await update
        final = (await session.call_tool("get_statistics", {})).structured_content
    versions = {
        (old["documents"], old["text_units"], old["entities"], old["index_version"]),
        (final["documents"], final["text_units"], final["entities"], final["index_version"]),
    }
    assert final["documents"] == new["documents"] == old["documents"] + 1
    assert seen and set(seen) <= versions


@pytest.mark.e2e  # kill -9
def test_a_run_killed_midway_leaves_the_previous_version_serving(tmp_path: Path) -> None:
    data, root = _corpus(tmp_path / "data"), tmp_path / "index"
    before = _index(data, root)
    previous = (root / "output").resolve()
    previous_files = index_digest(previous)
    shutil.copy(CORPUS / "10_annual_meeting_minutes_2023.md", data)
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graphrag_mcp_server",
            "index",
            str(data),
            "--index-path",
            str(root),
            "--offline",
        ],
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not any(
        (v / "text_units.parquet").exists()
        for v in (root / "versions").iterdir()
        if v != (root / "output").resolve()
    ):
        assert time.monotonic() < deadline and run.poll() is None, (
            "the run never got to write its tables"
        )
        time.sleep(0.05)
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    assert index_digest(previous) == previous_files  # the run wrote only inside its own version

    stats = run_cli("stats", "--index-path", root, "--format", "json")
    assert stats.code == 0 and stats.json()["documents"] == before["documents"]
    answer = run_cli(
        "query",
        "Who is Leonard Quist?",
        "--index-path",
        root,
        "--type",
        "local",
        "--format",
        "json",
    )
    assert answer.code == 0 and "Leonard Quist" in answer.json()["answer"]

    after = _index(data, root)
    assert after["documents"] == before["documents"] + 1 and after["documents_added"] == 1
    assert len(list((root / "versions").iterdir())) <= 2  # the killed run's leftovers are gone


@pytest.mark.e2e  # index --watch and SIGINT
def test_watch_turns_a_burst_of_saves_into_one_run_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    data, root = _corpus(tmp_path / "data", FILES[:2]), tmp_path / "index"
    watcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "graphrag_mcp_server",
            "index",
            str(data),
            "--index-path",
            str(root),
            "--offline",
            "--watch",
            "--format",
            "json",
        ],
        env={**cli_env(), "GRAPHRAG_MCP_WATCH_SETTLE_SECONDS": "1.5", "PYTHONFAULTHANDLER": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert _read_summary(watcher)["documents"] == 2
        time.sleep(1)  # the observer is running
        notes = data / "12_harbour_notes.txt"
        for save in range(100):  # 100 saves in 2 seconds, plus files the watcher must ignore
            notes.write_text(
                f"Draft {save}. Hector Lyle of the Port Evander Harbour Board checked the moorings."
            )
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
            watcher.send_signal(
                signal.SIGABRT
            )  # faulthandler writes every thread's stack to stderr
            _, errors = watcher.communicate(timeout=30)
            pytest.fail(
                f"the watcher did not stop on Ctrl-C within 30 s; its stderr:\n{errors[-8000:]}"
            )
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
    async with mcp_session(
        root, env={"GRAPHRAG_MCP_WATCH_SETTLE_SECONDS": "0.5"}, watch=data
    ) as session:
        assert (await session.call_tool("get_statistics", {})).structured_content["documents"] == 2
        shutil.copy(CORPUS / "08_newspaper_profile_2012.txt", data)
        deadline = time.monotonic() + 90
        while (await session.call_tool("get_statistics", {})).structured_content["documents"] == 2:
            assert time.monotonic() < deadline, "the change was not indexed"
            await asyncio.sleep(0.5)
        answer = (
            await session.call_tool("basic_search", {"query": "Who is Beatrix Fenn?"})
        ).structured_content
        assert "Beatrix Fenn" in answer["answer"]
        while (status := (await session.call_tool("index_status", {})).structured_content)[
            "state"
        ] == "running":
            await asyncio.sleep(
                0.2
            )  # the version is switched in just before the job's process ends
        assert status["state"] == "succeeded" and status["summary"]["documents_added"] == 1
