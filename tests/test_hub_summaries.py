"""Hub summaries (handlers/indexing/hub_summaries.py): a description list longer than one model call
is summarised from its top-ranked descriptions, again only when that top set changes."""

import asyncio
import random

import pandas as pd
import pyarrow as pa
import pytest
from graphrag.index.operations.summarize_descriptions.description_summary_extractor import (
    SummarizeExtractor,
)
from graphrag.prompts.index.summarize_descriptions import SUMMARIZE_PROMPT
from graphrag_llm.completion import LLMCompletion, create_completion
from graphrag_llm.config import ModelConfig

from graphrag_mcp_server.handlers.indexing.hub_summaries import (
    fits_one_call,
    hub_summaries,
    top_descriptions,
    usable_tokens,
)
from graphrag_mcp_server.handlers.indexing.memos import Memo, input_hash
from graphrag_mcp_server.providers.offline import OFFLINE_TYPE, register_offline_models


@pytest.fixture
def model() -> LLMCompletion:
    """The offline completion model, created through graphrag-llm's factory."""
    register_offline_models()
    config = ModelConfig(type=OFFLINE_TYPE, model_provider="offline", model="offline-extractive")
    return create_completion(config)


class Counted:
    """A completion model that counts the calls it answers (the offline model answers them)."""

    def __init__(self, model: LLMCompletion) -> None:
        self.model, self.tokenizer, self.calls = model, model.tokenizer, 0

    async def completion_async(self, **kwargs: object) -> object:
        self.calls += 1
        return await self.model.completion_async(**kwargs)


def _sentences(count: int, rng: random.Random) -> list[str]:
    words = [
        "harbour",
        "dues",
        "pier",
        "cooperative",
        "gale",
        "survey",
        "boat",
        "ledger",
        "tide",
        "kiln",
    ]
    return [
        f"Sentence {n}: " + " ".join(rng.choice(words) for _ in range(rng.randint(3, 60))) + "."
        for n in range(count)
    ]


def test_one_call_is_decided_as_graphrags_chain_decides_it(model: LLMCompletion) -> None:
    """fits_one_call says True exactly when graphrag's SummarizeExtractor makes at most one call."""
    rng = random.Random(7)
    checked = {True: 0, False: 0}
    for budget in (250, 400, 800, 1500):
        for count in (1, 2, 3, 5, 9, 20):
            descriptions = _sentences(count, rng)
            counted = Counted(model)
            extractor = SummarizeExtractor(counted, 100, budget, SUMMARIZE_PROMPT)  # type: ignore[arg-type]
            asyncio.run(extractor("HUB", descriptions))
            usable = usable_tokens(model, SUMMARIZE_PROMPT, budget)
            fits = fits_one_call(sorted(set(descriptions)), model, usable)
            assert fits == (counted.calls <= 1), (budget, count, counted.calls)
            checked[fits] += 1
    assert checked[True] and checked[False], checked  # both outcomes exercised


def _hub_graph(newcomer_degree: int) -> pa.Table:
    """HUB related to A (degree 3) in unit u1, to B (degree 2) in u2, to N in u3."""
    rows = [("HUB", "A", ["u1"]), ("A", "X", ["u9"]), ("A", "Y", ["u9"])]
    rows += [("HUB", "B", ["u2"]), ("B", "Z", ["u9"])]
    rows += [("HUB", "N", ["u3"])] + [("N", f"M{k}", ["u9"]) for k in range(newcomer_degree - 1)]
    frame = pd.DataFrame(rows, columns=["source", "target", "text_unit_ids"])
    return pa.Table.from_pandas(frame, preserve_index=False)


def test_descriptions_rank_by_repetition_then_by_the_strongest_link(model: LLMCompletion) -> None:
    descriptions = ["Met N.", "Works with B.", "Works with A.", "Met N."]
    units = ["u3", "u2", "u1", "u4"]
    strength = {"u1": 3, "u2": 2, "u3": 1, "u4": 1}
    ranked_all = top_descriptions(descriptions, units, strength, model, 10_000)
    assert ranked_all == sorted(set(descriptions))  # all fit: graphrag's sorted list
    first = model.tokenizer.num_tokens("Met N.")
    assert top_descriptions(descriptions, units, strength, model, first) == ["Met N."]
    second = first + model.tokenizer.num_tokens("Works with A.")
    assert top_descriptions(descriptions, units, strength, model, second) == [
        "Met N.",
        "Works with A.",
    ]


