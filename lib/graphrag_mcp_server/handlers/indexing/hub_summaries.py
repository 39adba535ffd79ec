"""Summaries of hub descriptions: the project's decision for lists longer than one model call.

graphrag summarises a description list that does not fit one call (`max_input_tokens`) as a
chain: sorted descriptions in batches, each batch summarised with the summary so far. A hub's
list grows with the corpus, and one changed description re-runs the chain from its batch to the
end (13 calls for a one-sentence edit of a hub at 3,000 archive documents). A list that fits one
call is summarised as graphrag does. A longer list is summarised in one call from its top-ranked
descriptions: those that fit the call, ranked by how many of the row's text units state them,
then by the strongest link in the text unit that states them (the highest degree among the
other entities the row's entities are related to there), then by text. The summary is written
again only when that top set changes: an edit costs a hub at most one summary call, and none
when the descriptions it changed rank below the budget. The ranking reads only this run's graph,
so an update and a rebuild of the same documents summarise alike. What is left out: the
descriptions ranked below the budget, as graphrag's chain keeps of them only what each batch's
summary kept.
"""

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

logger = logging.getLogger(__name__)

Identity = str | tuple[str, str]


def usable_tokens(model: Any, prompt: str, max_input_tokens: int) -> int:
    """The tokens of descriptions graphrag puts into one summary call (its own arithmetic)."""
    return int(max_input_tokens - model.tokenizer.num_tokens(prompt))


def fits_one_call(descriptions: Sequence[str], model: Any, usable: int) -> bool:
    """Whether graphrag's chain summarises these sorted descriptions in at most one call: it calls
    early only when the descriptions before the last overflow `usable`. UTF-8 bytes bound the
    tokens from above, so most lists are settled without tokenising."""
    before_last = descriptions[:-1]
    if sum(len(text.encode()) for text in before_last) <= usable:
        return True
    return bool(sum(model.tokenizer.num_tokens(text) for text in before_last) <= usable)


def top_descriptions(
    descriptions: Sequence[str],
    units: Sequence[str],
    strength: dict[str, int],
    model: Any,
    usable: int,
) -> list[str]:
    """The distinct descriptions graphrag is handed for a hub: ranked (module docstring) and taken
    while they fit one call; `units[i]` states `descriptions[i]`, `strength` scores each unit."""
    stated = Counter(descriptions)
    best: dict[str, int] = {}
    for text, unit in zip(descriptions, units, strict=True):
        best[text] = max(best.get(text, 0), strength.get(unit, 0))
    ranked = sorted(stated, key=lambda text: (-stated[text], -best[text], text))
    chosen: list[str] = []
    left = usable
    for text in ranked:
        tokens = model.tokenizer.num_tokens(text)
        if chosen and tokens > left:
            break
        chosen.append(text)
        left -= tokens
    return sorted(chosen)


def link_strength(
    ends: Iterable[str], relationships: "pa.Table", degrees: dict[str, int]
) -> dict[str, int]:
    """For each text unit, the highest degree among the entities that `ends` (a row's entity, or a
    relationship's two) are related to in it, leaving out `ends` themselves."""
    import pyarrow as pa
    import pyarrow.compute as pc

    own = set(ends)
    named = pa.array(sorted(own), relationships["source"].type)
    touching = relationships.filter(
        pc.or_(
            pc.is_in(relationships["source"], value_set=named),
            pc.is_in(relationships["target"], value_set=named),
        )
    )
    strength: dict[str, int] = {}
    for source, target, units in zip(
        touching["source"].to_pylist(),
        touching["target"].to_pylist(),
        touching["text_unit_ids"].to_pylist(),
        strict=True,
    ):
        others = [end for end in (source, target) if end not in own]
        if not others:
            continue
        degree = degrees.get(others[0], 0)
        for unit in units:
            strength[unit] = max(strength.get(unit, 0), degree)
    return strength


def degrees_of(relationships: "pa.Table") -> dict[str, int]:
    """Each entity's degree in the extracted graph (its relationships counted)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ends = pa.chunked_array(
        relationships["source"].chunks + relationships["target"].chunks,
        relationships["source"].type,
    )
    counts = pc.value_counts(ends)
    names, numbers = counts.field("values").to_pylist(), counts.field("counts").to_pylist()
    return dict(zip(names, numbers, strict=True))


async def hub_summaries(
    hubs: Sequence[tuple[Identity, str, Sequence[str], Sequence[str]]],
    relationships: "pa.Table",
    memo: Any,
    key: Any,
    model: Any,
    usable: int,
    summarize: Any,
    num_threads: int,
) -> list[str]:
    """Each hub's summary: (identity, its whole list's memo key, descriptions, their units) in, the
    summary of its top descriptions out, from the memo when that top set was summarised before
    (counted carried) or by `summarize(identity, descriptions)` (graphrag's summary of one row)."""
    import asyncio

    degrees = degrees_of(relationships) if hubs else {}
    semaphore = asyncio.Semaphore(num_threads)

    async def summary(identity: Identity, whole: str, texts: Sequence[str], units: Any) -> str:
        ends = [identity] if isinstance(identity, str) else list(identity)
        strength = link_strength(ends, relationships, degrees)
        top = top_descriptions(texts, units, strength, model, usable)
        top_key = key(identity, top)
        found = memo.take(top_key)
        if found is None:
            async with semaphore:
                found = await summarize(identity, top)
            memo.put(top_key, found)
        memo.put(whole, found, counted=False)
        return str(found)

    summaries = list(await asyncio.gather(*(summary(*hub) for hub in hubs)))
    if hubs:
        logger.info(
            "%d descriptions lists too long for one call: summarised from their top", len(hubs)
        )
    return summaries
