"""The tables' ETags of a graphrag project whose settings.yaml puts its output in a blob
container (a project served as it is): what tells the server that graphrag wrote new tables."""

import logging
import time
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.blob.client import container_of

if TYPE_CHECKING:
    from azure.storage.blob import ContainerClient
    from graphrag_storage import StorageConfig

logger = logging.getLogger(__name__)

TABLES_CHECK_SECONDS = 2.0
"""How long the tables' ETags of a graphrag project with blob output are taken as unchanged."""

_checked_tables: dict[
    tuple[str | None, str | None, str | None], tuple[float, str, "ContainerClient"]
] = {}


def blob_tables_signature(storage: "StorageConfig") -> str:
    """The ETags of the tables of an index whose settings.yaml puts graphrag's output in a blob
    container, read at most every TABLES_CHECK_SECONDS: they change when graphrag writes. A failed
    read is logged and the last known signature kept (the loaded version goes on serving)."""
    from azure.core.exceptions import AzureError

    key = (
        storage.connection_string or storage.account_url,
        storage.container_name,
        storage.base_dir,
    )
    checked = _checked_tables.get(key)
    if checked is not None and time.monotonic() - checked[0] < TABLES_CHECK_SECONDS:
        return checked[1]
    container = (
        checked[2]
        if checked is not None
        else container_of(
            storage.container_name or "",
            connection_string=storage.connection_string,
            endpoint=storage.account_url,
        )
    )
    prefix = f"{storage.base_dir.strip('/')}/" if storage.base_dir else ""
    try:
        signature = ",".join(
            f"{blob.name}:{blob.etag}"
            for blob in container.list_blobs(name_starts_with=prefix)
            if blob.name.endswith(".parquet") and "/" not in blob.name[len(prefix) :]
        )
    except AzureError as error:
        logger.warning(
            "cannot check the index tables in container %s: %s",
            storage.container_name,
            str(error).splitlines()[0],
        )
        signature = checked[1] if checked is not None else ""
    _checked_tables[key] = (time.monotonic(), signature, container)
    return signature
