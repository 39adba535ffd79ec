"""Documents written through MCP (issue 44): add, search, update, delete, refusals and bursts, over
real client sessions; and `graphrag-mcp add` / `remove`. No write may land outside the folder."""

import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from conftest import CORPUS, cli_env, run_cli
from mcp_client import IN_PROCESS, mcp_session, running_server

UNIQUE = "Zephyrine Quorvald"
TEXT = (
    f"# Foundry decision\n\n{UNIQUE} leads the Halcyon Foundry project in Tarsvik. {UNIQUE} "
    "decided on 3 March that Halcyon Foundry ships its first kiln in June.\r\nKeep this: ü ✓.\n"
)
WRITE_TOOLS = {"add_document", "update_document", "delete_document", "list_documents"}


def tree_digest(folder: Path, *leave_out: Path) -> str:
    """Names and contents of every file under `folder` (but those under `leave_out`)."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if any(path.is_relative_to(left) for left in leave_out):
            continue
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A copy of the fixtures corpus; its notes/ folder is the writable one."""
    folder = tmp_path / "corpus"
    shutil.copytree(CORPUS, folder)
    return folder


def write_env(notes: Path, **extra: str) -> dict[str, str]:
    return {"GRAPHRAG_MCP_WRITE_PATH": str(notes), **extra}


def roots(corpus: Path) -> dict[str, str]:
    """The data root the index's documents are in (the writable folder inside it)."""
    return {"GRAPHRAG_MCP_DATA_ROOTS": str(corpus)}


async def call(session: ClientSession, tool: str, **arguments: object) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


async def refused(session: ClientSession, tool: str, **arguments: object) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


async def finished(session: ClientSession, job_id: str, timeout: float = 600) -> dict:
    """The job once it ends; it must succeed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = await call(session, "index_status", job_id=job_id)
        if job["state"] not in ("queued", "running"):
            assert job["state"] == "succeeded", job
            return job
        await asyncio.sleep(0.5)
    raise TimeoutError(f"job {job_id} still running")


async def context_names(session: ClientSession, query: str) -> tuple[set[str], set[str]]:
    """Entity names and source documents of a context-only local search."""
    result = await call(session, "local_search", query=query, context_only=True)
    names = {entity["name"].lower() for entity in result["context"]["entities"]}
    return names, {source["document"] for source in result["sources"]}


def graph_mentions(root: Path, name: str) -> list[str]:
    """Where the served version's entities or community reports still name `name`."""
    output = root / "output"
    entities = pd.read_parquet(output / "entities.parquet")
    reports = pd.read_parquet(output / "community_reports.parquet")
    found = [f"entity {title}" for title in entities["title"] if name.lower() in title.lower()]
    found += [
        f"report {row.community}"
        for row in reports.itertuples()
        if name.lower() in str(row.full_content).lower()
    ]
    return found


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_add_search_update_delete(copied_index: Path, corpus: Path, transport: str) -> None:
    """A written document is found once its job succeeds, changes with an update, and with a delete
    leaves the graph and every report; nothing outside the writable folder is written."""
    notes = corpus / "notes"
    parent = tree_digest(corpus.parent, notes, copied_index)

    async def scenario() -> None:
        env = write_env(notes)
        async with mcp_session(copied_index, transport, env=env, data_path=corpus) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) >= WRITE_TOOLS
            assert tools["delete_document"].annotations.destructive_hint is True
            assert tools["add_document"].annotations.destructive_hint is False
            added = await call(
                session, "add_document", title="Foundry decision", text=TEXT, metadata={"by": "t"}
            )
            assert added["action"] == "added" and added["path"].startswith("foundry-decision-")
            stored = (notes / added["path"]).read_bytes().decode()
            assert stored.startswith("---\n") and stored.endswith(TEXT)
            header = yaml.safe_load(stored.split("---\n")[1])
            assert header["id"] == added["document_id"] and header["metadata"] == {"by": "t"}
            await finished(session, added["job_id"])
            names, documents = await context_names(session, f"Who is {UNIQUE}?")
            assert UNIQUE.lower() in names and f"notes/{added['path']}" in documents

            listed = await call(session, "list_documents")
            mine = [doc for doc in listed["documents"] if doc["changeable"]]
            assert [doc["document_id"] for doc in mine] == [added["document_id"]]
            assert mine[0]["indexed"] and listed["total"] == len(listed["documents"])
            foreign = next(doc for doc in listed["documents"] if not doc["changeable"])
            message = await refused(session, "delete_document", document_id=foreign["document_id"])
            assert str(notes) in message and "not in the writable folder" in message

            changed = TEXT.replace("Tarsvik", "Morwenna Bay")
            updated = await call(
                session, "update_document", document_id=added["document_id"], text=changed
            )
            assert updated["path"] == added["path"]
            assert (notes / added["path"]).read_bytes().decode().endswith(changed)
            await finished(session, updated["job_id"])
            names, _ = await context_names(session, "Morwenna Bay")
            assert "morwenna bay" in names

            deleted = await call(session, "delete_document", document_id=added["document_id"])
            assert not (notes / added["path"]).exists()
            await finished(session, deleted["job_id"])
            names, documents = await context_names(session, f"Who is {UNIQUE}?")
            assert UNIQUE.lower() not in names and not any("notes/" in d for d in documents)
        assert graph_mentions(copied_index, UNIQUE) == []

    asyncio.run(scenario())
    assert tree_digest(corpus.parent, notes, copied_index) == parent
    assert all(path.parent == notes for path in notes.iterdir())


