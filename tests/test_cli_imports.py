"""Commands import only what they use: no model library nor LanceDB for stats, no MCP SDK for a
context-only query."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, cli_env

PROBE = """
import json, sys
from typer.testing import CliRunner
from graphrag_mcp_server.cli.main import app
result = CliRunner().invoke(app, sys.argv[1:])
assert result.exit_code == 0, result.output
print(json.dumps(sorted(sys.modules)))
"""


def imported_by(*args: str | Path) -> set[str]:
    """The modules loaded by `graphrag-mcp ARGS`, run in a fresh process."""
    process = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=300,
    )
    assert process.returncode == 0, process.stderr
    return set(json.loads(process.stdout.splitlines()[-1]))


def test_stats_imports_no_model_library_nor_the_mcp_sdk(built_index: tuple[Path, dict]) -> None:
    loaded = imported_by("stats", "--index-path", built_index[0])
    assert loaded.isdisjoint({"litellm", "openai", "graphrag_llm.types", "mcp", "graphrag.api"})
    assert "lancedb" not in loaded, (
        "vector tables as recorded at build time (vectors.json) are counted without LanceDB"
    )


def test_stats_opens_lancedb_when_a_vector_table_changed_since_the_build(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    manifests = (root / "output" / "lancedb" / "entity_description.lance" / "_versions").glob(
        "*.manifest"
    )
    os.utime(next(manifests))  # as when a table is rewritten in place
    assert "lancedb" in imported_by("stats", "--index-path", root)


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_context_only_query_imports_neither_the_mcp_sdk_nor_graphrag_api(
    built_index: tuple[Path, dict],
) -> None:
    loaded = imported_by(
        "query",
        "Who founded the cooperative?",
        "--index-path",
        built_index[0],
        "--type",
        "local",
        "--context-only",
    )
    assert loaded.isdisjoint({"mcp", "graphrag.api"})


def test_an_index_run_with_no_change_imports_no_model_library_nor_graphrags_pipeline(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    versions = sorted((root / "versions").iterdir())
    loaded = imported_by("index", CORPUS, "--index-path", root, "--offline")
    assert loaded.isdisjoint({"litellm", "openai", "graphrag_llm.types", "graphrag.api", "lancedb"})
    assert sorted((root / "versions").iterdir()) == versions, (
        "nothing changed, so no version was written"
    )
