"""Benchmark: what builds, updates and searches cost on a generated archive as it grows (issue 40).

Run: python tests/benchmarks/bench_archive.py [--sizes 300,1000] [--queries 10] [--rounds 2]
For each size, generates the archive of ../shared/corpora/archive/generate.py (documents of ~512
words, a core cast of 12 people, 6 organisations and 6 places named across the corpus) into a
temporary folder, builds it cold with the offline model (`graphrag-mcp index DATA --offline`, a
subprocess: wall and CPU seconds, peak RSS), then, one after the other, one `index` run after each
of: three one-document edits, each on a document naming a different hub (the three most connected
people of the smallest size's index, the same at every size), an added 2-sentence document and a
deleted document (LLM calls, reports rewritten and carried over, report contexts rebuilt, seconds).
Last, context_only searches (local, global, drift, basic) over `--queries` questions naming hubs,
through an MCP session with the server in this process (no process start measured): p50 and p95 per
search type. Writes the "Archive (issue 40)" section of docs/benchmarks.md, with the issue's targets
judged against the smallest size measured. `--results FILE` also keeps the figures as JSON;
`--render FILE...` writes the section from such files (sizes measured in separate runs, smallest
first) without measuring. Not a test: about 3 minutes at 300 documents on 2 cores, and more than
linearly longer for larger sizes.
"""

import argparse
import asyncio
import dataclasses
import datetime
import json
import logging
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "benchmarks"), str(TESTS)]
from bench_scale import (  # noqa: E402
    IDLE_BEFORE_SAVE,
    REPO,
    SETTLE_SECONDS,
    WATCH_DEADLINE,
    call,
    rss_mb,
    server_pid,
    stdio_session,
)
from benchmarks_doc import write_sections  # noqa: E402

from mcp_client import IN_PROCESS, mcp_session  # noqa: E402

GENERATOR = REPO.parent / "shared" / "corpora" / "archive" / "generate.py"
SECTION = "## Archive (issue 40)"
EDITS = ("edit 1", "edit 2", "edit 3")
STEPS = (*EDITS, "add", "delete")
SEARCHES = ("local", "global", "drift", "basic")
HUBS = 3
NEWCOMERS = ("Zora Quillfeather", "Quentin Larkspur", "Ottilie Vance")  # one new person per edit
WATCHED = "Perdita Ravensworth"  # the person a watched edit adds
ADDED = "added_note.txt"  # not doc_NNNN: the generator's 10,000 documents use every such name


@dataclass
class Run:
    """One `graphrag-mcp index` process: its JSON summary, wall and CPU seconds, peak RSS."""

    summary: dict
    wall: float
    cpu: float
    rss_mib: float

    def computed(self, what: str) -> int:
        return self.summary.get("computed", {}).get(what, 0)

    def carried(self, what: str) -> int:
        return self.summary.get("carried_over", {}).get(what, 0)

    def members_changed(self) -> int | None:
        """Communities whose members changed (not kept from the previous clustering); None if
        re-clustered."""
        clustering = self.summary.get("clustering")
        return clustering["communities"] - clustering["kept"] if clustering else None


@dataclass
class Size:
    documents: int
    runs: dict[str, Run] = field(default_factory=dict)
    hubs: list[str] = field(default_factory=list)
    edited: dict[str, str] = field(default_factory=dict)
    searches: dict[str, list[float]] = field(default_factory=dict)
    queryable: float | None = None
    """Seconds from saving an edit under `serve --watch` to a local_search context naming it."""
    queryable_parts: dict[str, float] = field(default_factory=dict)
    """Its parts: the watched job's start after the save, the job's own run, and what follows the
    job's end (the server's load of the new version, the first search)."""
    server_mib: dict[str, float] = field(default_factory=dict)
    """The watching server's RSS: loaded (before the save), after the update, and its peak."""
    minutes: float = 0.0
    queries: int = 0
    rounds: int = 0
    commit: str = ""
    date: str = ""