@pytest.mark.slow
def test_ten_writes_in_a_burst_are_one_job(copied_index: Path, corpus: Path) -> None:
    """Ten add_document calls within the settle window join one queued job: it indexes all ten."""
    notes = corpus / "notes"
    parent = tree_digest(corpus.parent, notes, copied_index)

    async def scenario() -> None:
        env = write_env(notes, GRAPHRAG_MCP_WRITE_SETTLE_SECONDS="2")
        async with mcp_session(copied_index, "stdio", env=env, data_path=corpus) as session:
            writes = [
                await call(
                    session, "add_document", title=f"Note {n}", text=f"Kestrel Vane{n} met Orla."
                )
                for n in range(10)
            ]
            assert len({write["job_id"] for write in writes}) == 1
            job = await finished(session, writes[0]["job_id"])
            assert job["summary"]["documents_added"] == 10
            listed = await call(session, "list_documents")
            mine = [doc for doc in listed["documents"] if doc["changeable"]]
            assert len(mine) == 10 and all(doc["indexed"] for doc in mine)

    asyncio.run(scenario())
    assert tree_digest(corpus.parent, notes, copied_index) == parent
    assert len(list(notes.glob("note-*.md"))) == 10


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_no_write_path_or_read_only_offers_no_write_tools(
    built_index, corpus: Path, tmp_path: Path
) -> None:
    """Without a write path, or on a read-only server, the write tools and `remember` are absent;
    a writable folder outside the folder the index was built from is refused at start."""
    root, _ = built_index

    sizes = {}

    async def tools(env: dict[str, str]) -> tuple[set[str], set[str]]:
        async with mcp_session(root, IN_PROCESS, env=env) as session:
            listing = (await session.list_tools()).tools
            prompts = {prompt.name for prompt in (await session.list_prompts()).prompts}
        dumped = [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listing
        ]
        sizes[json.dumps(sorted(env.items()))] = len(json.dumps({"tools": dumped}).encode())
        return {tool.name for tool in listing}, prompts

    notes = corpus / "notes"
    plain, plain_prompts = asyncio.run(tools({}))
    read_only, _ = asyncio.run(tools(write_env(notes, GRAPHRAG_MCP_READ_ONLY="true")))
    writable, writable_prompts = asyncio.run(tools(write_env(notes, **roots(corpus))))
    assert not WRITE_TOOLS & plain and not WRITE_TOOLS & read_only and writable >= WRITE_TOOLS
    assert "remember" not in plain_prompts and "remember" in writable_prompts
    with_writes = sizes[json.dumps(sorted(write_env(notes, **roots(corpus)).items()))]
    assert with_writes - sizes[json.dumps([])] < 4_500  # the four tools' share of a context
    assert not notes.exists() or not any(notes.iterdir())
    result = run_cli("serve", "--index-path", str(root), "--write-path", str(notes), "--read-only")
    assert result.code == 1 and "exclude each other" in result.stderr
    elsewhere = tmp_path / "elsewhere"
    result = run_cli("serve", "--index-path", str(root), "--write-path", str(elsewhere))
    assert result.code == 1 and "would drop them" in result.stderr, result.stderr
    assert "--data-path" in result.stderr and "Traceback" not in result.stderr


def test_refusals(built_index, tmp_path: Path) -> None:
    """Oversize, the per-minute allowance, unknown and separator-bearing ids are refused in one
    line; titles with separators or reserved names become safe names inside the folder."""
    root, _ = built_index
    notes = tmp_path / "space" / "notes"
    shutil.copytree(CORPUS, tmp_path / "space")
    (tmp_path / "space" / "keep.txt").write_text("untouched", encoding="utf-8")
    parent = tree_digest(tmp_path, notes)
    env = write_env(
        notes,
        **roots(tmp_path / "space"),
        GRAPHRAG_MCP_WRITE_MAX_DOCUMENT_BYTES="2000",
        GRAPHRAG_MCP_WRITE_BYTES_PER_MINUTE="3000",
        GRAPHRAG_MCP_WRITE_SETTLE_SECONDS="3600",  # no job starts during the test
    )

    async def scenario() -> None:
        async with mcp_session(root, IN_PROCESS, env=env) as session:
            message = await refused(session, "add_document", title="big", text="x" * 2001)
            assert "2001 bytes" in message and "WRITE_MAX_DOCUMENT_BYTES" in message
            names = []
            for title in ("../../etc/passwd", "..\\..\\win.ini", "CON", ".hidden", "nul.txt"):
                write = await call(session, "add_document", title=title, text="y" * 500)
                names.append(write["path"])
            assert all("/" not in n and "\\" not in n and not n.startswith(".") for n in names)
            assert names[0].startswith("etc-passwd-") and names[2].startswith("document-")
            message = await refused(session, "add_document", title="more", text="z" * 600)
            assert "WRITE_BYTES_PER_MINUTE" in message and "try again in" in message
            for bad in ("../x", "a/b", "..", "abc\\def"):
                with pytest.raises(MCPError, match="document_id"):
                    await session.call_tool("delete_document", {"document_id": bad})
            message = await refused(session, "update_document", document_id="0" * 12, text="q")
            assert "no document" in message and str(notes) in message
            await call(session, "delete_document", document_id=write["document_id"])
            again = await call(session, "add_document", title="after", text="w" * 500)
            assert again["action"] == "added"  # a refused update took no bytes of the minute

    asyncio.run(scenario())
    assert {path.parent for path in notes.iterdir()} == {notes}
    assert len(list(notes.glob("*.md"))) == 5
    assert tree_digest(tmp_path, notes) == parent


