"""Documents written through MCP (or `graphrag-mcp add`): UTF-8 Markdown files with YAML front
matter in one operator-named folder, named so that they can never leave it."""

import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from graphrag_mcp_server.errors import GraphRagMcpError

FRONT_MATTER = "---\n"
SLUG_CHARS = 60
RESERVED_NAMES = {
    "con", "prn", "aux", "nul",
    *(f"com{n}" for n in range(10)), *(f"lpt{n}" for n in range(10)),
}  # fmt: skip
"""Names Windows gives to devices: a file of that name (any suffix) cannot be opened as a file."""
DOCUMENT_ID = re.compile(r"^[0-9a-f]{12}$")


class DocumentRefusedError(GraphRagMcpError):
    """A write the folder's rules refuse: too large, too often, outside the folder, unknown id."""


class WrittenDocument(BaseModel):
    """One document of the writable folder."""

    document_id: str
    title: str
    path: str = Field(description="Relative to the writable folder")
    metadata: dict[str, Any] = {}


class DocumentWrite(BaseModel):
    """What add_document, update_document and delete_document did, and how to know when the index
    has it."""

    document_id: str
    title: str
    path: str = Field(description="The file, relative to the writable folder")
    action: str = Field(description="added, updated or deleted")
    job_id: str = Field(description="The incremental index job that takes this change in")
    job_state: str
    queryable_when: str


class DocumentEntry(BaseModel):
    """A document of the index or of the writable folder."""

    document_id: str
    title: str
    path: str = Field(description="Writable folder's: relative to it; else the indexed title")
    changeable: bool = Field(description="True: update_document and delete_document accept it")
    indexed: bool = Field(description="In the loaded index version")


class DocumentList(BaseModel):
    """list_documents: a page of the documents, the writable ones first."""

    documents: list[DocumentEntry]
    total: int
    write_path: str = Field(description="The writable folder, as the operator named it")


@dataclass(frozen=True)
class DocumentFolder:
    """The writable folder (resolved): reads and writes its documents."""

    folder: Path
    shown: str
    """The folder as the operator named it, for messages."""

    def documents(self) -> list[WrittenDocument]:
        """The documents written here (Markdown files with our front matter), by file name."""
        found = []
        for path in sorted(self.folder.glob("*.md")):
            document = _read(path, self.folder)
            if document is not None:
                found.append(document)
        return found

    def find(self, document_id: str) -> WrittenDocument:
        """The document with this id; refused when there is none in this folder."""
        if DOCUMENT_ID.match(document_id):
            for document in self.documents():
                if document.document_id == document_id:
                    return document
        msg = (
            f"no document {document_id!r} in the writable folder {self.shown}; list_documents "
            "shows the documents that can be changed"
        )
        raise DocumentRefusedError(msg)

    def add(self, title: str, text: str, metadata: dict[str, Any]) -> tuple[WrittenDocument, bool]:
        """Write a new document, or update the one with the same title; True when it updated."""
        title = _clean_title(title)
        same = next((doc for doc in self.documents() if doc.title == title), None)
        if same is not None:
            return self.update(same.document_id, text, title, metadata), True
        document = WrittenDocument(
            document_id=uuid.uuid4().hex[:12], title=title, path="", metadata=metadata
        )
        return self._write(document, text), False

    def update(
        self, document_id: str, text: str, title: str | None, metadata: dict[str, Any] | None = None
    ) -> WrittenDocument:
        """Replace a document's text (and title, which renames its file)."""
        old = self.find(document_id)
        changed = old.model_copy(
            update={
                "title": _clean_title(title) if title is not None else old.title,
                "metadata": old.metadata if metadata is None else metadata,
            }
        )
        written = self._write(changed, text)
        if written.path != old.path:
            self.inside(old.path).unlink(missing_ok=True)
        return written

    def delete(self, document_id: str) -> WrittenDocument:
        """Remove a document's file."""
        document = self.find(document_id)
        self.inside(document.path).unlink(missing_ok=True)
        return document

    def inside(self, name: str) -> Path:
        """The path of file `name` in the folder; refused unless it is a plain name staying
        there."""
        path = self.folder / name
        if (
            name != Path(name).name
            or name.startswith(".")
            or name.split(".")[0].lower() in RESERVED_NAMES
            or path.resolve().parent != self.folder
            or path.is_symlink()
        ):
            raise DocumentRefusedError(f"refused file name {name!r} in {self.shown}")
        return path

    def _write(self, document: WrittenDocument, text: str) -> WrittenDocument:
        """Write atomically (a hidden temporary file renamed over it): a watcher or a job never
        reads half a document."""
        name = f"{slug(document.title)}-{document.document_id}.md"
        path = self.inside(name)
        header: dict[str, Any] = {"id": document.document_id, "title": document.title}
        if document.metadata:
            header["metadata"] = document.metadata
        front = yaml.safe_dump(header, allow_unicode=True, sort_keys=False)
        temporary = self.folder / f".{name}.{uuid.uuid4().hex[:6]}.tmp"
        temporary.write_bytes(f"{FRONT_MATTER}{front}{FRONT_MATTER}{text}".encode())
        os.replace(temporary, path)
        return document.model_copy(update={"path": name})


def refuse_another_corpus(root: Path, corpus: Path) -> None:
    """Refuse to index written documents from `corpus` when the served version holds documents and
    none of them is in it: the wrong folder, whose next version would drop them all."""
    from graphrag_mcp_server.errors import ConfigError
    from graphrag_mcp_server.handlers.indexing import versions

    served = list(versions.read_manifest(versions.current_version(root)) or {})
    if served and not any((corpus / title).is_file() for title in served):
        msg = (
            f"the index in {root} holds {len(served)} documents, none of them in {corpus} (such "
            f"as {served[0]}): indexing written documents from there would drop them; give the "
            "folder the index was built from with --data-path (or --watch), with the writable "
            "folder inside it"
        )
        raise ConfigError(msg)


def slug(title: str) -> str:
    """The title in lower-case letters, digits and dashes: no separator, dot or space survives."""
    words = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:SLUG_CHARS].strip("-")
    return words if words and words not in RESERVED_NAMES else "document"


def document_bytes(text: str, limit: int) -> int:
    """The text's UTF-8 size; refused over `limit`."""
    size = len(text.encode())
    if size > limit:
        msg = (
            f"the document is {size} bytes, over the limit of {limit} "
            "(GRAPHRAG_MCP_WRITE_MAX_DOCUMENT_BYTES): split it into several documents"
        )
        raise DocumentRefusedError(msg)
    return size


def _clean_title(title: str) -> str:
    cleaned = " ".join(title.split())
    if not cleaned:
        raise DocumentRefusedError("a document needs a title with at least one visible character")
    return cleaned


def _read(path: Path, folder: Path) -> WrittenDocument | None:
    """A written document's front matter; None for any other file."""
    if path.is_symlink() or path.name.startswith("."):
        return None
    try:
        with path.open(encoding="utf-8", newline="") as file:
            if file.readline() != FRONT_MATTER:
                return None
            lines: list[str] = []
            for line in file:
                if line == FRONT_MATTER:
                    header = yaml.safe_load("".join(lines))
                    break
                lines.append(line)
            else:
                return None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(header, dict) or not DOCUMENT_ID.match(str(header.get("id", ""))):
        return None
    return WrittenDocument(
        document_id=str(header["id"]),
        title=str(header.get("title", "")),
        path=str(path.relative_to(folder)),
        metadata=header.get("metadata") or {},
    )
