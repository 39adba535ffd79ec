"""Provider faults on every kind of root (issue 31): how long a client waits for a search's answer,
how many requests the provider sees and whether the answer names the provider's reason, before and
after, side by side in one run; writes the "Provider faults" section of docs/benchmarks.md.

    python tests/benchmarks/bench_faults.py [--before 7df08a5]

The fixtures index, built offline, copied once per row; its completion model pointed at
tests/fake_provider.py (an OpenAI-compatible server on loopback) answering 401, 429 with
`Retry-After: 20`, 500, or nothing, with the failure policy `init --provider openai` writes
(bounded_backoff) or the one `graphrag init` writes (graphrag's exponential_backoff, the provider
client's own retries). Each row is a client session over stdio with `graphrag-mcp serve` (the rows
of one code at once): a context-only search first (tables loaded), then one local_search with a
progress token. "before" runs the package as it was at `--before` (its lib/ first on PYTHONPATH),
"now" this checkout. Then `graphrag-mcp index` with a model that answers prose, before and now.
"""

import argparse
import asyncio
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path

import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_streaming import environment as streamed_environment
from bench_streaming import point_at
from benchmarks_doc import write_sections

from fake_provider import FakeProvider, fake_provider
from graphrag_mcp_server.config.providers import Provider, failure_policy

REPO = Path(__file__).resolve().parents[2]
SECTION = "## Provider faults"
QUESTION = "Who is Mirela Voss?"
ROWS = [("bounded", fault) for fault in ("401", "429", "500", "hang")] + [
    ("graphrag", fault) for fault in ("401", "429", "500", "hang")
]
POLICIES = {
    "bounded": yaml.safe_load("\n".join(failure_policy(Provider.OPENAI))),
    "graphrag": {"retry": {"type": "exponential_backoff"}},
}
REASONS = {
    "401": ("HTTP 401",),
    "429": ("HTTP 429",),
    "500": ("HTTP 500",),
    "hang": ("no answer within", "Timeout"),
}
"""What the answer must name (one of): the provider's status; for a provider that never answers, the
deadline or the request's timeout."""
PROSE = (
    "The text talks about a harbour town and the people who live there. It is a story about a "
    "community."
)


def environment(lib: Path | None) -> dict[str, str]:
    """bench_streaming's environment, with the package of `lib` first on the path when given."""
    return {**streamed_environment(), **({"PYTHONPATH": str(lib)} if lib else {})}


async def answer(session: ClientSession, provider: FakeProvider, fault: str) -> dict:
    await session.call_tool("local_search", {"query": QUESTION, "context_only": True})
    provider.modes["chat"] = fault
    notes: list[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        notes.append(message or "")

    started = time.perf_counter()
    result = await session.call_tool(
        "local_search", {"query": QUESTION}, progress_callback=progress
    )
    seconds = time.perf_counter() - started
    text = result.content[0].text if result.content else ""
    return {
        "seconds": seconds,
        "requests": provider.count("chat"),
        "error": result.is_error,
        "text": text,
        "progress": len(notes),
    }


async def measure(base: Path, work: Path, lib: Path | None, label: str) -> list[dict]:
    """Every row at once for one version of the code."""
    async with AsyncExitStack() as stack:
        sessions = []
        quiet = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 - closed by the stack
        for policy, fault in ROWS:
            root = work / f"{label}-{policy}-{fault}"
            shutil.copytree(base, root, symlinks=True)
            provider = stack.enter_context(fake_provider(retry_after="20"))
            point_at(root, provider.url, **POLICIES[policy])
            params = StdioServerParameters(
                command=sys.executable,
                env=environment(lib),
                args=["-m", "graphrag_mcp_server", "serve", "--index-path", str(root)],
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=quiet))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append((session, provider, fault))
        return await asyncio.gather(
            *(answer(session, provider, fault) for session, provider, fault in sessions)
        )