@pytest.mark.slow  # 8 s or more on 2 cores (a CLI process or more): the full suite runs it
def test_cli_add_and_remove(tmp_path: Path, built_index) -> None:
    """`add -` and `add FILE` write documents (same title: updated), `remove` deletes one; the first
    stdout line is JSON; without a write path one error line."""
    root, _ = built_index
    notes = tmp_path / "notes"
    source = tmp_path / "minutes.md"
    source.write_text("Meeting minutes: Ilse Varga approved.", encoding="utf-8")
    common = ["--write-path", str(notes), "--index-path", str(root), "--no-index"]
    first = run_cli("add", str(source), *common)
    assert first.code == 0, first.stderr
    added = json.loads(first.stdout.splitlines()[0])
    assert added["action"] == "added" and (notes / added["path"]).exists()
    again = subprocess.run(
        [sys.executable, "-m", "graphrag_mcp_server", "add", "-", "--title", "minutes", *common],
        input="New text.",
        capture_output=True,
        text=True,
        env=cli_env(),
        check=True,
    )
    assert json.loads(again.stdout.splitlines()[0])["action"] == "updated"
    assert (notes / added["path"]).read_text(encoding="utf-8").endswith("New text.")
    removed = run_cli("remove", added["document_id"], *common)
    assert removed.code == 0 and not (notes / added["path"]).exists()
    unknown = run_cli("remove", "0" * 12, *common)
    assert unknown.code == 1 and unknown.stderr.startswith("error: no document")
    missing = run_cli("add", str(source), "--index-path", str(root), "--no-index")
    assert missing.code == 1 and "--write-path" in missing.stderr


@pytest.mark.slow
def test_cli_add_then_remove_updates_the_index(copied_index: Path, corpus: Path) -> None:
    """`add` with `--data-path` indexes the corpus with the new note (its person in the graph),
    `remove` takes it out again; the corpus around the writable folder is untouched."""
    notes = corpus / "notes"
    parent = tree_digest(corpus.parent, notes, copied_index)
    source = corpus.parent / "note.md"
    source.write_text(TEXT, encoding="utf-8")
    common = ["--write-path", str(notes), "--data-path", str(corpus)]
    added = run_cli("add", str(source), "--index-path", str(copied_index), *common, "--offline")
    assert added.code == 0, added.stderr
    document = json.loads(added.stdout.splitlines()[0])
    assert "Documents added 1" in added.stdout
    assert graph_mentions(copied_index, UNIQUE)
    removed = run_cli(
        "remove", document["document_id"], "--index-path", str(copied_index), *common, "--offline"
    )
    assert removed.code == 0, removed.stderr
    assert "deleted 1" in removed.stdout and graph_mentions(copied_index, UNIQUE) == []
    source.unlink()
    assert tree_digest(corpus.parent, notes, copied_index) == parent


@pytest.mark.e2e
def test_write_allowance_counts_per_identity_not_per_session(built_index, corpus: Path) -> None:
    """Over streamable HTTP, a second session of the same client (its address, without auth)
    shares the first one's bytes per minute; the write is logged with that identity."""
    root, _ = built_index
    notes = corpus / "notes"
    env = write_env(
        notes,
        **roots(corpus),
        GRAPHRAG_MCP_WRITE_BYTES_PER_MINUTE="1000",
        GRAPHRAG_MCP_WRITE_SETTLE_SECONDS="3600",  # no job starts during the test
    )

    async def scenario(url: str) -> str:
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as first,
        ):
            await first.initialize()
            await call(first, "add_document", title="one", text="a" * 800)
        async with (
            streamable_http_client(url) as (read, write, *_),
            ClientSession(read, write) as second,
        ):
            await second.initialize()
            return await refused(second, "add_document", title="two", text="b" * 300)

    with running_server(root, "streamable-http", env=env) as server:
        message = asyncio.run(scenario(server.url))
        log = server.stderr()
    assert "WRITE_BYTES_PER_MINUTE" in message and "wrote 800 bytes" in message
    assert "by address:127.0.0.1" in log and len(list(notes.glob("*.md"))) == 1
