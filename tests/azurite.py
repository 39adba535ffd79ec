"""Azurite, the Azure Storage emulator, for the blob storage tests and benchmark: the server docker
compose runs (AZURITE_BLOB_ENDPOINT), else `azurite-blob` from PATH or the repository's node_modules
(`npm ci`, README)."""

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
"""Azurite's development account and its published key (Azurite's documentation): not a secret."""


@dataclass(frozen=True)
class Azurite:
    """A running blob endpoint of the development account."""

    endpoint: str

    def env(self) -> dict[str, str]:
        """The environment a graphrag-mcp process reaches it with."""
        return {
            "AZURE_STORAGE_CONNECTION_STRING": (
                f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};"
                f"AccountKey={ACCOUNT_KEY};BlobEndpoint={self.endpoint};"
            )
        }

    def new_location(self, prefix: str = "index") -> str:
        """az:// URL of a container of its own (so tests sharing the emulator never meet)."""
        return f"az://t{uuid.uuid4().hex[:12]}/{prefix}"


def _binary() -> str:
    found = shutil.which("azurite-blob") or REPO / "node_modules" / ".bin" / "azurite-blob"
    if not Path(found).exists():
        msg = (
            "Azurite is not installed: run `npm ci` in the repository (the README's "
            "install block), or set "
            "AZURITE_BLOB_ENDPOINT to a running one (docker compose -f "
            "docker-compose.test.yml does)"
        )
        raise RuntimeError(msg)
    return str(found)


@contextmanager
def running_azurite(folder: Path) -> Iterator[Azurite]:
    """The emulator's blob service, started in `folder` on a free loopback port for the block."""
    if endpoint := os.environ.get("AZURITE_BLOB_ENDPOINT"):
        yield Azurite(endpoint.rstrip("/"))
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            _binary(),
            "--silent",
            "--location",
            str(folder),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--skipApiVersionCheck",
            "--loose",
            "--disableTelemetry",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    try:
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"Azurite did not start: {process.stderr.read() if process.stderr else ''}"
                )
            time.sleep(0.1)
        yield Azurite(f"http://127.0.0.1:{port}/{ACCOUNT}")
    finally:
        process.terminate()
        process.wait(timeout=10)
