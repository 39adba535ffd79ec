"""Where an index lives in blob storage and how to reach it: az:// locations, credentials from the
usual Azure environment variables, and a failed storage call as one line naming the fix."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from graphrag_mcp_server.errors import ConfigError, GraphRagMcpError

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential
    from azure.storage.blob import ContainerClient


class BlobLocation(BaseModel, frozen=True):
    """Where an index lives in blob storage: az://CONTAINER[/PREFIX]."""

    container: str
    prefix: str = ""

    @classmethod
    def parse(cls, url: str) -> "BlobLocation":
        """The location of `url` (az://container/prefix); a malformed one is a ConfigError saying
        the form."""
        scheme, _, rest = url.partition("://")
        container, _, prefix = rest.partition("/")
        valid = (
            len(container) in range(3, 64)
            and container[0].isalnum()
            and container[-1].isalnum()
            and "--" not in container
            and all(c.islower() or c.isdigit() or c == "-" for c in container)
        )
        if scheme not in {"az", "abfs"} or not valid:
            msg = (
                f"GRAPHRAG_MCP_STORAGE={url!r} is not a blob location: write "
                "az://CONTAINER/PREFIX, the container 3-63 lowercase letters, digits and "
                "single hyphens"
            )
            raise ConfigError(msg)
        return cls(container=container, prefix=prefix.strip("/"))

    def __str__(self) -> str:
        return f"az://{self.container}/{self.prefix}".rstrip("/")

    def blob(self, *parts: str) -> str:
        """The name of a blob under the prefix."""
        return str(PurePosixPath(self.prefix, *parts) if self.prefix else PurePosixPath(*parts))


def container_client(location: BlobLocation) -> "ContainerClient":
    """A client of the location's container, with credentials from the usual Azure environment
    variables: AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT_NAME with
    AZURE_STORAGE_ACCOUNT_KEY (and AZURE_STORAGE_ENDPOINT for an endpoint of your own, such as
    Azurite), or the account name alone with the identity azure-identity finds (managed identity,
    az login)."""
    if connection := os.environ.get("AZURE_STORAGE_CONNECTION_STRING"):
        return container_of(location.container, connection_string=connection)
    if account := os.environ.get("AZURE_STORAGE_ACCOUNT_NAME"):
        key = os.environ.get("AZURE_STORAGE_ACCOUNT_KEY")
        endpoint = (
            os.environ.get("AZURE_STORAGE_ENDPOINT") or f"https://{account}.blob.core.windows.net"
        )
        return container_of(
            location.container,
            endpoint=endpoint,
            key={"account_name": account, "account_key": key} if key else None,
        )
    msg = (
        f"{location} needs storage credentials: set AZURE_STORAGE_CONNECTION_STRING, or "
        "AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_ACCOUNT_KEY (or a managed identity)"
    )
    raise ConfigError(msg)


def container_of(
    name: str,
    *,
    connection_string: str | None = None,
    endpoint: str | None = None,
    key: dict[str, str] | None = None,
) -> "ContainerClient":
    """A container client from a connection string, or from an endpoint with an account key (else
    the identity azure-identity finds), its failed calls retried within bounds."""
    from azure.storage.blob import BlobServiceClient

    if connection_string:
        service = BlobServiceClient.from_connection_string(connection_string, **_bounded_retries())
        return service.get_container_client(name)
    if key is None:
        from azure.identity import DefaultAzureCredential

        credential: TokenCredential | dict[str, str] = DefaultAzureCredential()
    else:
        credential = key
    service = BlobServiceClient(endpoint or "", credential=credential, **_bounded_retries())
    return service.get_container_client(name)


def _bounded_retries() -> dict[str, Any]:
    """Two retries of a failed storage call, ~1.5 s apart (the SDK's default waits 15 s, then
    more, per call: a replica polling every 2 s, or a command facing a wrong endpoint, waited
    minutes); a failed run is run again."""
    from azure.storage.blob import ExponentialRetry

    retry = ExponentialRetry(  # the SDK's annotations say int; it takes seconds as float
        initial_backoff=0.5,  # type: ignore[arg-type]
        increment_base=1,
        retry_total=2,
        random_jitter_range=0.5,  # type: ignore[arg-type]
    )
    return {"retry_policy": retry, "connection_timeout": 10}


@contextmanager
def storage_errors(action: str, location: BlobLocation) -> Iterator[None]:
    """A refused or unreachable storage account, or a failed storage call, as one error naming
    it."""
    from azure.core.exceptions import AzureError, HttpResponseError, ServiceRequestError

    try:
        yield
    except HttpResponseError as error:
        reason = (
            getattr(code := getattr(error, "error_code", None), "value", code)
            or error.reason
            or str(error).splitlines()[0]
        )
        if error.status_code in (401, 403):
            msg = (
                f"{location}: the storage account refused the credentials while {action} "
                f"({reason}); check the AZURE_STORAGE_* settings, and the identity's access "
                "to the container"
            )
            raise ConfigError(msg) from None
        raise GraphRagMcpError(f"{location}: storage failed while {action}: {reason}") from None
    except ServiceRequestError as error:
        msg = (
            f"{location}: the storage account is unreachable while {action} ({error}); "
            "check AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ENDPOINT"
        )
        raise ConfigError(msg) from None
    except AzureError as error:
        reason = str(error).splitlines()[0]
        raise GraphRagMcpError(f"{location}: storage failed while {action}: {reason}") from None
    except OSError as error:  # the local copy's disk
        msg = f"{location}: the local copy failed while {action}: {error}"
        raise GraphRagMcpError(msg) from None