def test_a_hub_is_summarised_again_only_when_its_top_descriptions_change(
    model: LLMCompletion,
) -> None:
    """A description below the budget changes: the summary is carried; one in the top changes: one
    call."""
    asked: list[list[str]] = []

    async def summarize(identity: object, top: list[str]) -> str:
        asked.append(top)
        return " ".join(top)

    def run(memo: Memo, descriptions: list[str]) -> str:
        units = ["u1", "u2", "u3"]
        budget = sum(model.tokenizer.num_tokens(text) for text in descriptions[:2])
        hub = ("HUB", input_hash("whole", descriptions), descriptions, units)
        (summary,) = asyncio.run(
            hub_summaries(
                [hub],
                _hub_graph(1),
                memo,
                lambda identity, top: input_hash(identity, top),
                model,
                budget,
                summarize,
                2,
            )
        )
        return summary

    first = run(Memo(), ["Works with A.", "Works with B.", "Met N at the pier."])
    assert asked == [["Works with A.", "Works with B."]] and "Met N" not in first
    previous = Memo()
    run(previous, ["Works with A.", "Works with B.", "Met N at the pier."])
    carried = Memo(previous=dict(previous.used))
    assert run(carried, ["Works with A.", "Works with B.", "Met N at the pier twice."]) == first
    assert (carried.computed, carried.reused, len(asked)) == (0, 1, 2)
    changed = Memo(previous=dict(previous.used))
    run(changed, ["Works with A, the founder.", "Works with B.", "Met N at the pier."])
    assert (changed.computed, len(asked)) == (1, 3)
    assert asked[-1] == ["Works with A, the founder.", "Works with B."]


def test_summaries_asked_in_parts_are_graphrags_in_one_call(
    model: LLMCompletion, monkeypatch: pytest.MonkeyPatch
) -> None:
    """graphrag's summarize_descriptions asked a few rows at a time (kept_summaries
    SUMMARIZED_AT_ONCE: it makes a task for every row it is handed) gives the summaries one call
    over all rows gives, in order, with its progress told as one count over all of them."""
    from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks
    from graphrag.index.operations.summarize_descriptions.summarize_descriptions import (
        summarize_descriptions,
    )

    from graphrag_mcp_server.handlers.indexing import kept_summaries

    rng = random.Random(7)
    nodes = pd.DataFrame(
        {
            "title": [f"ENTITY {n}" for n in range(5)],
            "description": [_sentences(rng.randint(1, 4), rng) for _ in range(5)],
        }
    )
    edges = pd.DataFrame(
        {
            "source": [f"ENTITY {n}" for n in range(4)],
            "target": [f"ENTITY {n + 1}" for n in range(4)],
            "description": [_sentences(rng.randint(1, 3), rng) for _ in range(4)],
        }
    )

    def summarize(asked_nodes: pd.DataFrame, asked_edges: pd.DataFrame, told: object) -> object:
        return summarize_descriptions(
            asked_nodes, asked_edges, told, model, 80, 4000, SUMMARIZE_PROMPT, 2
        )

    class Progress(NoopWorkflowCallbacks):
        def __init__(self) -> None:
            self.seen: list[tuple[int | None, int | None]] = []

        def progress(self, progress: object) -> None:
            self.seen.append((progress.total_items, progress.completed_items))  # type: ignore[attr-defined]

    whole = asyncio.run(summarize(nodes, edges, NoopWorkflowCallbacks()))
    monkeypatch.setattr(kept_summaries, "SUMMARIZED_AT_ONCE", 2)
    told = Progress()
    parts = asyncio.run(kept_summaries._summarized_by_parts([nodes, edges], summarize, told))
    assert parts == [list(whole[0]["description"]), list(whole[1]["description"])]
    assert {total for total, _ in told.seen} == {9}
    done = [completed for _, completed in told.seen]
    assert done == sorted(done) and done[-1] == 9
