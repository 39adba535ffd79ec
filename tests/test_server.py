"""`graphrag-mcp serve` through real MCP client sessions: stdio subprocess, streamable HTTP and
SSE."""

import json
import re
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from conftest import CORPUS, run_cli
from mcp_client import IN_PROCESS, TRANSPORTS, mcp_session
from test_streaming import streamed

TOOLS = {
    "global_search",
    "local_search",
    "drift_search",
    "basic_search",
    "build_index",
    "tune_prompts",
    "cancel_index_job",
    "index_status",
    "get_statistics",
    "get_entity",
    "get_community",
    "get_text_unit",
}
PROMPTS = {"analyze", "explore", "compare", "summarize"}
SEARCHES = [
    (
        "local_search",
        {"query": "Who designed Old Bessie and which firm built it?"},
        ("Tobias Arkwright", "Saltmarsh Engineering Works"),  # either answers it
    ),
    (
        "basic_search",
        {"query": "Who inspected the Kelling Point turbine in 1994?", "top_k": 5},
        ("Leonard Quist",),
    ),
    (
        "drift_search",
        {"query": "What did Ines Halloran study at Marrow Sands?", "follow_up_depth": 1},
        ("Ines Halloran",),
    ),
    (
        "global_search",
        {"query": "What is the Harrowgate Tidal Cooperative?", "community_level": 1},
        ("Harrowgate Tidal Cooperative",),
    ),
]


