"""Benchmark: what indexing and each search cost in model calls and tokens, for indexes of different
sizes.

Run: python tests/benchmarks/bench_cost.py [--documents 50 150 300]
Indexes fixtures/corpus and generated corpora of the given sizes with the offline model (no key, no
network), runs every search type with and without --context-only, prints the figures and writes
docs/cost.md. Not a test: it takes several minutes. Calls and tokens do not depend on the machine;
seconds do.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import FIRST, LAST, TOPICS

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "corpus"
FIXTURE_QUESTION = "Who is Leonard Quist?"
DOCUMENTS_PER_CLUSTER = 5
ORG_KINDS = ["Shipping Company", "Water Board", "Mining Company", "Engineering Works"]
PLACE_STARTS = ["Port", "Kell", "Moor", "Grey", "Salt", "Raven", "Copper", "East"]
PLACE_ENDS = ["wick", "field", "stone", "mere", "hill", "ford", "march", "haven"]
SEARCHES = ["global", "local", "drift", "basic"]
MODES = {"answer": [], "context only": ["--context-only"]}


@dataclass
class Corpus:
    """One indexed corpus: its build summary and every search's result."""

    name: str
    question: str
    build: dict
    searches: list[tuple[str, str, dict]]  # (search type, mode, query result)

    @property
    def label(self) -> str:
        return (
            f"{self.name} ({self.build['documents']} / {self.build['entities']} / "
            f"{self.build['community_reports']})"
        )

    def result(self, search: str, mode: str) -> dict:
        return next(result for kind, how, result in self.searches if kind == search and how == mode)


def cli(*args: str) -> dict:
    """One `graphrag-mcp` run with --format json; its JSON object. On failure prints stderr and
    exits."""
    command = [sys.executable, "-m", "graphrag_mcp_server", *args, "--format", "json"]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        print(
            f"failed ({completed.returncode}): {' '.join(command)}\n{completed.stderr[-5000:]}",
            file=sys.stderr,
        )
        sys.exit(1)
    return json.loads(completed.stdout)


def measure(name: str, data: Path, root: Path, question: str) -> Corpus:
    """Index `data` into `root`, then run every search type in both modes."""
    build = cli("index", str(data), "--index-path", str(root), "--offline")
    searches = [
        (search, mode, cli("query", question, "--index-path", str(root), "--type", search, *flags))
        for search in SEARCHES
        for mode, flags in MODES.items()
    ]
    print(
        f"measured {name}: {build['documents']} documents, {build['llm_calls']} indexing calls",
        flush=True,
    )
    return Corpus(name, question, build, searches)


def generate_growing_corpus(folder: Path, documents: int) -> str:
    """Write `documents` files whose cast grows with them: every 5 documents share 4 new people, an
    organisation and a place, and mention one person of the group before. Returns the first
    person."""
    folder.mkdir(parents=True)
    for number in range(documents):
        cluster = number // DOCUMENTS_PER_CLUSTER
        cast = [_person(cluster * 4 + k) for k in range(4)]
        neighbour = _person(max(cluster - 1, 0) * 4 + number % 4)
        org = f"{LAST[cluster % len(LAST)]} {ORG_KINDS[cluster // len(LAST) % len(ORG_KINDS)]}"
        place = (
            PLACE_STARTS[cluster % len(PLACE_STARTS)]
            + PLACE_ENDS[cluster // len(PLACE_STARTS) % len(PLACE_ENDS)]
        )
        topic = TOPICS[number % len(TOPICS)]
        sentences = [
            f"In {1900 + number} {cast[0]} of the {org} travelled to {place} to discuss {topic}.",
            f"{cast[0]} met {cast[1]}, who had worked for the {org} for many years.",
            f"{cast[2]} kept the minutes and wrote that {cast[0]} and {cast[1]} agreed on little.",
            f"{cast[3]} reported on {topic} to {neighbour}, who had led the talks the year before.",
        ]
        (folder / f"doc_{number:03d}.txt").write_text(
            f"Record {number}\n\n{' '.join(sentences * 3)}\n", encoding="utf-8"
        )
    return _person(0)


def _person(index: int) -> str:
    """The index-th name of the generated cast (distinct for the first 250: enough for 310
    documents)."""
    return f"{FIRST[index % len(FIRST)]} {LAST[(index + index // len(FIRST)) % len(LAST)]}"


def generated(work: Path, documents: int) -> Corpus:
    """Measure a generated corpus of `documents` files, asking about its first person."""
    data = work / f"generated_{documents}"
    person = generate_growing_corpus(data, documents)
    return measure(f"generated {documents}", data, work / f"index_{documents}", f"Who is {person}?")


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    """A markdown table of `rows` under `header`."""
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(str(cell) for cell in line) + " |" for line in lines)


