"""Tools through which the assistant adds, updates and deletes documents in the operator's writable
folder (serve --write-path), and the `remember` prompt; absent without one or when read-only."""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from graphrag_mcp_server.errors import ConfigError, GraphRagMcpError, IndexNotFoundError
from graphrag_mcp_server.handlers.indexing.documents import Limits
from graphrag_mcp_server.handlers.indexing.write_batches import WriteAllowance, WriteBatches
from graphrag_mcp_server.handlers.indexing.written import (
    DocumentEntry,
    DocumentFolder,
    DocumentList,
    DocumentRefusedError,
    DocumentWrite,
    WrittenDocument,
    document_bytes,
    refuse_another_corpus,
)
from graphrag_mcp_server.handlers.results import IndexJob
from graphrag_mcp_server.server.context import ServerContext, caller_identity, start_build

T = TypeVar("T")
logger = logging.getLogger(__name__)

ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
"""add_document and update_document: write one file of the writable folder, nothing else."""
DELETE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
LIST = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
Title = Annotated[str, Field(min_length=1, max_length=200, description="The document's title")]
DocumentId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9_-]+$",
        description="document_id returned by add_document (list_documents shows them)",
    ),
]
Metadata = Annotated[
    dict[str, str | int | float | bool] | None,
    Field(description="Fields kept in the document's front matter (source, date, tags...)"),
]


def corpus_folder(shared: ServerContext, write_path: Path) -> Path:
    """The folder the index is built from: the watched folder, else the first data root, holding
    the writable one (the written documents are then part of that corpus), else the writable folder
    itself."""
    holding = [shared.watch] if shared.watch is not None else []
    holding += [root for root in shared.data_roots if root not in holding]
    corpus = next((root for root in holding if write_path.is_relative_to(root)), write_path)
    refuse_another_corpus(shared.root, corpus)
    return corpus


def writable_folder(shared: ServerContext) -> DocumentFolder:
    """The writable folder (created if missing); refused inside the index root."""
    configured = shared.settings.write_path
    assert configured is not None
    folder = configured.resolve()
    if folder.is_relative_to(shared.root):
        msg = f"the write path {configured} is inside the index root {shared.root}: choose another"
        raise ConfigError(msg)
    folder.mkdir(parents=True, exist_ok=True)
    return DocumentFolder(folder, str(configured))


