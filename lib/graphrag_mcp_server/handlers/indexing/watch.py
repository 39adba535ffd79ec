"""Watching a data folder: a burst of changes becomes one run once the folder has been quiet."""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from graphrag_mcp_server.handlers.indexing.documents import skip_reason

logger = logging.getLogger(__name__)

TEMPORARY_SUFFIXES = (".swp", ".swx", ".swo", ".tmp", ".temp", ".part", ".crdownload", ".bak", "~")
IGNORED_EVENTS = {"opened", "closed_no_write"}


def is_document_change(path: Path, data_path: Path, index_root: Path) -> bool:
    """False for temporary files and for what is never a document (handlers/documents.py: hidden files,
    the index root, links leaving the data folder)."""
    if not path.is_relative_to(data_path):
        return False
    name = path.name
    return not (
        skip_reason(path, data_path, index_root) is not None
        or name.endswith(TEMPORARY_SUFFIXES)
        or name.startswith("~$")
        or (name.startswith("#") and name.endswith("#"))
        or name == "4913"  # vim's write probe
    )


class _Changes(FileSystemEventHandler):
    """Sets an asyncio event (from watchdog's thread) for each change to a document."""

    def __init__(self, data_path: Path, index_root: Path, loop: asyncio.AbstractEventLoop, changed: asyncio.Event):
        self._data_path, self._index_root = data_path, index_root
        self._loop, self._changed = loop, changed

    def on_any_event(self, event: FileSystemEvent) -> None:
        """Report a created, modified, moved or deleted document."""
        if event.event_type in IGNORED_EVENTS or (event.is_directory and event.event_type == "modified"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        if any(path and is_document_change(Path(str(path)), self._data_path, self._index_root) for path in paths):
            self._loop.call_soon_threadsafe(self._changed.set)


async def watch_folder(
    data_path: Path, index_root: Path, settle_seconds: float, on_change: Callable[[], Awaitable[None]]
) -> None:
    """Call `on_change` after each burst of document changes, once `settle_seconds` pass without one.

    Changes made while `on_change` runs lead to one more call after it. Runs until cancelled; a
    failing `on_change` is logged and watching goes on.
    """
    changed = asyncio.Event()
    observer = Observer()
    handler = _Changes(data_path.resolve(), index_root.resolve(), asyncio.get_running_loop(), changed)
    observer.schedule(handler, str(data_path.resolve()), recursive=True)
    observer.start()
    try:
        while True:
            await changed.wait()
            while changed.is_set():  # settle: wait for a quiet spell
                changed.clear()
                try:
                    await asyncio.wait_for(changed.wait(), settle_seconds)
                except TimeoutError:
                    break
            try:
                await on_change()
            except Exception:
                logger.exception("index update after a change failed; still watching %s", data_path)
    finally:
        observer.stop()
        observer.join(timeout=10)  # watchdog's threads are daemons: a stuck one must not keep Ctrl-C from exiting
