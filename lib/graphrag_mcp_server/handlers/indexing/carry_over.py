"""Work carried over from the previous version where its input is unchanged.

An update runs graphrag's whole pipeline over every current document (handlers/index.py), so its
result is a rebuild by construction. Five steps of it are pure functions of their input that cost
time for every record although an edit touches a few:

- graph extraction of a text unit, the summary of an entity's or relationship's descriptions and
  a community's report from its context (LLM calls, answered by graphrag's cache when unchanged,
  but each lookup hashes the prompt and reads a file);
- the context string of a community report (`sort_context`, which tokenises every record of the
  community: most of an update's pipeline time on a 300-document corpus before this module);
- the embedding of a text (text units, entity descriptions, reports).

Each version stores what these steps produced, by a hash of their whole input, in
`carried_over.parquet`; the next run takes from there every result whose input is unchanged and
computes the others with graphrag's own functions. A report context's and a report's input is
taken up to the numbering of its records (graphrag renumbers entities and relationships after
every change); a carried context and report show and cite the records by their new numbers. Stored results are used only while the models
are configured as before (`fingerprint`). A failed extraction (graphrag returns no entities) or
report is never stored, so a provider fault is retried.
"""

import csv
import hashlib
import io
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.tables import CITATION

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.tokenizer import Tokenizer

TABLE = "carried_over.parquet"
logger = logging.getLogger(__name__)


@dataclass
class Memo:
    """Results by input hash: the previous version's, and those this run used (stored for the next)."""

    previous: dict[str, Any] = field(default_factory=dict)
    used: dict[str, Any] = field(default_factory=dict)
    computed: int = 0
    reused: int = 0
    """Results this run took from the previous version."""

    def get(self, key: str) -> Any:
        """The stored result for `key` (now counted as used), or None."""
        found = self.used.get(key)
        if found is None and (found := self.previous.get(key)) is not None:
            self.used[key] = found
            self.reused += 1
        return found

    def put(self, key: str, result: Any) -> None:
        """Remember a result computed by this run."""
        self.used[key] = result
        self.computed += 1


class Step(StrEnum):
    """The steps whose results are carried over (the `step` column of the table)."""

    EXTRACTION = "extraction"
    SUMMARY = "summary"
    REPORT_CONTEXT = "report_context"
    REPORT = "report"
    EMBEDDING = "embedding"


CarriedOver = dict[Step, Memo]
_current: ContextVar[CarriedOver | None] = ContextVar("carried_over", default=None)


