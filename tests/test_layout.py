"""The package's layers and sizes hold: import-linter's contracts in pyproject.toml, files a reader
can take in."""

import subprocess
import sys

from conftest import REPO

MAX_LINES = 500


def test_import_contracts_are_kept() -> None:
    """No import cycle, no package importing one above it (the contracts in pyproject.toml)."""
    checked = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; "
            "sys.exit(lint_imports_command(['--no-cache']))",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 broken" in checked.stdout and " kept" in checked.stdout, checked.stdout


def test_no_module_is_longer_than_a_reader_takes_in() -> None:
    lengths = {
        path.relative_to(REPO): len(path.read_text(encoding="utf-8").splitlines())
        for path in (REPO / "lib").rglob("*.py")
    }
    assert lengths and not {path: lines for path, lines in lengths.items() if lines > MAX_LINES}
