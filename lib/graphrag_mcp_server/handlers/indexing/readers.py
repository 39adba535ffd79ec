"""Reading a folder of mixed formats as one corpus, each file with the graphrag reader that fits it.

Text and Markdown go through graphrag's text reader; PDF, Word, PowerPoint, Excel and HTML through
its markitdown reader; CSV, JSON and JSON Lines through its structured readers (one document per
row) when their rows have the input's text column, otherwise through markitdown as one document.
Every document is titled by its path in the data folder. A file that cannot be read (encrypted,
damaged, empty) is left out with its reason, and the run goes on.
"""

import os
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.config.formats import MARKITDOWN, OFFICE, STRUCTURED
from graphrag_mcp_server.errors import ConfigError

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_input import InputReader
    from graphrag_storage import Storage


class CorpusReader:
    """Reads the selected files of one data folder into graphrag documents."""

    def __init__(self, config: "GraphRagConfig", storage: "Storage") -> None:
        self._config, self._storage = config, storage
        self._readers: dict[str, InputReader] = {}
        self.unreadable: dict[str, str] = {}
        """path -> why it was left out."""

    async def read(self, paths: list[str]) -> list[dict[str, Any]]:
        """graphrag's document rows of every readable file, in order."""
        return [row for rows in await self.read_each(paths) for row in rows]

    async def read_each(self, paths: list[str]) -> list[list[dict[str, Any]]]:
        """graphrag's document rows of each file (none for a file it cannot read)."""
        return [await self._rows(path) for path in paths]

    async def _rows(self, path: str) -> list[dict[str, Any]]:
        try:
            documents = await self._read_file(path)
        except Exception as error:  # noqa: BLE001 - a reader failure leaves out only this file
            self.unreadable[path] = _reason(error)
            return []
        documents = [document for document in documents if str(document.text or "").strip()]
        if not documents:
            self.unreadable[path] = "no text found in it"
        return [asdict(document) for document in documents]

    async def _read_file(self, path: str) -> list[Any]:
        suffix = Path(path).suffix.lower()
        if suffix in STRUCTURED and self._config.input.type not in ("text", "markitdown"):
            # configured as structured input
            return await self._read_as(self._config.input.type, path)
        if suffix in STRUCTURED:
            try:
                return await self._read_as(STRUCTURED[suffix], path)
            except (KeyError, ValueError, TypeError):
                pass  # rows without the text column: the whole file is the text
        if suffix in MARKITDOWN or suffix in STRUCTURED:
            self._check_container(path, suffix)
            documents = await self._read_as("markitdown", path)
        else:
            documents = await self._read_as("text", path)
        for document in documents:
            document.title = path
        return documents

    async def _read_as(self, input_type: str, path: str) -> list[Any]:
        """`path` read by graphrag's reader for `input_type` (graphrag_input ships no types)."""
        documents: list[Any] = await self._reader(input_type).read_file(path)
        return documents

    def _reader(self, input_type: str) -> "InputReader":
        from graphrag_input import create_input_reader

        if input_type not in self._readers:
            self._readers[input_type] = create_input_reader(
                self._config.input.model_copy(update={"type": input_type}), self._storage
            )
        return self._readers[input_type]

    def _check_container(self, path: str, suffix: str) -> None:
        """Refuse a file whose bytes are not its format (markitdown would read them as plain
        text)."""
        file = input_folder(self._config) / path
        if suffix in OFFICE and not zipfile.is_zipfile(file):
            raise ValueError(f"not a valid {suffix[1:].upper()} file")
        if suffix == ".pdf" and not file.read_bytes()[:1024].lstrip().startswith(b"%PDF"):
            raise ValueError("not a valid PDF file")


def one_text_document(path: str) -> bool:
    """Whether `path` is read by graphrag's text reader: one document, titled by its path."""
    suffix = _suffix(path).lower()
    return suffix not in STRUCTURED and suffix not in MARKITDOWN


def _suffix(path: str) -> str:
    """`PurePath(path).suffix` without making a path (asked of every document of a folder)."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def input_folder(config: "GraphRagConfig") -> Path:
    """The folder a config reads its documents from (index_config and tuning name it)."""
    if config.input_storage.base_dir is None:
        raise ConfigError("the index config names no input folder (input_storage.base_dir)")
    return Path(config.input_storage.base_dir)


def _reason(error: Exception) -> str:
    """A reader's failure in a few words (markitdown wraps the converter's own error)."""
    text = " ".join(str(error).split())
    if "PDFPasswordIncorrect" in text or "password" in text.lower() or "encrypt" in text.lower():
        return "encrypted (password protected)"
    return f"{type(error).__name__}: {text}"[:300] if text else type(error).__name__
