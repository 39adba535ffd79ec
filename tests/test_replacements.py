"""config/replacements.py: the one list of graphrag and MCP SDK attributes replaced or read
although not public, each checked against the installed packages."""

import ast
import re
from importlib.metadata import version
from pathlib import Path

import pytest

from graphrag_mcp_server.config import replacements
from graphrag_mcp_server.errors import ConfigError

LIB = Path(__file__).resolve().parents[1] / "lib" / "graphrag_mcp_server"
FUNCTIONS = {"replace", "replace_on", "private"}


def _text(node: ast.expr) -> str | None:
    """A string argument's text (an f-string's placeholder read as graphrag.index.operations)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(part.value) if isinstance(part, ast.Constant) else "graphrag.index.operations"
            for part in node.values
        )
    return None


def named_at_call_sites() -> set[str]:
    """The targets that lib/ hands replace, replace_on and private."""
    found = set()
    for path in LIB.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in FUNCTIONS
            ):
                found.update(text for arg in node.args if (text := _text(arg)) is not None)
    return found


def test_every_listed_target_is_the_installed_one() -> None:
    replacements.check_installed.__wrapped__("graphrag")
    replacements.check_installed.__wrapped__("mcp")
    for entry in (*replacements.REPLACED, *replacements.PRIVATE):
        assert entry.reason and entry.package in replacements.SUPPORTED


def test_the_list_is_what_the_code_replaces_and_reads() -> None:
    listed = {entry.target for entry in (*replacements.REPLACED, *replacements.PRIVATE)}
    assert named_at_call_sites() == listed - {
        "graphrag_storage.tables.parquet_table._apply_transformer"  # imported by record_tables.py
    }


def test_nothing_else_assigns_a_listed_attribute() -> None:
    names = {entry.target.rsplit(".", 1)[1] for entry in replacements.REPLACED}
    assigning = re.compile(r"^\s*[\w.]+\.(" + "|".join(names) + r")\s*=", re.M)
    for path in LIB.rglob("*.py"):
        if path.name != "replacements.py":
            assert not assigning.search(path.read_text(encoding="utf-8")), path


def test_a_moved_target_fails_with_one_line_naming_the_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import graphrag_cache.cache_key

    monkeypatch.setattr(replacements, "_originals", {})
    monkeypatch.setattr(graphrag_cache.cache_key, "hash_data", lambda value: str(value))
    with pytest.raises(ConfigError) as failure:
        replacements.check_installed.__wrapped__("graphrag")
    message = str(failure.value)
    assert "\n" not in message
    assert message.startswith(f"graphrag {version('graphrag')} is installed")
    assert "graphrag_cache.cache_key.hash_data is" in message and "graphrag>=3.3.0,<3.4" in message


def test_a_missing_private_attribute_fails_with_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^mcp [\d.]+ is installed.*_connection is gone"):
        replacements.private(object(), "mcp.server.session.ServerSession._connection")
