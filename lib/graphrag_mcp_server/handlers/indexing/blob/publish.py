"""The indexer's run over a blob location: lease taken, current version and cache brought down,
the build run, its version uploaded and switched to, old versions collected."""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from graphrag_mcp_server.handlers.indexing import versions as local
from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation, storage_errors
from graphrag_mcp_server.handlers.indexing.blob.lease import indexer_lease
from graphrag_mcp_server.handlers.indexing.blob.versions import BlobIndex, Pointer

logger = logging.getLogger(__name__)

Result = TypeVar("Result")


async def published_build(
    location: BlobLocation,
    root: Path,
    run: Callable[[], Awaitable[Result]],
    grace_seconds: float,
    wait_seconds: float = 0,
) -> Result:
    """Run an index build over the local copy `root` as the one indexer of `location`: take the
    lease, bring the current version and the cache down where the local copy lacks them, `run`
    the build, upload the version it wrote (the content the container lacks, and its listing) and
    the new cache entries, switch current.json to it, and delete versions and content past the
    grace period."""
    with storage_errors(f"indexing into {location}", location):
        index = BlobIndex(location)
        await asyncio.to_thread(index.create_container)
        with indexer_lease(location, index.container, wait_seconds=wait_seconds):
            pointer, etag = await asyncio.to_thread(index.pointer)
            before = local.current_version(root)
            if pointer is not None and (before is None or before.name != pointer.version):
                await asyncio.to_thread(index.fetch, root, pointer.version)
            await asyncio.to_thread(index.download_cache, root)
            result = await run()
            built = local.current_version(root)
            if built is not None and (pointer is None or built.name != pointer.version):
                sent = await asyncio.to_thread(
                    index.upload_version, root, built, pointer.version if pointer else None
                )
                logger.info("%s: version %s uploaded: %s", location, built.name, sent)
                await asyncio.to_thread(index.upload_cache, root)
                pointer = await asyncio.to_thread(index.switch, built.name, pointer, etag)
                logger.info("%s: version %s is current", location, built.name)
            await asyncio.to_thread(
                index.collect_garbage, kept_versions(pointer, built, before), grace_seconds
            )
    return result


def kept_versions(pointer: Pointer | None, *kept_locally: Path | None) -> set[str]:
    """What garbage collection never deletes, however old: the versions current.json names
    (current and previous: replicas may still be reading the previous) and the indexer's local
    ones."""
    named = {pointer.version, pointer.previous} if pointer is not None else set()
    return {version for version in named if version} | {
        path.name for path in kept_locally if path is not None
    }
