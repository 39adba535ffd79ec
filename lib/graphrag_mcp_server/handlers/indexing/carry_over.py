"""Work carried over from the previous version where its input is unchanged.

An update runs graphrag's whole pipeline over every current document (build.py). Six steps of it
are pure functions of their input (with the same models): a result carried over is the one graphrag
would compute again (or replay from its LLM cache), so carrying it changes no output, only the time
each record costs although an edit touches a few:

- the chunks of a document (tokenising every document: the text units of an unchanged one are
  carried by create_base_text_units_kept, kept_text_units.py);
- graph extraction of a text unit, the summary of an entity's or relationship's descriptions and
  a community's report from its context (LLM calls, answered by graphrag's cache when unchanged,
  but each lookup hashes the prompt and reads a file);
- the context string of a community report (`sort_context`, which tokenises every record of the
  community: most of an update's pipeline time on a 300-document corpus before this module);
- the embedding of a text (text units, entity descriptions, reports).

Extraction and summaries are carried over by the workflow extract_graph_kept (kept_extraction.py),
embeddings by generate_text_embeddings_kept (vector_delta.py), report contexts and reports by
create_community_reports_kept (kept_reports.py, carried_reports.py); this module holds the memos.
Each version stores what these steps produced, by a hash of their whole input, in
`carried_over.parquet`; the next run takes from there every result whose input is unchanged and
computes the others with graphrag's own functions. Report contexts and reports are matched up to the
numbering and degrees of their records (carried_reports.py). Stored results are used only while
the models are configured as before (`fingerprints`: each step's own model). A failed extraction
(graphrag returns no entities) or report is never stored, so a provider fault is retried.
"""

import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Memo, Step, input_hash
from graphrag_mcp_server.handlers.indexing.parquet_pages import PAGE_OPTIONS, write_streamed
from graphrag_mcp_server.providers import embedding_revision

if TYPE_CHECKING:
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

TABLE = "carried_over.parquet"
logger = logging.getLogger(__name__)


CONNECTION_ARGS = {"max_retries", "timeout"}
"""Call arguments that change how a request is sent, not what the model answers."""


def _answering(model: Any) -> dict[str, Any]:
    """What decides a model's answers: its kind, provider, name, server and call arguments (not its
    key, retry policy, rate limits, metrics or timeouts, which change how a request is sent)."""
    return {
        "type": model.type,
        "provider": model.model_provider,
        "model": model.model,
        "api_base": model.api_base,
        "deployment": model.azure_deployment_name,
        "call_args": {
            name: value for name, value in model.call_args.items() if name not in CONNECTION_ARGS
        },
    }


def fingerprints(config: "GraphRagConfig") -> dict[Step, str]:
    """A hash per step of what its stored results depend on besides their input: the model that step
    calls (and the vector size, for embeddings). A changed model redoes exactly the steps that call
    it."""

    def completion(model_id: str) -> str:
        return input_hash(_answering(config.get_completion_model_config(model_id)))

    reports = completion(config.community_reports.completion_model_id)
    embedding = config.get_embedding_model_config(config.embed_text.embedding_model_id)
    return {
        Step.CHUNKS: input_hash(config.chunking.model_dump(mode="json")),
        Step.EXTRACTION: completion(config.extract_graph.completion_model_id),
        Step.SUMMARY: completion(config.summarize_descriptions.completion_model_id),
        Step.REPORT_CONTEXT: reports,
        Step.REPORT: reports,  # a context is cut to the report model's budget
        Step.COMMUNITY: reports,
        Step.EMBEDDING: input_hash(
            _answering(embedding), config.vector_store.vector_size, *embedding_revision(embedding)
        ),
    }


@contextmanager
def work_carried_over(
    previous: "PreviousVersion | None", version: Path, models: dict[Step, str]
) -> Iterator[CarriedOver]:
    """Within the block, results whose input is unchanged come from `previous` (each step's when it
    was made under the same `models` fingerprint); when the block completes, `version` stores those
    this run used."""
    stored = _read(previous.path if previous is not None else None, models)
    carried = {
        step: Memo(previous=stored.get(step, {}))
        if step is Step.EXTRACTION  # JSON text both ways: kept_extraction decodes a unit at a time
        else Memo(previous=stored.get(step, {}), decode=_decoder(step))
        for step in Step
    }
    yield carried
    for step, memo in carried.items():
        logger.info("%s: %d computed, %d carried over", step, memo.computed, memo.reused)
    _write(carried, version / TABLE, models)


