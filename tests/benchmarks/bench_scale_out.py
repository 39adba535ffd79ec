"""Scale out through blob storage (issue 28), against Azurite on this machine; writes the "Scale
out" section of docs/benchmarks.md.

    python tests/benchmarks/bench_scale_out.py [--documents 300] [--kills 10]

- An indexer (`graphrag-mcp index --storage`) builds a generated corpus into a container; two
  stateless replicas (`serve --transport streamable-http --stateless --storage`, default 2 s poll)
  each follow it from an empty folder; a third server serves the indexer's own local folder (the
  same version, no storage): the local baseline.
- Latency: local_search answers, p50 over rounds taking turns between a replica and the local
  server, after a warm-up round.
- Throughput: 16 concurrent clients (stateless sessions), each over the queries: all on one replica,
  then 8 on each replica.
- Two switches under load: 4 clients (2 a replica) ask basic_search (context only) for a marker
  sentence without pause while the indexer publishes two updates, each adding a document with a
  marker of its own; then on until 500 answers. Failed = a call error; mixed = an index_version
  whose answers disagree on which markers exist. Visible = the first answer of each replica holding
  the new marker, minus the time current.json was switched.
- Kills: the indexer updating (one more document each time) is killed (SIGKILL) at a random point of
  a normal run's duration, 10 times; after each, current.json must name a version that a fresh local
  copy downloads and loads (`stats --storage` into an empty folder) with the documents of that
  version: else it is broken.
"""

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks_doc import write_sections
from corpora import chain_corpus, person

from azurite import Azurite, running_azurite

SECTION = "## Scale out"
CLIENTS = 16
STREAM_CLIENTS = 4
SWITCH_ANSWERS = 500
LATENCY_ROUNDS = 3
THROUGHPUT_ROUNDS = 2
MARKERS = ("Harbour Lamplighter Guild", "Saltmarsh Bellfounders Society")


def env(azurite: Azurite, **extra: str) -> dict[str, str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GRAPHRAG_", "AZURE_"))
    }
    return {**base, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **azurite.env(), **extra}


