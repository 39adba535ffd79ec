"""docs/benchmarks.md is written by several benchmarks; each replaces only its own sections, each
section naming the commit and date it was measured on."""

import datetime
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

BENCHMARKS_DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def _sections(text: str) -> dict[str, str]:
    """`text` cut before each `## ` heading, by heading ("" for what precedes the first)."""
    sections: dict[str, str] = {}
    heading, lines = "", []
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            sections[heading] = "".join(lines)
            heading, lines = line.strip(), []
        lines.append(line)
    sections[heading] = "".join(lines)
    return sections


def write_sections(text: str) -> None:
    """Put the sections of `text` into docs/benchmarks.md in place of those with the same headings
    (the part before the first heading counts as one when `text` has it); other sections are kept,
    new ones appended."""
    document = _sections(
        BENCHMARKS_DOC.read_text(encoding="utf-8") if BENCHMARKS_DOC.exists() else ""
    )
    for heading, section in _sections(text).items():
        if heading or section.strip():
            document[heading] = stamped(section).rstrip("\n") + "\n\n"
    text = "".join(
        section.rstrip("\n") + "\n\n" for section in document.values() if section.strip()
    )
    BENCHMARKS_DOC.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def stamped(section: str) -> str:
    """`section` with "Measured at commit C on DATE." after its heading, unless it names a commit
    near its start already (C is HEAD, marked when lib/ has uncommitted changes)."""
    heading, _, body = section.partition("\n")
    if not heading.startswith("## ") or "commit " in body[:600]:
        return section
    repo = BENCHMARKS_DOC.parents[1]

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=repo, check=True
        ).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    if git("status", "--porcelain", "lib"):
        commit += " with uncommitted changes to lib/"
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    return f"{heading}\n\nMeasured at commit {commit} on {today}.{body}"


def lib_of(commit: str, into: Path) -> Path:
    """lib/ of `commit`, extracted into `into` (to run a benchmark with it first on the path)."""
    archive = subprocess.run(
        ["git", "archive", commit, "lib"],
        capture_output=True,
        check=True,
        cwd=BENCHMARKS_DOC.parents[1],
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "lib"
