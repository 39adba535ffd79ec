"""Documented JSON is what is returned: the tool calls of docs/tools.md, made through MCP sessions
as the docs describe, return every key their documented results show, with the values shown; the
`--format json` outputs of docs/cli.md have the keys shown. (Documents may leave keys out and cut
strings with "..."; they may not show keys that do not exist or values a fresh build does not
give.)"""

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import CORPUS, REPO, run_cli
from mcp_client import mcp_session

FENCED_JSON = re.compile(r"```json\n(.*?)```", re.S)


def _json_blocks(document: Path) -> list[tuple[int, Any]]:
    """(line, value) of each ```json block, and (line, None) at each heading; every block must
    parse."""
    text = document.read_text(encoding="utf-8")
    blocks: list[tuple[int, Any]] = []
    for fence in re.finditer(r"```json\n(.*?)```|^#+ ", text, re.S | re.M):
        line = text[: fence.start()].count("\n") + 1
        if fence.group(1) is None:
            blocks.append((line, None))
            continue
        try:
            blocks.append((line, json.loads(fence.group(1))))
        except json.JSONDecodeError as error:
            blocks.append((line, error))
    return blocks


def _missing_keys(documented: Any, actual: Any, path: str = "") -> list[str]:
    """Keys the documented value shows that the actual one lacks (into objects, and lists' first
    items)."""
    if isinstance(documented, dict) and isinstance(actual, dict):
        return [
            missing
            for key, value in documented.items()
            for missing in (
                [path + key]
                if key not in actual
                else _missing_keys(value, actual[key], f"{path}{key}.")
            )
        ]
    if isinstance(documented, list) and isinstance(actual, list) and documented and actual:
        return _missing_keys(documented[0], actual[0], f"{path}[0].")
    return []


VARYING = {
    "seconds",
    "index_version",
    "job_id",
    "started_at",
    "finished_at",
    "index_updated_at",
    "loaded_at",
    "uptime_seconds",
}
"""Keys whose values differ from run to run (times, versions, job ids): shape checked only."""
VARYING_BY_TOOL = {
    "drift_search": {"llm_calls", "prompt_tokens", "completion_tokens", "answer", "sources"}
}
"""DRIFT's follow-up rounds run concurrently, and graphrag shuffles the follow-ups it has not
ranked (drift_search/state.py `rank_incomplete_actions`: `random.shuffle`): how many calls they
make, and the order of the answer's records and sources, vary from run to run (on the fixtures of
8fd475f the first two sources came in either order)."""


def _wrong_values(
    documented: Any, actual: Any, path: str = "", varying: frozenset[str] = frozenset()
) -> list[str]:
    """Where a documented value is not what the call returned. A string with "..." stands for the
    actual one with parts left out (its other parts appear in order); a list item starting "..."
    ends the items shown; keys in VARYING are not compared."""
    if isinstance(documented, dict) and isinstance(actual, dict):
        return [
            wrong
            for key, value in documented.items()
            if key in actual and key not in VARYING | varying
            for wrong in _wrong_values(value, actual[key], f"{path}{key}.")
        ]
    if isinstance(documented, list) and isinstance(actual, list):
        shown = []
        for item in documented:
            if isinstance(item, str) and item.startswith("..."):
                break
            shown.append(item)
        if len(shown) == len(documented) and len(shown) != len(actual):
            return [f"{path} has {len(actual)} items, not {len(shown)}"]
        return [
            wrong
            for index, (item, got) in enumerate(zip(shown, actual, strict=False))
            for wrong in _wrong_values(item, got, f"{path}[{index}].")
        ] + ([f"{path} has fewer than {len(shown)} items"] if len(actual) < len(shown) else [])
    if isinstance(documented, str) and isinstance(actual, str) and "..." in documented:
        at = 0
        for part in documented.split("..."):
            found = actual.find(part, at)
            if found < 0:
                return [f"{path}: {part[:60]!r} not in {actual[at : at + 120]!r}"]
            at = found + len(part)
        return []
    if documented != actual:
        return [f"{path}: documented {str(documented)[:80]!r}, returned {str(actual)[:80]!r}"]
    return []


def _calls_and_results(document: Path) -> list[tuple[int, dict, list[dict]]]:
    """Each documented tool call (line, call) with its result: the next block, and later blocks of
    the same keys under the same heading (another form of it), not fragments of it shown apart."""
    pairs: list[tuple[int, dict, list[dict]]] = []
    after_call = False
    for line, value in _json_blocks(document):
        if isinstance(value, dict) and set(value) == {"name", "arguments"}:
            pairs.append((line, value, []))
            after_call = True
        elif value is None:
            after_call = False
        elif after_call and isinstance(value, dict):
            results = pairs[-1][2]
            if not results or set(value) == set(results[0]):
                results.append(value)
    return pairs


