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
    """False for temporary files and for what is never a document (handlers/documents.py: hidden
    files, the index root, links leaving the data folder)."""
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

    def __init__(
        self,
        data_path: Path,
        index_root: Path,
        loop: asyncio.AbstractEventLoop,
        changed: asyncio.Event,
    ):
        self._data_path, self._index_root = data_path, index_root
        self._loop, self._changed = loop, changed

    def on_any_event(self, event: FileSystemEvent) -> None:
        """Report a created, modified, moved or deleted document."""
        if event.event_type in IGNORED_EVENTS or (
            event.is_directory and event.event_type == "modified"
        ):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        if any(
            path and is_document_change(Path(str(path)), self._data_path, self._index_root)
            for path in paths
        ):
            self._loop.call_soon_threadsafe(self._changed.set)


RETRY_LIMIT_SECONDS = 600.0
"""The longest wait between two retries of a failed update (the wait doubles from the first
retry's)."""


async def watch_folder(
    data_path: Path,
    index_root: Path,
    settle_seconds: float,
    on_change: Callable[[], Awaitable[bool]],
    retry_seconds: float = 30.0,
) -> None:
    """Call `on_change` after each burst of document changes, once `settle_seconds` pass without
    one.

    Changes made while `on_change` runs lead to one more call after it. An update that fails
    (`on_change` raises or returns False: the provider failed, the version was not published) is run
    again after `retry_seconds`, then after twice as long each time (at most RETRY_LIMIT_SECONDS),
    until one succeeds, or at once when a document changes: the index catches up with the folder
    without a file edited to wake it. Runs until cancelled.
    """
    changed = asyncio.Event()
    observer = Observer()
    handler = _Changes(
        data_path.resolve(), index_root.resolve(), asyncio.get_running_loop(), changed
    )
    observer.schedule(handler, str(data_path.resolve()), recursive=True)
    observer.start()
    retry_in: float | None = None
    try:
        while True:
            try:
                await asyncio.wait_for(changed.wait(), retry_in)
            except TimeoutError:
                logger.warning(
                    "retrying the index update that failed (%.0f s ago) for %s", retry_in, data_path
                )
            while changed.is_set():  # settle: wait for a quiet spell
                changed.clear()
                try:
                    await asyncio.wait_for(changed.wait(), settle_seconds)
                except TimeoutError:
                    break
            if await _updated(on_change, data_path):
                retry_in = None
            else:
                retry_in = min(
                    RETRY_LIMIT_SECONDS, retry_seconds if retry_in is None else 2 * retry_in
                )
                logger.warning(
                    "index update of %s failed; retrying in %.0f s (or at the next change)",
                    data_path,
                    retry_in,
                )
    finally:
        observer.stop()
        # watchdog's threads are daemons: a stuck one must not keep Ctrl-C from exiting
        observer.join(timeout=10)


async def _updated(on_change: Callable[[], Awaitable[bool]], data_path: Path) -> bool:
    """Run one update: True when it brought the index up to date."""
    try:
        return await on_change()
    except Exception:
        logger.exception("index update after a change failed; still watching %s", data_path)
        return False
