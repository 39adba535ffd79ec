"""Benchmark: one-document updates of the archive run by two commits side by side (issue 40).

Run: python tests/benchmarks/bench_update_side_by_side.py --before COMMIT [--documents 10000]
Generates the archive of ../shared/corpora/archive/generate.py (seed 7) into a temporary folder,
builds it cold once with `--before`'s lib/ (`git archive`, through PYTHONPATH), copies the root
twice, then makes four changes one after the other: an added 2-sentence document naming the
first hub, none (`index` again on the same folder), a sentence naming a new person appended to a
document of the first hub, a document deleted. After each change `graphrag-mcp index DATA
--offline` runs on the first copy with `--before`'s lib/ and on the second with this checkout's,
one right after the other; each run's summary `seconds`, wall seconds, CPU seconds and peak RSS
(the process's own rusage) are kept, and the two copies' tables are compared (every column but
the ids graphrag draws at random for new entities and relationships). Writes the "Updates side by
side at N documents (issue 40)" section of docs/benchmarks.md. Not a test: about 25 minutes at
10,000 documents on 2 cores, 3 at 300.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "benchmarks"), str(TESTS)]
from benchmarks_doc import lib_of, write_sections  # noqa: E402

REPO = TESTS.parent
GENERATOR = REPO.parent / "shared" / "corpora" / "archive" / "generate.py"
TABLES = (
    "entities",
    "relationships",
    "communities",
    "community_reports",
    "text_units",
    "documents",
)
DRAWN = {"id", "entity_ids", "relationship_ids", "text_unit_ids", "children"}
"""Columns that hold ids graphrag draws at random (uuid4) for a new entity or relationship."""
HUB = "Jonas Jansen"
ADDED = "added_note.txt"


@dataclass
class Run:
    """One `index` run: the summary's seconds and LLM calls, and the process's own rusage."""

    seconds: float
    wall: float
    cpu: float
    rss_mib: int
    calls: int


def index(lib: Path, data: Path, root: Path) -> Run:
    """`graphrag-mcp index DATA --offline` on `root` with `lib` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(lib), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = [sys.executable, "-m", "graphrag_mcp_server", "index", str(data)]
    command += ["--index-path", str(root), "--offline", "--format", "json"]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        summary = json.loads(out.read())
    if process.returncode != 0:
        raise SystemExit(f"index with {lib} failed ({process.returncode})")
    return Run(
        seconds=summary["seconds"],
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        rss_mib=usage.ru_maxrss // 1024,
        calls=summary["llm_calls"],
    )


def same_tables(first: Path, second: Path) -> str:
    """Whether the two roots' current tables are equal but for randomly drawn ids."""
    import pandas as pd

    differing = []
    for name in TABLES:
        a = pd.read_parquet(first / "output" / f"{name}.parquet")
        b = pd.read_parquet(second / "output" / f"{name}.parquet")
        columns = [column for column in a.columns if column not in DRAWN]
        try:
            pd.testing.assert_frame_equal(a[columns], b[columns])
        except AssertionError:
            differing.append(name)
    return "equal" if not differing else "**differ**: " + ", ".join(differing)


def changes(data: Path) -> list[tuple[str, str]]:
    """The four changes (name, document), chosen before any is made: an edit and a delete of
    documents naming the first hub, a quarter and half way through them."""
    hub_documents = sorted(
        path for path in data.glob("doc_*.txt") if HUB in path.read_text(encoding="utf-8")
    )
    edited, deleted = hub_documents[len(hub_documents) // 4], hub_documents[len(hub_documents) // 2]
    return [("add", ADDED), ("none", "-"), ("edit", edited.name), ("delete", deleted.name)]


def apply(data: Path, change: str, document: str) -> None:
    """Make one change of `changes` in `data`."""
    if change == "add":
        (data / document).write_text(
            f"{HUB} met the archivist Mirela Dobos at the harbour office.\n"
            "Dobos kept the letters Jansen wrote that winter.\n",
            encoding="utf-8",
        )
    elif change == "none":
        return
    elif change == "edit":
        with (data / document).open("a", encoding="utf-8") as text:
            text.write(f"\nIn 1911 {HUB} hired the surveyor Tobiah Wren for the harbour wall.\n")
    else:
        (data / document).unlink()


def section(
    documents: int, before: str, after: str, cold: Run, rows: list[tuple[str, str, Run, Run, str]]
) -> str:
    head = (
        f"## Updates side by side at {documents} documents (issue 40)\n\n"
        f"Measured by `python tests/benchmarks/bench_update_side_by_side.py --before {before} "
        f"--documents {documents}` at commit {after} against {before} on "
        f"{time.strftime('%Y-%m-%d')} ({os.cpu_count()} cores, offline model): one cold build "
        f"with {before}'s code ({cold.wall:.0f} s wall, peak RSS {cold.rss_mib:,} MiB), copied "
        "twice; after each change, `index` on the first copy with the old code, then on the second "
        "with the new. run s: the summary's `seconds`; wall, CPU (user+sys) and peak RSS: the "
        "`index` process's. Tables: the two copies' six tables compared, the ids graphrag draws "
        "at random for new rows left out. Seconds are comparable within this run only.\n\n"
    )
    table = [
        f"| change | document | {before}: run s / wall s / CPU s / peak RSS MiB / LLM calls | "
        f"{after}: the same | tables |",
        "|---|---|---|---|---|",
    ]
    for change, document, old, new, tables in rows:
        cells = [
            f"{run.seconds:.1f} / {run.wall:.1f} / {run.cpu:.1f} / {run.rss_mib:,} / {run.calls}"
            for run in (old, new)
        ]
        table.append(f"| {change} | {document} | {cells[0]} | {cells[1]} | {tables} |")
    return head + "\n".join(table) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the commit measured against this one")
    parser.add_argument("--documents", type=int, default=10000)
    args = parser.parse_args()
    after = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        data = work / "data"
        subprocess.run(
            [sys.executable, str(GENERATOR), "--seed", "7", str(data), str(args.documents)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        libs = {"old": lib_of(args.before, work / "before"), "new": REPO / "lib"}
        cold = index(libs["old"], data, work / "old")
        shutil.copytree(work / "old", work / "new", symlinks=True)
        rows = []
        for change, document in changes(data):
            apply(data, change, document)
            runs = {name: index(lib, data, work / name) for name, lib in libs.items()}
            tables = same_tables(work / "old", work / "new")
            rows.append((change, document, runs["old"], runs["new"], tables))
            print(change, document, runs, tables, flush=True)
    write_sections(section(args.documents, args.before, after, cold, rows))


if __name__ == "__main__":
    main()
