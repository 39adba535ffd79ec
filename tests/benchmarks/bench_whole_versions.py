"""A provider that fails part of a build (issue 38), before and after, side by side in one run;
writes the "Whole versions" section of docs/benchmarks.md.

    python tests/benchmarks/bench_whole_versions.py [--before 35876bb]

Each row: the fixtures corpus indexed by tests/fake_provider.py answering well (completion and
embeddings), then the row's change and fault, then `stats`, then the same `index` with the provider
healthy again. "before" runs the package as it was at `--before` (its lib/ first on PYTHONPATH),
"now" this checkout. The retry policy is init's bounded_backoff with one quick retry (what is
measured is what a failure that outlasts the retries leaves, not the waits).
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks_doc import write_sections

from fake_provider import REPORT_PROMPT, FakeProvider, fake_provider
from test_whole_versions import FAST_RETRIES as POLICY
from test_whole_versions import NEW_DOCUMENT, REPORT

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "fixtures" / "corpus"
SECTION = "## Whole versions"
ROWS = {
    "an update: every report prompt answered HTTP 500": (REPORT_PROMPT, "500"),
    "an update: every report prompt answered with prose, not JSON": (REPORT_PROMPT, "not_json"),
    "an update: the new document's extraction answered HTTP 500": ("Text: # The ferry", "500"),
    "settings.yaml's completion model changed, no document changed": (None, None),
}


def run(lib: Path | None, *args: str | Path) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("GRAPHRAG_", "OPENAI_"))
    }
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", **({"PYTHONPATH": str(lib)} if lib else {}))
    return subprocess.run(
        [sys.executable, "-m", "graphrag_mcp_server", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
    )


def point_at(root: Path, url: str, model: str = "gpt-4.1-mini") -> None:
    settings = yaml.safe_load((root / "settings.yaml").read_text())
    remote = {"model_provider": "openai", "api_key": "sk-test", "api_base": url, **POLICY}
    settings["completion_models"]["default_completion_model"] = {**remote, "model": model}
    settings["embedding_models"]["default_embedding_model"] = {
        **remote,
        "model": "text-embedding-3-small",
    }
    (root / "settings.yaml").write_text(yaml.safe_dump(settings))


def served(root: Path) -> tuple[Path | None, str]:
    """The served version and its reports of communities, read from its tables."""
    import pandas as pd

    output = (root / "output").resolve() if (root / "output").exists() else None
    if output is None:
        return None, "-"
    reports = len(pd.read_parquet(output / "community_reports.parquet", columns=["community"]))
    communities = len(pd.read_parquet(output / "communities.parquet", columns=["community"]))
    documents = len(pd.read_parquet(output / "documents.parquet", columns=["id"]))
    return output, f"{documents} documents, reports {reports} of {communities}"


def row(
    lib: Path | None, work: Path, provider: FakeProvider, failing: str | None, fault: str | None
) -> dict:
    data, root = work / "data", work / "index"
    shutil.copytree(CORPUS, data)
    run(lib, "init", "--index-path", root, "--provider", "offline")
    point_at(root, provider.url)
    provider.prompt_faults.clear()
    assert run(lib, "index", data, "--index-path", root).returncode == 0
    before, _ = served(root)
    if failing is None:
        point_at(root, provider.url, model="gpt-4.1")
    else:
        (data / NEW_DOCUMENT[0]).write_text(NEW_DOCUMENT[1], encoding="utf-8")
        provider.fail_prompts(failing, fault)
    sent = len(provider.prompts)
    faulty = run(lib, "index", data, "--index-path", root)
    after, content = served(root)
    stats = run(lib, "stats", "--index-path", root, "--format", "json")
    issues = [
        issue["message"]
        for issue in json.loads(stats.stdout or "{}").get("issues", [])
        if issue["severity"] == "error" or "settings.yaml" in issue["message"]
    ]
    faulty_calls = len(provider.prompts) - sent
    provider.prompt_faults.clear()
    sent = len(provider.prompts)
    again = run(lib, "index", data, "--index-path", root)
    return {
        "exit": faulty.returncode,
        "calls": faulty_calls,
        "switched": after != before,
        "served": content,
        "said": (faulty.stderr.strip().splitlines() or [""])[-1][:160],
        "issues": len(issues),
        "next_exit": again.returncode,
        "next_calls": len(provider.prompts) - sent,
        "next_served": served(root)[1],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--before", default="35876bb", help="the commit to compare with (default: before issue 38)"
    )
    options = parser.parse_args()
    figures: dict[str, dict[str, dict]] = {}
    with (
        tempfile.TemporaryDirectory() as temporary,
        fake_provider(structured={REPORT_PROMPT: REPORT}, extracts_names=True) as provider,
    ):
        work = Path(temporary)
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", options.before, "lib"],
            check=True,
            capture_output=True,
        ).stdout
        (work / "before").mkdir()
        subprocess.run(["tar", "-x", "-C", str(work / "before")], input=archive, check=True)
        for number, (name, (failing, fault)) in enumerate(ROWS.items()):
            figures[name] = {
                label: row(lib, work / f"{label}-{number}", provider, failing, fault)
                for label, lib in (("before", work / "before" / "lib"), ("now", None))
            }
    write_sections(report(options, figures))


def cell(figure: dict) -> str:
    served = f"{'new version' if figure['switched'] else 'previous version'} ({figure['served']})"
    return (
        f"exit {figure['exit']}, {figure['calls']} requests; serves the {served}; stats: "
        f"{figure['issues']} issue(s); next run: exit {figure['next_exit']}, "
        f"{figure['next_calls']} requests, "
        f"{figure['next_served']}"
    )


def report(options: argparse.Namespace, figures: dict[str, dict[str, dict]]) -> str:
    rows = "\n".join(
        f"| {name} | {cell(both['before'])} | {cell(both['now'])} |"
        for name, both in figures.items()
    )
    said = "\n".join(f"- {name}: `{both['now']['said']}`" for name, both in figures.items())
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return f"""{SECTION}

Measured by `python tests/benchmarks/bench_whole_versions.py --before {options.before}` at commit \
{commit} (\
"now", uncommitted changes included) on a {platform.machine()} machine with {os.cpu_count()} \
cores: the fixtures \
corpus indexed through a local OpenAI-compatible server (tests/fake_provider.py), then the row's \
change with the \
fault, `stats`, and the same `index` with the server answering well again. Requests count the chat \
requests the \
server received (the one-token model check included). Target (issue 38): a run whose provider \
fails part of the \
build exits non-zero and publishes nothing, the version served before stays whole, and the next \
run repairs it \
with only the missing calls; changed settings are part of what changed.

| row | before ({options.before}) | now |
| --- | --- | --- |
{rows}

What the run said, now:
{said}
"""


if __name__ == "__main__":
    main()
