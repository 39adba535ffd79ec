"""`graphrag-mcp add` and `remove`: what the add_document and delete_document tools do, for
scripts: a document written to (or removed from) the writable folder, then the index updated."""

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from graphrag_mcp_server.cli.common import IndexPath, fail, index_root, user_errors
from graphrag_mcp_server.config.settings import ServerSettings

if TYPE_CHECKING:
    from graphrag_mcp_server.handlers.indexing.written import DocumentFolder

WritePath = Annotated[
    Path | None,
    typer.Option(
        "--write-path", help="The writable folder (env GRAPHRAG_MCP_WRITE_PATH), as serve's."
    ),
]
DataPath = Annotated[
    Path | None,
    typer.Option(
        "--data-path",
        help="Folder the index is built from, holding the writable one (default: the writable "
        "folder itself), like serve --watch.",
    ),
]
Reindex = Annotated[
    bool, typer.Option("--index/--no-index", help="Update the index after the change.")
]
Offline = Annotated[bool, typer.Option(help="Use the offline model (no key, no network).")]


@user_errors
def add(
    source: Annotated[
        str, typer.Argument(metavar="FILE|-", help="The text: a file, or - (stdin).")
    ],
    title: Annotated[
        str | None, typer.Option(help="Title (default: the file's name); an existing one updates.")
    ] = None,
    write_path: WritePath = None,
    data_path: DataPath = None,
    index_path: IndexPath = None,
    reindex: Reindex = True,
    offline: Offline = False,
) -> None:
    """Add FILE (or stdin) to the writable folder as a Markdown document, then update the index;
    prints the document's id and file as JSON."""
    from graphrag_mcp_server.handlers.indexing.written import document_bytes

    settings = ServerSettings()
    if source == "-":
        text, title = sys.stdin.read(), title or "document"
    else:
        path = Path(source)
        if not path.is_file():
            fail(f"{source} is not a file (give a file, or - to read stdin)")
        text, title = path.read_text(encoding="utf-8"), title or path.stem
    document_bytes(text, settings.write_max_document_bytes)
    folder = _folder(write_path, index_path, settings)
    document, updated = folder.add(title, text, {})
    _report(document.document_id, document.path, "updated" if updated else "added")
    if reindex:
        _reindex(folder.folder, data_path, index_path, offline)


@user_errors
def remove(
    document_id: Annotated[str, typer.Argument(help="The id `add` or add_document printed.")],
    write_path: WritePath = None,
    data_path: DataPath = None,
    index_path: IndexPath = None,
    reindex: Reindex = True,
    offline: Offline = False,
) -> None:
    """Remove a document of the writable folder, then update the index."""
    folder = _folder(write_path, index_path, ServerSettings())
    document = folder.delete(document_id)
    _report(document.document_id, document.path, "deleted")
    if reindex:
        _reindex(folder.folder, data_path, index_path, offline)


def _folder(
    write_path: Path | None, index_path: Path | None, settings: ServerSettings
) -> "DocumentFolder":
    """The writable folder (created if missing); refused inside the index root."""
    from graphrag_mcp_server.handlers.indexing.written import DocumentFolder

    given = write_path or settings.write_path
    if given is None:
        fail("no writable folder: give --write-path DIR or set GRAPHRAG_MCP_WRITE_PATH")
        raise AssertionError  # fail exits
    folder = given.resolve()
    if folder.is_relative_to(index_root(index_path)):
        fail(f"the write path {given} is inside the index root: choose another folder")
    folder.mkdir(parents=True, exist_ok=True)
    return DocumentFolder(folder, str(given))


def _report(document_id: str, path: str, action: str) -> None:
    typer.echo(json.dumps({"document_id": document_id, "path": path, "action": action}))


def _reindex(folder: Path, data_path: Path | None, index_path: Path | None, offline: bool) -> None:
    """An incremental build of the corpus holding the writable folder; its summary on stderr."""
    from graphrag_mcp_server.cli.index import run_index
    from graphrag_mcp_server.cli.output import OutputFormat, print_summary
    from graphrag_mcp_server.handlers.indexing.build import IndexMethod, IndexMode
    from graphrag_mcp_server.handlers.indexing.written import refuse_another_corpus

    corpus = data_path.resolve() if data_path else folder
    if not folder.is_relative_to(corpus):
        fail(f"--data-path {data_path} does not hold the writable folder {folder}")
    refuse_another_corpus(index_root(index_path), corpus)
    summary = asyncio.run(
        run_index(
            corpus, index_root(index_path), IndexMode.INCREMENTAL, IndexMethod.STANDARD, offline
        )
    )
    print_summary(summary, OutputFormat.TEXT)