class StoredResults(Mapping[str, Any]):
    """One step's results as the previous version stored them: key -> its row of the stored table.
    Its results become Python values (JSON text, float32 arrays) all at once, when the first is
    asked for (one conversion of the column, not one per row); a row carried over is written again
    from the table itself (`_write`), so an update does not turn each of hundreds of thousands of
    stored results into a Python object and back to store them."""

    def __init__(self, table: "pa.Table") -> None:
        self.table = table
        self.rows = {key: row for row, key in enumerate(table["key"].to_pylist())}
        self._results: list[Any] | None = None
        self._keys_by_identity: dict[str, str] | None = None

    def key_of(self, identity: str) -> str | None:
        """The key of the stored result named `identity` (Memo.name), if any."""
        if self._keys_by_identity is None:
            self._keys_by_identity = {
                identity: key
                for identity, key in zip(
                    self.table["identity"].to_pylist(), self.table["key"].to_pylist(), strict=True
                )
                if identity is not None
            }
        return self._keys_by_identity.get(identity)

    def __getitem__(self, key: str) -> Any:
        row = self.rows[key]
        if self._results is None:
            self._results = self._converted()
        return self._results[row]

    def _converted(self) -> list[Any]:
        results = self.table["result"]
        if results.null_count < len(results):
            texts: list[Any] = results.to_pylist()
            return texts
        vectors = self.table["vector"].to_numpy(zero_copy_only=False)
        return [None if vector is None else vector.astype("float32") for vector in vectors]

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def _decoder(step: Step) -> Any:
    """How a step's stored result becomes the result: vectors (float32 arrays) as lists, the others
    from JSON."""
    return (lambda vector: vector.tolist()) if step is Step.EMBEDDING else json.loads


SCHEMA_FIELDS = (
    ("step", "large_string"),
    ("key", "large_string"),
    ("result", "large_string"),
    ("vector", "list<float>"),
    ("models", "large_string"),
    ("identity", "large_string"),
)
"""The stored table's columns: a vector result in `vector`, any other as JSON in `result`; what a
result is of in `identity` where its step names it (Memo.name; absent from tables stored before
it was added, read as nulls)."""


def _schema() -> "pa.Schema":
    import pyarrow as pa

    types = {"large_string": pa.large_string(), "list<float>": pa.list_(pa.float32())}
    return pa.schema([(name, types[kind]) for name, kind in SCHEMA_FIELDS])


def _write(carried: CarriedOver, table: Path, models: dict[Step, str]) -> None:
    """Store the results this run used: those carried over as rows of the previous table (in its
    order, so the pages that hold them stay the same), then those computed, vectors as float32
    arrays and the others as JSON; a part at a time (`_parts`, parquet_pages.write_streamed), so
    the table is never held whole beside the results it is made from."""
    import pyarrow.parquet as pq

    schema = _schema()
    with pq.ParquetWriter(table, schema, **PAGE_OPTIONS) as writer:
        for step, memo in carried.items():
            write_streamed(writer, _parts(step, memo, models[step], schema))


PART_ROWS, PART_BYTES = 2048, 4 * 2**20
"""Rows, and bytes of results, of the memo table made at a time: a 10,000-document build stores
~250,000 results, 10,000 of them extractions of ~13 KiB."""


