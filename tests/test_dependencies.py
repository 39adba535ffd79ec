"""Every package lib/ imports is declared in pyproject.toml's [project] dependencies (issue 39)."""

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAMESPACES = {"azure"}
"""Namespace packages shared by several distributions: the longest dotted prefix naming an
installed distribution picks it (azure.storage.blob -> azure-storage-blob)."""


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules() -> set[str]:
    """The top-level modules (whole names for NAMESPACES) that lib/ imports, the standard library
    aside."""
    found: set[str] = set()
    for path in (REPO / "lib").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                else []
            )
            for name in names:
                parts = name.split(".")
                found.add(name if parts[0] in NAMESPACES else parts[0])
    return {name for name in found if name.split(".")[0] not in sys.stdlib_module_names} - {
        "graphrag_mcp_server"
    }


def declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        normalised(re.split(r"[\s\[<>=~!;]", requirement, maxsplit=1)[0])
        for requirement in project["dependencies"]
    }


@functools.cache
def distributions_of(module: str) -> frozenset[str]:
    """The installed distributions providing `module`."""
    parts = module.split(".")
    for length in range(
        len(parts), 1, -1
    ):  # a namespace package's module: azure.core.exceptions -> azure-core
        try:
            return frozenset(
                {
                    normalised(
                        importlib.metadata.metadata(normalised(".".join(parts[:length])))["Name"]
                    )
                }
            )
        except importlib.metadata.PackageNotFoundError:
            continue
    return frozenset(normalised(name) for name in _providers().get(module, []))


@functools.cache
def _providers() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def test_every_imported_package_is_declared() -> None:
    modules = imported_modules()
    assert {
        "pandas",
        "graphrag",
        "azure.core.exceptions",
        "yaml",
    } <= modules  # the scan sees imports in functions too
    names = declared()
    undeclared = {
        module: sorted(distributions_of(module))
        for module in sorted(modules)
        if not distributions_of(module) & names
    }
    assert not undeclared, f"imported by lib/ but not in [project] dependencies: {undeclared}"


def test_declared_floors_are_installed() -> None:
    """Each declared floor is met by the environment the suite runs in (a floor above what was
    tested fails)."""
    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for requirement in map(Requirement, project["dependencies"]):
        version = importlib.metadata.version(requirement.name)
        assert requirement.specifier.contains(version, prereleases=True), (requirement, version)