async def _call(session: ClientSession, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def _read_json(session: ClientSession, uri: str) -> dict | list:
    contents = (await session.read_resource(uri)).contents
    assert contents[0].mime_type == "application/json"
    return json.loads(contents[0].text)


@pytest.mark.e2e
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_every_tool_resource_and_prompt(
    built_index: tuple[Path, dict], corpus_titles: set[str], transport: str
) -> None:
    root, summary = built_index
    async with mcp_session(root, transport) as session:
        assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS
        assert {prompt.name for prompt in (await session.list_prompts()).prompts} == PROMPTS
        assert {str(r.uri) for r in (await session.list_resources()).resources} == {
            "graphrag://statistics",
            "graphrag://entities",
            "graphrag://graph",
            "graphrag://documents",
            "graphrag://communities",
        }
        assert {
            t.uri_template for t in (await session.list_resource_templates()).resource_templates
        } == {
            "graphrag://entities/{name}",
            "graphrag://communities/{community_id}",
            "graphrag://text_units/{text_unit_id}",
            "graphrag://documents/page/{page}",
            "graphrag://communities/page/{page}",
        }

        for tool, arguments, expected in SEARCHES:
            result = await _call(session, tool, arguments)
            answer = result["answer"].lower()
            assert any(name.lower() in answer for name in expected), (tool, result["answer"])
            assert result["sources"] and {s["document"] for s in result["sources"]} <= corpus_titles
            assert (
                result["llm_calls"] >= 1
                and result["prompt_tokens"] > 0
                and result["completion_tokens"] > 0
            )
        answer, pieces, _ = await streamed(
            session, "local_search", SEARCHES[0][1]
        )  # the answer's text as it comes
        assert len(pieces) > 5 and "".join(pieces) == answer["answer"]

        statistics = await _call(session, "get_statistics", {})
        for key in ("documents", "entities", "relationships", "community_reports"):
            assert statistics[key] == summary[key]
        assert statistics["uptime_seconds"] >= 0 and len(statistics["index_version"]) == 12
        assert statistics["vector_store"]["tables"]["text_unit_text"] == summary["text_units"]
        assert (await _read_json(session, "graphrag://statistics"))["index_version"] == statistics[
            "index_version"
        ]

        entities = await _read_json(session, "graphrag://entities")
        assert len(entities) <= 50 and entities[0]["degree"] >= entities[-1]["degree"]
        voss = await _read_json(session, f"graphrag://entities/{quote('Mirela Voss')}")
        assert voss["name"] == "MIRELA VOSS" and voss["type"] == "PERSON"
        assert any(
            "HARROWGATE TIDAL COOPERATIVE" in (r["source"], r["target"])
            for r in voss["relationships"]
        )
        assert "01_founding_of_the_cooperative.txt" in voss["documents"]
        assert voss["communities"]

        community = await _read_json(
            session, f"graphrag://communities/{voss['communities'][0]['id']}"
        )
        assert (
            "MIRELA VOSS" in community["members"] and community["title"] and community["findings"]
        )

        unit_id = result["sources"][0]["text_unit_id"]
        unit = await _read_json(session, f"graphrag://text_units/{unit_id}")
        assert unit["document"] in corpus_titles and len(unit["text"]) > 100

        prompt = await session.get_prompt("explore", {"entity": "Mirela Voss"})
        text = prompt.messages[0].content.text
        assert "local_search" in text and "graphrag://entities/Mirela%20Voss" in text
        assert 'get_entity with name "Mirela Voss"' in text and "get_community" in text
        for name, arguments in (
            ("analyze", {"topic": "tidal energy"}),
            ("compare", {"a": "Mirela Voss", "b": "Ruth Calloway"}),
            ("summarize", {"level": "1"}),
        ):
            text = (await session.get_prompt(name, arguments)).messages[0].content.text
            assert "global_search" in text or "local_search" in text


async def test_records_read_by_tool_as_by_resource(
    built_index: tuple[Path, dict], corpus_titles: set[str]
) -> None:
    """get_entity, get_community and get_text_unit return what the resource templates hold (for
    models that cannot read resources), read-only, as structured output; an unknown id is a tool
    error saying so. Resources, templates and prompts have titles, as tools do (issue 43)."""
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        voss = await _call(session, "get_entity", {"name": "Mirela Voss"})
        assert voss == await _read_json(session, f"graphrag://entities/{quote('Mirela Voss')}")
        number = voss["communities"][0]["id"]
        community = await _call(session, "get_community", {"community_id": int(number)})
        assert community == await _read_json(session, f"graphrag://communities/{number}")
        cited = await _call(session, "local_search", {"query": "Who is Mirela Voss?"})
        unit_id = cited["sources"][0]["text_unit_id"]
        unit = await _call(session, "get_text_unit", {"text_unit_id": unit_id})
        assert unit == await _read_json(session, f"graphrag://text_units/{unit_id}")
        assert unit["document"] in corpus_titles
        for name in ("get_entity", "get_community", "get_text_unit"):
            hints = tools[name].annotations
            assert hints.read_only_hint and tools[name].title and tools[name].output_schema
        missing = await session.call_tool("get_entity", {"name": "Nobody Here"})
        assert missing.is_error and "NOBODY HERE" in missing.content[0].text.upper()
        assert "Traceback" not in missing.content[0].text
        with pytest.raises(MCPError):  # not a number: invalid params
            await session.call_tool("get_community", {"community_id": "x"})

        resources = (await session.list_resources()).resources
        templates = (await session.list_resource_templates()).resource_templates
        prompts = (await session.list_prompts()).prompts
        untitled = [item.name for item in (*resources, *templates, *prompts) if not item.title]
        assert not untitled, untitled


async def test_top_k_and_a_conversation_reach_graphrag(built_index: tuple[Path, dict]) -> None:
    """local_search and drift_search take top_k (graphrag's top_k_entities and drift's
    local_search_top_k_mapped_entities); local and global searches take the earlier turns of a
    conversation, which graphrag puts in their context (issue 43); both validated."""
    root, _ = built_index
    question = {"query": "Who designed Old Bessie?"}
    async with mcp_session(root, IN_PROCESS) as session:
        narrow = await _call(session, "local_search", {**question, "top_k": 1})
        wide = await _call(session, "local_search", {**question, "top_k": 20})
        assert narrow["context_counts"]["entities"] < wide["context_counts"]["entities"]
        drifts = [
            await _call(session, "drift_search", {**question, "top_k": k, "context_only": True})
            for k in (1, 20)
        ]
        # DRIFT's local context holds top_k mapped entities (its answers vary from run to run,
        # their prompt tokens with them: the context is what top_k decides)
        assert drifts[0]["context_counts"]["entities"] < drifts[1]["context_counts"]["entities"]

        turns = [
            {"role": "user", "content": "Tell me about Mirela Voss."},
            {"role": "assistant", "content": "She founded the Harrowgate Tidal Cooperative."},
        ]
        follow_up = {"query": "What else did she do?"}
        for tool in ("local_search", "global_search"):
            alone = await _call(session, tool, follow_up)
            told = await _call(session, tool, {**follow_up, "conversation": turns})
            assert "conversation history" not in alone["context_counts"], tool
            assert told["context_counts"]["conversation history"] == 1, (tool, told)
            if tool == "local_search":  # the earlier question's entity found for "she"
                assert "VOSS" in told["answer"].upper() and "VOSS" not in alone["answer"].upper()

        for tool, bad in (
            ("local_search", {"top_k": 0}),
            ("drift_search", {"top_k": 101}),
            ("local_search", {"conversation": [{"role": "system", "content": "x"}]}),
            ("global_search", {"conversation": [turns[0]] * 21}),
        ):
            with pytest.raises(MCPError) as refused:
                await session.call_tool(tool, {**question, **bad})
            assert next(iter(bad)) in str(refused.value), refused.value


async def test_statistics_resource_matches_tool(built_index: tuple[Path, dict]) -> None:
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS) as session:
        tool = await _call(session, "get_statistics", {})
        resource = await _read_json(session, "graphrag://statistics")
    tool.pop("uptime_seconds"), resource.pop("uptime_seconds")
    assert resource == tool


