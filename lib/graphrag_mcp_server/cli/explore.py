"""`graphrag-mcp stats` and `export`: the index's statistics and its entity graph as a file."""

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from graphrag_mcp_server.cli.common import (
    FormatOption,
    IndexPath,
    StorageOption,
    fail,
    local_copy,
    user_errors,
)
from graphrag_mcp_server.cli.output import OutputFormat, plain
from graphrag_mcp_server.handlers.explore.graph import GraphFormat


@user_errors
def stats(
    index_path: IndexPath = None,
    output_format: FormatOption = OutputFormat.TEXT,
    storage: StorageOption = None,
) -> None:
    """Show the size and makeup of the index."""
    statistics = asyncio.run(_run_stats(local_copy(index_path, storage)))
    if output_format is OutputFormat.JSON:
        typer.echo(statistics.model_dump_json())
    else:
        for key, value in statistics.model_dump(mode="json", exclude={"issues"}).items():
            typer.echo(f"{key.replace('_', ' '):>18}: {plain(value)}")
        for issue in statistics.issues:
            typer.echo(f"{issue.severity}: {issue.message}", err=True)
    if any(issue.severity == "error" for issue in statistics.issues):
        raise typer.Exit(1)


async def _run_stats(root: Path) -> Any:
    from graphrag_mcp_server.handlers.explore.stats import version_statistics

    return version_statistics(*await _read_index(root))


async def _read_index(root: Path) -> tuple[Any, Any]:
    """The index's config (no model provider, no credentials: nothing here calls a model) and its
    tables."""
    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.handlers.tables import load_tables

    config = load_index_config(root, without_credentials=True, with_models=False)
    return config, await load_tables(config, root)


@user_errors
def export(
    index_path: IndexPath = None,
    graph_format: Annotated[
        GraphFormat,
        typer.Option(
            "--format",
            "-f",
            help="graphml (Gephi, Cytoscape), gexf (Gephi), json "
            "(networkx node-link), html (one offline page for a browser).",
        ),
    ] = GraphFormat.GRAPHML,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="File to write (default ./entity-graph.FORMAT)."),
    ] = None,
    storage: StorageOption = None,
) -> None:
    """Write the entity graph (entities, relationships, communities, documents) as a file."""
    from graphrag_mcp_server.handlers.explore.graph import entity_graph, write_graph

    target = (
        output or Path(f"entity-graph.{graph_format.value}")
    ).resolve()  # graphrag's loader changes the cwd
    _, tables = asyncio.run(_read_index(local_copy(index_path, storage)))
    graph = entity_graph(tables)
    try:
        target.write_bytes(write_graph(graph, graph_format))
    except OSError as error:
        fail(f"cannot write {target}: {error.strerror}; choose another file with --output")
    typer.echo(
        f"Wrote {graph.number_of_nodes()} entities and {graph.number_of_edges()} relationships to "
        f"{target}."
    )
