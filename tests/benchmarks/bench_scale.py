"""Benchmark: how builds, updates, searches, concurrency, memory and the CLI scale with the corpus
(issue 12).

Run: python tests/benchmarks/bench_scale.py [--sizes 100,300,1000] [--queries 10] [--repeat 2]
For each size, generates a corpus whose cast grows with it (4 new people, an organisation and a
place every 5 documents), indexes it with the offline model (no key, no network) and measures, side
by side in one run:
- cold build and three one-document edits' incremental `index`: wall seconds, LLM calls, reports
  carried over; one more `index` with nothing changed;
- save -> queryable under `serve --watch`;
- search latency over real MCP sessions (stdio) against the in-process floor (graphrag called
  directly on preloaded tables, the same queries, alternating with the server's calls);
- 16 concurrent streamable-HTTP sessions against one client; the server's resident memory;
- cold `graphrag-mcp stats` and `graphrag-mcp query --context-only`;
- import floors: fresh processes that only import the libraries every update, and every context-only
  query, loads whatever the project does (graphrag's pipeline, graphrag-llm's model clients with
  LiteLLM, LanceDB): no one-process `index` edit or cold query can be faster, so these bound what
  the edit and cold-query targets can reach.
Prints the table and writes the "Scale" section of docs/benchmarks.md (the other sections are kept).
The model is always the offline one (`--offline` is accepted and changes nothing). Smoke run:
`--sizes 20,40 --queries 3` (about 8 minutes on 2 cores). Not a test: a cold build of 1000 documents
alone takes about 4 minutes on 2 cores; figures depend on the machine, so compare the columns of one
run.
"""

import argparse
import asyncio
import json
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_doc import write_sections
from corpora import DOCUMENTS_PER_CLUSTER, chain_corpus, person, rename

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Scale"
SESSIONS = 16
WORKERS = (1, 2)  # serve --workers N measured under load
SETTLE_SECONDS = 0.5  # serve --watch's settle window, as bench_incremental.py
IDLE_BEFORE_SAVE = (
    10.0  # as in use, the server has been up a while: its spare index worker is ready
)
WATCH_DEADLINE = 900.0
SINGLE_ROUNDS = 3  # the one client goes over the queries this many times (a steadier baseline)
CLI_RUNS = 3  # cold CLI figures are the median of this many fresh processes
EDITS = (
    (1 / 4, "Zora Quillfeather"),
    (1 / 2, "Quentin Larkspur"),
    (3 / 4, "Ottilie Vance"),
)  # where, new name
WATCHED_NAME = "Ysolde Marchbank"
UPDATE_IMPORTS = (
    "graphrag.api",
    "graphrag_llm.completion",
    "graphrag_llm.embedding",
    "graphrag_vectors.lancedb",
)
"""What every update process imports: graphrag's pipeline, the model clients (LiteLLM), the vector
store."""
QUERY_IMPORTS = (
    "graphrag_llm.embedding",
    "graphrag_vectors.lancedb",
    "graphrag.query.structured_search.local_search.mixed_context",
)
"""What every context-only local query imports: the embedding client for the query, the vector
store, graphrag's context builder."""


# --- corpus ---------------------------------------------------------------------------------------


def queries(documents: int, count: int) -> list[str]:
    """'Who is X?' for `count` people spread evenly over the corpus's clusters."""
    clusters = math.ceil(documents / DOCUMENTS_PER_CLUSTER)
    picked = [round(k * (clusters - 1) / max(count - 1, 1)) * 4 + k % 4 for k in range(count)]
    return [f"Who is {person(index)}?" for index in dict.fromkeys(picked)]


# --- CLI ------------------------------------------------------------------------------------------


