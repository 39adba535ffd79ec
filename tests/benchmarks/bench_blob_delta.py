"""Benchmark: what a one-document edit uploads to, and a replica downloads from, blob storage, and
how many files a version holds after each update (issue 40).

Run: python tests/benchmarks/bench_blob_delta.py [--documents 300] [--edits 6] [--before 9f88a06]
Generates the archive of ../shared/corpora/archive/generate.py (seed 7) into a temporary folder,
starts Azurite (tests/azurite.py), builds it cold into a container (`graphrag-mcp index DATA
--storage az://... --offline`, a subprocess), then runs `--edits` updates, each after a sentence
appended to another document. After each run: the bytes of the blobs the run wrote (the LLM cache,
current.json and the lease blob left out), the version's files and bytes, and what a replica's
`stats --storage` downloaded to follow it (its log line's bytes; for a commit that does not log
them, the files of its new local version that are not links to its previous one). With `--before
COMMIT`, the same runs with that commit's lib/ (`git archive`, through PYTHONPATH) first, side by
side. Writes the "Blob storage by delta (issue 40)" section of docs/benchmarks.md. Not a test:
about 5 minutes per commit at 300 documents on 2 cores.
"""

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "benchmarks"), str(TESTS)]
from benchmarks_doc import lib_of, write_sections  # noqa: E402

from azurite import Azurite, running_azurite  # noqa: E402

REPO = TESTS.parent
GENERATOR = REPO.parent / "shared" / "corpora" / "archive" / "generate.py"
SECTION = "## Blob storage by delta (issue 40)"
SKIPPED = ("cache/", "current.json", "indexer.lock")
NOTE = (
    "Files that no update changes (LanceDB's data, hard-linked from the previous version by "
    "vector_delta; settings and prompts) are stored once, whole. graphrag rewrites every parquet "
    "table on each update: those are written with row groups and pages cut by content, "
    "without statistics (handlers/indexing/parquet_pages.py), and stored as content-defined "
    "pieces in packs, so an "
    "edit uploads the pieces no earlier pack holds and a replica reads only those (ranged reads), "
    "putting each table together from the pieces of its own copy. Files: at most one data file "
    "a table more per update (a fragment whose rows were all deleted), until COMPACT_FRAGMENTS "
    "(10) data files compact the table; older manifests, transactions and superseded deletion "
    "files are dropped at each update."
)


@dataclass
class Step:
    """One `index --storage` run and the replica's follow after it."""

    uploaded: int
    version_bytes: int
    version_files: int
    downloaded: int
    seconds: float


@dataclass
class Series:
    """The runs of one commit."""

    commit: str
    steps: list[Step] = field(default_factory=list)


LOGGED_RUN = (
    "import logging, runpy, sys; logging.basicConfig(level=logging.INFO); "
    "sys.argv[0] = 'graphrag-mcp'; runpy.run_module('graphrag_mcp_server', run_name='__main__')"
)
"""graphrag-mcp with INFO log lines on stderr (the CLI's commands log at WARNING)."""


def cli(lib: Path, azurite: Azurite, *args: str | Path, logged: bool = False) -> dict:
    """One graphrag-mcp process with `lib` first on the path; its JSON output (its stderr under
    the key "stderr"; with `logged`, its INFO lines too)."""
    env = {**os.environ, **azurite.env(), "PYTHONPATH": str(lib)}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    run = ["-c", LOGGED_RUN] if logged else ["-m", "graphrag_mcp_server"]
    command = [sys.executable, *run, *map(str, args), "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-4000:]}")
    result: dict = json.loads(done.stdout)
    return result | {"stderr": done.stderr}


def container(azurite: Azurite, location: str):
    from azure.storage.blob import BlobServiceClient

    service = BlobServiceClient.from_connection_string(
        azurite.env()["AZURE_STORAGE_CONNECTION_STRING"]
    )
    return service.get_container_client(location.removeprefix("az://").split("/")[0])


def version_size(azurite: Azurite, location: str) -> tuple[int, int]:
    """The current version's files (under output/) and bytes (output and root), from its listing
    or, for a version without one, its blobs."""
    client, prefix = container(azurite, location), location.split("/", 3)[3]
    pointer = json.loads(client.download_blob(f"{prefix}/current.json").readall())
    folder = f"{prefix}/versions/{pointer['version']}/"
    names = [blob.name for blob in client.list_blobs(name_starts_with=folder)]
    if folder + "files.json" in names:
        files = json.loads(client.download_blob(folder + "files.json").readall())["files"]
        sizes = {name: entry["size"] for name, entry in files.items()}
    else:
        sizes = {
            blob.name.removeprefix(folder): blob.size
            for blob in client.list_blobs(name_starts_with=folder)
        }
    outputs = [name for name in sizes if name.startswith("output/")]
    return len(outputs), sum(sizes.values())


def written_since(azurite: Azurite, location: str, since: datetime.datetime) -> int:
    """Bytes of the blobs written at or after `since` (the version's, not the cache's)."""
    prefix = location.split("/", 3)[3] + "/"
    return sum(
        blob.size
        for blob in container(azurite, location).list_blobs(name_starts_with=prefix)
        if blob.last_modified >= since and not blob.name.removeprefix(prefix).startswith(SKIPPED)
    )


