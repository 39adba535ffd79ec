"""Projects built by GraphRAG's own CLI: served and queried untouched, indexed with their cache
reused; and graphrag's CLI reading this project's indexes through `graphrag-mcp graphrag`."""

import ctypes
import hashlib
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import CORPUS, cli_env, run_cli
from mcp_client import IN_PROCESS, mcp_session

pytestmark = pytest.mark.slow  # one `graphrag index` build


def _hashes(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


async def test_a_graphrag_project_is_served_queried_and_exported_without_a_change(
    graphrag_project: Path, corpus_titles: set[str], tmp_path: Path
) -> None:
    root = (
        tmp_path / "project"
    )  # a copy: other tests copy the shared project while this one serves it
    shutil.copytree(graphrag_project, root, symlinks=True)
    before = _hashes(root)
    stats = run_cli("stats", "--index-path", root, "--format", "json")
    assert stats.code == 0, stats.stderr
    assert stats.json()["documents"] == len(corpus_titles) + 1
    for extra in ([], ["--context-only"]):
        answered = run_cli(
            "query", "Who designed Old Bessie?", "--index-path", root, "--type", "local", *extra
        )
        assert answered.code == 0 and "Sources:" in answered.stdout, answered.stderr
    assert run_cli("export", "--index-path", root, "--output", tmp_path / "graph.graphml").code == 0
    async with mcp_session(root, IN_PROCESS) as session:
        for tool in ("local_search", "global_search", "basic_search"):
            result = await session.call_tool(tool, {"query": "Who designed Old Bessie?"})
            assert not result.is_error, result.content
        assert (await session.read_resource("graphrag://entities")).contents

    after = _hashes(root)
    assert {path: after.get(path) for path in before} == before, (
        "every file of the project is unchanged"
    )
    assert all(path.startswith("logs/") for path in set(after) - set(before)), (
        "only graphrag's query log is new"
    )


def test_graphrags_own_cli_queries_an_offline_index(built_index: tuple[Path, dict]) -> None:
    root, _ = built_index
    result = run_cli(
        "graphrag", "query", "Who designed Old Bessie?", "--root", root, "--method", "local"
    )
    assert result.code == 0, result.stderr[-3000:]
    assert "not registered" not in result.stdout + result.stderr
    assert "Tobias Arkwright" in result.stdout


def test_index_on_a_graphrag_project_says_what_it_changes_and_reuses_its_cache(
    graphrag_project: Path, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    shutil.copytree(graphrag_project, root, symlinks=True)
    tables = {path.name: path.read_bytes() for path in (root / "output").glob("*.parquet")}
    result = run_cli("index", root / "input", "--index-path", root, "--format", "json")
    assert result.code == 0, result.stderr
    assert f"{root / 'output'} is a folder written by `graphrag index`" in result.stderr
    summary = result.json()
    assert summary["documents_added"] == len(list(CORPUS.iterdir())) + 1
    assert summary["llm_calls"] == 0, "every extraction, summary and report comes from its cache"
    assert (root / "output").is_symlink()
    assert {
        path.name: path.read_bytes() for path in (root / "versions" / "legacy").glob("*.parquet")
    } == tables
    for table in ("entities", "relationships"):  # our pipeline's graph is graphrag's
        pd.testing.assert_frame_equal(
            _content(root / "output", table), _content(root / "versions" / "legacy", table)
        )
    legacy, reports = (
        _content(root / "versions" / "legacy", "community_reports"),
        _content(root / "output", "community_reports"),
    )
    pd.testing.assert_frame_equal(
        reports.iloc[: len(legacy)], legacy
    )  # and its reports, then lone entities':
    added = reports.iloc[len(legacy) :]
    assert len(added) >= 1 and set(added["size"]) == {1} and set(added["rank"]) == {1.0}
    lone = added.set_index("title").loc["KESTLEWICK"]
    assert lone["summary"] == "The winter at Kestlewick was long."
    entity = (
        pd.read_parquet(root / "output" / "entities.parquet").set_index("title").loc["KESTLEWICK"]
    )
    cited = f"The winter at Kestlewick was long. [Data: Entities ({entity['human_readable_id']})]"
    assert lone["findings"] == [{"summary": "KESTLEWICK", "explanation": cited}]


def _content(output: Path, table: str) -> pd.DataFrame:
    """A table as written, less its random ids and run dates, lists as lists.

    `period` is the day of the run that wrote a row: two runs either side of midnight differ.
    """
    frame = pd.read_parquet(output / f"{table}.parquet").drop(
        columns=["id", "period"], errors="ignore"
    )
    return frame.map(lambda value: value.tolist() if isinstance(value, np.ndarray) else value)


def test_index_on_a_terminal_asks_before_taking_over_a_graphrag_output(
    graphrag_project: Path, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    shutil.copytree(graphrag_project, root, symlinks=True)
    terminal, user_side = pty.openpty()
    os.write(terminal, b"n\n")
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrag_mcp_server",
            "index",
            str(root / "input"),
            "--index-path",
            str(root),
        ],
        stdin=user_side,
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )
    os.close(terminal), os.close(user_side)
    assert (
        "is a folder written by `graphrag index`" in process.stderr and "Go on?" in process.stderr
    )
    assert process.returncode == 1
    assert (
        (root / "output").is_dir()
        and not (root / "output").is_symlink()
        and not (root / "versions").exists()
    )


PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER = (
    24,
    1,
    2,
    3,
)  # linux/prctl.h, capability.h


def drop_file_permission_override() -> None:
    """In a child about to exec: as root (as in CI), leave out the capabilities that let root ignore
    file modes, so the program runs as an owner whose files' modes apply (as
    `setpriv --bounding-set=-...`)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER):
            if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


GRAPHRAG_INDEX = """import sys
from graphrag_mcp_server.config.runtime import prepare_models
from graphrag_mcp_server.providers import register_providers
prepare_models(); register_providers()
from graphrag.cli.main import app
app(args=["index", "--root", sys.argv[1]])
"""


def test_graphrag_index_cannot_write_into_the_live_version(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    live = (root / "output").resolve()
    assert all(not path.stat().st_mode & 0o222 for path in (live, *live.rglob("*"))), (
        "the live version is read-only"
    )
    before = _hashes(live)

    refused = run_cli("graphrag", "index", "--root", root)
    assert refused.code == 1 and refused.stderr.startswith(
        f"error: {root} is a graphrag-mcp index root"
    )
    assert "graphrag-mcp index DATA_PATH --index-path" in refused.stderr

    # graphrag's own `graphrag index` (offline model registered, no graphrag-mcp check) as the owner
    # of the files
    graphrag = subprocess.run(
        [sys.executable, "-c", GRAPHRAG_INDEX, str(root)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=300,
        preexec_fn=drop_file_permission_override,
    )
    assert "Permission denied" in graphrag.stdout + graphrag.stderr, (
        graphrag.stdout[-2000:] + graphrag.stderr[-2000:]
    )
    assert _hashes(live) == before and (root / "output").resolve() == live
    context = run_cli(
        "query",
        "Who designed Old Bessie?",
        "--type",
        "local",
        "--context-only",
        "--index-path",
        root,
    )
    assert context.code == 0 and "Tobias Arkwright" in context.stdout
