"""Streamed answers (issue 30): how soon the first text of an answer reaches an MCP client; writes
the "Streaming" section of docs/benchmarks.md.

    python tests/benchmarks/bench_streaming.py [--words 150] [--word-ms 25] [--runs 3]

The fixtures index, built offline; its completion model pointed at tests/fake_provider.py, an
OpenAI-compatible server on loopback that streams its answer as server-sent events, one word every
WORD_MS (a model writing about 40 words a second), and answers graphrag's JSON requests (global's
map, drift's steps) with a fixed JSON object. A client session over stdio (`graphrag-mcp serve`)
calls each search with a progress token: first text = the first notification after
`writing the answer`, complete = the tool result; then the same call without a progress token, whose
answer and usage must be the same (drift excepted: its follow-ups differ between any two calls).
"""

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks_doc import write_sections

from fake_provider import fake_provider
from graphrag_mcp_server.server.progress import ANSWER_STARTS

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Streaming"
QUESTIONS = {
    "local": "Who designed Old Bessie?",
    "basic": "Who inspected the Kelling Point turbine in 1994?",
    "global": "What are the main themes?",
    "drift": "What did Ines Halloran study at Marrow Sands?",
}
# keys as they appear in a request's JSON; short JSON answers, as a model gives for these steps
STRUCTURED = {
    '\\"points\\"': json.dumps(
        {
            "points": [
                {
                    "description": "The cooperative runs tidal turbines [Data: Reports (0)]",
                    "score": 80,
                }
            ]
        }
    ),  # global search's map step
    "intermediate_answer": json.dumps(
        {
            "intermediate_answer": "The cooperative runs tidal turbines.",
            "score": 80,
            "follow_up_queries": ["Who founded the cooperative?"],
        }
    ),  # drift's primer
    "follow_up_queries": json.dumps(
        {"response": "Mirela Voss founded it.", "score": 70, "follow_up_queries": []}
    ),  # drift's local steps
}


def environment() -> dict[str, str]:
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GRAPHRAG_", "OPENAI_"))
    }
    return {**base, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def point_at(root: Path, url: str, **model: object) -> None:
    """The root's completion model: OpenAI's API at `url`, with `model`'s other settings (a retry
    policy)."""
    settings = yaml.safe_load((root / "settings.yaml").read_text())
    settings["completion_models"]["default_completion_model"] = {
        "model_provider": "openai",
        "model": "gpt-4.1-mini",
        "api_key": "sk-bench",
        "api_base": url,
        **model,
    }
    (root / "settings.yaml").write_text(yaml.safe_dump(settings))


async def timed(session: ClientSession, search: str) -> tuple[float, float, dict]:
    """Seconds to the first piece of the answer and to the result, and the result."""
    first: list[float] = []
    answering = False

    async def progress(value: float, total: float | None, message: str | None) -> None:
        nonlocal answering
        if answering and not first:
            first.append(time.perf_counter())
        answering = answering or message == ANSWER_STARTS

    started = time.perf_counter()
    result = await session.call_tool(
        f"{search}_search", {"query": QUESTIONS[search]}, progress_callback=progress
    )
    done = time.perf_counter()
    if result.is_error or not first:
        sys.exit(f"{search}: {result.content}")
    return first[0] - started, done - started, result.structured_content


def same(streamed: dict, whole: dict) -> bool:
    keys = ("answer", "llm_calls", "prompt_tokens", "completion_tokens")
    return all(streamed[key] == whole[key] for key in keys)


async def measure(root: Path, runs: int) -> dict[str, dict]:
    params = StdioServerParameters(
        command=sys.executable,
        env=environment(),
        args=["-m", "graphrag_mcp_server", "serve", "--index-path", str(root)],
    )
    figures: dict[str, dict] = {}
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.call_tool("get_statistics", {})  # loaded
            for search in QUESTIONS:
                await timed(session, search)  # warm-up
                firsts, totals, equal = [], [], []
                for _ in range(runs):
                    first, total, streamed = await timed(session, search)
                    whole = (
                        await session.call_tool(f"{search}_search", {"query": QUESTIONS[search]})
                    ).structured_content
                    firsts.append(first)
                    totals.append(total)
                    equal.append(same(streamed, whole))
                figures[search] = {
                    "first": statistics.median(firsts),
                    "total": statistics.median(totals),
                    "equal": sum(equal),
                    "runs": runs,
                }
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--word-ms", type=float, default=25)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    answer = " ".join(f"word{number}" for number in range(options.words))
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary) / "index"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "graphrag_mcp_server",
                "index",
                str(REPO / "fixtures" / "corpus"),
                "--index-path",
                str(root),
                "--offline",
            ],
            check=True,
            capture_output=True,
            env=environment(),
        )
        with fake_provider(
            answer=answer, chunk_seconds=options.word_ms / 1000, structured=STRUCTURED
        ) as provider:
            point_at(root, provider.url)
            figures = await measure(root, options.runs)
    write_sections(report(options, figures))


def report(options: argparse.Namespace, figures: dict[str, dict]) -> str:
    rows = []
    for search, figure in figures.items():
        share = figure["first"] / figure["total"]
        equal = f"{figure['equal']} of {figure['runs']}"
        rows.append(
            f"| {search} | {figure['first'] * 1000:.0f} ms | {figure['total'] * 1000:.0f} "
            f"ms | {share:.0%} | "
            f"{'met' if share <= 0.25 else 'not met'} | "
            f"{equal}{' (drift varies)' if search == 'drift' else ''} |"
        )
    table = "\n".join(rows)
    return f"""{SECTION}

Measured by `python tests/benchmarks/bench_streaming.py --words {options.words} --word-ms \
{options.word_ms:g} --runs \
{options.runs}` on the fixtures index, a {platform.machine()} machine with {os.cpu_count()} cores: \
the completion \
model is a local OpenAI-compatible server streaming a {options.words}-word answer, one word every \
{options.word_ms:g} ms; a client over stdio calls each search with a progress token (median of \
{options.runs} runs \
after one warm-up), then without one. Target: the first text within 25% of the complete answer's \
time; the same \
answer and usage either way (docs/tools.md#streamed-answers).

| search | first text | complete answer | first / complete | <= 25% | same answer and usage as \
unstreamed |
| --- | --- | --- | --- | --- | --- |
{table}
"""


if __name__ == "__main__":
    asyncio.run(main())