async def test_local_search_entity_types_filter_the_context(built_index: tuple[Path, dict]) -> None:
    root, _ = built_index
    entities = pd.read_parquet(root / "output" / "entities.parquet")
    type_of = dict(zip(entities["human_readable_id"].astype(str), entities["type"], strict=True))
    async with mcp_session(root, IN_PROCESS) as session:
        for wanted in ("GEO", "ORGANIZATION"):
            result = await _call(
                session,
                "local_search",
                {"query": "Who designed Old Bessie?", "entity_types": [wanted.lower()]},
            )
            cited = {
                i
                for block in re.findall(r"Entities \(([^)]*)\)", result["answer"])
                for i in re.findall(r"\d+", block)
            }
            assert cited, result["answer"]
            assert {type_of[i] for i in cited} == {wanted}


async def test_errors_are_clear_and_the_server_keeps_serving(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS, data_path=tmp_path) as session:
        with pytest.raises(MCPError) as invalid:
            await session.call_tool("local_search", {"query": "Who?", "community_level": -1})
        assert (
            invalid.value.error.code == -32602 and "community_level" in invalid.value.error.message
        )
        with pytest.raises(MCPError) as missing_argument:
            await session.call_tool("basic_search", {"top_k": 3})
        assert (
            missing_argument.value.error.code == -32602
            and "query" in missing_argument.value.error.message
        )
        with pytest.raises(MCPError) as unknown_entity:
            await session.read_resource("graphrag://entities/Nobody%20Here")
        assert "graphrag://entities" in unknown_entity.value.error.message

        with pytest.raises(MCPError) as missing_prompt_argument:
            await session.get_prompt("compare", {"a": "Mirela Voss"})
        assert (
            missing_prompt_argument.value.error.code == -32602
            and "'b'" in missing_prompt_argument.value.error.message
        )
        with pytest.raises(MCPError) as bad_level:
            await session.get_prompt("summarize", {"level": "high"})
        assert (
            bad_level.value.error.code == -32602
            and "community level" in bad_level.value.error.message
        )

        no_data = await session.call_tool("build_index", {"data_path": "missing"})
        assert no_data.is_error and "does not exist" in no_data.content[0].text
        no_job = await session.call_tool("index_status", {"job_id": "nope"})
        assert no_job.is_error and "no index job 'nope'" in no_job.content[0].text

        assert (await _call(session, "get_statistics", {}))["documents"] > 0