def cli(*args: str) -> tuple[float, dict]:
    """Wall seconds of one `graphrag-mcp ... --format json` process, and its JSON object; exits on
    failure."""
    command = [sys.executable, "-m", "graphrag_mcp_server", *args, "--format", "json"]
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    seconds = time.perf_counter() - started
    if completed.returncode != 0:
        print(
            f"failed ({completed.returncode}): {' '.join(command)}\n{completed.stderr[-5000:]}",
            file=sys.stderr,
        )
        sys.exit(1)
    return seconds, json.loads(completed.stdout)


def import_floor(modules: tuple[str, ...]) -> float:
    """Wall seconds of a fresh Python process that imports `modules` and does nothing else
    (LiteLLM's bundled cost map, as the CLI sets it)."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", f"import {', '.join(modules)}"],
        check=True,
        env=env,
        cwd=REPO,
        capture_output=True,
    )
    return time.perf_counter() - started


def alternating(*runs: Callable[[], float]) -> list[float]:
    """Each run's median over CLI_RUNS rounds, the runs taking turns (this machine's speed
    drifts)."""
    rounds = [[run() for run in runs] for _ in range(CLI_RUNS)]
    return [statistics.median(figures) for figures in zip(*rounds, strict=True)]


# --- MCP sessions ---------------------------------------------------------------------------------


def serve_args(root: Path, *extra: str) -> list[str]:
    return ["-m", "graphrag_mcp_server", "serve", "--index-path", str(root), *extra]


@asynccontextmanager
async def stdio_session(root: Path, log: Path, *extra: str, env: dict[str, str] | None = None):
    """A client session with `graphrag-mcp serve` over stdio (the server's stderr goes to `log`)."""
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(root, *extra), env={**os.environ, **(env or {})}
    )
    with log.open("a") as errors:
        try:
            async with (
                stdio_client(params, errlog=errors) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.call_tool("get_statistics", {})  # the index is loaded
                yield session
        except BaseException:
            print(log.read_text()[-5000:], file=sys.stderr)
            raise


@contextmanager
def http_server(root: Path, log: Path, workers: int = 1):
    """`graphrag-mcp serve --transport streamable-http --workers N` on a free loopback port; yields
    (process, url)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with log.open("a") as errors:
        process = subprocess.Popen(
            [
                sys.executable,
                *serve_args(
                    root,
                    "--transport",
                    "streamable-http",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--workers",
                    str(workers),
                ),
            ],
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        try:
            _wait_for_port(port, process, log)
            yield process, f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(timeout=30)


def _wait_for_port(port: int, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"server exited with {process.returncode}:\n{log.read_text()[-5000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    sys.exit(f"server did not listen on {port}")


@asynccontextmanager
async def http_session(url: str):
    async with (
        streamable_http_client(url) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> float:
    """Seconds of one tool call; a tool error raises."""
    started = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    seconds = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")
    return seconds


def server_pid(root: Path) -> int:
    """The pid of the `serve` child this process started over `root` (the stdio client spawns
    it)."""
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text, command = status.read_text(), (status.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if (
            f"PPid:\t{os.getpid()}\n" in text
            and b"serve" in command
            and str(root).encode() in command
        ):
            return int(status.parent.name)
    raise RuntimeError(f"no server process over {root}")


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident memory of process `pid` in MB (VmRSS; VmHWM: its peak)."""
    line = next(
        line
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith(f"{field}:")
    )
    return int(line.split()[1]) / 1024


def worker_pids(pid: int) -> list[int]:
    """The `serve --workers` processes under `pid` (uvicorn spawns them)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [
        int(child)
        for child in children
        if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
    ]


# --- in-process floors ----------------------------------------------------------------------------


@dataclass
class Loaded:
    """The index's config and tables, loaded once in this process with the project's own helpers."""

    config: Any
    tables: Any


async def load_index(root: Path) -> Loaded:
    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.config.runtime import prepare_graphrag
    from graphrag_mcp_server.handlers.tables import load_tables

    prepare_graphrag()
    try:
        config = load_index_config(root)  # changes the working directory to the root
        return Loaded(config, await load_tables(config, root))
    finally:
        os.chdir(REPO)


async def floor_local_answer(index: Loaded, query: str) -> None:
    """graphrag.api.local_search on the preloaded tables, with the server's default options."""
    import graphrag.api as api

    tables = index.tables
    await api.local_search(
        config=index.config,
        entities=tables.entities,
        communities=tables.communities,
        community_reports=tables.community_reports,
        text_units=tables.text_units,
        relationships=tables.relationships,
        covariates=tables.covariates,
        community_level=2,
        response_type="Multiple Paragraphs",
        query=query,
    )


async def floor_local_context(index: Loaded, query: str) -> None:
    """graphrag's local context for `query`: the engine built as graphrag.api.local_search builds
    it, then its context builder once, with the server's default budget."""
    from graphrag.config.embeddings import entity_description_embedding
    from graphrag.query.factory import get_local_search_engine
    from graphrag.query.indexer_adapters import (
        read_indexer_covariates,
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_reports,
        read_indexer_text_units,
    )
    from graphrag.utils.api import get_embedding_store

    from graphrag_mcp_server.handlers.search.context import DEFAULT_CONTEXT_TOKENS

    tables, level = index.tables, 2
    covariates = read_indexer_covariates(tables.covariates) if tables.covariates is not None else []
    engine = get_local_search_engine(
        config=index.config,
        reports=read_indexer_reports(tables.community_reports, tables.communities, level),
        text_units=read_indexer_text_units(tables.text_units),
        entities=read_indexer_entities(tables.entities, tables.communities, level),
        relationships=read_indexer_relationships(tables.relationships),
        covariates={"claims": covariates},
        description_embedding_store=get_embedding_store(
            config=index.config.vector_store, embedding_name=entity_description_embedding
        ),
        response_type="Multiple Paragraphs",
    )
    engine.context_builder.build_context(
        query=query,
        **{**engine.context_builder_params, "max_context_tokens": DEFAULT_CONTEXT_TOKENS},
    )


# --- measurements ---------------------------------------------------------------------------------


@dataclass
class Scale:
    """Everything measured on one corpus size."""

    documents: int
    entities: int = 0
    cold_seconds: float = 0.0
    cold_calls: int = 0
    cold_run_seconds: float = (
        0.0  # the summary's `seconds`: from reading the documents to the switch
    )
    edits: list[dict] = field(
        default_factory=list
    )  # each edit's `index --format json` object, with its "wall"
    unchanged_seconds: float = (
        0.0  # wall of an `index` run after the edits, with nothing changed since
    )
    save_to_queryable: float | None = None
    watch_run_seconds: float | None = (
        None  # that update's own `seconds`, in serve --watch's waiting index worker
    )
    update_floor: float = 0.0  # import_floor(UPDATE_IMPORTS)
    query_floor: float = 0.0  # import_floor(QUERY_IMPORTS)
    p50: dict[str, float] = field(default_factory=dict)  # what -> median seconds
    load: dict[int, "Load"] = field(default_factory=dict)  # workers -> figures
    rss: dict[str, float] = field(default_factory=dict)  # server -> MB
    stats_seconds: float = 0.0
    query_seconds: float = 0.0


@dataclass
class Load:
    """One client, then SESSIONS at once, against
    `serve --transport streamable-http --workers N`."""

    single_rate: float = 0.0
    concurrent_rate: float = 0.0
    concurrent_errors: int = 0
    concurrent_p50: float = 0.0


SEARCHES = {  # what -> (tool, arguments besides the query)
    "local answer": ("local_search", {}),
    "local context_only": ("local_search", {"context_only": True}),
    "basic context_only": ("basic_search", {"context_only": True}),
    "global context_only": ("global_search", {"context_only": True}),
}
FLOORS: dict[str, Callable[[Loaded, str], Awaitable[None]]] = {
    "local answer": floor_local_answer,
    "local context_only": floor_local_context,
}


async def timed(work: Awaitable[Any]) -> float:
    started = time.perf_counter()
    await work
    return time.perf_counter() - started


async def latencies(scale: Scale, root: Path, asked: list[str], repeat: int, log: Path) -> None:
    """p50 of each search over stdio and of its in-process floor, calls alternating; then the
    server's RSS. One untimed round first warms both (imports, caches)."""
    index = await load_index(root)
    samples: dict[str, list[float]] = {}
    async with stdio_session(root, log) as session:
        for round_number in range(repeat + 1):
            for what, (tool, options) in SEARCHES.items():
                for query in asked:
                    server = await call(session, tool, {"query": query, **options})
                    floor = await timed(FLOORS[what](index, query)) if what in FLOORS else None
                    if round_number:
                        samples.setdefault(what, []).append(server)
                        if floor is not None:
                            samples.setdefault(f"{what} floor", []).append(floor)
        scale.rss["stdio, after the searches"] = rss_mb(server_pid(root))
    scale.p50 = {what: statistics.median(values) for what, values in samples.items()}


async def concurrency(scale: Scale, root: Path, asked: list[str], log: Path, workers: int) -> None:
    """Local searches: one client over the query set, then SESSIONS sessions each over it at
    once."""
    load = scale.load[workers] = Load()
    with http_server(root, log, workers) as (process, url):
        await _sessions_at_once(url, asked)  # warm-up: every worker loads the index and answers
        async with http_session(url) as single:
            started = time.perf_counter()
            for query in asked * SINGLE_ROUNDS:
                await call(single, "local_search", {"query": query})
            load.single_rate = len(asked) * SINGLE_ROUNDS / (time.perf_counter() - started)
        results = await _sessions_at_once(url, asked)
        if workers == 1:
            scale.rss[f"streamable HTTP, after {SESSIONS} sessions"] = rss_mb(process.pid)
        else:
            each = [rss_mb(pid) for pid in worker_pids(process.pid)]
            scale.rss[f"--workers {workers}, each worker"] = max(each)
    seconds, outcomes = results
    load.concurrent_errors = sum(1 for outcome in outcomes if isinstance(outcome, BaseException))
    done = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    load.concurrent_rate = len(done) / seconds
    load.concurrent_p50 = statistics.median(done) if done else math.nan


async def _sessions_at_once(
    url: str, asked: list[str]
) -> tuple[float, list[float | BaseException]]:
    """SESSIONS sessions connect, then all search at once (each its own rotation of the queries);
    the wall seconds from the start signal to the last answer, and each call's seconds or error."""
    start, ready = asyncio.Event(), []
    outcomes: list[float | BaseException] = []

    async def client(number: int) -> None:
        rotated = asked[number % len(asked) :] + asked[: number % len(asked)]
        try:
            async with http_session(url) as session:
                ready.append(number)
                await start.wait()
                for query in rotated:
                    try:
                        outcomes.append(await call(session, "local_search", {"query": query}))
                    except Exception as error:  # noqa: BLE001 - an error is a figure here
                        outcomes.append(error)
        except Exception as error:  # noqa: BLE001 - so is a session that fails
            outcomes.append(error)
            ready.append(number)

    tasks = [asyncio.create_task(client(number)) for number in range(SESSIONS)]
    while len(ready) < SESSIONS:
        await asyncio.sleep(0.05)
    started = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    return time.perf_counter() - started, outcomes


async def save_to_queryable(
    data: Path, root: Path, documents: int, log: Path, number: int | None = None, slot: int = 2
) -> tuple[float | None, float | None]:
    """Seconds from saving a renamed person (the `slot`-th of document `number`'s cluster; by
    default of the document a third into the corpus) under `serve --watch` until a basic_search
    context shows the name, and the `seconds` of that update's summary; None, None after
    WATCH_DEADLINE."""
    env = {"GRAPHRAG_MCP_WATCH_SETTLE_SECONDS": str(SETTLE_SECONDS)}
    async with stdio_session(
        root, log, "--watch", str(data), "--data-path", str(data), env=env
    ) as session:
        await asyncio.sleep(IDLE_BEFORE_SAVE)
        version = await _statistics(session)
        saved = time.monotonic()
        rename(data, documents // 3 if number is None else number, slot, WATCHED_NAME)
        while time.monotonic() - saved < WATCH_DEADLINE:
            if (await _statistics(session))["index_version"] != version["index_version"]:
                result = await session.call_tool(
                    "basic_search", {"query": f"Who is {WATCHED_NAME}?", "context_only": True}
                )
                if WATCHED_NAME in json.dumps(result.structured_content):
                    return time.monotonic() - saved, await _run_seconds(session, saved)
            await asyncio.sleep(0.2)
    return None, None


async def _run_seconds(session: ClientSession, saved: float) -> float | None:
    """The `seconds` of the summary of the job that made the new version (the version switches
    before the worker reports its summary); None after WATCH_DEADLINE."""
    while time.monotonic() - saved < WATCH_DEADLINE:
        if (
            summary := ((await _statistics(session)).get("last_job") or {}).get("summary")
        ) is not None:
            return summary["seconds"]
        await asyncio.sleep(0.2)
    return None


async def _statistics(session: ClientSession) -> dict:
    statistics_ = (await session.call_tool("get_statistics", {})).structured_content
    job = statistics_.get("last_job") or {}
    if job.get("state") == "failed":
        raise RuntimeError(f"the watcher's index job failed: {job.get('error')}")
    return statistics_


def measure(work: Path, documents: int, query_count: int, repeat: int) -> Scale:
    """Build, update and query a generated corpus of `documents` files."""
    data, root, log = (
        work / f"data_{documents}",
        work / f"index_{documents}",
        work / f"server_{documents}.log",
    )
    chain_corpus(data, documents)
    scale = Scale(documents)
    scale.cold_seconds, build = cli("index", str(data), "--index-path", str(root), "--offline")
    scale.cold_calls, scale.entities = build["llm_calls"], build["entities"]
    scale.cold_run_seconds = build["seconds"]
    print(
        f"{documents} documents: cold build {scale.cold_seconds:.1f} s, {scale.cold_calls} calls",
        flush=True,
    )
    for (
        where,
        name,
    ) in EDITS:  # one document at a time: how much an edit costs depends on who it renames
        rename(data, int(documents * where), 1, name)
        wall, edit = cli(
            "index", str(data), "--index-path", str(root), "--offline", "--incremental"
        )
        scale.edits.append({**edit, "wall": wall})
    scale.unchanged_seconds, _ = cli(
        "index", str(data), "--index-path", str(root), "--offline", "--incremental"
    )
    asked = queries(documents, query_count)
    asyncio.run(latencies(scale, root, asked, repeat, log))
    print(f"{documents} documents: latencies measured", flush=True)
    for workers in WORKERS:
        asyncio.run(concurrency(scale, root, asked, log, workers))
        print(
            f"{documents} documents: {SESSIONS} sessions on {workers} worker(s) measured",
            flush=True,
        )
    query = ("query", asked[0], "--index-path", str(root), "--type", "local", "--context-only")
    scale.stats_seconds, scale.query_seconds, scale.query_floor, scale.update_floor = alternating(
        lambda: cli("stats", "--index-path", str(root))[0],
        lambda: cli(*query)[0],
        lambda: import_floor(QUERY_IMPORTS),
        lambda: import_floor(UPDATE_IMPORTS),
    )
    scale.save_to_queryable, scale.watch_run_seconds = asyncio.run(
        save_to_queryable(data, root, documents, log)
    )
    print(f"{documents} documents measured", flush=True)
    return scale


# --- report ---------------------------------------------------------------------------------------


def verdict(scales: list[Scale], ok: Callable[[Scale], bool]) -> str:
    """'met', or 'not met' naming the sizes that miss."""
    missed = [str(scale.documents) for scale in scales if not ok(scale)]
    return "met" if not missed else f"not met ({', '.join(missed)} docs)"


def row(
    scales: list[Scale],
    what: str,
    cell: Callable[[Scale], str],
    target: str = "-",
    ok: Callable[[Scale], bool] | None = None,
    judged: list[Scale] | None = None,
) -> list[str]:
    """One table row: `cell` for each size, the target, and whether the `judged` sizes (all by
    default) meet it."""
    return [
        what,
        *map(cell, scales),
        target,
        verdict(scales if judged is None else judged, ok) if ok else "-",
    ]


def ms(seconds: float) -> str:
    return f"{1000 * seconds:.0f} ms"


def share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%"


def edit_median(scale: Scale, what: str) -> float:
    return statistics.median(_edit_figure(edit, what) for edit in scale.edits)


def edit_cell(scale: Scale, what: str, whole: float) -> str:
    """The edits' median, its share of `whole`, and their range."""
    figures = [_edit_figure(edit, what) for edit in scale.edits]
    shown = "{:.1f}" if isinstance(figures[0], float) else "{}"
    median = statistics.median(figures)
    return (
        f"{shown.format(median)} ({share(median, whole)}) "
        f"[{shown.format(min(figures))}-{shown.format(max(figures))}]"
    )


def _edit_figure(edit: dict, what: str) -> float:
    return edit["carried_over"].get("report", 0) if what == "reports carried" else edit[what]


def build_rows(scales: list[Scale]) -> list[list[str]]:
    return [
        row(scales, "cold build: wall seconds", lambda s: f"{s.cold_seconds:.1f}"),
        row(scales, "cold build: LLM calls", lambda s: str(s.cold_calls)),
        row(
            scales,
            f"edit one document, incremental index: wall seconds, median of {len(EDITS)} "
            "[range] (of cold)",
            lambda s: edit_cell(s, "wall", s.cold_seconds),
            "<= 10% of cold",
            lambda s: edit_median(s, "wall") <= 0.1 * s.cold_seconds,
        ),
        row(
            scales,
            "edit one document: the run itself, without the process's imports: seconds (of cold)",
            lambda s: edit_cell(s, "seconds", s.cold_run_seconds),
            "-",
        ),
        row(
            scales,
            "import floor of any update process: seconds (of cold wall: the least an "
            "`index` edit can take)",
            lambda s: f"{s.update_floor:.1f} ({share(s.update_floor, s.cold_seconds)})",
        ),
        row(
            scales,
            "edit one document under serve --watch (index worker ready): the run's seconds "
            "(of cold)",
            lambda s: (
                "-"
                if s.watch_run_seconds is None
                else f"{s.watch_run_seconds:.1f} ({share(s.watch_run_seconds, s.cold_run_seconds)})"
            ),
        ),
        row(
            scales,
            "incremental index with no change: wall seconds",
            lambda s: f"{s.unchanged_seconds:.1f}",
        ),
        row(
            scales,
            "edit one document, incremental index: LLM calls (of cold)",
            lambda s: edit_cell(s, "llm_calls", s.cold_calls),
            "<= 10% of cold",
            lambda s: edit_median(s, "llm_calls") <= 0.1 * s.cold_calls,
        ),
        row(
            scales,
            "edit one document: community reports carried over (of all)",
            lambda s: edit_cell(
                s, "reports carried", max(edit["community_reports"] for edit in s.edits)
            ),
        ),
        row(
            scales,
            "save -> queryable under serve --watch: seconds",
            lambda s: "timed out" if s.save_to_queryable is None else f"{s.save_to_queryable:.1f}",
            "<= 10 s",
            lambda s: s.save_to_queryable is not None and s.save_to_queryable <= 10,
        ),
    ]


def search_rows(scales: list[Scale]) -> list[list[str]]:
    def against_floor(what: str, limit: float) -> list[str]:
        def cell(s: Scale) -> str:
            server, floor = s.p50[what], s.p50[f"{what} floor"]
            return f"{ms(server)} / {ms(floor)} = {server / floor:.2f}x"

        return row(
            scales,
            f"{what}: server p50 / in-process floor",
            cell,
            f"<= {limit}x",
            lambda s: s.p50[what] <= limit * s.p50[f"{what} floor"],
        )

    def flat(what: str) -> list[str]:
        growth = scales[-1].p50[what] / scales[0].p50[what]
        return row(
            scales,
            f"{what}: server p50",
            lambda s: ms(s.p50[what]),
            f"flat: {scales[-1].documents} docs <= 1.5x {scales[0].documents} docs (here "
            f"{growth:.2f}x)",
            lambda s: s.p50[what] <= 1.5 * scales[0].p50[what],
            scales[-1:],
        )

    return [
        against_floor("local answer", 1.15),
        against_floor("local context_only", 1.5),
        flat("basic context_only"),
        flat("global context_only"),
    ]


def load_rows(scales: list[Scale]) -> list[list[str]]:
    rows = []
    for workers in WORKERS:
        label = f"{SESSIONS} sessions, --workers {workers}"
        rows += [
            row(
                scales,
                f"{label}: errors",
                lambda s, w=workers: str(s.load[w].concurrent_errors),
                "0",
                lambda s, w=workers: s.load[w].concurrent_errors == 0,
            ),
            row(
                scales,
                f"{label}: searches/s vs 1 client on 1 worker",
                lambda s, w=workers: (
                    f"{s.load[w].concurrent_rate:.1f} vs {s.load[1].single_rate:.1f} = "
                    f"{s.load[w].concurrent_rate / s.load[1].single_rate:.2f}x"
                ),
                ">= 1.5x",
                lambda s, w=workers: s.load[w].concurrent_rate >= 1.5 * s.load[1].single_rate,
            ),
            row(scales, f"{label}: p50 latency", lambda s, w=workers: ms(s.load[w].concurrent_p50)),
        ]
    return [
        *rows,
        row(
            scales,
            "server RSS after load: MB (" + " / ".join(scales[0].rss) + ")",
            lambda s: " / ".join(f"{mb:.0f}" for mb in s.rss.values()),
            "<= 700 MB",
            lambda s: max(s.rss.values()) <= 700,
        ),
    ]


def cli_rows(scales: list[Scale]) -> list[list[str]]:
    at = f"at {scales[-1].documents} docs"
    return [
        row(
            scales,
            "cold `graphrag-mcp stats`: wall seconds",
            lambda s: f"{s.stats_seconds:.2f}",
            f"< 2 s {at}",
            lambda s: s.stats_seconds < 2,
            scales[-1:],
        ),
        row(
            scales,
            "cold `graphrag-mcp query --context-only`: wall seconds",
            lambda s: f"{s.query_seconds:.2f}",
            f"< 4 s {at}",
            lambda s: s.query_seconds < 4,
            scales[-1:],
        ),
        row(
            scales,
            "import floor of any context-only query process: seconds",
            lambda s: f"{s.query_floor:.2f}",
        ),
    ]


def table(scales: list[Scale]) -> str:
    header = [
        "what",
        *(f"{s.documents} docs ({s.entities} entities)" for s in scales),
        "target",
        "met",
    ]
    rows = [*build_rows(scales), *search_rows(scales), *load_rows(scales), *cli_rows(scales)]
    return "\n".join(
        "| " + " | ".join(line) + " |" for line in [header, ["---"] * len(header), *rows]
    )


def section(scales: list[Scale], query_count: int, repeat: int, minutes: float) -> str:
    sizes = ", ".join(str(scale.documents) for scale in scales)
    return f"""{SECTION}

Measured by `python tests/benchmarks/bench_scale.py --sizes {sizes.replace(", ", ",")} --queries \
{query_count} \
--repeat {repeat}` ({minutes:.0f} minutes) on generated corpora of {sizes} documents of about 200 \
words whose cast \
grows with them (4 new people, an organisation and a place every 5 documents), the offline model, \
a \
{platform.machine()} machine with {os.cpu_count()} cores. Queries: "Who is X?" for {query_count} \
people spread over \
each corpus. Figures vary between runs and machines; compare columns of the same run.

- Builds: `graphrag-mcp index DATA --offline` (cold: new index root, empty cache), then \
{len(EDITS)} edits one after \
the other, each renaming a person in one document (a quarter, half and three quarters into the \
corpus) and \
running `index --incremental`; the table gives their median and range. What an edit costs depends \
on whom it \
renames: graphrag's Leiden clustering of the changed graph moves some unrelated entities between \
communities, whose \
reports are then written anew, as a rebuild would. Wall seconds include the process's imports \
(about 6 s); "the \
run itself" is the `seconds` of the index summary, from reading the documents to the switch to the \
new version. \
After the edits, one more `index --incremental` with nothing changed (it stops before importing \
graphrag's pipeline \
and the model libraries).
- Save -> queryable: `serve --watch DATA` over stdio, up {IDLE_BEFORE_SAVE:.0f} s, settle window \
{SETTLE_SECONDS} s; from saving a renamed person to the first `basic_search` context \
(context_only) naming them.
- Latency: p50 of {repeat} timed round(s) over the queries (after an untimed round) of MCP tool \
calls over stdio to \
`graphrag-mcp serve`, as the client sees them. The in-process floor runs in the benchmark process \
on tables \
loaded once, alternating with the server's calls: `graphrag.api.local_search` for answers; for \
context_only, \
graphrag's local engine built as `graphrag.api.local_search` builds it and its context builder \
once, within the \
same 8000-token budget.
- Concurrency: `serve --transport streamable-http --workers N` for N in \
{", ".join(map(str, WORKERS))}; after an untimed \
round of {SESSIONS} sessions (every worker loaded), one session runs `local_search` over the \
queries \
{SINGLE_ROUNDS} times, then \
{SESSIONS} sessions do so at once (each from another query). Throughput is compared with one \
client on one \
worker; the benchmark's clients share the machine's cores with the server. RSS: VmRSS of the \
server process after the \
stdio searches, of the HTTP server after the {SESSIONS} sessions, and of the largest worker with \
--workers.
- Cold CLI: median of {CLI_RUNS} fresh processes, taking turns with the import floors: \
`graphrag-mcp stats` and \
`graphrag-mcp query "Who is X?" --type local --context-only`.
- Import floors: median of {CLI_RUNS} fresh Python processes that only import what every update \
loads \
(`{", ".join(UPDATE_IMPORTS)}`) and what every context-only query loads \
(`{", ".join(QUERY_IMPORTS)}`). graphrag \
3.3 pins LiteLLM (1.100.1), which graphrag-llm imports with its types, and LanceDB (0.38), which \
imports its REST \
namespace client: an edit run as its own `index` process cannot take less than the update floor, \
nor a cold query \
less than the query floor, whatever this project does.

{table(scales)}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="100,300,1000", help="comma-separated corpus sizes (documents)"
    )
    parser.add_argument("--queries", type=int, default=10, help="queries per search kind")
    parser.add_argument("--repeat", type=int, default=2, help="timed rounds over the queries")
    parser.add_argument(
        "--offline",
        action="store_true",
        default=True,
        help="the offline model (no key, no network): the only model this benchmark uses",
    )
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="graphrag-mcp-scale-") as tmp:
        scales = [measure(Path(tmp), documents, args.queries, args.repeat) for documents in sizes]
    text = section(scales, args.queries, args.repeat, (time.monotonic() - started) / 60)
    print(text)
    write_sections(text)


if __name__ == "__main__":
    main()
