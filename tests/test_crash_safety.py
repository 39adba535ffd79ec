"""A run killed (SIGKILL) at any named step boundary leaves `output` on a whole version, and the
next run succeeds (issue 38): each boundary reached through the test hook
GRAPHRAG_MCP_TEST_CRASH_AT, not by timing. The takeover of a `graphrag index` project is killed too,
between moving its output/ aside and linking `output`."""

import shutil
import signal
from pathlib import Path

import pytest

from conftest import CORPUS, run_cli
from graphrag_mcp_server.handlers.indexing.versions import CRASH_AT

UPDATE_BOUNDARIES = [
    "documents-read",
    "version-made",
    "workflow:create_base_text_units_kept",
    "workflow:extract_graph_kept",
    "workflow:create_communities_kept",
    "workflow:create_community_reports_kept",
    "workflow:generate_text_embeddings_kept",
    "checked",
    "switch:manifest-written",
    "switch:sealed",
    "switch:linked",
    "switch:switched",
]
"""From reading the documents to the switch: the pipeline's workflows, the whole-version check, and
each step of versions.switch_to."""
TAKEOVER_BOUNDARIES = ["switch:legacy-moved", "switch:linked"]


def _whole(root: Path) -> dict:
    """The served version's statistics, which must load with no gap."""
    stats = run_cli("stats", "--index-path", root, "--format", "json")
    assert stats.code == 0, stats.stderr
    statistics = stats.json()
    assert not [issue for issue in statistics["issues"] if issue["severity"] == "error"], (
        statistics["issues"]
    )
    assert statistics["community_reports"] == statistics["communities"] > 0
    return statistics


def _killed_at(boundary: str, data: Path, root: Path) -> None:
    killed = run_cli("index", data, "--index-path", root, "--offline", env={CRASH_AT: boundary})
    assert killed.code == -signal.SIGKILL, (boundary, killed.code, killed.stderr[-2000:])


@pytest.mark.e2e  # kill -9
def test_an_update_killed_at_every_step_boundary_leaves_a_whole_version(tmp_path: Path) -> None:
    data, root = tmp_path / "data", tmp_path / "index"
    shutil.copytree(CORPUS, data)
    assert run_cli("index", data, "--index-path", root, "--offline").code == 0
    served = {(root / "output").resolve(): _whole(root)["documents"]}
    for number, boundary in enumerate(
        UPDATE_BOUNDARIES
    ):  # each run also recovers from the kill before it
        (data / f"note_{number}.txt").write_text(
            f"Harbour note {number}. Agnes Pryor checked the Kestlewick "
            f"moorings on day {number}.\n",
            encoding="utf-8",
        )
        _killed_at(boundary, data, root)
        now = (root / "output").resolve()
        documents = _whole(root)["documents"]
        if boundary == "switch:switched":  # killed after the switch: the new version is served
            assert now not in served and documents == 11 + number + 1, boundary
        else:
            assert now in served and documents == served[now], boundary
        served[now] = documents
    (data / "last_note.txt").write_text(
        "A last note. Agnes Pryor left Kestlewick.\n", encoding="utf-8"
    )
    finished = run_cli("index", data, "--index-path", root, "--offline", "--format", "json")
    assert finished.code == 0, finished.stderr[-2000:]
    assert _whole(root)["documents"] == 11 + len(UPDATE_BOUNDARIES) + 1
    assert len(list((root / "versions").iterdir())) <= 2, "a killed run's version was left behind"
    assert not list(root.glob(".output.*")), "a killed run's link was left behind"


@pytest.mark.e2e  # kill -9
def test_a_takeover_killed_midway_still_serves_the_graphrag_output(
    graphrag_project: Path, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    shutil.copytree(graphrag_project, root, symlinks=True)
    before = _whole(root)
    for boundary in TAKEOVER_BOUNDARIES:
        _killed_at(boundary, root / "input", root)
        assert not (root / "output").exists(), boundary  # moved aside, not yet linked
        assert _whole(root) == before, boundary  # read where it lies, in versions/legacy
        answer = run_cli(
            "query",
            "Who designed Old Bessie?",
            "--index-path",
            root,
            "--type",
            "local",
            "--context-only",
        )
        assert answer.code == 0 and "Bessie" in answer.stdout, answer.stderr[-2000:]
    finished = run_cli("index", root / "input", "--index-path", root, "--offline")
    assert finished.code == 0, finished.stderr[-2000:]
    assert (root / "output").is_symlink() and (root / "versions" / "legacy").is_dir()
    assert _whole(root)["documents"] == before["documents"]