def search_table(corpora: list[Corpus]) -> str:
    header = [
        "corpus (documents / entities / community reports)",
        "search",
        "mode",
        "LLM calls",
        "prompt tokens",
        "completion tokens",
        "embedding calls",
        "context tokens",
    ]
    rows = [
        [
            corpus.label,
            search,
            mode,
            result["llm_calls"],
            result["prompt_tokens"],
            result["completion_tokens"],
            result["embedding_calls"],
            result["context"]["tokens"] if result.get("context") else "-",
        ]
        for corpus in corpora
        for search, mode, result in corpus.searches
    ]
    return markdown_table(header, rows)


def build_table(corpora: list[Corpus]) -> str:
    header = [
        "corpus",
        "documents",
        "text units",
        "entities",
        "relationships",
        "community reports",
        "LLM calls",
        "prompt tokens",
        "completion tokens",
        "seconds",
    ]
    keys = [
        "documents",
        "text_units",
        "entities",
        "relationships",
        "community_reports",
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
    ]
    rows = [
        [corpus.name, *(corpus.build[key] for key in keys), f"{corpus.build['seconds']:.1f}"]
        for corpus in corpora
    ]
    return markdown_table(header, rows)


def surprises(corpora: list[Corpus]) -> list[str]:
    """Rows worth a second look: context-only rows that called the model, answers with no
    sources."""
    found = []
    for corpus in corpora:
        for search, mode, result in corpus.searches:
            if mode == "context only" and result["llm_calls"] > 0:
                found.append(
                    f"{corpus.name} {search} context only: {result['llm_calls']} LLM calls"
                )
            if not result.get("sources"):
                found.append(f"{corpus.name} {search} {mode}: no sources")
    return found


def calls(corpus: Corpus, search: str, mode: str = "answer") -> int:
    return corpus.result(search, mode)["llm_calls"]


def reading(corpora: list[Corpus]) -> str:
    """The "Reading the figures" section, quoting this run's numbers."""
    small, big = corpora[0], corpora[-1]
    per_corpus = ", ".join(
        f"{calls(c, 'global')} for {c.build['community_reports']} reports ({c.name})"
        for c in corpora
    )
    one_batch = all(calls(c, "global") == 2 for c in corpora)
    batches = (
        "Here each index's reports fit in one map batch, so one map call and the reduce call."
        if one_batch
        else "More reports than fit in one batch add a map call per further batch."
    )
    drift = ", ".join(
        f"{calls(c, 'drift')} ({c.name}; {c.result('drift', 'answer')['embedding_calls']} "
        "embedding calls)"
        for c in corpora
    )
    report_context = big.result("global", "context only")["context"]
    return f"""## Reading the figures

- **global** makes one map call per batch of community reports at the chosen level (default 2; a \
batch holds up \
to `global_search.data_max_tokens`, 12000 tokens by default), then one reduce call, so its calls \
grow with the \
number of reports: {per_corpus}. {batches}
- **local** and **basic** build one context and make one call ({calls(small, "local")} and \
{calls(small, "basic")} on {small.name}, {calls(big, "local")} and {calls(big, "basic")} on \
{big.name}), plus one \
query embedding.
- **drift** makes a primer call, follow-up local searches at each depth and a reduce call, the \
most calls here: \
{drift}. The count varies by a few calls from run to run.
- **context only** makes no completion call (LLM calls 0 in every context-only row). It embeds the \
query once: \
for local and basic (entity and text-unit lookup), for global (to rank reports by similarity), and \
for drift, whose \
report ranking and local context share it. \
The context is cut to the token budget (8000 by default): on {big.name} the global context kept \
{len(report_context["reports"])} reports in {report_context["tokens"]} tokens and \
`context.omitted` counted {report_context["omitted"].get("reports", 0)} more.
- The generated corpora grow their cast with the documents (4 new people, an organisation and a \
place every 5 \
documents), so entities, communities and reports grow too. local, basic and drift select a bounded \
number of \
records, so their cost stays about the same at every size; global reads every report of the level, \
so its cost \
grows with them. Indexing grows with the documents: {per_document(big):.1f} LLM calls per document \
on {big.name}.
- Token counts come from the offline model, whose answers are extracted from the documents, so \
completion \
tokens with a real model differ; call counts and prompt tokens are what graphrag sends to a real \
model."""