def register_document_tools(server: MCPServer, shared: ServerContext) -> None:
    """Add add_document, update_document, delete_document, list_documents and the remember
    prompt."""
    settings = shared.settings
    folder = writable_folder(shared)
    corpus = corpus_folder(shared, folder.folder)
    allowance = WriteAllowance(settings.write_bytes_per_minute)
    limits = Limits(settings.max_job_documents, settings.max_job_bytes)

    async def start(job: IndexJob) -> None:
        await start_build(shared, corpus, "incremental", limits, queued=job)

    batches = WriteBatches(shared.jobs, corpus, settings.write_settle_seconds, start)

    async def written(
        ctx: Context | None, size: int, change: Callable[[], tuple[WrittenDocument, str]]
    ) -> DocumentWrite:
        """Charge the caller's allowance, make the change, join the write's index job, log it."""
        identity = caller_identity(ctx)
        allowance.charge(identity, size)
        try:
            document, action = await asyncio.to_thread(change)
        except Exception:
            allowance.refund(identity, size)  # nothing was written
            raise
        job = batches.join()
        logger.warning(
            "document %s %s by %s (%s, %d bytes; index job %s)",
            document.document_id,
            action,
            identity,
            document.path,
            size,
            job.job_id,
        )
        return DocumentWrite(
            **document.model_dump(exclude={"metadata"}),
            action=action,
            job_id=job.job_id,
            job_state=job.state.value,
            queryable_when=f"index job {job.job_id} succeeds (index_status with this job_id); the "
            "server then loads the new version and sends notifications/resources/list_changed",
        )

    @server.tool(
        title="Add a document",
        annotations=ADD,
        description="Keep a document (notes, a decision, a summary) in the knowledge graph: "
        "written as Markdown into the server's writable folder and indexed incrementally in the "
        "background (a few model calls per page). A title already used updates that document. "
        "Returns its document_id and the index job; searchable once index_status says the job "
        "succeeded.",
    )
    async def add_document(
        title: Title,
        text: Annotated[str, Field(min_length=1, description="The document's text (Markdown)")],
        metadata: Metadata = None,
        ctx: Context | None = None,
    ) -> DocumentWrite:
        async def add() -> DocumentWrite:
            size = document_bytes(text, settings.write_max_document_bytes)

            def change() -> tuple[WrittenDocument, str]:
                document, updated = folder.add(title, text, dict(metadata or {}))
                return document, "updated" if updated else "added"

            return await written(ctx, size, change)

        return await _guarded(add())

    @server.tool(
        title="Update a document",
        annotations=ADD,
        description="Replace the text (and optionally the title) of a document written with "
        "add_document; indexed incrementally like add_document. Documents of other folders cannot "
        "be changed.",
    )
    async def update_document(
        document_id: DocumentId,
        text: Annotated[str, Field(min_length=1, description="The new text (Markdown)")],
        title: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
        ctx: Context | None = None,
    ) -> DocumentWrite:
        async def update() -> DocumentWrite:
            await _refuse_foreign(shared, folder, document_id)
            size = document_bytes(text, settings.write_max_document_bytes)
            return await written(
                ctx, size, lambda: (folder.update(document_id, text, title), "updated")
            )

        return await _guarded(update())

    @server.tool(
        title="Delete a document",
        annotations=DELETE,
        description="Delete a document written with add_document: its file is removed and the "
        "index updated incrementally (what only it said leaves the graph). Documents of other "
        "folders cannot be deleted.",
    )
    async def delete_document(document_id: DocumentId, ctx: Context | None = None) -> DocumentWrite:
        async def delete() -> DocumentWrite:
            await _refuse_foreign(shared, folder, document_id)
            return await written(ctx, 0, lambda: (folder.delete(document_id), "deleted"))

        return await _guarded(delete())

    @server.tool(
        title="List documents",
        annotations=LIST,
        description="The documents: those of the writable folder first (changeable: true), then "
        "the indexed ones from elsewhere; whether each is in the loaded index version.",
    )
    async def list_documents(
        offset: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> DocumentList:
        async def listed() -> DocumentList:
            entries = await _entries(shared, folder, corpus)
            return DocumentList(
                documents=entries[offset : offset + limit],
                total=len(entries),
                write_path=folder.shown,
            )

        return await _guarded(listed())

    @server.prompt(
        description="Keep what this conversation decided and learnt: summarised, then saved with "
        "add_document"
    )
    def remember(
        topic: Annotated[
            str | None, Field(max_length=settings.max_query_chars, description="Title or subject")
        ] = None,
    ) -> str:
        subject = f' about "{topic}"' if topic else ""
        return (
            f"Summarise this conversation{subject} for my knowledge base.\n"
            "1. List the decisions made, the facts established (names, dates, numbers, who does "
            "what) and the open questions, as short Markdown sections; leave out chit-chat and "
            "anything not settled.\n"
            "2. Call add_document with a specific title"
            f"{f' ({topic})' if topic else ''} and that summary as text (metadata: today's date "
            "and source 'conversation').\n"
            "3. Tell me the document_id, and that it is searchable once index_status says its job "
            "succeeded."
        )


async def _refuse_foreign(shared: ServerContext, folder: DocumentFolder, document_id: str) -> None:
    """Refuse an id of an indexed document from outside the writable folder, naming the folder."""
    if any(document.document_id == document_id for document in folder.documents()):
        return
    indexed = await _indexed(shared)
    if document_id in indexed:
        msg = (
            f"document {document_id} ({indexed[document_id]}) is not in the writable folder "
            f"{folder.shown}: only documents written there (list_documents: changeable) can be "
            "changed through MCP"
        )
        raise DocumentRefusedError(msg)


async def _indexed(shared: ServerContext) -> dict[str, str]:
    """The loaded version's documents, id -> title; none before the first index."""
    try:
        tables = (await shared.state.snapshot()).tables
    except IndexNotFoundError:
        return {}
    return dict(zip(tables.documents["id"], tables.documents["title"], strict=True))


async def _entries(
    shared: ServerContext, folder: DocumentFolder, corpus: Path
) -> list[DocumentEntry]:
    """The writable folder's documents, then the indexed ones not written there."""
    indexed = await _indexed(shared)
    titles = set(indexed.values())
    entries = []
    for document in await asyncio.to_thread(folder.documents):
        title_in_index = str((folder.folder / document.path).relative_to(corpus))
        entries.append(
            DocumentEntry(
                document_id=document.document_id,
                title=document.title,
                path=document.path,
                changeable=True,
                indexed=title_in_index in titles,
            )
        )
        titles.discard(title_in_index)
    entries.extend(
        DocumentEntry(document_id=key, title=title, path=title, changeable=False, indexed=True)
        for key, title in sorted(indexed.items(), key=lambda item: item[1])
        if title in titles
    )
    return entries


async def _guarded(work: Awaitable[T]) -> T:
    """Await `work`; a refusal or any failure becomes a one-line tool error."""
    try:
        return await work
    except ToolError:
        raise
    except GraphRagMcpError as error:
        raise ToolError(str(error)) from error
    except Exception as error:
        logger.exception("unexpected failure of a document tool")
        msg = f"internal error: {type(error).__name__}: {error}; the server keeps serving"
        raise ToolError(msg) from error
