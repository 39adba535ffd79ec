"""`graphrag-mcp init`: graphrag's settings.yaml and prompts, written into the index root for a
provider."""

from typing import Annotated

import typer

from graphrag_mcp_server.cli.common import IndexPath, StorageOption, index_root, user_errors
from graphrag_mcp_server.config.providers import Provider


@user_errors
def init(
    index_path: IndexPath = None,
    provider: Annotated[
        Provider, typer.Option(help="Model provider to configure.")
    ] = Provider.OPENAI,
    model: Annotated[
        str | None, typer.Option(help="Completion model (provider's default if omitted).")
    ] = None,
    embedding_model: Annotated[
        str | None, typer.Option(help="Embedding model (provider's default if omitted).")
    ] = None,
    force: Annotated[
        bool, typer.Option(help="Overwrite an existing settings.yaml and prompts.")
    ] = False,
    api_base: Annotated[
        str | None,
        typer.Option(
            "--api-base",
            metavar="URL",
            help="Base URL of both models (a local OpenAI-compatible server: http://localhost:8000/v1).",
        ),
    ] = None,
    storage: StorageOption = None,
) -> None:
    """Write graphrag's settings.yaml and prompts into the index root, configured for a provider;
    with --storage, also create the blob container the index versions will be published to (checking
    the credentials now)."""
    from graphrag_mcp_server.config.index_root import write_index_root

    root = index_root(index_path)
    if storage is not None:
        from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation
        from graphrag_mcp_server.handlers.indexing.blob.versions import create_container

        create_container(location := BlobLocation.parse(storage))
    settings = write_index_root(root, provider, model, embedding_model, force, api_base)
    typer.echo(f"Wrote {settings} and prompts/ for provider {provider.value}.")
    if provider is not Provider.OFFLINE:
        typer.echo(
            "Credentials are read from the environment: see the ${...} references in settings.yaml."
        )
    if storage is not None:
        typer.echo(
            f"{location} is ready: publish to it with `graphrag-mcp index DATA_PATH --index-path "
            f"{root} --storage {location}`, or set GRAPHRAG_MCP_STORAGE={location} (environment or "
            ".env)."
        )
