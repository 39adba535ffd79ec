"""Benchmark: what an update costs as a corpus with a recurring cast grows (issue 24).

Run: python tests/benchmarks/bench_incremental.py [--sizes 300,1000,2000] [--before REV]
For each size, generates the recurring corpus (corpora.py: a chain of small casts, and a board of 12
people in 3 bodies, one of whom every document names), indexes it cold with the offline model (no
key, no network), then runs `graphrag-mcp index` after each of these changes, one after the other:
- edit: one document renames the person whom its board sentence names (a hub gains and loses a
  relationship; the same role in the cast at every size);
- add: a new document with two new people, one of whom writes to a board member;
- delete: one document removed;
then serves it with `serve --watch` and renames, the same way, a person in another document: save ->
queryable is the time until a basic_search context names them, and the watch's index worker reports
its run's seconds. Per run: LLM calls, community reports written anew and carried over, communities
kept, vector rows written or deleted, wall seconds of the `index` process and the run's own seconds.
With `--before REV` the cold build and the three updates also run with the code of git revision REV
(a worktree on PYTHONPATH), taking turns with this code on a copy of the corpus: the "before" rows.
Writes the "Incremental updates", "Save to queryable" and "Verdict" sections of docs/benchmarks.md.
Not a test: figures depend on the machine (about 10 minutes on 2 cores for the default sizes, twice
that with --before).
"""

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import SETTLE_SECONDS, save_to_queryable
from benchmarks_doc import write_sections
from corpora import BOARD, DOCUMENTS_PER_CLUSTER, cast_of, recurring_corpus, rename

REPO = Path(__file__).resolve().parents[2]
STEPS = ("edit", "add", "delete")


@dataclass
class Size:
    """One corpus size's runs: summaries (with `wall`) by step, this code's and the code
    before's."""

    documents: int
    now: dict[str, dict] = field(default_factory=dict)
    before: dict[str, dict] = field(default_factory=dict)
    queryable: float | None = None
    worker_seconds: float | None = None


