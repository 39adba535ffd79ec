"""User mistakes get one clear line and a non-zero exit, never a traceback."""

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, run_cli


def assert_one_line_error(result, code: int, *fragments: str) -> None:
    assert result.code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.mark.parametrize("command", ["query", "stats"])
def test_missing_index_names_path_and_build_command(tmp_path: Path, command: str) -> None:
    args = ["query", "Who?"] if command == "query" else ["stats"]
    result = run_cli(*args, "--index-path", tmp_path / "nowhere")
    assert_one_line_error(result, 1, str(tmp_path / "nowhere"), "graphrag-mcp index")


def test_settings_without_built_tables_is_a_missing_index(tmp_path: Path) -> None:
    assert run_cli("init", "--index-path", tmp_path, "--provider", "offline").code == 0
    result = run_cli("stats", "--index-path", tmp_path)
    assert_one_line_error(result, 1, "no index in", "graphrag-mcp index")


def test_missing_data_path(tmp_path: Path) -> None:
    result = run_cli("index", tmp_path / "missing", "--index-path", tmp_path / "index", "--offline")
    assert_one_line_error(result, 1, "does not exist")


def test_empty_data_path(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "image.png").write_bytes(b"\x89PNG")
    result = run_cli("index", tmp_path / "empty", "--index-path", tmp_path / "index", "--offline")
    assert_one_line_error(result, 1, "no documents in", str(tmp_path / "empty"), ".md, .pdf")
    assert "(^|/)" not in result.stderr  # the types it reads, not a regular expression


def test_help_lists_init_and_index_before_tune() -> None:
    shown = run_cli("--help").stdout
    listed = re.findall(r"^│ (init|index|tune|query) ", shown, re.MULTILINE)  # the commands box
    assert listed == ["init", "index", "tune", "query"], shown


def test_unknown_query_type_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("query", "Who?", "--index-path", tmp_path, "--type", "semantic")
    assert_one_line_error(result, 2, "semantic")


def test_full_and_incremental_together_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("index", CORPUS, "--index-path", tmp_path, "--full", "--incremental")
    assert_one_line_error(result, 2, "--full", "--incremental")


def test_openai_settings_without_key_say_which_variable(tmp_path: Path) -> None:
    assert run_cli("init", "--index-path", tmp_path, "--provider", "openai").code == 0
    result = run_cli("index", CORPUS, "--index-path", tmp_path)
    assert_one_line_error(result, 1, "GRAPHRAG_API_KEY", "--provider offline")


def test_offline_flag_refuses_a_root_configured_for_another_provider(tmp_path: Path) -> None:
    assert run_cli("init", "--index-path", tmp_path, "--provider", "openai").code == 0
    result = run_cli("index", CORPUS, "--index-path", tmp_path, "--offline")
    assert_one_line_error(result, 1, "offline", "init")


def test_help_and_version_do_not_import_graphrag() -> None:
    probe = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from graphrag_mcp_server.cli.main import app\n"
        "runner = CliRunner()\n"
        "assert runner.invoke(app, ['--help']).exit_code == 0\n"
        "assert runner.invoke(app, ['--version']).output.startswith('graphrag-mcp ')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'graphrag', "
        "'graphrag_llm', 'litellm', 'lancedb'}))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert output.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["index", "--bogus"], "No such option: --bogus (see: graphrag-mcp index --help)"),
        (["query"], "Missing argument 'QUERY'"),
        (["serve", "--workers", "0"], "Invalid value for '--workers'"),
        (["export", "--format", "svg"], "'svg' is not one of"),
        (["nosuch"], "No such command 'nosuch'"),
    ],
)
def test_usage_errors_are_one_error_line(args: list[str], fragment: str) -> None:
    result = run_cli(*args)
    assert result.code == 2, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert fragment in result.stderr


def test_version_names_graphrag_and_mcp() -> None:
    from importlib.metadata import version

    result = run_cli("--version")
    assert result.code == 0
    assert result.stdout.strip().endswith(f"(graphrag {version('graphrag')}, mcp {version('mcp')})")


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_a_taken_port_is_one_error_line_naming_it(
    built_index: tuple[Path, dict], transport: str
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(
            "serve",
            "--index-path",
            built_index[0],
            "--transport",
            transport,
            "--port",
            port,
            timeout=60,
        )
    assert_one_line_error(result, 1, f"error: cannot listen on 127.0.0.1 port {port}", "--port")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