async def test_no_index_says_how_to_build_one(tmp_path: Path) -> None:
    async with mcp_session(tmp_path / "empty_root", IN_PROCESS) as session:
        assert len((await session.list_tools()).tools) == len(TOOLS)
        result = await session.call_tool("local_search", {"query": "Who is Mirela Voss?"})
        assert result.is_error
        message = result.content[0].text
        assert (
            "build_index" in message
            and f"graphrag-mcp index DATA_PATH --index-path {tmp_path / 'empty_root'}" in message
        )
        assert message.count("graphrag-mcp index") == 1
        with pytest.raises(MCPError) as resource:
            await session.read_resource("graphrag://entities")
        assert "graphrag-mcp index DATA_PATH" in resource.value.error.message


async def test_tools_have_titles_hints_and_a_listing_that_fits_a_context(
    built_index: tuple[Path, dict],
) -> None:
    """Every tool has a human title and all four behaviour hints (searches read only; the index
    tools write but destroy nothing, but tune_prompts rewrites the prompts); the whole tools/list
    stays under 19 KB of JSON as sent (a client puts it in its model's context) and still gives
    every tool an output schema."""
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS) as session:
        tools = (await session.list_tools()).tools
    for tool in tools:
        hints = tool.annotations
        assert tool.title and hints is not None, tool.name
        assert None not in (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ), tool.name
        assert hints.read_only_hint is (
            tool.name not in ("build_index", "cancel_index_job", "tune_prompts")
        ), tool.name
        assert hints.destructive_hint is (tool.name == "tune_prompts") and tool.output_schema, (
            tool.name
        )
    listing = json.dumps(
        {
            "tools": [
                tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools
            ]
        },
        separators=(",", ":"),  # as the server sends it
    )
    assert len(listing.encode()) < 19_000, len(listing.encode())  # 15 tools, ~1.2 KB each