def followed(lib: Path, azurite: Azurite, location: str, replica: Path) -> int:
    """`stats --storage` on the replica's folder; the bytes it read from the container to follow:
    what its "version ... downloaded" log line says, or, for a commit that does not say, the bytes
    of its new version's files that are not links to the version it had."""
    before = {path.stat().st_ino for path in (replica / "versions").rglob("*") if path.is_file()}
    done = cli(lib, azurite, "stats", "--index-path", replica, "--storage", location,
               logged=True)  # fmt: skip
    if said := re.search(r"downloaded: \d+ of \d+ files, ([\d,]+) of", done["stderr"]):
        return int(said[1].replace(",", ""))
    current = (replica / "output").resolve()
    return sum(
        path.stat().st_size
        for path in current.rglob("*")
        if path.is_file() and path.stat().st_ino not in before
    )


def edit(data: Path, number: int) -> None:
    """A sentence appended to the `number`th document."""
    path = sorted(data.iterdir())[number * 7 % len(list(data.iterdir()))]
    with path.open("a", encoding="utf-8") as out:
        out.write(f"\nIn the spring of {1990 + number} the archive recorded repair {number}.\n")


def measure(lib: Path, commit: str, documents: int, edits: int, work: Path) -> Series:
    """The cold build and `edits` updates of a fresh archive through a fresh container."""
    data, series = work / "data", Series(commit)
    subprocess.run(
        [sys.executable, str(GENERATOR), str(data), str(documents), "--seed", "7"], check=True
    )
    with running_azurite(work / "azurite") as azurite:
        location = azurite.new_location()
        for number in range(edits + 1):
            if number:
                edit(data, number)
                time.sleep(1.5)  # blob times have whole seconds: this run's writes stand apart
            since = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
            started = time.perf_counter()
            cli(lib, azurite, "index", data, "--index-path", work / "index", "--storage",
                location, "--offline")  # fmt: skip
            seconds = time.perf_counter() - started
            files, size = version_size(azurite, location)
            series.steps.append(
                Step(
                    uploaded=written_since(azurite, location, since),
                    version_bytes=size,
                    version_files=files,
                    downloaded=followed(lib, azurite, location, work / "replica"),
                    seconds=seconds,
                )
            )
            print(commit, number, series.steps[-1], flush=True)
    return series


def head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout.strip()


def section(runs: list[Series], documents: int) -> str:
    def mib(value: int) -> str:
        return f"{value / 2**20:.2f}"

    def share(part: int, whole: int) -> str:
        return f"{100 * part / whole:.1f}%" if whole else "-"

    heads = " | ".join(
        f"{run.commit}: uploaded MiB (of version) / downloaded MiB / files" for run in runs
    )
    lines = [
        SECTION,
        "",
        f"Measured by `python tests/benchmarks/bench_blob_delta.py --documents {documents}"
        f"{' --before ' + runs[0].commit if len(runs) > 1 else ''}` at commit "
        f"{' and '.join(run.commit for run in runs)} on "
        f"{datetime.date.today()} ({platform.machine()}, {os.cpu_count()} cores shared, offline "
        f"model, Azurite): the archive of ../shared/corpora/archive/generate.py (seed 7), built "
        "cold into a container, then one update after each one-document edit (a sentence "
        "appended). Uploaded: bytes of the blobs the run wrote, the LLM cache left out; "
        "downloaded: what a replica's `stats --storage` read from the container to follow (its "
        "log line; for a commit that does not log it, its new version's files that are not links "
        "to its previous one); files: the version's output files. "
        "Target (issue 40): a blob-storage edit uploads <= 5% of the version's bytes; a "
        "version's file count does not grow with the number of updates.",
        "",
        f"| run | {heads} |",
        "|---|" + "---|" * len(runs),
    ]
    for number in range(len(runs[0].steps)):
        cells = []
        for run in runs:
            step = run.steps[number]
            cells.append(
                f"{mib(step.uploaded)} of {mib(step.version_bytes)} "
                f"({share(step.uploaded, step.version_bytes)}) / {mib(step.downloaded)} / "
                f"{step.version_files}"
            )
        name = f"edit {number}" if number else "cold build"
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", NOTE]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--edits", type=int, default=6)
    parser.add_argument("--before", help="a commit measured first, side by side (e.g. 9f88a06)")
    parser.add_argument("--results", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as work:
        for commit in [args.before, None] if args.before else [None]:
            folder = Path(work) / (commit or "now")
            folder.mkdir()
            lib = lib_of(commit, folder) if commit else REPO / "lib"
            runs.append(measure(lib, commit or head(), args.documents, args.edits, folder))
    if args.results:
        args.results.write_text(
            json.dumps([[vars(step) for step in run.steps] for run in runs]), encoding="utf-8"
        )
    text = section(runs, args.documents)
    print(text)
    write_sections(text)


if __name__ == "__main__":
    main()