def cli(azurite: Azurite, *args: str | Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    process = subprocess.run(
        [sys.executable, "-m", "graphrag_mcp_server", *map(str, args)],
        capture_output=True,
        text=True,
        env=env(azurite),
    )
    return time.perf_counter() - started, process


def pointer(azurite: Azurite, location: str) -> dict[str, Any]:
    from azure.storage.blob import BlobServiceClient

    container, prefix = location.removeprefix("az://").split("/", 1)
    client = BlobServiceClient.from_connection_string(
        azurite.env()["AZURE_STORAGE_CONNECTION_STRING"]
    )
    return json.loads(
        client.get_container_client(container).download_blob(f"{prefix}/current.json").readall()
    )


@contextmanager
def server(azurite: Azurite, root: Path, log: Path, *extra: str) -> Iterator[str]:
    """`serve --transport streamable-http --stateless` on a free port; yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with log.open("a") as errors:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphrag_mcp_server",
                "serve",
                "--index-path",
                str(root),
                "--transport",
                "streamable-http",
                "--stateless",
                "--port",
                str(port),
                *extra,
            ],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=env(azurite),
        )
        try:
            deadline = time.monotonic() + 120
            while True:
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                if process.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"server did not start:\n{log.read_text()[-5000:]}")
                time.sleep(0.1)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(timeout=30)


@asynccontextmanager
async def client(url: str) -> AsyncIterator[ClientSession]:
    """A client of a stateless server: each of its requests may go to any replica behind the URL."""
    async with (
        streamable_http_client(url) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def ask(session: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[float, dict]:
    """One tool call: seconds and structured result (an error raises)."""
    started = time.perf_counter()
    result = await session.call_tool(tool, arguments)
    seconds = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")
    return seconds, result.structured_content


async def latency(replica: str, local: str, queries: list[str]) -> tuple[float, float]:
    """p50 of local_search answers: replica vs local folder, taking turns, after a warm-up round."""
    samples: dict[str, list[float]] = {replica: [], local: []}
    async with client(replica) as on_replica, client(local) as on_local:
        for round_number in range(LATENCY_ROUNDS + 1):
            for query in queries:
                for url, session in ((replica, on_replica), (local, on_local)):
                    seconds, _ = await ask(session, "local_search", {"query": query})
                    if round_number:
                        samples[url].append(seconds)
    return statistics.median(samples[replica]), statistics.median(samples[local])


async def throughput(urls: list[str], queries: list[str]) -> tuple[float, int]:
    """Searches a second of CLIENTS clients at once, client k on urls[k % len(urls)]; and the
    errors."""
    start = asyncio.Event()

    async def searches(k: int) -> list[float | BaseException]:
        outcomes: list[float | BaseException] = []
        async with client(urls[k % len(urls)]) as session:
            await start.wait()
            for _ in range(THROUGHPUT_ROUNDS):
                for query in queries[k % len(queries) :] + queries[: k % len(queries)]:
                    try:
                        outcomes.append((await ask(session, "local_search", {"query": query}))[0])
                    except Exception as error:  # noqa: BLE001 - counted
                        outcomes.append(error)
        return outcomes

    clients = [asyncio.create_task(searches(k)) for k in range(CLIENTS)]
    await asyncio.sleep(2)  # every client connected
    started = time.perf_counter()
    start.set()
    results = await asyncio.gather(*clients)
    seconds = time.perf_counter() - started
    outcomes = [outcome for result in results for outcome in result]
    errors = sum(isinstance(outcome, BaseException) for outcome in outcomes)
    return (len(outcomes) - errors) / seconds, errors


async def switches(
    azurite: Azurite, location: str, data: Path, work: Path, replicas: list[str]
) -> dict[str, Any]:
    """Two updates published while STREAM_CLIENTS clients ask without pause (see the module's
    docstring)."""
    answers: list[tuple[float, int, dict | BaseException]] = []
    stop = asyncio.Event()

    async def stream(k: int) -> None:
        async with client(replicas[k % 2]) as session:
            while not stop.is_set():
                try:
                    _, result = await ask(
                        session,
                        "basic_search",
                        {"query": " ".join(MARKERS), "context_only": True, "top_k": 3},
                    )
                    answers.append((time.time(), k % 2, result))
                except Exception as error:  # noqa: BLE001 - counted
                    answers.append((time.time(), k % 2, error))

    def markers(result: dict) -> frozenset[str]:
        text = json.dumps(result["context"])
        return frozenset(marker for marker in MARKERS if marker in text)

    tasks = [asyncio.create_task(stream(k)) for k in range(STREAM_CLIENTS)]
    await asyncio.sleep(3)
    visible: list[float] = []
    for number, marker in enumerate(MARKERS):
        (data / f"zz_marker_{number}.txt").write_text(
            f"The {marker} met in the old customs house. {person(10_000 + number)} kept "
            "its records.\n",
            encoding="utf-8",
        )
        _, process = await asyncio.to_thread(
            cli, azurite, "index", data, "--index-path", work / "indexer", "--storage", location
        )
        if process.returncode:
            sys.exit(process.stderr[-3000:])
        switched = pointer(azurite, location)
        at = datetime.fromisoformat(switched["switched_at"]).timestamp()
        deadline = time.monotonic() + 60
        while True:
            seen = [
                next(
                    (
                        when
                        for when, replica, result in answers
                        if replica == r and isinstance(result, dict) and marker in markers(result)
                    ),
                    None,
                )
                for r in (0, 1)
            ]
            if all(seen) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        visible.append(max((when or float("inf")) - at for when in seen))
        await asyncio.sleep(2)
    while len(answers) < SWITCH_ANSWERS:
        await asyncio.sleep(0.2)
    stop.set()
    await asyncio.gather(*tasks)
    failed = sum(isinstance(result, BaseException) for _, _, result in answers)
    by_version: dict[str, set[frozenset[str]]] = {}
    for _, _, result in answers:
        if isinstance(result, dict):
            by_version.setdefault(result["index_version"], set()).add(markers(result))
    mixed = sum(len(seen) - 1 for seen in by_version.values())
    return {
        "answers": len(answers),
        "failed": failed,
        "mixed": mixed,
        "visible": visible,
        "versions": len(by_version),
    }


def kills(
    azurite: Azurite, location: str, data: Path, work: Path, count: int, rng: random.Random
) -> dict[str, Any]:
    """`count` updates killed at random points (see the module's docstring)."""
    (data / "zz_killed_base.txt").write_text(
        f"{person(19_999)} opened the {MARKERS[0]} archive.\n", encoding="utf-8"
    )
    normal, process = cli(
        azurite, "index", data, "--index-path", work / "indexer", "--storage", location
    )
    if process.returncode:
        sys.exit(process.stderr[-3000:])
    base = len(list(data.iterdir()))
    documents = {pointer(azurite, location)["version"]: base}
    broken, before_switch, after_switch = 0, 0, 0
    for number in range(count):
        (data / f"zz_killed_{number}.txt").write_text(
            f"{person(20_000 + number)} joined the {MARKERS[number % 2]} in {2000 + number}.\n",
            encoding="utf-8",
        )
        previous = pointer(azurite, location)["version"]
        indexer = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "graphrag_mcp_server",
                "index",
                str(data),
                "--index-path",
                str(work / "indexer"),
                "--storage",
                location,
                "--wait",
                "60",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env(azurite),
        )
        time.sleep(
            rng.uniform(0.2, normal + 15)
        )  # its run after waiting up to 15 s for the dead one's lease
        indexer.send_signal(signal.SIGKILL)
        indexer.wait()
        current = pointer(azurite, location)["version"]
        if current == previous:
            before_switch += 1
        else:
            after_switch += 1
            documents[current] = base + number + 1
        fresh = work / f"check-{number}"
        _, stats = cli(
            azurite, "stats", "--index-path", fresh, "--storage", location, "--format", "json"
        )
        shutil.rmtree(fresh, ignore_errors=True)
        if stats.returncode != 0 or json.loads(stats.stdout)["documents"] != documents[current]:
            broken += 1
            print(f"broken after kill {number}: {stats.stderr[-1000:]}", file=sys.stderr)
    return {
        "kills": count,
        "broken": broken,
        "before_switch": before_switch,
        "after_switch": after_switch,
        "normal_seconds": normal,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=28)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    with (
        tempfile.TemporaryDirectory() as temporary,
        running_azurite(Path(temporary) / "azurite") as azurite,
    ):
        work = Path(temporary)
        data = work / "documents"
        chain_corpus(data, options.documents)
        location = azurite.new_location("team")
        cold, process = cli(
            azurite,
            "index",
            data,
            "--index-path",
            work / "indexer",
            "--storage",
            location,
            "--format",
            "json",
        )
        if process.returncode:
            sys.exit(process.stderr[-3000:])
        built = json.loads(process.stdout)
        blobs = _blob_bytes(azurite, location)
        queries = [f"Who is {person(k * options.documents * 4 // 5 // 6)}?" for k in range(6)]
        log = work / "servers.log"
        with (
            server(azurite, work / "replica-1", log, "--storage", location) as one,
            server(azurite, work / "replica-2", log, "--storage", location) as two,
            server(azurite, work / "indexer", log) as local,
        ):
            for url in (one, two, local):
                async with client(url) as session:
                    await ask(session, "get_statistics", {})
            replica_p50, local_p50 = await latency(one, local, queries)
            await throughput([one, two], queries)  # warm-up: both replicas loaded and answering
            single_rate, single_errors = await throughput([one], queries)
            spread_rate, spread_errors = await throughput([one, two], queries)
            switching = await switches(azurite, location, data, work, [one, two])
        killing = kills(azurite, location, data, work, options.kills, rng)
    write_sections(
        report(
            options,
            cold,
            built,
            blobs,
            replica_p50,
            local_p50,
            single_rate,
            single_errors,
            spread_rate,
            spread_errors,
            switching,
            killing,
        )
    )


def _blob_bytes(azurite: Azurite, location: str) -> tuple[int, int]:
    from azure.storage.blob import BlobServiceClient

    container, prefix = location.removeprefix("az://").split("/", 1)
    client = BlobServiceClient.from_connection_string(
        azurite.env()["AZURE_STORAGE_CONNECTION_STRING"]
    )
    version = pointer(azurite, location)["version"]
    listing = client.get_container_client(container).download_blob(
        f"{prefix}/versions/{version}/files.json"
    )
    sizes = [entry["size"] for entry in json.loads(listing.readall())["files"].values()]
    return len(sizes), sum(sizes)  # the version's files (stored by content since issue 40)


def report(
    options: argparse.Namespace,
    cold: float,
    built: dict,
    blobs: tuple[int, int],
    replica_p50: float,
    local_p50: float,
    single_rate: float,
    single_errors: int,
    spread_rate: float,
    spread_errors: int,
    switching: dict,
    killing: dict,
) -> str:
    def met(ok: bool) -> str:
        return "met" if ok else "not met"

    visible = max(switching["visible"])
    ratio = replica_p50 / local_p50
    gain = spread_rate / single_rate
    rows = [
        (
            "cold build published to the container: wall seconds (the run itself)",
            f"{cold:.1f} ({built['seconds']:.1f})",
            "-",
            "-",
        ),
        ("a version in the container: files, MB", f"{blobs[0]}, {blobs[1] / 1e6:.1f}", "-", "-"),
        (
            "new version visible on both replicas after the switch (poll 2 s): seconds, "
            "each switch",
            ", ".join(f"{seconds:.2f}" for seconds in switching["visible"]),
            "<= 5 s",
            met(visible <= 5),
        ),
        (
            f"answers across two switches ({STREAM_CLIENTS} clients, 2 a replica): failed "
            "/ mixed versions",
            f"{switching['failed']} / {switching['mixed']} of {switching['answers']}",
            "0 of >= 500",
            met(
                switching["failed"] == 0
                and switching["mixed"] == 0
                and switching["answers"] >= SWITCH_ANSWERS
            ),
        ),
        (
            "local_search p50: replica (from blob storage) / local folder",
            f"{replica_p50 * 1000:.0f} ms / {local_p50 * 1000:.0f} ms = {ratio:.2f}x",
            "<= 1.3x",
            met(ratio <= 1.3),
        ),
        (
            f"{CLIENTS} clients: searches/s over two replicas vs one replica (errors)",
            f"{spread_rate:.1f} vs {single_rate:.1f} = {gain:.2f}x "
            f"({spread_errors + single_errors})",
            ">= 1.6x",
            met(gain >= 1.6 and spread_errors + single_errors == 0),
        ),
        (
            f"indexer killed at {killing['kills']} random points: broken versions (killed "
            "before / after its switch)",
            f"{killing['broken']} ({killing['before_switch']} / {killing['after_switch']})",
            "0",
            met(killing["broken"] == 0),
        ),
    ]
    table = "\n".join(
        f"| {what} | {value} | {target} | {verdict} |" for what, value, target, verdict in rows
    )
    return f"""{SECTION}

Measured by `python tests/benchmarks/bench_scale_out.py --documents {options.documents} --kills \
{options.kills}` on \
a generated corpus of {options.documents} documents ({built["entities"]} entities), the offline \
model, Azurite \
3.34 (blob service, on this machine), a {platform.machine()} machine with {os.cpu_count()} cores. \
An indexer \
publishes to a container; two stateless replicas each follow it from an empty folder of their own \
(poll 2 s); the \
local baseline serves the indexer's own folder. Replica, local server, Azurite and the benchmark's \
clients share \
the cores. See the benchmark's docstring for each measure; [deployment.md](deployment.md) for the \
topology.

| what | measured | target | met |
| --- | --- | --- | --- |
{table}
"""


if __name__ == "__main__":
    asyncio.run(main())