def _parts(step: Step, memo: Memo, made_with: str, schema: "pa.Schema") -> Iterator["pa.Table"]:
    """A step's rows to store, a part at a time (`_spans`): those carried over, then those
    computed."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    carried_keys = memo.stored_form.keys() | memo.kept
    stored_again: list[tuple[str, Any]] = []
    if isinstance(memo.previous, StoredResults):
        stored = memo.previous.table
        rows = np.array(sorted(memo.previous.rows[key] for key in carried_keys), dtype=np.int64)
        sizes = pc.fill_null(pc.binary_length(stored["result"]), 0).to_numpy()[rows]
        for span in _spans(sizes.tolist()):
            again = stored.take(pa.array(rows[span])).cast(schema)
            yield _named(again, memo.identities) if memo.identities else again
    else:
        stored_again = [(key, memo.previous[key]) for key in carried_keys]
    computed = [(key, result) for key, result in memo.used.items() if key not in carried_keys]
    for span in _spans([_size(result) for _, result in stored_again]):
        yield _rows(step, made_with, stored_again[span], [], memo.identities, schema)
    for span in _spans([_size(result) for _, result in computed]):
        yield _rows(step, made_with, [], computed[span], memo.identities, schema)


def _spans(sizes: list[int]) -> Iterator[slice]:
    """Consecutive spans of rows, each of at most PART_ROWS rows and PART_BYTES (but one row)."""
    start = total = 0
    for row, size in enumerate(sizes):
        if row > start and (row - start >= PART_ROWS or total + size > PART_BYTES):
            yield slice(start, row)
            start, total = row, 0
        total += size
    if start < len(sizes):
        yield slice(start, len(sizes))


def _size(result: Any) -> int:
    """A result's bytes as stored, where known before encoding (JSON text); 0 otherwise."""
    return len(result) if isinstance(result, str) else 0


def _named(rows: "pa.Table", identities: dict[str, str]) -> "pa.Table":
    """Carried rows with this run's names of their results (a name stored before is kept)."""
    import pyarrow as pa

    stored = rows["identity"].to_pylist()
    names = [
        identities.get(key, name) for key, name in zip(rows["key"].to_pylist(), stored, strict=True)
    ]
    column = rows.schema.get_field_index("identity")
    return rows.set_column(column, "identity", pa.array(names, pa.large_string()))


def _rows(
    step: Step,
    made_with: str,
    stored: list[tuple[str, Any]],
    computed: list[tuple[str, Any]],
    identities: dict[str, str],
    schema: "pa.Schema",
) -> "pa.Table":
    """Rows of results in their stored form (`stored`) or as computed (`computed`: vectors as
    float32 arrays, extractions already JSON, the others encoded), each with its name if it has
    one (`identities`)."""
    import numpy as np
    import pyarrow as pa

    keys = [key for key, _ in stored] + [key for key, _ in computed]
    vectors = step is Step.EMBEDDING
    results: list[Any] = [value for _, value in stored]
    if vectors:
        results += [np.asarray(value, np.float32) for _, value in computed]
    else:
        results += [
            value if step is Step.EXTRACTION else json.dumps(value) for _, value in computed
        ]
    empty = [None] * len(keys)
    return pa.table(
        {
            "step": [step.value] * len(keys),
            "key": keys,
            "result": empty if vectors else results,
            "vector": results if vectors else empty,
            "models": [made_with] * len(keys),
            "identity": [identities.get(key) for key in keys],
        },
        schema=schema,
    )


def _read(version: Path | None, models: dict[Step, str]) -> dict[Step, StoredResults]:
    """A version's stored results made under each step's same models, by step; none when it has
    no readable table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if version is None:
        return {}
    try:
        table = pq.read_table(version / TABLE)
        if "identity" not in table.column_names:  # stored before results were named
            table = table.append_column("identity", pa.nulls(len(table), pa.large_string()))
        table = table.select([name for name, _ in SCHEMA_FIELDS]).cast(_schema())
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return {}
    return {
        step: StoredResults(_rows_where(table, step.value, made_with))
        for step, made_with in models.items()
    }


def _rows_where(table: "pa.Table", step: str, made_with: str) -> "pa.Table":
    """The rows of one step made with `made_with`: a slice of the table (no copy) when they are
    together, as `_write` stores them."""
    import pyarrow.compute as pc

    mask = pc.and_(pc.equal(table["step"], step), pc.equal(table["models"], made_with))
    rows = pc.indices_nonzero(mask)
    if len(rows) == 0:
        return table.slice(0, 0)
    first, last = rows[0].as_py(), rows[-1].as_py()
    if last - first + 1 == len(rows):
        return table.slice(first, len(rows))
    return table.take(rows)