def test_every_documented_json_block_parses() -> None:
    documents = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = [
        f"{document.name}:{line}: {value}"
        for document in documents
        for line, value in _json_blocks(document)
        if isinstance(value, json.JSONDecodeError)
    ]
    assert not broken, f"fix these ```json blocks: {broken}"


INDEX_TOOLS = {"build_index", "index_status", "cancel_index_job"}
"""Tools docs/tools.md shows on "a separate server on an empty root" with three documents."""


def _as_documented(value: Any, tmp: Path) -> Any:
    """A returned value with the test's temporary folder written as the docs' /tmp."""
    return json.loads(json.dumps(value).replace(str(tmp), "/tmp"))


@pytest.mark.slow
async def test_documented_tool_results_are_what_tools_return(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """Every tool call of docs/tools.md, made as the docs say (the searches and statistics on the
    fixtures index; build_index and index_status on a server over an empty root whose data root
    holds three of the corpus files in docs_data), returns every key its results show, and the
    values of its first result: numbers, names and counts as shown, strings with "..." as the
    returned ones with parts left out (VARYING keys and later forms of a result: keys only).
    DOCS_RESULTS=FILE writes what each call returned (by its line in tools.md) to FILE."""
    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    (tmp_path / "docs_data").mkdir()
    for document in sorted(CORPUS.iterdir())[:3]:
        shutil.copy(document, tmp_path / "docs_data")
    pairs = _calls_and_results(REPO / "docs" / "tools.md")
    assert {call["name"] for _, call, _ in pairs} >= {
        "local_search",
        "global_search",
        "drift_search",
        "basic_search",
        "build_index",
        "index_status",
        "get_statistics",
    }
    job_id, wrong, returned = None, [], {}
    async with (
        mcp_session(root) as fixtures,
        mcp_session(tmp_path / "docs_index", data_path=tmp_path) as empty_root,
    ):
        for line, call, results in pairs:
            session = empty_root if call["name"] in INDEX_TOOLS else fixtures
            arguments = dict(call["arguments"])
            if call["name"] == "index_status":
                arguments["job_id"] = job_id
            result = await session.call_tool(call["name"], arguments)
            assert not result.is_error, (line, result.content)
            actual = _as_documented(result.structured_content, tmp_path)
            job_id = actual.get("job_id", job_id)
            for documented in results:
                assert not _missing_keys(documented, actual), (
                    f"tools.md:{line}",
                    _missing_keys(documented, actual),
                )
            varying = frozenset(VARYING_BY_TOOL.get(call["name"], ()))
            wrong.extend(
                f"tools.md:{line}: {w}" for w in _wrong_values(results[0], actual, varying=varying)
            )
            returned[line] = actual
    if dump := os.environ.get("DOCS_RESULTS"):  # what each call returned, to update the docs from
        Path(dump).write_text(json.dumps(returned, indent=2, ensure_ascii=False), encoding="utf-8")
    assert not wrong, "\n".join(wrong)


# the section of docs/cli.md -> the command whose `--format json` output its JSON block shows
CLI_OUTPUTS = {
    "index": None,  # the fixtures index's own build summary
    "query": ["query", "Who designed Old Bessie?", "--type", "local"],
    "stats": ["stats"],
}


def _cli_json_blocks() -> dict[str, Any]:
    """docs/cli.md's first ```json block of each `## command` section."""
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    blocks: dict[str, Any] = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        name = section.split(maxsplit=1)[0]
        if name in CLI_OUTPUTS and (fence := FENCED_JSON.search(section)):
            blocks[name] = json.loads(fence.group(1))
    return blocks


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_documented_cli_json_has_the_shape_commands_print(built_index: tuple[Path, dict]) -> None:
    root, summary = built_index
    blocks = _cli_json_blocks()
    assert set(blocks) == set(CLI_OUTPUTS)
    for name, command in CLI_OUTPUTS.items():
        if command is None:
            actual = summary
        else:
            printed = run_cli(*command, "--index-path", root, "--format", "json")
            assert printed.code == 0, printed.stderr
            actual = printed.json()
        assert not _missing_keys(blocks[name], actual), (
            f"cli.md ## {name}",
            _missing_keys(blocks[name], actual),
        )


def test_every_benchmark_section_names_the_commit_it_was_measured_on() -> None:
    """Each section of docs/benchmarks.md says near its start at which commit it was measured
    (benchmarks_doc.write_sections stamps the sections a benchmark writes)."""
    text = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    sections = re.split(r"(?m)^(?=## )", text)[1:]
    stamp = re.compile(r"\bcommits? [0-9a-f]{7}")
    unstamped = [section.splitlines()[0] for section in sections if not stamp.search(section[:700])]
    assert not unstamped, unstamped


PROSE_DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
"""Where prose states figures of the fixtures index (docs/benchmarks.md's sections name their own
commits instead)."""
COUNTED = re.compile(r"\b(\d+) entities(?:,| and) (\d+) relationships")
COLD_CALLS = re.compile(r"against (\d+) for a cold build")
ENTITIES_HELD = re.compile(r"The example index has (\d+):")
ANSWERED_FROM = re.compile(r"answered from people only\s+\(`(.*?)`\)", re.S)


def test_prose_figures_of_the_fixtures_index_are_a_fresh_builds(
    built_index: tuple[Path, dict],
) -> None:
    """Figures that prose gives for the fixtures index (its entities and relationships, a cold
    build's model calls, the entities the entities resource lists, docs/cost.md's fixtures row)
    are those of a fresh build; each pattern finds at least one figure, so a reworded sentence
    does not leave its figure unchecked."""
    summary = built_index[1]
    entities, relationships = summary["entities"], summary["relationships"]
    wrong, texts = [], ""
    for document in PROSE_DOCUMENTS:
        if document.name == "benchmarks.md":
            continue
        text = document.read_text(encoding="utf-8")
        texts += text
        for found in COUNTED.finditer(text):
            left_out = text[: found.start()].rsplit("\n", 1)[-1].startswith("Left out")
            if not left_out and (int(found[1]), int(found[2])) != (entities, relationships):
                built = f"a build: {entities}, {relationships}"
                wrong.append(f"{document.name}: {found[0]!r} ({built})")
        for found in COLD_CALLS.finditer(text):
            if int(found[1]) != summary["llm_calls"]:
                wrong.append(f"{document.name}: {found[0]!r} (a build: {summary['llm_calls']})")
        for found in ENTITIES_HELD.finditer(text):
            if int(found[1]) != entities:
                wrong.append(f"{document.name}: {found[0]!r} (a build: {entities})")
    row = next(
        line
        for line in (REPO / "docs" / "cost.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| fixtures | ")
    )
    cells = [int(cell) for cell in row.strip("| ").split(" | ")[1:7]]
    built = ["documents", "text_units", "entities", "relationships", "community_reports"]
    if cells != [*(summary[name] for name in built), summary["llm_calls"]]:
        wrong.append(f"cost.md: {row!r}")
    assert all(pattern.search(texts) for pattern in (COUNTED, COLD_CALLS, ENTITIES_HELD))
    assert not wrong, "\n".join(wrong)


DYNAMIC_CALLS = re.compile(r"more calls: (\d+) in the example index in place of (\d+)")
GRAPH_SIZE = re.compile(r"\((\d+) KB for the example's")


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
async def test_prose_figures_of_tool_examples_are_what_tools_return(
    built_index: tuple[Path, dict],
) -> None:
    """docs/tools.md's prose around its examples: the people an answer restricted to PERSON names
    first, global search's calls with and without dynamic community selection, and the size of
    graphrag://graph are a fresh build's."""
    tools = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    named, calls, size = (
        pattern.search(tools) for pattern in (ANSWERED_FROM, DYNAMIC_CALLS, GRAPH_SIZE)
    )
    assert named is not None and calls is not None and size is not None
    question = {"query": "What are the main themes of these documents?", "community_level": 0}
    async with mcp_session(built_index[0]) as session:
        people = await session.call_tool(
            "local_search", {"query": "Who designed Old Bessie?", "entity_types": ["PERSON"]}
        )
        plain = await session.call_tool("global_search", question)
        dynamic = await session.call_tool(
            "global_search", {**question, "dynamic_community_selection": True}
        )
        graph = await session.read_resource("graphrag://graph")
    answer = people.structured_content["answer"]
    first = answer.split(". [Data:")[0].removeprefix(
        "The records most relevant to the question concern "
    )
    assert first == named[1]
    made = (dynamic.structured_content["llm_calls"], plain.structured_content["llm_calls"])
    assert made == (int(calls[1]), int(calls[2]))
    kilobytes = len(graph.contents[0].text.encode("utf-8")) / 1000
    assert abs(kilobytes - int(size[1])) < 1, kilobytes