def index(data: Path, root: Path) -> Run:
    """One `index` process, waited for with wait4 so that its own rusage (CPU, max RSS) is read, not
    the max over every child this process has had."""
    command = [
        sys.executable,
        "-m",
        "graphrag_mcp_server",
        "index",
        str(data),
        "--index-path",
        str(root),
        "--offline",
        "--format",
        "json",
    ]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True, cwd=REPO)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            sys.exit(f"index failed ({process.returncode}):\n{err.read()[-5000:]}")
        summary = json.loads(out.read())
    return Run(summary, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def hubs(root: Path) -> list[str]:
    """The HUBS most connected people of the served version (core-cast people, whose descriptions
    grow with the corpus; the most connected entities of any type if the index has too few
    people)."""
    import pandas as pd

    from graphrag_mcp_server.handlers.indexing.versions import current_version

    entities = pd.read_parquet(
        current_version(root) / "entities.parquet", columns=["title", "type", "degree"]
    )
    people = entities[entities["type"].str.upper() == "PERSON"]
    ranked = (people if len(people) >= HUBS else entities).sort_values("degree", ascending=False)
    return ranked["title"].head(HUBS).tolist()


def naming(data: Path, hub: str, others: list[str], near: int) -> Path:
    """The first document at or after `near` (wrapping round) that names `hub` and none of
    `others`."""
    documents = sorted(data.glob("doc_*.txt"))
    for path in documents[near:] + documents[:near]:
        text = path.read_text(encoding="utf-8").lower()
        if hub.lower() in text and not any(other.lower() in text for other in others):
            return path
    sys.exit(f"no document names {hub} alone")


def change(size: Size, data: Path, step: str) -> None:
    """Apply one of STEPS to the archive in `data`."""
    documents = size.documents
    if step in EDITS:
        number = EDITS.index(step)
        hub = size.hubs[number]
        path = naming(
            data, hub, [other for other in size.hubs if other != hub], documents * (number + 1) // 4
        )
        size.edited[step] = f"{path.name} ({hub.title()})"
        path.write_text(
            path.read_text(encoding="utf-8").rstrip("\n") + f" In the autumn {hub.title()} met "
            f"{NEWCOMERS[number]} at the pier to talk about the harbour dues.\n",
            encoding="utf-8",
        )
    elif step == "add":
        (data / ADDED).write_text(
            f"Record 9999: a note\n\nPerpetua Quimby met {size.hubs[0].title()} at the "
            "pier. Perpetua Quimby "
            "wrote afterwards about the harbour dues.\n",
            encoding="utf-8",
        )
    else:
        (data / f"doc_{documents // 2 + 1:04d}.txt").unlink()


async def search_latencies(size: Size, root: Path, count: int, rounds: int) -> None:
    """Seconds of each context_only search over an in-process MCP session; one untimed round warms
    it."""
    asked = [f"What did {hub.title()} do, and with whom?" for hub in size.hubs]
    asked += [f"Who worked with {hub.title()} on the harbour?" for hub in size.hubs]
    asked += [
        f"How is {size.hubs[k % HUBS].title()} connected to {size.hubs[(k + 1) % HUBS].title()}?"
        for k in range(HUBS)
    ]
    asked = (asked * (count // len(asked) + 1))[:count]
    logging.getLogger("graphrag").setLevel(
        logging.ERROR
    )  # not graphrag's token-limit warnings per query
    async with mcp_session(root, IN_PROCESS) as session:
        for round_number in range(rounds + 1):
            for search in SEARCHES:
                for query in asked:
                    seconds = await call(
                        session, f"{search}_search", {"query": query, "context_only": True}
                    )
                    if round_number:
                        size.searches.setdefault(search, []).append(seconds)


async def watched_edit(size: Size, data: Path, root: Path, log: Path) -> None:
    """Under `serve --watch` (a subprocess over stdio), the seconds from appending a sentence naming
    WATCHED to a document of the first hub until a local_search context names WATCHED (a basic
    search does not find one new name in a 512-word text unit: issue 42), and the
    server's RSS before the save, after the update and at its peak."""
    env = {"GRAPHRAG_MCP_WATCH_SETTLE_SECONDS": str(SETTLE_SECONDS)}
    async with stdio_session(
        root, log, "--watch", str(data), "--data-path", str(data), env=env
    ) as session:
        await asyncio.sleep(IDLE_BEFORE_SAVE)
        server = server_pid(root)
        size.server_mib["loaded"] = rss_mb(server)
        version = await index_version(session)
        hub = size.hubs[0]
        path = naming(data, hub, size.hubs[1:], size.documents * 3 // 4)
        saved, saved_at = time.monotonic(), datetime.datetime.now(datetime.UTC)
        path.write_text(
            path.read_text(encoding="utf-8").rstrip("\n") + f" {hub.title()} met {WATCHED} at "
            "the pier.\n",
            encoding="utf-8",
        )
        while time.monotonic() - saved < WATCH_DEADLINE / 3:
            if await index_version(session) != version:
                result = await session.call_tool(
                    "local_search", {"query": f"Who is {WATCHED}?", "context_only": True}
                )
                if WATCHED in json.dumps(result.structured_content):
                    size.queryable = time.monotonic() - saved
                    break
            await asyncio.sleep(0.2)
        if size.queryable is not None:
            size.queryable_parts = await job_parts(session, saved_at, size.queryable)
        size.server_mib["updated"] = rss_mb(server)
        size.server_mib["peak"] = rss_mb(server, "VmHWM")


async def job_parts(session, saved_at: datetime.datetime, queryable: float) -> dict[str, float]:
    """The watched job's start after the save, its own seconds, and the rest of `queryable`
    (index_status's last job: its start and end as the server saw them)."""
    job = (await session.call_tool("index_status", {})).structured_content
    started = datetime.datetime.fromisoformat(job["started_at"])
    finished = datetime.datetime.fromisoformat(job["finished_at"])
    return {
        "start": (started - saved_at).total_seconds(),
        "job": (finished - started).total_seconds(),
        "after": queryable - (finished - saved_at).total_seconds(),
    }


async def index_version(session) -> str:
    return (await session.call_tool("get_statistics", {})).structured_content["index_version"]


def measure(
    work: Path, documents: int, count: int, rounds: int, hubs_of_smallest: list[str]
) -> Size:
    started = time.monotonic()
    size = Size(
        documents,
        queries=count,
        rounds=rounds,
        commit=head(),
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
    )
    data, root = work / f"data_{documents}", work / f"index_{documents}"
    subprocess.run(
        [sys.executable, str(GENERATOR), str(data), str(documents)], check=True, capture_output=True
    )
    size.runs["cold"] = cold = index(data, root)
    print(
        f"{documents} cold: {cold.summary['llm_calls']} calls, {cold.wall:.1f} s, "
        f"{cold.cpu:.1f} CPU s, "
        f"{cold.rss_mib:.0f} MiB",
        flush=True,
    )
    size.hubs = hubs_of_smallest or hubs(root)
    for step in STEPS:
        change(size, data, step)
        size.runs[step] = run = index(data, root)
        print(
            f"{documents} {step} {size.edited.get(step, '')}: {run.summary['llm_calls']} "
            "calls, reports "
            f"{run.computed('report')} / {run.carried('report')}, contexts "
            f"{run.computed('report_context')}, "
            f"{run.summary['seconds']:.1f} s",
            flush=True,
        )
    asyncio.run(search_latencies(size, root, count, rounds))
    asyncio.run(watched_edit(size, data, root, work / f"server_{documents}.log"))
    print(
        f"{documents} save -> queryable under serve --watch: {size.queryable} s, server MiB "
        f"{size.server_mib}",
        flush=True,
    )
    print(
        f"{documents} p50 ms: "
        + ", ".join(f"{search} {1000 * p50(size, search):.0f}" for search in SEARCHES),
        flush=True,
    )
    size.minutes = (time.monotonic() - started) / 60
    return size


def _parts(size: Size) -> str:
    """Save -> queryable's parts, when measured: (job start + the job + after it)."""
    parts = size.queryable_parts
    if not parts:
        return ""
    return f" ({parts['start']:.1f} + job {parts['job']:.1f} + {parts['after']:.1f})"


def p50(size: Size, search: str) -> float:
    return statistics.median(size.searches[search])


def p95(size: Size, search: str) -> float:
    return statistics.quantiles(size.searches[search], n=20, method="inclusive")[-1]


def judged(value: float, limit: float) -> str:
    return "met" if value <= limit else "**not met**"


def edit_calls_target(size: Size, base: Size) -> str:
    """LLM calls <= 1.5x the smallest size's, edit for edit."""
    ratios = [
        size.runs[step].summary["llm_calls"] / base.runs[step].summary["llm_calls"]
        for step in EDITS
    ]
    return ", ".join(f"{ratio:.2f}x {judged(ratio, 1.5)}" for ratio in ratios)


def edit_reports_target(size: Size) -> str:
    """Reports rewritten <= 2x the communities whose members changed, edit for edit."""
    verdicts = []
    for step in EDITS:
        run = size.runs[step]
        changed = run.members_changed()
        verdicts.append(
            "re-clustered"
            if changed is None
            else f"{run.computed('report')} vs {changed} "
            f"{judged(run.computed('report'), 2 * changed)}"
        )
    return ", ".join(verdicts)


def update_target(size: Size, base: Size, step: str) -> str:
    """Run s <= 2x and report contexts rebuilt <= 3x the smallest size's."""
    run, was = size.runs[step], base.runs[step]
    seconds = run.summary["seconds"] / was.summary["seconds"]
    contexts = run.computed("report_context") / max(was.computed("report_context"), 1)
    return (
        f"s {seconds:.2f}x {judged(seconds, 2)} (process CPU s {run.cpu / was.cpu:.2f}x); "
        f"contexts {contexts:.2f}x {judged(contexts, 3)}"
    )


def reports(run: Run) -> str:
    """Reports rewritten / carried over (communities whose members changed)."""
    changed = run.members_changed()
    return (
        f"{run.computed('report')} / {run.carried('report')} "
        f"({'re-clustered' if changed is None else changed})"
    )


def table(sizes: list[Size]) -> str:
    base = sizes[0]
    lines = [
        "| what | " + " | ".join(f"{size.documents} docs" for size in sizes) + " | target (vs "
        f"{base.documents} docs) | verdict per size |",
        "|---" * (len(sizes) + 3) + "|",
    ]

    def row(what: str, cell, target: str = "-", verdict=None) -> None:
        verdicts = (
            "-"
            if verdict is None
            else "; ".join(f"{size.documents}: {verdict(size)}" for size in sizes[1:])
        )
        lines.append(
            f"| {what} | "
            + " | ".join(cell(size) for size in sizes)
            + f" | {target} | {verdicts or '-'} |"
        )

    cold = {size.documents: size.runs["cold"] for size in sizes}
    row(
        "cold build: LLM calls / communities",
        lambda s: (
            f"{cold[s.documents].summary['llm_calls']} / "
            f"{cold[s.documents].summary.get('communities', '-')}"
        ),
    )
    row(
        "cold build: wall s / CPU s (user+sys) / peak RSS MiB",
        lambda s: (
            f"{cold[s.documents].wall:.1f} / {cold[s.documents].cpu:.1f} / "
            f"{cold[s.documents].rss_mib:.0f}"
        ),
        "<= 900 s wall, <= 2,048 MiB (at 10,000)",
        lambda s: (
            f"wall {judged(cold[s.documents].wall, 900)}, RSS "
            f"{judged(cold[s.documents].rss_mib, 2048)}"
        ),
    )
    row("hubs edited (most connected people)", lambda s: ", ".join(hub.title() for hub in s.hubs))
    for step in STEPS:
        row(
            f"{step}: document",
            lambda s, step=step: s.edited.get(
                step, ADDED if step == "add" else f"doc_{s.documents // 2 + 1:04d}.txt"
            ),
        )
        row(f"{step}: LLM calls", lambda s, step=step: str(s.runs[step].summary["llm_calls"]))
        row(
            f"{step}: reports rewritten / carried over (communities with changed members)",
            lambda s, step=step: reports(s.runs[step]),
        )
        row(
            f"{step}: report contexts rebuilt",
            lambda s, step=step: str(s.runs[step].computed("report_context")),
        )
        row(
            f"{step}: run s (`index` wall s, CPU s, peak RSS MiB)",
            lambda s, step=step: (
                f"{s.runs[step].summary['seconds']:.1f} ({s.runs[step].wall:.1f}, "
                f"{s.runs[step].cpu:.1f}, {s.runs[step].rss_mib:.0f})"
            ),
        )
    row(
        "edits: LLM calls against the smallest size",
        lambda s: "-",
        "<= 1.5x, each edit",
        lambda s: edit_calls_target(s, base),
    )
    lines.append(
        "| edits: reports rewritten against communities with changed members | "
        + " | ".join(edit_reports_target(size) for size in sizes)
        + " | <= 2x, each edit | - |"
    )
    for step in ("add", "delete"):
        row(
            f"{step}: run s and contexts rebuilt against the smallest size",
            lambda s: "-",
            "run s <= 2x; contexts rebuilt <= 3x",
            lambda s, step=step: update_target(s, base, step),
        )
    for search in SEARCHES:
        row(
            f"context_only {search}: p50 / p95 ms",
            lambda s, search=search: f"{1000 * p50(s, search):.0f} / {1000 * p95(s, search):.0f}",
            "p50 <= 2x",
            lambda s, search=search: (
                f"{p50(s, search) / p50(base, search):.2f}x "
                f"{judged(p50(s, search), 2 * p50(base, search))}"
            ),
        )
    row(
        "save -> queryable under `serve --watch` (a hub's document edited), s",
        lambda s: "-" if s.queryable is None else f"{s.queryable:.1f}{_parts(s)}",
        "<= 6 s (at 10,000)",
        lambda s: "-" if s.queryable is None else judged(s.queryable, 6),
    )
    row(
        "server RSS MiB: loaded / after the watched update / peak",
        lambda s: (
            " / ".join(f"{s.server_mib[k]:.0f}" for k in ("loaded", "updated", "peak"))
            if s.server_mib
            else "-"
        ),
    )
    row("benchmark minutes at this size", lambda s: f"{s.minutes:.1f}")
    return "\n".join(lines)


def head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout.strip()


def measured_at(sizes: list[Size]) -> str:
    """'commit C on DATE' for each commit and date the sizes were measured at, naming the sizes when
    several."""
    runs: dict[str, list[str]] = {}
    for size in sizes:
        runs.setdefault(f"commit {size.commit} on {size.date}", []).append(str(size.documents))
    if len(runs) == 1:
        return next(iter(runs))
    return "; ".join(f"{run} ({', '.join(documents)} documents)" for run, documents in runs.items())


def section(sizes: list[Size]) -> str:
    sizes_text = ",".join(str(size.documents) for size in sizes)
    return f"""{SECTION}

Measured by `python tests/benchmarks/bench_archive.py --sizes {sizes_text} --queries \
{sizes[0].queries}
--rounds {sizes[0].rounds}` at {measured_at(sizes)}, {platform.machine()}, {os.cpu_count()}
cores (shared), offline model, on the archive of ../shared/corpora/archive/generate.py (seed 7): \
documents of ~512
words, a core cast of 12 people, 6 organisations and 6 places named across the corpus, a local \
cluster every 5
documents.
A cold build (`graphrag-mcp index DATA --offline`, new root; CPU seconds and peak RSS are the \
`index` process's
own rusage), then one `index` run after each change, one after the other: three edits, each \
appending to a
document that names one hub (the three people of highest degree at the smallest size, the same at \
every size)
and not the other two a sentence in which that hub meets a new person; an added 2-sentence \
document naming the
first hub; a deleted document.
"Reports rewritten" is the summary's `computed.report`, "carried over" its `carried_over.report`, \
"contexts
rebuilt" its `computed.report_context`; "run s" its `seconds`. Searches: `--queries` questions \
naming hubs,
`context_only`, over an MCP session with the server in this process (no process start), one \
untimed round then
`--rounds` timed ones. The issue's targets are for 10,000 documents against 300; the verdict \
column applies
them to each larger size measured against the smallest. Last, `serve --watch DATA` over stdio (a
subprocess, settle window {SETTLE_SECONDS} s): a sentence naming a new person appended to a \
document of the first
hub; "save -> queryable" runs until a local_search context (context_only) names that person (in \
brackets: the watched job's start after the save + the job's own run, as index_status times it, + \
the rest: the server's load of the new version and the first search); the server's RSS is
read from /proc before the save, after the update, and its peak (VmHWM). Blob bytes uploaded per \
edit:
bench_blob_delta.py.

{table(sizes)}
"""


def measured(documents: list[int], count: int, rounds: int) -> list[Size]:
    """Each size measured in a temporary folder, removed after."""
    if not GENERATOR.exists():
        sys.exit(f"no archive generator at {GENERATOR}: check out ../shared beside the repository")
    work = Path(tempfile.mkdtemp(prefix="graphrag-mcp-archive-"))
    sizes: list[Size] = []
    try:
        for size in (
            documents
        ):  # the smallest size's hubs at every size: edit k names the same hub throughout
            sizes.append(measure(work, size, count, rounds, sizes[0].hubs if sizes else []))
        return sizes
    finally:
        shutil.rmtree(work, ignore_errors=True)


def loaded(figures: dict) -> Size:
    """A Size from its --results JSON."""
    runs = {step: Run(**run) for step, run in figures.pop("runs").items()}
    return Size(**figures, runs=runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="300,1000", help="document counts, smallest first (300,1000,3000,10000)"
    )
    parser.add_argument(
        "--queries", type=int, default=10, help="questions naming hubs, per search type"
    )
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds over the questions")
    parser.add_argument(
        "--results", type=Path, help="also write the measured figures to this JSON file"
    )
    parser.add_argument(
        "--render",
        type=Path,
        nargs="+",
        help="write the section from --results files (sizes of separate runs), measuring nothing",
    )
    args = parser.parse_args()
    if args.render:
        sizes = [
            loaded(size)
            for path in args.render
            for size in json.loads(path.read_text(encoding="utf-8"))
        ]
    else:
        sizes = measured(
            [int(documents) for documents in args.sizes.split(",")], args.queries, args.rounds
        )
        if args.results:
            args.results.write_text(
                json.dumps([dataclasses.asdict(size) for size in sizes]), encoding="utf-8"
            )
    text = section(sizes)
    print(text)
    write_sections(text)


if __name__ == "__main__":
    main()
