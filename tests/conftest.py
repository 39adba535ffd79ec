"""Shared fixtures: the real `graphrag-mcp` CLI, and one offline index of fixtures/corpus per session."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "fixtures" / "corpus"


@dataclass
class CliResult:
    """Exit code and output of one `graphrag-mcp` run."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        """stdout parsed as the one JSON object `--format json` promises."""
        return json.loads(self.stdout)


def cli_env() -> dict[str, str]:
    """The environment of a user with no API key."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("GRAPHRAG_", "OPENAI_", "AZURE_"))}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def run_cli(*args: str | Path, cwd: Path | None = None, timeout: float = 900,
            env: dict[str, str] | None = None) -> CliResult:
    """Run the installed CLI in a subprocess, as a user would (with `env` added to a keyless environment)."""
    process = subprocess.run(
        [sys.executable, "-m", "graphrag_mcp_server", *map(str, args)],
        capture_output=True,
        text=True,
        env={**cli_env(), **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )
    return CliResult(process.returncode, process.stdout, process.stderr)


@pytest.fixture(scope="session")
def corpus_titles() -> set[str]:
    """File names of the fixture corpus (graphrag's text reader uses them as document titles)."""
    return {path.name for path in CORPUS.iterdir()}


@pytest.fixture(scope="session")
def built_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """An index of fixtures/corpus built offline by the CLI, with the JSON summary it printed."""
    root = tmp_path_factory.mktemp("index")
    result = run_cli("index", CORPUS, "--index-path", root, "--offline", "--format", "json")
    assert result.code == 0, result.stderr
    return root, result.json()
