"""Process set-up that must precede the first graphrag import, and the first model call."""

import gc
import logging
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphrag.index.typing.stats import WorkflowMetrics


@cache
def prepare_graphrag() -> None:
    """Make graphrag work offline, quiet and fast.

    LiteLLM's bundled cost map instead of a download (should LiteLLM be imported); LiteLLM's own
    log handler at WARNING (it writes lower records to stdout, the JSON-RPC stream under stdio,
    and logs while it is imported, before logs.litellm_records_as_ours can run); LanceDB's Rust
    log limited to errors; no tqdm bars (a drift search's, on stderr: an MCP client's server log
    or under `query`'s answer; read by tqdm when it is first imported); Arrow's buffers from an
    allocator that keeps freed pages (_arrow_pool_that_keeps_pages). Imports no model library:
    reading an index's config and tables needs none (see prepare_models).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "WARNING")
    os.environ.setdefault("LANCEDB_LOG", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")
    _arrow_pool_that_keeps_pages()


ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
"""Arrow's own setting for its default allocator; when a user sets it, it stands."""


def _arrow_pool_that_keeps_pages() -> None:
    """Allocate Arrow buffers with jemalloc where this pyarrow has it and no allocator is chosen.

    Arrow's default, mimalloc, hands freed pages back to the system within milliseconds, so each
    table read into memory freed a moment before touches new pages, each zeroed by the kernel.
    On a virtual machine whose host reclaims idle memory this zeroing was 8-11 s of system time
    of a one-document update at 10,000 archive documents (2 cores); jemalloc keeps freed pages
    for reuse for seconds: 4-5 s of system time, 1.18 against 1.45 GiB peak resident memory.
    """
    if ARROW_POOL_VARIABLE in os.environ:
        return
    import pyarrow as pa

    if "jemalloc" in pa.supported_memory_backends():
        pa.set_memory_pool(pa.jemalloc_memory_pool())


@cache
def prepare_models() -> None:
    """Import LiteLLM (seconds), quieted, before any model or tokenizer is made; hash LLM cache keys
    faster.

    graphrag-llm imports it anyway; importing it first points tiktoken at the encodings LiteLLM
    bundles (TIKTOKEN_CACHE_DIR), so no tokenizer downloads one. Its log records then go where
    this process's go, never to stdout (logs.litellm_records_as_ours).
    """
    from graphrag_mcp_server.config.logs import litellm_records_as_ours

    prepare_graphrag()
    _hash_cache_keys_faster()
    import litellm

    litellm.suppress_debug_info = True
    litellm_records_as_ours()


def _hash_cache_keys_faster() -> None:
    """Compute graphrag's LLM cache keys with config.cache_keys: the same keys as the `graphrag` CLI
    (so either reuses the other's cache), about 5 times faster than PyYAML's pure-Python emitter."""
    from graphrag_mcp_server.config.cache_keys import hash_like_graphrag
    from graphrag_mcp_server.config.replacements import replace

    replace("graphrag_cache.cache_key.hash_data", hash_like_graphrag)


class WorkflowTimer:
    """graphrag's per-workflow profiler (run_pipeline's `WorkflowProfiler`) without tracemalloc.

    graphrag traces every allocation of every workflow to report its memory in stats.json, which
    made whole builds 3.5-4.5 times slower (1000 generated documents, offline model: 160 s with it,
    35-45 s without). This keeps each workflow's time; its memory figures become the process's peak
    resident memory when the workflow ended and how much the workflow raised that peak.
    """

    def __enter__(self) -> "WorkflowTimer":
        self._peak_before = _peak_resident_bytes()
        self._started = time.time()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._elapsed = time.time() - self._started
        self._peak_after = _peak_resident_bytes()

    @property
    def metrics(self) -> "WorkflowMetrics":
        """The workflow's time and memory, in graphrag's form."""
        from graphrag.index.typing.stats import WorkflowMetrics

        return WorkflowMetrics(
            overall=self._elapsed,
            peak_memory_bytes=self._peak_after,
            memory_delta_bytes=self._peak_after - self._peak_before,
            tracemalloc_overhead_bytes=0,
        )


def _peak_resident_bytes() -> int:
    """This process's peak resident memory so far (0 where the platform does not tell)."""
    try:
        import resource
    except ImportError:  # Windows
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


@cache
def time_workflows_without_tracemalloc() -> None:
    """Have graphrag's pipeline profile its workflows with WorkflowTimer."""
    from graphrag_mcp_server.config.replacements import replace

    replace("graphrag.index.run.run_pipeline.WorkflowProfiler", WorkflowTimer)


def log_no_item_progress() -> None:
    """Keep graphrag's per-item progress ticks ("Summarize ... progress: 812/10447") out of its log:
    one line a summarised description, report or text unit (13,000 lines, about 0.4 s of a
    2000-document update). Workflows still log their start and end, and progress callbacks (the
    CLI's bars) still see every tick."""
    logging.getLogger("graphrag.logger.progress").setLevel(logging.WARNING)


@contextmanager
def imports_frozen() -> Iterator[None]:
    """Within `fewer_garbage_collections`: the collector off while the block imports, then what
    it made frozen (that block's end unfreezes it). graphrag's pipeline and its model libraries
    make about 700,000 objects as they are imported, most of them kept; with the collector on, the
    growing heap was walked again and again (six full collections: 2 s of CPU of a 10 s import on
    a slow host, ~1.5 s of a one-document update's process at 300 documents)."""
    try:
        with collector_paused():
            yield
    finally:
        gc.freeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off within the block, its state restored after. A server's
    load of a version makes millions of objects (lists of unit ids, graphrag's entities): with the
    collector on, one full collection walked them all again (0.4 s of a 1.8 s load at 10,000
    documents). Only cycles wait; what refcounting frees is freed as always."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def fewer_garbage_collections(first_generation: int = 50_000) -> Iterator[None]:
    """Within the block, the collector leaves alone the objects that existed before it (imports, a
    server's tables: `gc.freeze`) and collects the young generation every `first_generation`
    allocations instead of every 700. A build allocates millions of short-lived rows; with the
    default thresholds full collections walked every live object again and again (0.5-0.9 s of a
    4.4 s one-document update at 2000 documents). Garbage with cycles is still collected, only in
    fewer, larger batches."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(first_generation, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