async def test_arguments_complete_from_the_index(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """completion/complete suggests entity names (resource template and prompts), community ids and
    levels from the loaded index: names that start with the typed text first; other arguments, or no
    index, get none."""
    from mcp_types import PromptReference, ResourceTemplateReference

    root, _ = built_index
    entities = pd.read_parquet(root / "output" / "entities.parquet")
    communities = pd.read_parquet(root / "output" / "communities.parquet")
    async with mcp_session(root, IN_PROCESS) as session:
        template = ResourceTemplateReference(uri="graphrag://entities/{name}")
        named = (await session.complete(template, {"name": "name", "value": "tob"})).completion
        explore = await session.complete(
            PromptReference(name="explore"), {"name": "entity", "value": "OLD"}
        )
        everything = (await session.complete(template, {"name": "name", "value": ""})).completion
        ids = (
            await session.complete(
                ResourceTemplateReference(uri="graphrag://communities/{community_id}"),
                {"name": "community_id", "value": ""},
            )
        ).completion
        levels = (
            await session.complete(
                PromptReference(name="summarize"), {"name": "level", "value": ""}
            )
        ).completion
        other = (
            await session.complete(PromptReference(name="analyze"), {"name": "topic", "value": "t"})
        ).completion
    assert named.values[0] == "TOBIAS ARKWRIGHT"
    assert explore.completion.values[0] == "OLD BESSIE"
    assert set(everything.values) == set(entities["title"]) and everything.total == len(entities)
    assert everything.values[0] == entities.sort_values("degree", ascending=False)["title"].iloc[0]
    assert (
        set(ids.values) == {str(number) for number in communities["community"]} and not ids.has_more
    )
    assert levels.values == [str(level) for level in sorted(communities["level"].unique())]
    assert other.values == []
    async with mcp_session(tmp_path / "no_index", IN_PROCESS) as session:
        assert (
            await session.complete(template, {"name": "name", "value": "a"})
        ).completion.values == []


async def test_documents_and_communities_are_listed_page_by_page(
    built_index: tuple[Path, dict], corpus_titles: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """graphrag://documents and graphrag://communities list every record, a page at a time (`next`
    names the next page, the last has none); a page past the end, or not a number, is a clear
    resource error."""
    from graphrag_mcp_server.handlers.explore import views

    root, _ = built_index
    communities = pd.read_parquet(root / "output" / "communities.parquet")
    monkeypatch.setattr(views, "PAGE_SIZE", 3)  # 11 documents: four pages; 7 communities: three
    async with mcp_session(root, IN_PROCESS) as session:
        first = await _read_json(session, "graphrag://documents")
        pages = [first]
        while pages[-1]["next"] is not None:
            pages.append(await _read_json(session, pages[-1]["next"]))
        listed = await _read_json(session, "graphrag://communities")
        community = await _read_json(session, f"graphrag://communities/{listed['items'][0]['id']}")
        with pytest.raises(MCPError, match="no page 5"):
            await session.read_resource("graphrag://documents/page/5")
        with pytest.raises(MCPError, match="pages are numbered"):
            await session.read_resource("graphrag://communities/page/x")
    assert [page["page"] for page in pages] == [1, 2, 3, 4] and {
        page["pages"] for page in pages
    } == {4}
    assert sorted(item["title"] for page in pages for item in page["items"]) == sorted(
        corpus_titles
    )
    assert all(item["text_units"] >= 1 for page in pages for item in page["items"])
    assert listed["total"] == len(communities) and listed["next"] == "graphrag://communities/page/2"
    assert [item["level"] for item in listed["items"]] == sorted(
        item["level"] for item in listed["items"]
    )
    assert (
        community["id"] == listed["items"][0]["id"]
        and community["title"] == listed["items"][0]["title"]
    )


@pytest.mark.e2e  # a stdio server process
async def test_a_new_index_version_tells_clients_to_list_resources_again(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """The server advertises resources.listChanged; once a new version of the index is loaded, a
    session that listed the resources gets notifications/resources/list_changed."""
    import asyncio
    import os
    import shutil

    import mcp_types

    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    changed = asyncio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ResourceListChangedNotification):
            changed.set()

    async with mcp_session(root, "stdio", message_handler=on_message) as session:
        assert session.initialize_result is not None
        capabilities = session.initialize_result.capabilities
        assert capabilities.resources is not None
        assert capabilities.resources.list_changed is True
        await session.list_resources()
        await _call(session, "get_statistics", {})
        assert not changed.is_set()
        settings = (
            root / "settings.yaml"
        )  # the index changes on disk: the next request loads the new version
        os.utime(
            settings, ns=(settings.stat().st_atime_ns, settings.stat().st_mtime_ns + 1_000_000_000)
        )
        await _call(session, "get_statistics", {})
        await asyncio.wait_for(changed.wait(), 10)


@pytest.mark.e2e  # a stdio server and an index process beside it
async def test_an_index_run_beside_the_server_reaches_an_idle_client(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """`graphrag-mcp index` publishes a new version while the client sends nothing: the server
    notices the new `output` (GRAPHRAG_MCP_INDEX_POLL_SECONDS, 2 s), loads it and pushes
    notifications/resources/list_changed (issue 43: it waited for the client's next request)."""
    import asyncio
    import shutil

    import mcp_types

    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    data = tmp_path / "data"
    shutil.copytree(CORPUS, data)
    (data / "12_new_pier.txt").write_text(
        "Mirela Voss opened the new pier at Port Evander in 2019.\n", encoding="utf-8"
    )
    changed = asyncio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ResourceListChangedNotification):
            changed.set()

    async with mcp_session(root, "stdio", message_handler=on_message) as session:
        before = (await _call(session, "get_statistics", {}))["index_version"]
        await session.list_resources()
        indexed = await asyncio.to_thread(run_cli, "index", data, "--index-path", root)
        assert indexed.code == 0, indexed.stderr
        await asyncio.wait_for(changed.wait(), 30)  # no request sent meanwhile
        after = (await _call(session, "get_statistics", {}))["index_version"]
    assert after != before


async def test_a_stdio_clients_calls_are_not_limited_per_client(
    built_index: tuple[Path, dict],
) -> None:
    """The per-client call limit (one running, eight waiting over HTTP) keeps HTTP callers apart;
    the one client of a stdio server shares it with nobody, so twelve calls at once all answer."""
    import asyncio

    async with mcp_session(built_index[0], IN_PROCESS) as session:
        results = await asyncio.gather(
            *(session.call_tool("get_statistics", {}) for _ in range(12))
        )
    assert not [result for result in results if result.is_error]
    assert all(result.structured_content["documents"] == 11 for result in results)
