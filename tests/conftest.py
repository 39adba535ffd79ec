"""Shared fixtures: the real `graphrag-mcp` CLI, and one offline index of fixtures/corpus per test
run."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from filelock import FileLock

if TYPE_CHECKING:
    from azurite import Azurite

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
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GRAPHRAG_", "OPENAI_", "AZURE_"))
    }
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return env


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    timeout: float = 900,
    env: dict[str, str] | None = None,
) -> CliResult:
    """Run the installed CLI in a subprocess, as a user would (with `env` added to a keyless
    environment)."""
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


def index_digest(root: Path) -> str:
    """A digest of every file of the index (logs and the LLM cache aside) and of where `output`
    points."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if relative.parts[0] in ("logs", "cache", ".holds") or path.name == ".index.lock":
            continue
        digest.update(str(relative).encode())
        if path.is_symlink():
            digest.update(str(path.readlink()).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def built_once(
    tmp_path_factory: pytest.TempPathFactory,
    worker_id: str,
    name: str,
    build: Callable[[Path], Any],
) -> tuple[Path, Any]:
    """`build(folder)` run once per test run, whichever xdist worker asks first (the others wait for
    it, then share its folder and its JSON result): the folder to treat as read-only and the
    result."""
    shared = tmp_path_factory.getbasetemp()
    shared = (
        shared if worker_id == "master" else shared.parent
    )  # the parent: the same folder for every worker
    folder, result = shared / name, shared / f"{name}.json"
    with FileLock(shared / f"{name}.lock"):
        if (
            not result.exists()
        ):  # not built, or a build that failed (its error is that worker's to report)
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            result.write_text(json.dumps(build(folder)), encoding="utf-8")
    return folder, json.loads(result.read_text(encoding="utf-8"))


def _build_fixtures_index(root: Path) -> dict:
    """The fixtures index, built in this process (the worker imports graphrag for its in-process
    sessions anyway; the CLI's own build is tested apart): its summary as `index --format json`
    prints it."""
    import asyncio

    from graphrag_mcp_server.handlers.indexing.build import IndexMode, build, index_config

    start = Path.cwd()
    try:
        summary = asyncio.run(build(index_config(root, CORPUS, offline=True), root, IndexMode.FULL))
    finally:
        os.chdir(start)  # graphrag's config loader changes into the index root
    return summary.model_dump(mode="json")


@pytest.fixture(scope="session")
def built_index(
    tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> Iterator[tuple[Path, dict]]:
    """An index of fixtures/corpus built offline, with its JSON summary: built once per
    test run and shared read-only (a test that changes an index copies it first: copied_index).
    Checked unchanged when the worker ends."""
    root, summary = built_once(tmp_path_factory, worker_id, "fixtures_index", _build_fixtures_index)
    before = index_digest(root)
    yield root, summary
    assert index_digest(root) == before, "a test changed the shared fixtures index (copy it first)"


@pytest.fixture
def copied_index(built_index: tuple[Path, dict], tmp_path: Path) -> Path:
    """A private copy of the fixtures index, for a test that changes it (links copied as links)."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    return root


LONE_NOTE = (
    "12_weather_note.txt",
    "A Note on Weather\n\nThe winter at Kestlewick was long. Snow covered the roads for weeks.\n",
)
"""A document naming one entity that nothing relates to: graphrag's pipeline gives it no
community."""


GRAPHRAG_WITH_OFFLINE_MODEL = """
import sys
import graphrag_cache.cache_key
from graphrag.cli.main import app
from graphrag_mcp_server.providers import register_providers

register_providers()
try:
    app(args=sys.argv[1:], prog_name="graphrag")
finally:
    print("cache keys hashed by", graphrag_cache.cache_key.hash_data.__module__, file=sys.stderr)
"""
"""graphrag's own CLI with only the offline model registered: none of this project's replacements
(its cache-key hasher above all), so the project's LLM cache is keyed as graphrag keys it."""


def _build_graphrag_project(root: Path) -> None:
    assert run_cli("init", "--provider", "offline", "--index-path", root).code == 0
    shutil.copytree(CORPUS, root / "input", dirs_exist_ok=True)
    (root / "input" / LONE_NOTE[0]).write_text(LONE_NOTE[1], encoding="utf-8")
    command = [sys.executable, "-c", GRAPHRAG_WITH_OFFLINE_MODEL, "index", "--root", str(root)]
    built = subprocess.run(command, capture_output=True, text=True, env=cli_env(), timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    # graphrag's own hasher, not config/cache_keys.py's: the keys our index computes must match them
    assert "cache keys hashed by graphrag_common.hasher" in built.stderr
    assert (root / "output").is_dir() and not (root / "output").is_symlink()


@pytest.fixture(scope="session")
def graphrag_project(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A project as `graphrag init` + `graphrag index` leave it: input/, output/ as a folder,
    cache/, logs/ (built by graphrag's own CLI and cache-key hasher, with only the offline model
    registered) from the fixtures corpus and LONE_NOTE; built once per run, read-only (tests copy
    it)."""
    return built_once(tmp_path_factory, worker_id, "graphrag_project", _build_graphrag_project)[0]


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> "Iterator[Azurite]":
    """Azurite's blob service, started when a test of this worker first asks (tests use containers
    of their own)."""
    from azurite import running_azurite

    with running_azurite(tmp_path_factory.mktemp("azurite")) as emulator:
        yield emulator


@pytest.fixture(autouse=True)
def _working_directory() -> Iterator[None]:
    """Each test starts where pytest started: graphrag's config loader changes the working directory
    of a process that loads an index (an in-process server, an in-process search)."""
    start = Path.cwd()
    yield
    os.chdir(start)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `quick` every test that is neither `slow` (an index build of its own, or 8 s and more)
    nor `e2e` (server processes, workers, a browser, kill -9): `pytest -m quick` is the edit
    loop, the whole suite runs in CI."""
    for item in items:
        if item.get_closest_marker("slow") is None and item.get_closest_marker("e2e") is None:
            item.add_marker(pytest.mark.quick)
