"""Arrow buffers come from an allocator that keeps freed pages, unless the user chose one."""

import os
import subprocess
import sys

import pyarrow as pa
import pytest

pytestmark = pytest.mark.quick

PROBE = """
import pyarrow as pa, pyarrow.parquet as pq, sys
from graphrag_mcp_server.config.runtime import prepare_graphrag
prepare_graphrag()
pq.write_table(pa.table({"n": list(range(100_000))}), sys.argv[1])
table = pq.read_table(sys.argv[1])
print(pa.default_memory_pool().backend_name, pa.jemalloc_memory_pool().bytes_allocated() > 0)
"""


def _pool_after_prepare(tmp_path, **environment: str) -> str:
    """The default pool's backend in a fresh process after prepare_graphrag, and whether a parquet
    read allocated from jemalloc."""
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"} | environment
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "n.parquet")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.skipif(
    "jemalloc" not in pa.supported_memory_backends(), reason="this pyarrow has no jemalloc"
)
def test_tables_are_read_into_jemalloc_by_default(tmp_path) -> None:
    assert _pool_after_prepare(tmp_path) == "jemalloc True"


def test_an_allocator_the_user_chose_stands(tmp_path) -> None:
    assert _pool_after_prepare(tmp_path, ARROW_DEFAULT_MEMORY_POOL="system") == "system False"
