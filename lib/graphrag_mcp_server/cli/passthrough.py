"""`graphrag-mcp graphrag`: graphrag's own CLI, with this project's model types registered."""

from pathlib import Path
from typing import Any

import typer

from graphrag_mcp_server.cli.common import fail

PASSTHROUGH: dict[str, Any] = {
    "add_help_option": False,
    "context_settings": {"allow_extra_args": True, "ignore_unknown_options": True},
}
"""How the command is registered: every argument, --help included, goes to graphrag's CLI."""


def graphrag_cli(context: typer.Context) -> None:
    """GraphRAG's own CLI (graphrag index|update|query|prompt-tune ...) with this project's model
    types (offline, bounded_backoff retries) registered, so it reads and builds indexes made with
    them."""
    if (root := _graphrag_mcp_root_written(context.args)) is not None:
        fail(
            f"{root} is a graphrag-mcp index root, whose output is the version being served: "
            f"update it with `graphrag-mcp index DATA_PATH --index-path {root}`, or give `graphrag "
            f"{context.args[0]}` a root of its own"
        )
    from graphrag_mcp_server.config.runtime import prepare_models
    from graphrag_mcp_server.providers import register_providers

    prepare_models()
    register_providers()
    from graphrag.cli.main import app as graphrag_app

    graphrag_app(args=context.args, prog_name="graphrag-mcp graphrag")


def _graphrag_mcp_root_written(args: list[str]) -> Path | None:
    """The root that `graphrag index|update ARGS` would write into when it is a graphrag-mcp
    root."""
    if not args or args[0] not in ("index", "update"):
        return None
    root = Path(".")
    for position, arg in enumerate(args):
        if arg in ("--root", "-r") and position + 1 < len(args):
            root = Path(args[position + 1])
        elif arg.startswith("--root="):
            root = Path(arg.removeprefix("--root="))
    return root.resolve() if (root / "output").is_symlink() else None
