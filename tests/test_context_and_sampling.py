"""Answers without an API key: context-only search, the client's model through MCP sampling, cost
accounting."""

import json
import time
from pathlib import Path

import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import CreateMessageRequestParams, CreateMessageResult, ErrorData, TextContent

from conftest import run_cli
from mcp_client import IN_PROCESS, mcp_session
from test_streaming import streamed

INSPECTION = "04_inspection_report_1994.md"
SAMPLING = {"GRAPHRAG_MCP_LLM": "sampling"}


async def _tool(session: ClientSession, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def _documents(context: dict) -> set[str]:
    return {
        doc
        for kind in ("entities", "relationships", "reports")
        for record in context[kind]
        for doc in record["documents"]
    } | {unit["document"] for unit in context["text_units"]}


async def test_context_only_returns_ranked_records_with_documents_and_no_completion_call(
    built_index: tuple[Path, dict], corpus_titles: set[str]
) -> None:
    root, _ = built_index
    question = {"query": "Who is Leonard Quist?", "context_only": True}
    async with mcp_session(root, IN_PROCESS) as session:
        local = await _tool(session, "local_search", question)
        basic = await _tool(session, "basic_search", {**question, "top_k": 5})
        drift = await _tool(session, "drift_search", question)
        global_ = await _tool(session, "global_search", {**question, "community_level": 1})
        statistics = await _tool(session, "get_statistics", {})
        board = {"query": "What does the Port Evander Harbour Board do?", "context_only": True}
        named = [await _tool(session, tool, board) for tool in ("local_search", "drift_search")]

    for result in named:  # the entity the question names first (entity_names), not PORT EVANDER
        assert result["context"]["entities"][0]["name"] == "PORT EVANDER HARBOUR BOARD"

    for result in (local, basic, drift, global_):
        assert result["answer"] is None and result["context"] is not None
        assert result["llm_calls"] == 0 and result["completion_tokens"] == 0
        assert (
            result["embedding_calls"] >= 1
        )  # the query's embedding, by the index's embedding model
        assert (
            result["sources"]
            and {source["document"] for source in result["sources"]} <= corpus_titles
        )
        assert 0 < result["context"]["tokens"] <= result["context"]["max_tokens"] == 8000

    quist = next(
        entity for entity in local["context"]["entities"] if entity["name"] == "LEONARD QUIST"
    )
    assert quist["type"] == "PERSON" and quist["documents"] == [INSPECTION]
    assert local["sources"][0]["document"] == INSPECTION
    assert local["context"]["text_units"][0]["document"] == INSPECTION
    assert INSPECTION in {unit["document"] for unit in basic["context"]["text_units"]}
    assert any("Leonard Quist" in unit["text"] for unit in basic["context"]["text_units"])
    assert (
        "LEONARD QUIST" in {entity["name"] for entity in drift["context"]["entities"]}
        and drift["context"]["reports"]
    )

    # drift's local part gives the primer's reports no second share, and the primer takes a third
    # of the budget (context.PRIMER_SHARE): all the asked entity's relationships that local search
    # holds fit beside the reports (at a half, 10 of its 12 did)
    def quist_links(result: dict) -> set[frozenset[str]]:
        return {
            frozenset((link["source"], link["target"]))
            for link in result["context"]["relationships"]
            if "LEONARD QUIST" in (link["source"], link["target"])
        }

    assert quist_links(drift) == quist_links(local) != set()

    reports = global_["context"]["reports"]
    assert reports and all(report["documents"] and report["content"] for report in reports)
    assert all(report["similarity"] is not None for report in reports)
    assert "Leonard Quist" in reports[0]["content"], (
        "global context is ranked by relevance to the query"
    )
    assert all(report["rating"] is not None for report in reports)

    costs = statistics["costs"]
    assert costs["local_search (context_only)"] == {
        "operations": 1,
        "llm_calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "embedding_calls": local["embedding_calls"],
    }
    assert set(costs) == {
        f"{kind}_search (context_only)" for kind in ("local", "basic", "drift", "global")
    }


async def test_a_records_documents_are_listed_up_to_a_bound_and_counted(
    built_index: tuple[Path, dict], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A context record lists at most CONTEXT_DOCUMENTS document titles, the first of its full
    list, and counts them all (`document_count`): a hub of a large corpus is in thousands."""
    from graphrag_mcp_server.handlers.search import entries

    root, _ = built_index
    question = {"query": "Who is Leonard Quist?", "context_only": True, "community_level": 0}
    async with mcp_session(root, IN_PROCESS) as session:
        whole = await _tool(session, "global_search", question)
        monkeypatch.setattr(entries, "CONTEXT_DOCUMENTS", 1)
        bounded = await _tool(session, "global_search", question)
    full, cut = whole["context"]["reports"], bounded["context"]["reports"]
    assert [report["community"] for report in cut] == [report["community"] for report in full]
    assert max(report["document_count"] for report in full) > 1
    for report, listed in zip(full, cut, strict=True):
        assert report["document_count"] == len(report["documents"]) >= 1
        assert listed["documents"] == report["documents"][:1]
        assert listed["document_count"] == report["document_count"]


async def test_context_budget_is_kept_and_what_is_left_out_is_counted(
    built_index: tuple[Path, dict],
) -> None:
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS) as session:
        small = await _tool(
            session,
            "global_search",
            {
                "query": "tidal power",
                "context_only": True,
                "max_context_tokens": 1000,
                "community_level": 1,
            },
        )
        large = await _tool(
            session,
            "global_search",
            {
                "query": "tidal power",
                "context_only": True,
                "max_context_tokens": 100_000,
                "community_level": 1,
            },
        )
        local = await _tool(
            session,
            "local_search",
            {"query": "Leonard Quist", "context_only": True, "max_context_tokens": 600},
        )
        with pytest.raises(
            MCPError, match="max_context_tokens: Input should be greater than or equal to 500"
        ):
            await session.call_tool(
                "basic_search", {"query": "x", "context_only": True, "max_context_tokens": 10}
            )
    assert small["context"]["tokens"] <= 1000 < large["context"]["tokens"]
    assert large["context"]["omitted"] == {}
    assert (
        small["context"]["omitted"]["reports"]
        == len(large["context"]["reports"]) - len(small["context"]["reports"])
        > 0
    )
    assert local["context"]["tokens"] <= 600 and local["context"]["omitted"]


@pytest.mark.slow  # about 12 s of CLI processes: the full suite runs it
def test_query_cli_context_only(built_index: tuple[Path, dict]) -> None:
    root, _ = built_index
    as_json = run_cli(
        "query",
        "Who is Leonard Quist?",
        "--index-path",
        root,
        "--type",
        "local",
        "--context-only",
        "--format",
        "json",
    )
    as_text = run_cli(
        "query",
        "Who is Leonard Quist?",
        "--index-path",
        root,
        "--type",
        "local",
        "--context-only",
        "--max-tokens",
        "1500",
    )
    assert as_json.code == 0, as_json.stderr
    result = as_json.json()
    assert result["answer"] is None and result["llm_calls"] == 0
    assert "LEONARD QUIST" in {entity["name"] for entity in result["context"]["entities"]}
    assert as_text.code == 0, as_text.stderr
    assert as_text.stdout.startswith("# Context (") and "of 1500 tokens" in as_text.stdout
    assert "Left out to stay within 1500 tokens:" in as_text.stdout
    assert f"Sources: {INSPECTION}" in as_text.stdout
    assert "LLM calls 0," in as_text.stderr


@pytest.mark.slow  # about 13 s of CLI processes: the full suite runs it
def test_graphrags_warnings_go_to_the_query_log_not_the_terminal(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """A drift context within a small budget makes graphrag log warnings ("Reached token limit"):
    they belong in the index's logs/query.log, and the terminal gets the context and one line of
    counts (and the records too with --verbose)."""
    import shutil

    root = tmp_path / "index"
    shutil.copytree(built_index[0], root, symlinks=True)
    result = run_cli(
        "query",
        "How did the harbour change?",
        "--index-path",
        root,
        "--type",
        "drift",
        "--context-only",
        "--max-tokens",
        "1500",
    )
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("# Context (")
    assert result.stderr.splitlines() == [
        next(line for line in result.stderr.splitlines() if line.startswith("LLM calls 0,"))
    ]
    log = (root / "logs" / "query.log").read_text(encoding="utf-8")
    assert " - WARNING - graphrag.query." in log, log[-2000:]
    verbose = run_cli(
        "query",
        "How did the harbour change?",
        "--index-path",
        root,
        "--type",
        "drift",
        "--context-only",
        "--max-tokens",
        "1500",
        "--verbose",
    )
    assert verbose.code == 0 and "WARNING graphrag.query." in verbose.stderr, verbose.stderr


class ClientModel:
    """A client's sampling callback: records graphrag's prompts and answers like a model would."""

    def __init__(self) -> None:
        self.requests: list[CreateMessageRequestParams] = []

    async def __call__(
        self, context: object, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        self.requests.append(params)
        if '"points"' in (
            params.system_prompt or ""
        ):  # global search map step: graphrag asks for JSON points
            text = json.dumps(
                {
                    "points": [
                        {
                            "description": "The cooperative runs tidal turbines "
                            "[Data: Reports (0)]",
                            "score": 80,
                        }
                    ]
                }
            )
        else:
            text = (
                f"Client model answer #{len(self.requests)}: Leonard Quist inspected the "
                "turbine in 1994."
            )
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=text), model="client-test-model"
        )


@pytest.mark.e2e
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
async def test_sampling_the_clients_model_writes_the_answer(
    built_index: tuple[Path, dict], transport: str
) -> None:
    root, _ = built_index
    model = ClientModel()
    async with mcp_session(root, transport, env=SAMPLING, sampling_callback=model) as session:
        local = await _tool(session, "local_search", {"query": "Who is Leonard Quist?"})
        local_requests = list(model.requests)
        global_ = await _tool(
            session, "global_search", {"query": "What is the cooperative?", "community_level": 0}
        )
        statistics = await _tool(session, "get_statistics", {})
        requests = list(model.requests)
        streamed_local, pieces, _ = await streamed(
            session, "local_search", {"query": "Who is Leonard Quist?"}
        )
    assert "".join(pieces) == streamed_local["answer"] and len(pieces) == len(
        streamed_local["answer"].split()
    )
    model.requests = requests  # the requests of the searches above

    assert local["answer"] == "Client model answer #1: Leonard Quist inspected the turbine in 1994."
    assert len(local_requests) == local["llm_calls"] == 1
    prompt = local_requests[0]
    assert (
        "---Role---" in prompt.system_prompt and "LEONARD QUIST" in prompt.system_prompt
    )  # graphrag's own prompt
    assert prompt.messages[-1].content.text == "Who is Leonard Quist?"
    assert local["prompt_tokens"] > 500 and local["completion_tokens"] > 5
    assert local["sources"] and local["sources"][0]["document"] == INSPECTION

    map_calls = len(model.requests) - len(local_requests) - 1
    assert map_calls >= 1 and global_["llm_calls"] == map_calls + 1
    assert (
        global_["answer"]
        == f"Client model answer #{len(model.requests)}: Leonard Quist inspected the turbine "
        "in 1994."
    )
    assert (
        "tidal turbines" in model.requests[-1].system_prompt
    )  # the reduce step saw the client's map answers
    assert statistics["costs"]["local_search"]["llm_calls"] == 1
    assert statistics["costs"]["global_search"]["llm_calls"] == global_["llm_calls"]


async def test_a_client_without_sampling_is_told_to_use_context_only(
    built_index: tuple[Path, dict],
) -> None:
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS, env=SAMPLING) as session:
        refused = await session.call_tool("local_search", {"query": "Who is Leonard Quist?"})
        context = await _tool(
            session, "local_search", {"query": "Who is Leonard Quist?", "context_only": True}
        )
    assert refused.is_error
    message = refused.content[0].text
    assert "does not offer sampling" in message and "context_only=true" in message
    assert "Traceback" not in message
    assert context["llm_calls"] == 0 and context["context"]["entities"]


async def declining_user(context: object, params: CreateMessageRequestParams) -> ErrorData:
    """A client whose user declines every sampling request."""
    return ErrorData(code=-1, message="User rejected sampling request")


@pytest.mark.parametrize("tool", ["local_search", "global_search"])
async def test_a_declined_sampling_request_is_a_tool_error(
    built_index: tuple[Path, dict], tool: str
) -> None:
    root, _ = built_index
    async with mcp_session(
        root, IN_PROCESS, env=SAMPLING, sampling_callback=declining_user
    ) as session:
        declined = await session.call_tool(
            tool,
            {"query": "Who is Leonard Quist?", "community_level": 1}
            if tool == "global_search"
            else {"query": "Who is Leonard Quist?"},
        )
        context = await _tool(
            session, "basic_search", {"query": "Who is Leonard Quist?", "context_only": True}
        )
    assert declined.is_error
    assert "your client's model did not answer" in declined.content[0].text
    assert "context_only=true" in declined.content[0].text
    assert context["context"]["text_units"]


async def test_answered_searches_count_the_query_embedding(built_index: tuple[Path, dict]) -> None:
    """local and basic searches embed the query (off the event loop, in the search thread): that
    call is counted in the answer's cost, as context_only counts it (a question asked for the first
    time: no cached embedding)."""
    root, _ = built_index
    question = f"Who inspected the Kelling Point turbine? ({time.time_ns()})"
    async with mcp_session(root, IN_PROCESS) as session:
        local = await _tool(session, "local_search", {"query": question})
        basic = await _tool(session, "basic_search", {"query": f"{question} Where?", "top_k": 5})
    for result in (local, basic):
        assert result["answer"] and result["llm_calls"] >= 1
        assert result["embedding_calls"] == 1, result


def test_global_context_ranks_reports_by_the_questions_words_and_embedding() -> None:
    """A word rare among the reports ("hospital") outweighs one they all share ("volunteers"), and
    the rank by words, counting twice, outweighs an embedding rank that puts another report
    first."""
    from graphrag_mcp_server.handlers.search.report_index import (
        WORDS_WEIGHT,
        ReportIndex,
        Scored,
        fused,
    )

    reports = {
        "library": "Friends of the library: volunteers, volunteers and more volunteers run the "
        "library.",
        "hospital": "The hospital volunteer programme recruits volunteers for the wards.",
        "ferry": "The ferry timetable changes in winter.",
    }
    scored = ReportIndex.of(reports, len).word_scores(
        "How is the hospital volunteer programme developing?"
    )
    words = scored.as_dict()
    assert (
        words["hospital"] > words["library"] > words.get("ferry", 0.0)
    )  # the ferry shares only "the"
    similarity = Scored.of({"library": 0.4, "hospital": 0.1, "ferry": 0.3})
    ids = list(reports)
    both = dict(zip(ids, fused(ids, (scored, WORDS_WEIGHT), (similarity, 1.0)), strict=True))
    assert sorted(both, key=both.__getitem__, reverse=True) == ["hospital", "library", "ferry"]
    alone = dict(zip(ids, fused(ids, (similarity, 1.0)), strict=True))
    assert max(alone, key=alone.__getitem__) == "library"
    assert fused(["unknown"], (scored, WORDS_WEIGHT)).tolist() == [0.0]  # nothing scores it


async def test_passages_mentioning_the_closest_entities_come_first(
    built_index: tuple[Path, dict],
) -> None:
    """local and drift contexts order their passages by the context's entities they mention, the
    first-ranked entities weighing most (1/rank): the fixtures have one passage per document, so a
    passage's document stands for it."""
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS) as session:
        for tool in ("local_search", "drift_search"):
            context = (
                await _tool(
                    session,
                    tool,
                    {
                        "query": "What did the inspectors find at Kelling Point?",
                        "context_only": True,
                    },
                )
            )["context"]
            weight: dict[str, float] = {}
            for rank, entity in enumerate(context["entities"], 1):
                for document in entity["documents"]:
                    weight[document] = weight.get(document, 0.0) + 1.0 / rank
            scores = [weight.get(unit["document"], 0.0) for unit in context["text_units"]]
            assert len(scores) >= 3 and scores == sorted(scores, reverse=True), (tool, scores)