def index(data: Path, root: Path, code: Path | None = None) -> dict:
    """One `graphrag-mcp index` process (with the package at `code` first on the path, when given):
    its JSON summary, with its wall seconds."""
    env = {**os.environ, **({"PYTHONPATH": str(code / "lib")} if code else {})}
    started = time.perf_counter()
    completed = subprocess.run(
        [
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
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    if completed.returncode != 0:
        sys.exit(f"index failed ({completed.returncode}):\n{completed.stderr[-5000:]}")
    return {**json.loads(completed.stdout), "wall": time.perf_counter() - started}


def named_by_the_board(near: int) -> int:
    """The document at or after `near` whose board sentence names the second person of its cast
    (`cast[1]`: the same role in every corpus size, so that edits of different sizes change
    alike)."""
    return near + (1 - near) % 4


def change(data: Path, documents: int, step: str) -> None:
    """Apply one of STEPS to the corpus in `data`."""
    if step == "edit":
        rename(data, named_by_the_board(documents // 4), 1, "Ottilie Vance")
    elif step == "add":
        cast = cast_of(documents // 2 // DOCUMENTS_PER_CLUSTER)
        (data / "doc_9999.txt").write_text(
            f"Record 9999\n\nPerpetua Quimby met Lysander Oakhurst and {cast[0]} at the "
            "pier. Lysander Oakhurst "
            f"wrote to {BOARD[5]} about the harbour dues.\n",
            encoding="utf-8",
        )
    else:
        (data / f"doc_{documents // 2:04d}.txt").unlink()


def measure(work: Path, documents: int, before: Path | None) -> Size:
    size = Size(documents)
    data, root = work / f"data_{documents}", work / f"index_{documents}"
    recurring_corpus(data, documents)
    codes = {"now": None, "before": before} if before else {"now": None}
    folders = {
        name: (
            data if name == "now" else work / f"data_{documents}_{name}",
            work / f"index_{documents}_{name}" if name != "now" else root,
        )
        for name in codes
    }
    for folder, _ in folders.values():
        if folder != data:
            shutil.copytree(data, folder)
    for step in ("cold", *STEPS):
        for name, code in codes.items():
            folder, index_root = folders[name]
            if step != "cold":
                change(folder, documents, step)
            getattr(size, name)[step] = summary = index(folder, index_root, code)
            print(
                f"{documents} {name} {step}: {summary['llm_calls']} calls, {summary['wall']:.1f} s",
                flush=True,
            )
    log = work / f"server_{documents}.log"
    size.queryable, size.worker_seconds = asyncio.run(
        save_to_queryable(data, root, documents, log, named_by_the_board(documents // 3), 1)
    )
    print(
        f"{documents}: save -> queryable {size.queryable} s, worker run {size.worker_seconds} s",
        flush=True,
    )
    return size


def percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def reports(summary: dict) -> str:
    """Reports written anew / carried over of all, as an old summary (no `computed`) allows."""
    total, carried = summary["community_reports"], summary.get("carried_over", {}).get("report", 0)
    anew = summary.get("computed", {}).get("report", total - carried)
    return f"{anew} / {carried} of {total} ({percent(carried, total)})"


def kept(summary: dict) -> str:
    clustering = summary.get("clustering")
    return (
        f"{clustering['kept']} of {clustering['communities']}" if clustering else "- (re-clustered)"
    )


def vectors(summary: dict) -> str:
    rows = summary["text_units"] + summary["entities"] + summary["community_reports"]
    written = summary.get("vectors_written")
    return f"{sum(written.values())} of {rows}" if written else f"all {rows}"


def table(sizes: list[Size], rev: str | None) -> str:
    header = "| what | " + " | ".join(f"{size.documents} docs" for size in sizes) + " |"
    lines = [header, "|---" * (len(sizes) + 1) + "|"]

    def row(what: str, cell) -> None:
        lines.append(f"| {what} | " + " | ".join(cell(size) for size in sizes) + " |")

    row("cold build: LLM calls", lambda s: str(s.now["cold"]["llm_calls"]))
    row(
        "cold build: wall s (run s)",
        lambda s: f"{s.now['cold']['wall']:.1f} ({s.now['cold']['seconds']:.1f})",
    )
    if rev:
        row(
            f"cold build before ({rev}): wall s (run s)",
            lambda s: f"{s.before['cold']['wall']:.1f} ({s.before['cold']['seconds']:.1f})",
        )
    for step in STEPS:
        row(
            f"{step}: LLM calls (share of cold)",
            lambda s, step=step: (
                f"{s.now[step]['llm_calls']} "
                f"({percent(s.now[step]['llm_calls'], s.now['cold']['llm_calls'])})"
            ),
        )
        if rev:
            row(
                f"{step} before ({rev}): LLM calls",
                lambda s, step=step: (
                    f"{s.before[step]['llm_calls']} "
                    f"({percent(s.before[step]['llm_calls'], s.before['cold']['llm_calls'])})"
                ),
            )
    for step in STEPS:
        row(f"{step}: reports anew / carried over", lambda s, step=step: reports(s.now[step]))
        if rev:
            row(
                f"{step} before ({rev}): reports anew / carried over",
                lambda s, step=step: reports(s.before[step]),
            )
    for step in STEPS:
        row(f"{step}: communities kept", lambda s, step=step: kept(s.now[step]))
    for step in STEPS:
        row(f"{step}: vector rows written or deleted", lambda s, step=step: vectors(s.now[step]))
    for step in STEPS:
        row(
            f"{step}: `index` wall s (run s)",
            lambda s, step=step: f"{s.now[step]['wall']:.1f} ({s.now[step]['seconds']:.1f})",
        )
        if rev:
            row(
                f"{step} before ({rev}): `index` wall s (run s)",
                lambda s, step=step: (
                    f"{s.before[step]['wall']:.1f} ({s.before[step]['seconds']:.1f})"
                ),
            )
    row(
        "edit: modularity kept / fresh",
        lambda s: (
            f"{s.now['edit']['clustering']['modularity']:.4f} / "
            f"{s.now['edit']['clustering']['fresh_modularity']:.4f}"
        ),
    )
    row("edit run in `serve --watch`'s index worker, s", lambda s: _seconds(s.worker_seconds))
    row("save -> queryable under `serve --watch`, s", lambda s: _seconds(s.queryable))
    return "\n".join(lines)


def _seconds(value: float | None) -> str:
    return "not within the deadline" if value is None else f"{value:.1f}"


def verdicts(sizes: list[Size], rev: str | None) -> list[str]:
    by = {size.documents: size for size in sizes}
    small, large = by.get(min(by)), by.get(max(by))
    lines = []
    edit_small, edit_large = small.now["edit"]["llm_calls"], large.now["edit"]["llm_calls"]
    ratio = edit_large / edit_small if edit_small else float("inf")
    share = edit_large / large.now["cold"]["llm_calls"]
    lines.append(
        f"- One-document edit at {large.documents} documents: {edit_large} LLM calls, "
        f"{ratio:.2f}x the "
        f"{small.documents}-document figure ({edit_small}; target <= 1.5x) and "
        f"{100 * share:.2f}% of the cold "
        "build's calls (target <= 0.5%): "
        f"{'met' if ratio <= 1.5 and share <= 0.005 else 'NOT met'}."
    )
    for size in sizes:
        if size.documents >= 1000:
            worst = min(
                size.now[step]["carried_over"]["report"] / size.now[step]["community_reports"]
                for step in STEPS
            )
            lines.append(
                f"- Reports carried over at {size.documents} documents: at least "
                f"{100 * worst:.1f}% in every "
                f"update (target >= 90%): {'met' if worst >= 0.9 else 'NOT met'}."
            )
    queryable = large.queryable
    lines.append(
        f"- Save -> queryable under `serve --watch` at {large.documents} documents: "
        f"{_seconds(queryable)} s "
        f"(target <= 6 s): {'met' if queryable is not None and queryable <= 6 else 'NOT met'}."
    )
    if queryable is not None and large.worker_seconds is not None:
        rest = queryable - SETTLE_SECONDS - large.worker_seconds
        lines.append(
            f"  Of it: the settle window {SETTLE_SECONDS} s, the update's run in the "
            "waiting index worker "
            f"{large.worker_seconds:.1f} s (graphrag's pipeline still walks every "
            "document: chunking, "
            f"merging, report contexts, tables), and {rest:.1f} s for the job's hand-off, "
            "the server's reload "
            "of the new version and the search."
        )
    if rev:
        for size in sizes:
            now, was = size.now["cold"], size.before["cold"]
            lines.append(
                f"- Cold build at {size.documents} documents: {now['wall']:.1f} s wall "
                f"({now['seconds']:.1f} s"
                " "
                f"run) against {was['wall']:.1f} s ({was['seconds']:.1f} s) before "
                f"({rev}), taking turns "
                f"(target: no slower)."
            )
    return lines


def write_report(sizes: list[Size], rev: str | None, minutes: float) -> None:
    sizes_text = ",".join(str(size.documents) for size in sizes)
    command = f"python tests/benchmarks/bench_incremental.py --sizes {sizes_text}" + (
        f" --before {rev}" if rev else ""
    )
    report = f"""# Benchmarks

Written by the benchmarks in tests/benchmarks/ (each replaces its own sections), with the offline \
model on a
{platform.machine()} machine with {os.cpu_count()} cores. Figures vary between runs and machines; \
compare the
columns and rows of one run.

## Incremental updates

Measured by `{command}` ({minutes:.0f} minutes) on generated corpora of {sizes_text} documents: a \
chain of small
casts (4 people, an organisation and a place every 5 documents, each document naming one person of \
the group
before) and a board of 12 people in 3 bodies, one of whom every document names \
(tests/benchmarks/corpora.py).
After a cold build (`graphrag-mcp index DATA --offline`, new root, empty cache), one `index` run \
after each
change, one after the other: **edit** renames, in one document, the person its board sentence \
names (the
second of its cast, the same role at every size: a board member, a hub, gains a relationship and \
loses one);
**add** writes a document with two new people, one writing to a board member; **delete** removes a \
document.
"Before" rows run the same with the code of {rev or "-"},
taking turns with this code on a copy of the corpus. Wall seconds include the process's imports \
(about 6 s);
"run s" is the summary's `seconds`, from reading the documents to the switch to the new version. \
Reports: written
anew by the run / carried over from the previous version, of all. Vector rows: rows written into \
or deleted from
the LanceDB tables, of all rows (text units, entities, reports).

{table(sizes, rev)}

## Save to queryable

`serve --watch DATA` over stdio, up 10 s, settle window 0.5 s; from saving a renamed person (as in \
the edit above,
in another document) to the first
`basic_search` context (context_only) naming them; "worker" is the `seconds` of that update's \
summary, run in the
index worker `serve --watch` keeps waiting with graphrag imported. Figures in the table above.

## Verdict

{chr(10).join(verdicts(sizes, rev))}
"""
    print(report)
    write_sections(report)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="300,1000,2000")
    parser.add_argument(
        "--before", help="a git revision whose code runs the same builds, taking turns"
    )
    args = parser.parse_args()
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="graphrag-mcp-bench-"))
    before = work / "before" if args.before else None
    try:
        if before:
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(before), args.before],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
        sizes = [measure(work, int(documents), before) for documents in args.sizes.split(",")]
    finally:
        if before:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(before)], cwd=REPO, capture_output=True
            )
        shutil.rmtree(work, ignore_errors=True)
    write_report(sizes, args.before, (time.monotonic() - started) / 60)


if __name__ == "__main__":
    main()