def per_document(corpus: Corpus) -> float:
    return corpus.build["llm_calls"] / corpus.build["documents"]


def when_context_only(corpora: list[Corpus]) -> str:
    big = corpora[-1]
    return f"""## When to prefer context_only

Prefer `context_only=true` (every search tool takes it):

- when the MCP client is itself a capable model (Claude, GPT in an IDE) and the question is about \
specific \
entities or passages: the local and basic contexts hold them, and the client writes the answer;
- when there is no API key;
- when cost matters more than a second model's synthesis;
- for global questions over large indexes, where map-reduce costs a map call per batch of reports \
(measured here: \
{calls(big, "global")} calls for {big.name}'s {big.build["community_reports"]} reports; an index \
with thousands of \
reports needs many batches): the client gets the top-ranked reports within the token budget \
(`max_context_tokens`, default 8000), and `context.omitted` says how many did not fit.

Prefer a real answer (no `context_only`):

- when the client's context window is small;
- when the question needs the whole corpus summarised, beyond what fits in the budget;
- when the answer must come from the index's configured model.

With `graphrag-mcp serve --llm sampling` the client's own model writes the answers through MCP \
sampling: the same \
number of calls as the table's answer rows, billed to the client instead. The MCP revision \
2026-07-28 deprecates \
sampling (SEP-2577), so not every client will offer it."""


def write_report(corpora: list[Corpus]) -> None:
    """Print the tables and write docs/cost.md."""
    searches, builds = search_table(corpora), build_table(corpora)
    print(searches, builds, sep="\n\n")
    for line in surprises(corpora):
        print(f"note: {line}")
    questions = "; ".join(f'{c.name}: "{c.question}"' for c in corpora)
    report = f"""# What searches and indexing cost

Measured by `python tests/benchmarks/bench_cost.py` at commit {_commit()} on \
{datetime.now(UTC).date().isoformat()}, with the offline model (no key, no network) on a
{platform.machine()} machine with {os.cpu_count()} cores: `graphrag-mcp index DATA --offline`, then
`graphrag-mcp query QUESTION --type TYPE`, with and without `--context-only`, default options. The \
figures are
model calls and tokens, which do not depend on the machine (only seconds do); DRIFT's answers vary \
from run to run even so (the offline model, generated 150, one index: 30 to 31 calls, 309,523 to \
322,712 prompt tokens in eight runs of 90c2ac6 and 2050f99). Questions: {questions}.

## Searches

{searches}

## Indexing

{builds}

{reading(corpora)}

{when_context_only(corpora)}
"""
    (REPO / "docs" / "cost.md").write_text(report, encoding="utf-8")


def _commit() -> str:
    """The commit measured (HEAD), marked when lib/ has uncommitted changes."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO, check=True)
        return done.stdout.strip()

    marked = " with uncommitted changes to lib/" if git("status", "--porcelain", "lib") else ""
    return git("rev-parse", "--short", "HEAD") + marked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, nargs="+", default=[50, 150, 300])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="graphrag-mcp-cost-"))
    try:
        corpora = [measure("fixtures", FIXTURES, work / "index_fixtures", FIXTURE_QUESTION)]
        corpora += [generated(work, documents) for documents in args.documents]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_report(corpora)


if __name__ == "__main__":
    main()
