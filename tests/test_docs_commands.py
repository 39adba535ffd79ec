"""Every `graphrag-mcp` command in README.md and docs/ runs as written (paths mapped into a
sandbox).

Commands come from ```bash blocks, from `$ `-prompted lines of plain blocks and from the servers of
MCP client configurations (```json with `command` graphrag-mcp: `args`, `env`); `export VAR=...`
lines of a block set its environment. Each block runs in a fresh sandbox where the documented
index paths hold a copy of the fixtures index and the documented data folders the fixtures corpus.
A command on an index configured for a real provider (no key, no network here) must fail with one
`error:` line; every other command must succeed; `serve` must start and keep serving.
"""

import json
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import CORPUS, REPO, cli_env, run_cli

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
INDEX_PATHS = [
    "/path/to/index",
    "/data/index",
    "./my-graphrag-project",
    "./demo_index",
    "/tmp/demo",
    "./my_index",
]
DATA_PATHS = ["fixtures/corpus", "./my-documents", "./my-docs"]
PROVIDERS_NEEDING_A_SERVICE = {"openai", "azure", "ollama"}


@dataclass
class Block:
    """One fenced block's commands (argument lists after `graphrag-mcp`) and exported variables."""

    where: str
    commands: list[list[str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    outputs: dict[int, list[str]] = field(default_factory=dict)
    """command's position -> the output shown under its `$ ` line"""


def _blocks() -> list[Block]:
    blocks = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for fence in re.finditer(r"```(\w*)\n(.*?)```", text, re.S):
            language, body = fence.groups()
            block = Block(f"{document.name}:{text[: fence.start()].count(chr(10)) + 1}")
            if language == "json":
                blocks += [block] if _configured_servers(block, body).commands else []
                continue
            for line in body.replace("\\\n", " ").splitlines():
                if language != "bash":
                    if not line.startswith("$ "):
                        if block.commands and line.strip():
                            block.outputs.setdefault(len(block.commands) - 1, []).append(line)
                        continue
                    line = line[2:]
                line = line.strip()
                if line.startswith("export "):
                    name, _, value = line.removeprefix("export ").partition("=")
                    block.env[name] = "x" * 32 if value.startswith("$(") else value.split()[0]
                    continue
                block.commands += _commands(line)
            if block.commands:
                blocks.append(block)
    return blocks


def _configured_servers(block: Block, body: str) -> Block:
    """`block` given the graphrag-mcp servers of an MCP client configuration (their args and
    env)."""
    try:
        config = json.loads(body)
    except json.JSONDecodeError:  # test_docs_outputs names it
        return block
    for group in ("mcpServers", "servers"):
        for server in (config.get(group, {}) if isinstance(config, dict) else {}).values():
            if str(server.get("command", "")).endswith("graphrag-mcp"):
                block.commands.append([str(argument) for argument in server.get("args", [])])
                block.env.update(server.get("env", {}))
    return block


def _commands(line: str) -> list[list[str]]:
    """The `graphrag-mcp` commands of a shell line (after `claude mcp add ... --`, between `&&`)."""
    found = []
    for part in line.split("&&"):
        words = shlex.split(part, comments=True)
        starts = [i for i, word in enumerate(words) if word.endswith("graphrag-mcp")]
        if starts:
            found.append(words[starts[0] + 1 :])
    return found


BLOCKS = _blocks()


def _sandbox(tmp_path: Path, index: Path, block: Block) -> dict[str, str]:
    """Documented path -> its place in the sandbox: the fixtures index (unless the block runs `init`
    there, or an `index` whose output it shows: that one builds anew), or the fixtures corpus."""
    initialised = {
        _option(command, "--index-path")
        for position, command in enumerate(block.commands)
        if command[:1] == ["init"] or (command[:1] == ["index"] and position in block.outputs)
    }
    places = {}
    for number, documented in enumerate(INDEX_PATHS + DATA_PATHS):
        place = tmp_path / (
            documented.removeprefix("./")
            if documented.startswith("./") or documented == "fixtures/corpus"
            else f"documented_{number}"
        )
        if documented in DATA_PATHS:
            shutil.copytree(CORPUS, place)
        elif documented not in initialised:
            shutil.copytree(index, place, symlinks=True)
        places[documented] = str(place)
    return places


def _option(arguments: list[str], flag: str) -> str | None:
    return arguments[arguments.index(flag) + 1] if flag in arguments else None


def _mapped(argument: str, places: dict[str, str], tmp_path: Path) -> str:
    for documented, place in places.items():
        if argument == documented:
            return place
    if argument.startswith("/tmp/"):
        return str(tmp_path / argument.removeprefix("/tmp/"))
    return argument


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(arguments: list[str], env: dict[str, str], cwd: Path) -> None:
    """stdio: serves until its input ends, then exits 0; HTTP: prints where it serves, and keeps
    serving."""
    http = _option(arguments, "--transport") not in (None, "stdio")
    if http:
        if "--port" in arguments:
            del arguments[arguments.index("--port") : arguments.index("--port") + 2]
        arguments += ["--port", str(_free_port())]
    with tempfile.TemporaryFile("w+") as errors:
        server = subprocess.Popen(
            [sys.executable, "-m", "graphrag_mcp_server", *arguments],
            cwd=cwd,
            env={**cli_env(), **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            text=True,
        )
        deadline = time.monotonic() + 60
        while server.poll() is None and time.monotonic() < deadline:
            errors.seek(0)
            if http and "graphrag-mcp: serving http://" in errors.read():
                break
            time.sleep(0.2)
        code = server.poll()
        server.terminate()
        server.wait(timeout=30)
        errors.seek(0)
        said = errors.read()
    assert code is None if http else code == 0, said
    assert "error:" not in said and "Traceback" not in said, said


SECONDS = re.compile(r"\b[0-9]+(\.[0-9]+)? s\b")
TIMESTAMP = re.compile(r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z")
"""Durations (`21.3 s`) and times: the numbers of a documented output that a run does not
reproduce."""


def _numbers(text: str) -> str:
    return TIMESTAMP.sub("2000-01-01T00:00:00Z", SECONDS.sub("0.0 s", text))


def _shape(shown: str) -> re.Pattern[str]:
    """A documented output line as a pattern: its numbers exactly as a run prints them (the offline
    model is deterministic) but for durations, anything where it shows `...`, whole line."""
    parts = re.split(r"\.\.\.|…", _numbers(shown.strip()))
    return re.compile(r"^\s*" + ".*".join(map(re.escape, parts)) + r"\s*$", re.M)


def _index_root(arguments: list[str], cwd: Path) -> Path:
    return (
        cwd / (_option(arguments, "--index-path") or _option(arguments, "-i") or "graphrag_index")
    ).resolve()


@pytest.mark.slow
@pytest.mark.e2e  # commands as written, `serve` among them, each in its own process
@pytest.mark.parametrize("block", BLOCKS, ids=[block.where for block in BLOCKS])
def test_documented_commands_run_as_written(
    block: Block, built_index: tuple[Path, dict], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    places, env = _sandbox(tmp_path, built_index[0], block), dict(block.env)
    if any(argument.startswith("az://") for command in block.commands for argument in command) or (
        "GRAPHRAG_MCP_STORAGE" in env
    ):  # blob storage: the documented location is a container of Azurite's
        azurite = request.getfixturevalue("azurite")
        location = azurite.new_location()
        places.update(
            {
                argument: location
                for command in block.commands
                for argument in command
                if argument.startswith("az://")
            }
        )
        env = {
            **env,
            **azurite.env(),
            **({"GRAPHRAG_MCP_STORAGE": location} if "GRAPHRAG_MCP_STORAGE" in env else {}),
        }
    needs_a_service: set[Path] = set()
    for position, documented in enumerate(block.commands):
        arguments = [_mapped(argument, places, tmp_path) for argument in documented]
        if arguments[:1] == ["serve"]:
            _serve(arguments, env, tmp_path)
            continue
        result = run_cli(*arguments, cwd=tmp_path, env=env, timeout=600)
        root = _index_root(arguments, tmp_path)
        if (
            arguments[:1] == ["init"]
            and _option(arguments, "--provider") in PROVIDERS_NEEDING_A_SERVICE
        ):
            needs_a_service.add(root)
        if root in needs_a_service and arguments[:1] != ["init"]:
            assert result.code == 1 and result.stderr.strip().splitlines()[-1].startswith(
                "error: "
            ), (documented, result.stderr[-2000:])
            continue
        assert result.code == 0, (documented, result.stdout[-2000:], result.stderr[-2000:])
        for shown in block.outputs.get(position, []):
            assert _shape(shown).search(_numbers(result.stdout + result.stderr)), (
                shown,
                result.stdout[-3000:],
            )


def test_every_documented_command_is_collected() -> None:
    commands = [command[0] for block in BLOCKS for command in block.commands if command]
    assert {"index", "query", "stats", "serve", "init", "export", "--version"} <= set(commands), (
        commands
    )