def _hash(*parts: Any) -> str:
    text = json.dumps(parts, default=str, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sort_context_batch(community_df: "pd.DataFrame", tokenizer: "Tokenizer", max_context_tokens: int,
                        parallel: bool = False) -> "pd.DataFrame":
    """graphrag's `parallel_sort_context_batch`, taking unchanged contexts from the previous version."""
    import graphrag.data_model.schemas as schemas
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import parallel_sort_context_batch

    carried = _current.get()
    if carried is None:
        return parallel_sort_context_batch(community_df, tokenizer, max_context_tokens, parallel)
    found = []
    for records in community_df[schemas.ALL_CONTEXT]:
        ranked, ids = _ranked_records(records)
        key = _hash(max_context_tokens, ranked)
        stored = carried[Step.REPORT_CONTEXT].get(key)
        context = None if stored is None else _renumbered_context(stored, ids, tokenizer, max_context_tokens)
        if context is None:
            context = community_context(records, tokenizer, max_context_tokens)
            carried[Step.REPORT_CONTEXT].put(key, [*context, ids])
        found.append(context)
    community_df[schemas.CONTEXT_STRING] = [text for text, _ in found]
    community_df[schemas.CONTEXT_SIZE] = [size for _, size in found]
    community_df[schemas.CONTEXT_EXCEED_FLAG] = community_df[schemas.CONTEXT_SIZE] > max_context_tokens
    return community_df


def _ranked_records(records: list[dict]) -> tuple[list[dict], dict[str, list[int]]]:
    """A community's records with each entity, relationship and claim number replaced by its rank
    among those of its kind, and each kind's numbers in rank order (by the context's table titles)."""
    import graphrag.data_model.schemas as schemas

    short_id = schemas.SHORT_ID
    nodes = [record[schemas.NODE_DETAILS] for record in records]
    edges = [edge for record in records for edge in record.get(schemas.EDGE_DETAILS, []) if isinstance(edge, dict)]
    claims = [claim for record in records if isinstance(record.get(schemas.CLAIM_DETAILS), list)
              for claim in record[schemas.CLAIM_DETAILS] if isinstance(claim, dict) and claim.get(short_id) is not None]
    ids = {title: sorted({int(detail[short_id]) for detail in details})
           for title, details in (("Entities", nodes), ("Relationships", edges), ("Claims", claims)) if details}
    rank = {title: {number: position for position, number in enumerate(numbers)} for title, numbers in ids.items()}

    def ranked(detail: Any, title: str) -> Any:
        if not isinstance(detail, dict) or detail.get(short_id) is None:
            return detail
        return {**detail, short_id: rank[title][int(detail[short_id])]}

    return [{**record,
             schemas.NODE_DETAILS: ranked(record[schemas.NODE_DETAILS], "Entities"),
             **({schemas.EDGE_DETAILS: [ranked(edge, "Relationships") for edge in record[schemas.EDGE_DETAILS]]}
                if isinstance(record.get(schemas.EDGE_DETAILS), list) else {}),
             **({schemas.CLAIM_DETAILS: [ranked(claim, "Claims") for claim in record[schemas.CLAIM_DETAILS]]}
                if isinstance(record.get(schemas.CLAIM_DETAILS), list) else {})}
            for record in records], ids


def _renumbered_context(stored: list, ids: dict[str, list[int]], tokenizer: "Tokenizer",
                        max_context_tokens: int | None) -> tuple[str, int] | None:
    """A stored context (text, tokens, its records' numbers) with its records' numbers changed to `ids`
    (those of the same rank); None where that could change what the budget lets in (a cut context)."""
    if len(stored) != 3:
        return None
    text, tokens, cited = stored
    if cited == ids:
        return text, tokens
    if max_context_tokens and tokens > max_context_tokens:
        return None
    numbers = {title: dict(zip(cited[title], ids[title], strict=True)) for title in cited}
    parts = _TABLE_TITLE.split(text)
    try:
        for position in range(2, len(parts), 2):
            parts[position] = _renumbered_rows(parts[position], numbers[parts[position - 1]])
    except KeyError:  # a table or row number the records do not hold: write the context anew
        return None
    renumbered = "".join(f"-----{part}-----\n" if position % 2 else part for position, part in enumerate(parts))
    size = tokenizer.num_tokens(renumbered)
    return None if max_context_tokens and size > max_context_tokens else (renumbered, size)


def _renumbered_rows(table: str, numbers: dict[int, int]) -> str:
    """A CSV table (header first) with the number that starts each row changed by `numbers`; lines
    inside a quoted field (an odd number of quotes opened it) are left alone."""
    lines = table.split("\n")
    quoted = False
    for position, line in enumerate(lines):
        if position and not quoted and (match := _ROW_NUMBER.match(line)) is not None:
            lines[position] = f"{numbers[int(match.group(1))]}{line[match.end(1):]}"
        quoted ^= line.count('"') % 2 == 1
    return "\n".join(lines)


def community_context(records: list[dict], tokenizer: "Tokenizer", max_context_tokens: int | None) -> tuple[str, int]:
    """graphrag's `sort_context` of a community's records, and its tokens.

    graphrag adds the community's edges one at a time (by degree, then id), rewriting and
    re-tokenising the whole context after each, until the budget is exceeded: quadratic in the
    community's size. When the whole context fits, that loop ends with the whole context, so it is
    written once here; otherwise graphrag's own `sort_context` cuts it.
    """
    from graphrag.index.operations.summarize_communities.graph_context.sort_context import sort_context

    whole = _whole_context(records)
    tokens = tokenizer.num_tokens(whole)
    if not max_context_tokens or tokens <= max_context_tokens:
        return whole, tokens
    text = sort_context(records, tokenizer, max_context_tokens=max_context_tokens)
    return text, tokenizer.num_tokens(text)


def _whole_context(records: list[dict]) -> str:
    """What graphrag's `sort_context` returns with no budget: the entities, claims and relationships
    of every edge in its order, each once, as its CSV tables."""
    import graphrag.data_model.schemas as schemas
    import pandas as pd

    short_id = schemas.SHORT_ID
    edges = [{**edge, short_id: int(edge[short_id])} for record in records
             for edge in record.get(schemas.EDGE_DETAILS, []) if isinstance(edge, dict)]
    nodes = {record[schemas.TITLE]: {**record[schemas.NODE_DETAILS],
                                     short_id: int(record[schemas.NODE_DETAILS][short_id])} for record in records}
    claims = {record[schemas.TITLE]: [{**claim, short_id: int(claim[short_id])}
                                      for claim in record.get(schemas.CLAIM_DETAILS, [])
                                      if isinstance(claim, dict) and claim.get(short_id) is not None]
              for record in records if isinstance(record.get(schemas.CLAIM_DETAILS), list)}
    edges.sort(key=lambda edge: (-edge.get(schemas.EDGE_DEGREE, 0), edge.get(short_id, "")))
    tables: dict[str, dict] = {"Entities": {}, "Claims": {}, "Relationships": {}}
    for edge in edges:
        for title in (edge[schemas.EDGE_SOURCE], edge[schemas.EDGE_TARGET]):
            if (node := nodes.get(title)) is not None:
                tables["Entities"].setdefault(node[short_id], node)
            for claim in claims.get(title) or []:
                tables["Claims"].setdefault(claim[short_id], claim)
        tables["Relationships"].setdefault(edge[short_id], edge)
    return "\n\n".join(f"-----{label}-----\n{pd.DataFrame(list(rows.values())).to_csv(index=False, sep=',')}"
                        for label, rows in tables.items() if rows)


async def _extract_graph(text_units: "pd.DataFrame", callbacks: Any, text_column: str, id_column: str, model: Any,
                         prompt: str, entity_types: list[str], max_gleanings: int, num_threads: int,
                         async_type: Any) -> "tuple[pd.DataFrame, pd.DataFrame]":
    """graphrag's graph extraction over text units, extracting only those whose text the previous
    version did not; every unit's entities and relationships then merged by graphrag's own functions."""
    from graphrag.index.operations.extract_graph import extract_graph as operation
    from graphrag.index.operations.extract_graph.utils import filter_orphan_relationships
    from graphrag.index.utils.derive_from_rows import derive_from_rows

    carried = _current.get()
    if carried is None:
        return await _GRAPHRAG["extract"](text_units, callbacks, text_column, id_column, model, prompt, entity_types,
                                          max_gleanings, num_threads, async_type)
    memo = carried[Step.EXTRACTION]
    keys = [_hash(text.strip(), entity_types, prompt, max_gleanings) for text in text_units[text_column]]
    found = [memo.get(key) for key in keys]
    missing = [position for position, split in enumerate(found) if split is None]

    async def extract(row: "pd.Series") -> "tuple[pd.DataFrame, pd.DataFrame]":
        return await operation._run_extract_graph(row[text_column], row[id_column], entity_types, model, prompt,  # noqa: SLF001
                                                  max_gleanings)

    extracted = await derive_from_rows(text_units.iloc[missing], extract, callbacks, num_threads=num_threads,
                                       async_type=async_type, progress_msg="extract graph progress: ")
    for position, result in zip(missing, extracted, strict=True):
        if result is None:
            continue
        found[position] = [frame.to_dict(orient="split", index=False) for frame in result]
        if len(result[0]):
            memo.put(keys[position], found[position])
    units = [(split, unit) for split, unit in zip(found, text_units[id_column], strict=True) if split is not None]
    entities = operation._merge_entities(_frames([(split[0], unit) for split, unit in units]))  # noqa: SLF001
    relationships = operation._merge_relationships(_frames([(split[1], unit) for split, unit in units]))  # noqa: SLF001
    return entities, filter_orphan_relationships(relationships, entities)


async def _run_summarize_descriptions(id: str | tuple[str, str], descriptions: list[str], model: Any,  # noqa: A002
                                      max_summary_length: int, max_input_tokens: int, prompt: str) -> Any:
    """graphrag's summary of one entity's or relationship's descriptions, taking an unchanged one
    from the previous version."""
    from graphrag.index.operations.summarize_descriptions.typing import SummarizedDescriptionResult

    summarize = _GRAPHRAG["summarize"]
    carried = _current.get()
    if carried is None:
        return await summarize(id, descriptions, model, max_summary_length, max_input_tokens, prompt)
    key = _hash(id, descriptions, max_summary_length, max_input_tokens, prompt)
    stored = carried[Step.SUMMARY].get(key)
    if stored is None:
        stored = (await summarize(id, descriptions, model, max_summary_length, max_input_tokens, prompt)).description
        carried[Step.SUMMARY].put(key, stored)
    return SummarizedDescriptionResult(id=id, description=stored)


async def _run_report_extractor(community: str | int, input: str, level: int, model: Any,  # noqa: A002
                                extraction_prompt: str, max_report_length: int) -> Any:
    """graphrag's report of one community, taking the previous version's report of the same context.

    graphrag numbers entities and relationships in stream order, so an edit early in the corpus shifts
    the numbers in most communities' contexts although their records are unchanged. Contexts are
    therefore matched with each table's numbers replaced by their rank, and a carried report's
    citations renumbered to this context's records (the numbers a rebuild's report would cite).
    """
    run_extractor = _GRAPHRAG["report"]
    carried = _current.get()
    if carried is None:
        return await run_extractor(community, input, level, model, extraction_prompt, max_report_length)
    ranked, ids = _ranked_context(input)
    key = _hash(ranked, extraction_prompt, max_report_length)
    stored = carried[Step.REPORT].get(key)
    report = None if stored is None else _renumbered(stored["report"], stored["ids"], ids)
    if report is None:
        fresh = await run_extractor(community, input, level, model, extraction_prompt, max_report_length)
        if fresh is None:
            return None
        report = {name: value for name, value in fresh.items() if name not in ("community", "level")}
        carried[Step.REPORT].put(key, {"report": report, "ids": ids})
    return {"community": community, "level": level, **report}


_TABLE_TITLE = re.compile(r"^-----(\w+)-----\n", re.MULTILINE)
_CITED_TABLE = re.compile(r"(\w+)\s*\(([^)]*)\)")
_NUMBER = re.compile(r"\d+")
_ROW_NUMBER = re.compile(r"(\d+),")


def _ranked_context(context: str) -> tuple[list, dict[str, list[int]]]:
    """A report context's tables with each record number replaced by its rank in its table, and each
    table's numbers in rank order: contexts that differ only by an order-keeping renumbering give the
    same tables. A table whose first column is not graphrag's record number is kept as it is."""
    import graphrag.data_model.schemas as schemas

    parts = _TABLE_TITLE.split(context)
    tables: list = [parts[0]]
    ids: dict[str, list[int]] = {}
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        header, *rows = [row for row in csv.reader(io.StringIO(body)) if row]
        numbers = [row[0] for row in rows]
        if header[:1] != [schemas.SHORT_ID] or not all(number.isdigit() for number in numbers):
            tables.append([title, body])
            continue
        ids[title] = sorted({int(number) for number in numbers})
        rank = {number: position for position, number in enumerate(ids[title])}
        tables.append([title, header, [[rank[int(row[0])], *row[1:]] for row in rows]])
    return tables, ids


def _renumbered(report: dict[str, Any], cited: dict[str, list[int]], current: dict[str, list[int]]
                ) -> dict[str, Any] | None:
    """`report` with the record numbers it cites (`[Data: Entities (3, 7); Relationships (12)]`) changed
    from those of the context it was written for to this context's of the same rank; None when it
    cites a number that context did not hold."""
    numbers = {title: dict(zip(cited[title], current.get(title, []), strict=False)) for title in cited}

    def table(match: re.Match) -> str:
        title = match.group(1)
        if title not in numbers:
            return match.group(0)
        start, end = match.span(2)
        listed = _NUMBER.sub(lambda number: str(numbers[title][int(number.group(0))]), match.group(2))
        return match.string[match.start(0):start] + listed + match.string[end:match.end(0)]

    def text(value: Any) -> Any:
        if isinstance(value, str):
            return CITATION.sub(lambda block: _CITED_TABLE.sub(table, block.group(0)), value)
        if isinstance(value, list):
            return [text(item) for item in value]
        if isinstance(value, dict):
            return {name: text(item) for name, item in value.items()}
        return value

    try:
        return text(report)
    except KeyError:
        return None


async def _run_embed_text(input: list[str], callbacks: Any, model: Any, tokenizer: Any, batch_size: int,  # noqa: A002
                          batch_max_tokens: int, num_threads: int) -> Any:
    """graphrag's embedding of a buffer of texts, embedding only those the previous version lacks."""
    from graphrag.index.operations.embed_text.run_embed_text import TextEmbeddingResult

    embed = _GRAPHRAG["embed"]
    carried = _current.get()
    if carried is None or not input:
        return await embed(input, callbacks, model, tokenizer, batch_size, batch_max_tokens, num_threads)
    memo = carried[Step.EMBEDDING]
    model_id = getattr(model, "_model_id", type(model).__qualname__)  # graphrag-llm's factory passes every model one
    keys = [_hash(model_id, batch_max_tokens, text) for text in input]
    vectors = [memo.get(key) for key in keys]
    missing = [index for index, vector in enumerate(vectors) if vector is None]
    if missing:
        fresh = await embed([input[i] for i in missing], callbacks, model, tokenizer, batch_size, batch_max_tokens,
                            num_threads)
        for index, vector in zip(missing, fresh.embeddings or [None] * len(missing), strict=True):
            vectors[index] = vector
            if vector is not None:
                memo.put(keys[index], vector)
    return TextEmbeddingResult(embeddings=vectors)


def _frames(splits: list[tuple[dict[str, list], str]]) -> "list[pd.DataFrame]":
    """Extraction frames (`DataFrame.to_dict(orient="split")`) of text units as one frame, each row's
    `source_id` its unit's: what graphrag concatenates from the units' frames (none for no units)."""
    import pandas as pd

    columns = next((split["columns"] for split, _ in splits), None)
    if columns is None:
        return []
    source = columns.index("source_id")
    rows = [[*row[:source], unit, *row[source + 1:]] for split, unit in splits for row in split["data"]]
    return [pd.DataFrame(rows, columns=columns)]


_GRAPHRAG: dict[str, Any] = {}


def _install() -> None:
    """Route graphrag's graph extraction, description summary, report context sorting, community
    report and text embedding through this module (once per process; without a run's memos they call graphrag's own)."""
    from graphrag.index.operations.embed_text import embed_text
    from graphrag.index.operations.summarize_communities import summarize_communities
    from graphrag.index.operations.summarize_communities.graph_context import context_builder
    from graphrag.index.operations.summarize_descriptions import summarize_descriptions
    from graphrag.index.workflows import extract_graph as extract_graph_workflow

    if not _GRAPHRAG:
        _GRAPHRAG["extract"] = extract_graph_workflow.extractor
        _GRAPHRAG["summarize"] = summarize_descriptions.run_summarize_descriptions
        _GRAPHRAG["embed"] = embed_text.run_embed_text
        _GRAPHRAG["report"] = summarize_communities.run_extractor
        summarize_communities.run_extractor = _run_report_extractor
        embed_text.run_embed_text = _run_embed_text
        extract_graph_workflow.extractor = _extract_graph
        summarize_descriptions.run_summarize_descriptions = _run_summarize_descriptions
        context_builder.parallel_sort_context_batch = _sort_context_batch


def fingerprint(config: "GraphRagConfig") -> str:
    """A hash of the models' settings (secrets left out): stored work is used only under the same."""
    models = {**config.completion_models, **config.embedding_models}
    return _hash({name: model.model_dump(mode="json", exclude={"api_key"}) for name, model in models.items()})


@contextmanager
def work_carried_over(previous: Path | None, version: Path, models: str) -> Iterator[CarriedOver]:
    """Within the block, results whose input is unchanged come from `previous` (when its models'
    fingerprint equals `models`); when the block completes, `version` stores those this run used."""
    _install()
    stored = _read(previous, models)
    carried = {step: Memo(previous=stored.get(step, {})) for step in Step}
    token = _current.set(carried)
    try:
        yield carried
    finally:
        _current.reset(token)
    for step, memo in carried.items():
        logger.info("%s: %d computed, %d carried over", step, memo.computed, memo.reused)
    _write(carried, version / TABLE, models)


def _write(carried: CarriedOver, table: Path, models: str) -> None:
    """Store the results this run used: vectors as float32 lists, the others as JSON."""
    import numpy as np
    import pandas as pd

    rows = [
        (step.value, key, None, np.asarray(result, dtype=np.float32)) if step is Step.EMBEDDING
        else (step.value, key, json.dumps(result), None)
        for step, memo in carried.items() for key, result in memo.used.items()
    ]
    frame = pd.DataFrame(rows, columns=["step", "key", "result", "vector"])
    frame.assign(models=models).to_parquet(table, index=False)


def _read(version: Path | None, models: str) -> dict[Step, dict[str, Any]]:
    """A version's stored results made under the same models, by step; none when it has no readable table."""
    import pandas as pd

    if version is None:
        return {}
    try:
        frame = pd.read_parquet(version / TABLE, columns=["step", "key", "result", "vector", "models"])
    except (OSError, ValueError, KeyError):
        return {}
    stored: dict[Step, dict[str, Any]] = {step: {} for step in Step}
    same = frame[frame["models"] == models]
    for step, key, result, vector in same[["step", "key", "result", "vector"]].itertuples(index=False):
        if step == Step.EMBEDDING:
            stored[Step.EMBEDDING][key] = vector.tolist()
        elif step in stored:
            stored[Step(step)][key] = json.loads(result)
    return stored
