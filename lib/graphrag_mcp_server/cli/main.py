"""The `graphrag-mcp` command: thin typer commands; graphrag is imported only inside them."""

import sys
from typing import Annotated

import typer

from graphrag_mcp_server import __version__
from graphrag_mcp_server.cli.documents import add, remove
from graphrag_mcp_server.cli.explore import export, stats
from graphrag_mcp_server.cli.index import index
from graphrag_mcp_server.cli.init import init
from graphrag_mcp_server.cli.passthrough import PASSTHROUGH, graphrag_cli
from graphrag_mcp_server.cli.query import query
from graphrag_mcp_server.cli.serve import serve
from graphrag_mcp_server.cli.tune import tune

app = typer.Typer(
    name="graphrag-mcp",
    help="GraphRAG knowledge of your own documents for AI assistants: index a folder, query it, "
    "serve it over MCP.",
    pretty_exceptions_enable=False,
)


def _version(show: bool) -> None:
    if show:
        from importlib.metadata import version

        typer.echo(
            f"graphrag-mcp {__version__} (graphrag {version('graphrag')}, mcp {version('mcp')})"
        )
        raise typer.Exit


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """GraphRAG knowledge of your own documents for AI assistants."""


for command in (init, index, tune, add, remove, query, stats, export):
    app.command()(command)
app.command("graphrag", **PASSTHROUGH)(graphrag_cli)
app.command()(serve)


def main() -> int:
    """Console-script entry point: usage errors are one `error:` line (exit 2), like every other
    error."""
    try:
        return (
            app(args=sys.argv[1:] or ["--help"], prog_name="graphrag-mcp", standalone_mode=False)
            or 0
        )
    except typer.TyperException as error:  # click's ClickException: a usage error
        context = getattr(error, "ctx", None)
        command = context.command_path if context else "graphrag-mcp"
        typer.echo(f"error: {error.format_message()} (see: {command} --help)", err=True)
        return error.exit_code
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