def index_with_prose(base: Path, work: Path, lib: Path | None, label: str) -> dict:
    root = work / f"{label}-prose"
    shutil.copytree(base, root, symlinks=True)
    shutil.rmtree(root / "output", ignore_errors=True)
    shutil.rmtree(root / "versions", ignore_errors=True)
    with ExitStack() as stack:
        provider = stack.enter_context(fake_provider(answer=PROSE, extracts=False))
        point_at(root, provider.url, **POLICIES["bounded"])
        started = time.perf_counter()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "graphrag_mcp_server",
                "index",
                str(REPO / "fixtures" / "corpus"),
                "--index-path",
                str(root),
            ],
            capture_output=True,
            text=True,
            env=environment(lib),
        )
        return {
            "seconds": time.perf_counter() - started,
            "requests": provider.count("chat"),
            "text": result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "",
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--before", default="7df08a5", help="the commit to compare with (default: before issue 31)"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        before = work / "before"
        before.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", options.before, "lib"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        base = work / "base"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "graphrag_mcp_server",
                "index",
                str(REPO / "fixtures" / "corpus"),
                "--index-path",
                str(base),
                "--offline",
            ],
            check=True,
            capture_output=True,
            env=environment(None),
        )
        figures = {
            label: asyncio.run(measure(base, work, lib, label))
            for label, lib in (("before", before / "lib"), ("now", None))
        }
        prose = {
            label: index_with_prose(base, work, lib, label)
            for label, lib in (("before", before / "lib"), ("now", None))
        }
    write_sections(report(options, figures, prose))


def named(figure: dict, fault: str) -> bool:
    return any(reason in figure["text"] for reason in REASONS[fault])


def cell(figure: dict, fault: str) -> str:
    requests = f"{figure['requests']} request{'' if figure['requests'] == 1 else 's'}"
    said = (
        "reason named" if named(figure, fault) else "reason lost: " + repr(figure["text"][23:110])
    )
    return f"{figure['seconds']:.1f} s, {requests}, {said}"


def report(
    options: argparse.Namespace, figures: dict[str, list[dict]], prose: dict[str, dict]
) -> str:
    rows = []
    for number, (policy, fault) in enumerate(ROWS):
        before, now = figures["before"][number], figures["now"][number]
        met = now["error"] and now["seconds"] < 60 and named(now, fault)
        init = (
            "init (bounded_backoff)"
            if policy == "bounded"
            else "graphrag init (exponential_backoff)"
        )
        rows.append(
            f"| {init} "
            f"| {fault}{' (Retry-After: 20)' if fault == '429' else ''} | {cell(before, fault)} | "
            f"{cell(now, fault)} | {now['progress']} | {'met' if met else 'not met'} |"
        )
    table = "\n".join(rows)
    prose_rows = "\n".join(
        f"| {label} | {figure['seconds']:.1f} s | {figure['requests']} | {figure['text'][:320]} |"
        for label, figure in prose.items()
    )
    return f"""{SECTION}

Measured by `python tests/benchmarks/bench_faults.py --before {options.before}` on a \
{platform.machine()} machine \
with {os.cpu_count()} cores: the fixtures index with its completion model pointed at a local \
OpenAI-compatible \
server that fails as the row says; a client over stdio calls local_search with a progress token \
(all rows of one \
code at once, each its own server). "before" is the package at {options.before}, "now" this \
checkout; defaults \
throughout. Target (issue 31): every search answers before 60 s (a common client timeout) naming \
the provider's \
reason (its HTTP status, or for a provider that never answers, the deadline), whichever retry \
policy the root names.

| root's retry policy | fault | before | now | progress notifications (now) | target |
| --- | --- | --- | --- | --- | --- |
{table}

`graphrag-mcp index` over fixtures/corpus with a model that answers prose to graphrag's extraction \
prompt (target: \
stopped in seconds, naming the format and quoting the answer):

| code | time to the exit | provider requests | last line |
| --- | --- | --- | --- |
{prose_rows}
"""


if __name__ == "__main__":
    main()
