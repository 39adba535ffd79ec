"""Every graphrag and MCP SDK attribute this project replaces or reads although it is not public,
and why.

graphrag's own way to change a pipeline step is a workflow named in the pipeline
(handlers/indexing/kept.py); what cannot be done that way is listed here, and done only through
`replace` and `private`. Each entry names the original this project was written against (its
module and qualified name in graphrag 3.3 / mcp 2.3): `check_installed` verifies every entry of a
package before its first use, so an upgrade that moves or renames one fails at start-up with one
line naming the installed version, instead of a replacement that no longer takes effect (a carry-
over quietly off, every update costing a rebuild)."""

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import version
from typing import Any

from graphrag_mcp_server.errors import ConfigError

SUPPORTED = {"graphrag": "graphrag>=3.3.0,<3.4", "mcp": "mcp>=2.3,<2.4"}
"""The versions these entries were checked against (pyproject.toml pins the same)."""


@dataclass(frozen=True)
class Replacement:
    """`target` (module.attribute, or module.Class.attribute) whose original is `original`
    (its module.qualname), changed at run time for `reason`."""

    package: str
    target: str
    original: str
    reason: str


OPS = "graphrag.index.operations"

REPLACED = (
    Replacement(
        "graphrag",
        "graphrag_cache.cache_key.hash_data",
        "graphrag_common.hasher.hasher.hash_data",
        "the same LLM cache keys about 5x faster (config/cache_keys.py)",
    ),
    Replacement(
        "graphrag",
        "graphrag.index.run.run_pipeline.WorkflowProfiler",
        "graphrag.index.run.profiling.WorkflowProfiler",
        "workflow timings without tracemalloc, which made builds 3.5-4.5x slower "
        "(config/runtime.py)",
    ),
    Replacement(
        "mcp",
        "mcp.server.lowlevel.server.Server.create_initialization_options",
        "mcp.server.lowlevel.server.Server.create_initialization_options",
        "advertise resources.listChanged: the SDK takes it only there "
        "(server/app.py; on the instance)",
    ),
)

PRIVATE = (
    Replacement(
        "graphrag",
        f"{OPS}.extract_graph.extract_graph._run_extract_graph",
        f"{OPS}.extract_graph.extract_graph._run_extract_graph",
        "one text unit's extraction, for the units without a carried one (kept_extraction.py)",
    ),
    Replacement(
        "graphrag",
        "graphrag_storage.tables.parquet_table._apply_transformer",
        "graphrag_storage.tables.parquet_table._apply_transformer",
        "RecordParquetTable, registered as graphrag's `parquet` tables, yields rows as "
        "graphrag's does (handlers/indexing/record_tables.py)",
    ),
    Replacement(
        "mcp",
        "mcp.server.session.ServerSession._connection",
        "",
        "the connection under a session, told when the resources change (server/notices.py)",
    ),
    Replacement(
        "mcp",
        "mcp.server.streamable_http_manager.StreamableHTTPSessionManager._server_instances",
        "",
        "the open sessions, counted by the session limits (server/http.py)",
    ),
)
"""Names read although not public (an empty `original`: an instance attribute, checked where it is
read)."""

REGISTERED = {
    "graphrag `parquet` table provider": "RecordParquetTableProvider: rows by to_dict('records'), "
    "~8x faster (handlers/indexing/record_tables.py)",
    "graphrag `file` storage": "LocalFileStorage: direct reads and writes instead of aiofiles "
    "(handlers/indexing/local_files.py)",
}
"""Overrides made through graphrag's own factories (public registration under graphrag's type
names)."""

_originals: dict[str, Any] = {}


def _resolved(target: str) -> tuple[Any, str]:
    """The object holding `target`'s attribute (a module, or a class in one) and the attribute's
    name."""
    owner_path, name = target.rsplit(".", 1)
    parts = owner_path.split(".")
    for length in range(len(parts), 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:length]))
        except ImportError:
            continue
        for part in parts[length:]:
            owner = getattr(owner, part)
        return owner, name
    raise ImportError(owner_path)


def _qualified(value: Any) -> str:
    name = getattr(value, "__qualname__", type(value).__qualname__)
    return f"{getattr(value, '__module__', '?')}.{name}"


def _mismatch(entry: Replacement) -> str | None:
    """What is wrong with `entry`'s target in the installed package; None when it is what was
    expected."""
    try:
        owner, name = _resolved(entry.target)
    except (ImportError, AttributeError):
        return f"{entry.target} is gone"
    if not entry.original:
        return None
    current = _originals.get(entry.target, getattr(owner, name, None))
    if current is None:
        return f"{entry.target} is gone"
    if _qualified(current) != entry.original:
        return f"{entry.target} is {_qualified(current)}, not {entry.original}"
    return None


def _failure(package: str, problem: str) -> ConfigError:
    return ConfigError(
        f"{package} {version(package)} is installed, but this server supports "
        f"{SUPPORTED[package]} ({problem}): install a supported {package}"
    )


@cache
def check_installed(package: str) -> None:
    """Every entry of `package` ("graphrag" or "mcp") found as expected, once per process; one line
    naming the installed version otherwise."""
    for entry in (*REPLACED, *PRIVATE):
        if entry.package == package and (problem := _mismatch(entry)) is not None:
            raise _failure(package, problem)


def replace(target: str, replacement: Any) -> Any:
    """Set the listed `target` to `replacement` (once per process) and return its original."""
    entry = next(entry for entry in REPLACED if entry.target == target)
    check_installed(entry.package)
    if target not in _originals:
        owner, name = _resolved(target)
        _originals[target] = getattr(owner, name)
        setattr(owner, name, replacement)
    return _originals[target]


def replace_on(instance: Any, target: str, make: Callable[[Any], Any]) -> None:
    """Set the listed method `target` on `instance` alone to `make(its original bound method)`."""
    entry = next(entry for entry in REPLACED if entry.target == target)
    check_installed(entry.package)
    name = target.rsplit(".", 1)[1]
    setattr(instance, name, make(getattr(instance, name)))


def private(instance: Any, target: str) -> Any:
    """The listed private attribute `target` of `instance`; the one-line error when the SDK has no
    such one."""
    entry = next(entry for entry in PRIVATE if entry.target == target)
    name = target.rsplit(".", 1)[1]
    try:
        return getattr(instance, name)
    except AttributeError:
        raise _failure(entry.package, f"{target} is gone") from None
