"""Benchmark: whether basic search finds a name that one sentence of one document holds (issue 42).

Run: python tests/benchmarks/bench_rare_names.py [--documents 300] [--names 30] [--before COMMIT]
Generates the archive of ../shared/corpora/archive/generate.py (seed 7; documents of ~512 words,
one text unit each), then puts one sentence naming an invented person (syllables drawn at random,
checked absent from the corpus) in the middle of `--names` documents. Builds the index offline
(`graphrag-mcp index --offline`, a subprocess) and asks, for each name, "Who is NAME?" and "What
did NAME do?" with context_only basic and local search: is the document among the context's
sources, and among its first 3? With `--before COMMIT`, the same with that commit's lib/ (`git
archive`, through PYTHONPATH) first, side by side. Writes the "Rare names (issue 42)" section of
docs/benchmarks.md. Not a test: about 2 minutes per commit at 300 documents on 2 cores.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks_doc import lib_of, write_sections

REPO = Path(__file__).resolve().parents[2]
GENERATOR = REPO.parent / "shared" / "corpora" / "archive" / "generate.py"
SECTION = "## Rare names (issue 42)"
SYLLABLES = ["bra", "cor", "dil", "fen", "gor", "hal", "isk", "jor", "kel", "lum", "mor", "nax"]
SYLLABLES += ["ost", "pel", "quo", "rin", "sul", "tav", "ulm", "vey", "wix", "yor", "zan", "eth"]
DEEDS = [
    "signed for the delivery that afternoon",
    "was named in the minutes as a witness",
    "kept the accounts for that season",
    "wrote to the committee about the matter",
    "carried the letter to the office",
]
QUESTIONS = ("Who is {}?", "What did {} do?")
MEASURES = {
    "basic": "basic: in sources (k=10)",
    "basic top_k=3": "basic top_k=3: in sources",
    "local": "local: in sources",
    "local first 3": "local: among first 3 sources",
}


def invented_names(count: int, corpus_text: str, seed: int) -> list[str]:
    """`count` two-word names of random syllables, none of whose words the corpus holds."""
    chosen, names = random.Random(seed), []
    lowered = corpus_text.lower()
    while len(names) < count:
        words = ["".join(chosen.choices(SYLLABLES, k=chosen.randint(2, 3))) for _ in range(2)]
        if not any(word in lowered for word in words):
            names.append(" ".join(word.capitalize() for word in words))
            lowered += " " + " ".join(words)
    return names


def plant(data: Path, count: int, seed: int) -> list[tuple[str, str]]:
    """One sentence naming an invented person put in the middle of `count` documents; (name,
    document file name) each."""
    files = sorted(data.iterdir())
    corpus = " ".join(path.read_text(encoding="utf-8") for path in files)
    chosen = random.Random(seed)
    planted = []
    for name, path in zip(
        invented_names(count, corpus, seed), chosen.sample(files, count), strict=True
    ):
        sentences = path.read_text(encoding="utf-8").split(". ")
        middle = len(sentences) // 2
        sentences.insert(middle, f"{name} {chosen.choice(DEEDS)}")
        path.write_text(". ".join(sentences), encoding="utf-8")
        planted.append((name, path.name))
    return planted


def measure(root: Path, planted: list[tuple[str, str]]) -> dict[str, int]:
    """Hits over every name and question: the document among basic search's sources (its default
    k, and top_k=3) and local search's (all, and its first 3). In this process: run with the
    measured commit's lib/ first on the path."""
    import asyncio

    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import SearchType, tuned_config
    from graphrag_mcp_server.handlers.tables import load_tables

    config = load_index_config(root)
    tables = asyncio.run(load_tables(config, root))
    searches = {
        "basic": (config, SearchType.BASIC),
        "basic top_k=3": (tuned_config(config, SearchType.BASIC, top_k=3), SearchType.BASIC),
        "local": (config, SearchType.LOCAL),
    }
    hits = dict.fromkeys(MEASURES, 0)
    for name, document in planted:
        for question in QUESTIONS:
            for search, (searched, kind) in searches.items():
                result = search_context(searched, tables, kind, question.format(name))
                sources = [source.document for source in result.sources]
                hits[search] += document in sources
                if search == "local":
                    hits["local first 3"] += document in sources[:3]
    return hits


def measured_with(lib: Path, data: Path, root: Path, planted: list[tuple[str, str]]) -> dict:
    """Build `data` into `root` and measure it, both with `lib` first on the path."""
    env = {**os.environ, "PYTHONPATH": f"{lib}{os.pathsep}{Path(__file__).parent}"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    index = [sys.executable, "-m", "graphrag_mcp_server", "index", str(data)]
    index += ["--index-path", str(root), "--offline", "--format", "json"]
    subprocess.run(index, check=True, capture_output=True, env=env, cwd=REPO)
    asked = [sys.executable, __file__, "--measure", str(root), json.dumps(planted)]
    done = subprocess.run(asked, check=True, capture_output=True, text=True, env=env, cwd=REPO)
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO, check=True)
    return done.stdout.strip()


def section(results: dict[str, dict], names: int, documents: int) -> str:
    asked = names * len(QUESTIONS)
    lines = [
        SECTION,
        "",
        f"Measured by `python tests/benchmarks/bench_rare_names.py --documents {documents} "
        f"--names {names}` on commit {git('rev-parse', '--short', 'HEAD')} (x86_64, 2 cores, "
        "offline model): the archive of ../shared/corpora/archive/generate.py (seed 7, documents "
        f"of ~512 words, one text unit each) with one sentence naming an invented person put in "
        f"the middle of {names} documents (names of random syllables, absent from the corpus). "
        f"Each name asked twice ({', '.join(q.format('NAME') for q in QUESTIONS)}), "
        f"{asked} questions, context_only: the document among the context's sources (basic: "
        "with its default k of 10 text units and with top_k=3; local: all, and its first 3). "
        "The offline embedding is what basic search ranks text units by; local "
        "search finds the name through the entity extracted from the sentence.",
        "",
        f"| commit | {' | '.join(MEASURES.values())} |",
        "|---|---|---|---|---|",
    ]
    for label, hits in results.items():
        cells = [f"{hits[key]} of {asked} ({hits[key] / asked:.0%})" for key in MEASURES]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--names", type=int, default=30)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--before", help="a commit measured first, side by side")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        root, planted = args.measure
        print(json.dumps(measure(Path(root), [tuple(pair) for pair in json.loads(planted)])))
        return
    if not GENERATOR.exists():
        sys.exit(f"no archive generator at {GENERATOR}: check out ../shared beside the repository")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        generate = [sys.executable, str(GENERATOR), str(data), str(args.documents)]
        subprocess.run(generate, check=True, capture_output=True)
        planted = plant(data, args.names, args.seed)
        libs = {git("rev-parse", "--short", "HEAD"): REPO / "lib"}
        if args.before:
            libs = {args.before: lib_of(args.before, work / "before")} | libs
        results = {}
        for label, lib in libs.items():
            results[label] = measured_with(lib, data, work / f"root-{label}", planted)
            print(label, results[label], flush=True)
    text = section(results, args.names, args.documents)
    print(text)
    write_sections(text)


if __name__ == "__main__":
    main()
