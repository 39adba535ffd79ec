"""One indexer at a time per blob location: the lease on indexer.lock, renewed by a thread while
the indexer runs; a killed indexer's lease lapses."""

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from graphrag_mcp_server.errors import GraphRagMcpError
from graphrag_mcp_server.handlers.indexing.blob.client import BlobLocation

if TYPE_CHECKING:
    from azure.storage.blob import BlobLeaseClient, ContainerClient

logger = logging.getLogger(__name__)

LEASE_BLOB = "indexer.lock"


class IndexerBusyError(GraphRagMcpError):
    """Another indexer holds the container's lease."""


@contextmanager
def indexer_lease(
    location: BlobLocation, container: "ContainerClient", seconds: int = 15, wait_seconds: float = 0
) -> Iterator["BlobLeaseClient"]:
    """Hold the location's indexer lease for the block, renewed every third of its term; another
    indexer's lease is waited for up to `wait_seconds`, then IndexerBusyError. A killed indexer's
    lease lapses after `seconds`."""
    from azure.core.exceptions import ResourceExistsError

    lock = container.get_blob_client(location.blob(LEASE_BLOB))
    with suppress(ResourceExistsError):
        lock.upload_blob(b"", overwrite=False)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            lease = lock.acquire_lease(lease_duration=seconds)
            break
        except ResourceExistsError:  # 409: leased by another indexer
            if time.monotonic() >= deadline:
                msg = (
                    f"another indexer is updating {location} (it holds the indexer lease); "
                    "wait for it to finish, or pass --wait SECONDS. A stopped indexer's lease "
                    f"lapses within {seconds} s"
                )
                raise IndexerBusyError(msg) from None
            time.sleep(1)
    stop = threading.Event()
    renewer = threading.Thread(target=_keep_renewing, args=(lease, seconds / 3, stop), daemon=True)
    renewer.start()
    try:
        yield lease
    finally:
        stop.set()
        renewer.join()
        try:
            lease.release()
        except Exception as error:  # noqa: BLE001 - a lapsed lease needs no release
            logger.debug("indexer lease not released: %s", error)


def _keep_renewing(lease: "BlobLeaseClient", every: float, stop: threading.Event) -> None:
    while not stop.wait(every):
        try:
            lease.renew()
        except Exception as error:  # noqa: BLE001 - the switch's If-Match refuses a lapsed one
            logger.warning("indexer lease not renewed: %s", error)
