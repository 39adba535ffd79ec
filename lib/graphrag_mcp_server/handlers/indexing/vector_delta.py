"""Vectors written by delta: an update's LanceDB tables start as the previous version's and take
only what changed.

graphrag's embedding step recreates each vector table and writes every row. This module's
workflow, `generate_text_embeddings_kept`, runs in its place in the pipeline: during an
incremental run each table of the new version starts instead as the previous version's table, its
files hard-linked (Lance never changes a file it wrote: new rows, deletions and manifests are new
files, so the previous version stays as it was), then the rows whose id is gone or whose text
changed are deleted and the new and changed rows written by graphrag's own embedding step
(embeddings of unchanged texts come from carry_over's memo). Each version records every row's id
and text digest (`vector_rows.parquet`) for the next run to compare against. The new version is
still a folder of its own, switched to atomically; a killed run leaves only that folder, which
the next run removes. A full build leaves each table in one data file (graphrag writes it in
batches, a fragment each); a table whose data files grow past COMPACT_FRAGMENTS is compacted (once
in several updates); in between, the manifests and deletion files its latest version no longer reads
are dropped from the new version's copy."""

import logging
import shutil
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing import vector_rows, versions
from graphrag_mcp_server.handlers.indexing.memos import CARRIED, Memo, Step, input_hash, run_state
from graphrag_mcp_server.handlers.indexing.vector_rows import ID, TEXT, Rows

if TYPE_CHECKING:
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

COMPACT_FRAGMENTS = 10
logger = logging.getLogger(__name__)


@dataclass
class VectorWrites:
    """A run's vector rows: what each table holds (id, text digest: vector_rows.Rows) before and
    now, and how many rows it wrote or deleted."""

    previous_db: Path | None
    before: Rows
    previous: Path | None = None
    """The previous version, whose tables' texts `before` holds the digests of."""
    now: Rows = field(default_factory=dict)
    written: dict[str, int] = field(default_factory=dict)


STATE = "vector_delta"
"""The key of a run's VectorWrites in the state graphrag hands its workflows."""
WORKFLOW, REPLACES = "generate_text_embeddings_kept", "generate_text_embeddings"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's generate_text_embeddings workflow, each vector table written by delta
    (`embed_by_delta`) and unchanged texts' vectors carried over; graphrag's own when the run
    records no vector rows."""
    from contextlib import AsyncExitStack

    from graphrag.cache.cache_key_creator import cache_key_creator
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag.index.workflows import generate_text_embeddings
    from graphrag_llm.embedding import create_embedding
    from graphrag_vectors import create_vector_store

    writes: VectorWrites | None = run_state(context, STATE)
    if writes is None:
        return await generate_text_embeddings.run_workflow(config, context)
    settings, tables = config.embed_text, context.output_table_provider
    carried = run_state(context, CARRIED)
    memo = carried[Step.EMBEDDING] if carried is not None else None
    model = create_embedding(
        config.get_embedding_model_config(settings.embedding_model_id),
        cache=context.cache.child(settings.model_instance_name),
        cache_key_creator=cache_key_creator,
    )
    for name in settings.names:
        field = generate_text_embeddings.EMBEDDING_FIELDS[name]
        if not await tables.has(field.table_name):
            logger.warning("embedding %s: no table %s to embed", name, field.table_name)
            continue
        store = create_vector_store(config.vector_store, config.vector_store.index_schema[name])
        store.connect()
        async with AsyncExitStack() as stack:
            rows = await vector_rows.embedded_rows(tables, field)
            snapshot = (
                await stack.enter_async_context(tables.open(f"embeddings.{name}"))
                if config.snapshots.embeddings
                else None
            )
            count = await embed_by_delta(
                writes,
                memo,
                rows,
                vector_rows.previous_rows(writes.previous, field),
                context.callbacks,
                model,
                model.tokenizer,
                field.embed_column,
                settings.batch_size,
                settings.batch_max_tokens,
                config.concurrent_requests,
                store,
                output_table=snapshot,
            )
        logger.info("Embedded %d rows for %s", count, name)
    return WorkflowFunctionOutput(result=None)


async def embed_by_delta(
    writes: VectorWrites,
    memo: Memo | None,
    rows: "pa.Table",
    previous: "pa.Table | None",
    callbacks: Any,
    model: Any,
    tokenizer: Any,
    embed_column: str,
    batch_size: int,
    batch_max_tokens: int,
    num_threads: int,
    vector_store: Any,
    id_column: str = "id",
    output_table: Any = None,
) -> int:
    """graphrag's `embed_text` operation of a table's `rows` (vector_rows.embedded_rows) into a
    vector store (`embedded`), writing only the rows that changed, each unchanged text's vector
    taken from `memo`. `previous`: the previous version's rows, whose recorded digests the rows
    of the same text carry."""

    async def write(some: list[dict[str, Any]], create: bool = True) -> None:
        await embedded(
            memo,
            some,
            callbacks,
            model,
            tokenizer,
            embed_column,
            batch_size,
            batch_max_tokens,
            num_threads,
            vector_store,
            id_column,
            output_table,
            create,
        )

    count: int = rows.num_rows
    if output_table is not None or not hasattr(vector_store, "db_uri"):
        await write(vector_rows.as_dicts(rows, id_column, embed_column))
        return count
    name = vector_store.index_name
    writes.now[name] = vector_rows.digests(rows, previous, writes.before.get(name))
    delta = _copy_of_previous(writes, name, rows, vector_store)
    folder = Path(vector_store.db_uri) / f"{name}.lance"
    if delta is None:
        await write(vector_rows.as_dicts(rows, id_column, embed_column))
        writes.written[name] = count
        # one data file from the start: else the first updates compact the fragments of graphrag's
        # batches, rewriting (and uploading) the whole table and its index
        _compact(vector_store.document_collection, folder, most=1)
        return count
    changed, stale = delta
    if changed.num_rows:
        # the copied table is the index
        await write(vector_rows.as_dicts(changed, id_column, embed_column), create=False)
    _compact(vector_store.document_collection, folder)
    writes.written[name] = changed.num_rows + len(stale)
    return count


async def embedded(
    memo: Memo | None,
    rows: list[dict[str, Any]],
    callbacks: Any,
    model: Any,
    tokenizer: Any,
    embed_column: str,
    batch_size: int,
    batch_max_tokens: int,
    num_threads: int,
    vector_store: Any,
    id_column: str,
    output_table: Any,
    create: bool,
) -> None:
    """graphrag's `embed_text` operation (graphrag 3.3: the table recreated unless `create` is
    false, rows embedded a buffer of batch_size x num_threads at a time by graphrag's
    `run_embed_text`, loaded into the store, snapshot rows written), the texts the previous
    version embedded taken from `memo`."""
    import numpy as np
    from graphrag_vectors.vector_store import VectorStoreDocument

    if create:
        vector_store.create_index()
    flush = batch_size * num_threads
    for start in range(0, len(rows), flush):
        buffer = rows[start : start + flush]
        vectors = await carried_embeddings(
            memo,
            [row[embed_column] for row in buffer],
            callbacks,
            model,
            tokenizer,
            batch_size,
            batch_max_tokens,
            num_threads,
        )
        pairs = [
            (row[id_column], vector.tolist() if type(vector) is np.ndarray else vector)
            for row, vector in zip(buffer, vectors, strict=True)
            if vector is not None
        ]
        if len(pairs) < len(buffer):
            logger.warning(
                "Skipped %d rows with None embeddings out of %d",
                len(buffer) - len(pairs),
                len(buffer),
            )
        vector_store.load_documents(
            [VectorStoreDocument(id=identity, vector=vector) for identity, vector in pairs]
        )
        if output_table is not None:
            for identity, vector in pairs:
                await output_table.write({"id": identity, "embedding": vector})


async def carried_embeddings(
    memo: Memo | None,
    texts: list[str],
    callbacks: Any,
    model: Any,
    tokenizer: Any,
    batch_size: int,
    batch_max_tokens: int,
    num_threads: int,
) -> list[Any]:
    """graphrag's `run_embed_text` of a buffer of texts, embedding only those `memo` lacks (and
    keeping those it embeds for the next version)."""
    from graphrag.index.operations.embed_text.run_embed_text import run_embed_text

    if memo is None or not texts:
        found = await run_embed_text(
            texts, callbacks, model, tokenizer, batch_size, batch_max_tokens, num_threads
        )
        return list(found.embeddings or [None] * len(texts))
    # graphrag-llm gives every model one
    model_id = getattr(model, "_model_id", type(model).__qualname__)
    keys = [input_hash(model_id, batch_max_tokens, text) for text in texts]
    vectors = memo.take_many(keys)
    missing = [index for index, vector in enumerate(vectors) if vector is None]
    if missing:
        fresh = await run_embed_text(
            [texts[i] for i in missing],
            callbacks,
            model,
            tokenizer,
            batch_size,
            batch_max_tokens,
            num_threads,
        )
        for index, vector in zip(missing, fresh.embeddings or [None] * len(missing), strict=True):
            vectors[index] = vector
            if vector is not None:
                memo.put(keys[index], vector)
    return vectors


def _copy_of_previous(
    writes: VectorWrites, name: str, rows: "pa.Table", vector_store: Any
) -> tuple["pa.Table", list[str]] | None:
    """The previous version's table `name` copied into this version with its stale rows (gone, or
    changed) deleted: the `rows` still to write (digest not the recorded one) and the ids deleted.
    None when this table must be written in full (no record of the previous rows, no previous
    table, a store shared by the versions, or a table that is damaged or holds other rows than
    recorded: an update heals it, as when every update rewrote the tables)."""
    import pyarrow.compute as pc

    before, now = writes.before.get(name), writes.now[name]
    target = Path(vector_store.db_uri) / f"{name}.lance"
    source = writes.previous_db / f"{name}.lance" if writes.previous_db is not None else None
    if (
        before is None
        or source is None
        or not source.is_dir()
        or source.resolve() == target.resolve()
    ):
        return None
    recorded = before[TEXT].take(pc.index_in(now[ID], before[ID]))
    changed = pc.invert(pc.fill_null(pc.equal(now[TEXT], recorded), False))
    unchanged = now.filter(pc.invert(changed))[ID]
    stale = sorted(before.filter(pc.invert(pc.is_in(before[ID], unchanged)))[ID].to_pylist())
    try:
        versions.linked_copy(source, target)
        vector_store.connect()
        held = (
            vector_store.document_collection.search()
            .select([vector_store.id_field])
            .limit(None)
            .to_arrow()[vector_store.id_field]
        )
        # reads every data file's ids (~30 ms)
        if not _same_ids(held, before[ID]):
            msg = "its rows are not those recorded"
            raise ValueError(msg)
        if stale:
            vector_store.document_collection.delete(
                f"{vector_store.id_field} IN ({_quoted(stale)})"
            )
    except (OSError, RuntimeError, ValueError) as error:
        logger.warning(
            "vector table %s of the previous version unusable (%s): writing it in full", name, error
        )
        shutil.rmtree(target, ignore_errors=True)
        return None
    return rows.filter(changed), stale


def _same_ids(held: "pa.ChunkedArray", recorded: "pa.ChunkedArray") -> bool:
    """Whether a table holds the ids recorded (as sets, compared by Arrow)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    held = held.cast(pa.large_string())
    return all(
        pc.all(pc.is_in(some, value_set=other.combine_chunks()), min_count=0).as_py()
        for some, other in ((held, recorded), (recorded, held))
    )


def _quoted(ids: list[str]) -> str:
    return ", ".join("'" + identity.replace("'", "''") + "'" for identity in ids)


def _compact(table: Any, folder: Path, most: int = COMPACT_FRAGMENTS) -> None:
    """Compact a table whose data files (a fragment more each update, and those of fragments
    whose rows were all deleted) grew past `most` (every file the new version does not read
    deleted: only this run writes its folder), then drop the bookkeeping files its latest version
    no longer reads (`_drop_superseded`): a version's file count stays bounded."""
    if len(list((folder / "data").iterdir())) > most:
        table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)
    _drop_superseded(folder)


def vectors_by_delta(previous: "PreviousVersion | None", models: str) -> VectorWrites:
    """The vector rows of a run writing only rows that differ from those of the `previous`
    version's LanceDB tables (made under the models `models`); `record_rows` stores them once it
    ends."""
    if previous is None:
        return VectorWrites(None, {})
    return VectorWrites(previous.db, vector_rows.read(previous.path, models), previous.path)


def record_rows(writes: VectorWrites, version: Path, models: str) -> None:
    """Record in `version` the vector rows its run wrote, for the next run to compare against."""
    vector_rows.write(writes.now, version / vector_rows.ROWS, models)


def _drop_superseded(folder: Path) -> None:
    """Remove from this version's copy of a table the files its latest LanceDB version does not
    read: older manifests and transactions, and deletion files a newer one of the same fragment
    replaced (Lance's own cleanup needs pylance; lancedb's `optimize` also rewrites every data
    file). Only links in this version's folder go: the previous version's files stay as they are.
    They are put back when the table then fails to read."""
    manifests = list((folder / "_versions").glob("*.manifest"))
    latest = max(map(_manifest_version, manifests))
    superseded = [path for path in manifests if _manifest_version(path) < latest]
    superseded += [
        path
        for path in (folder / "_transactions").glob("*.txn")
        if int(path.name.split("-", 1)[0]) < latest - 1
    ]
    newest: dict[str, int] = {}
    deletions = sorted((folder / "_deletions").glob("*-*-*.*"))
    for path in deletions:
        fragment, read_version, _ = path.stem.split("-", 2)
        newest[fragment] = max(newest.get(fragment, 0), int(read_version))
    superseded += [
        path
        for path in deletions
        if int(path.stem.split("-", 2)[1]) < newest[path.stem.split("-", 1)[0]]
    ]
    aside = folder / ".superseded"
    aside.mkdir()
    for path in superseded:
        path.rename(aside / f"{path.parent.name}.{path.name}")
    try:
        import lancedb

        reopened = lancedb.connect(str(folder.parent)).open_table(folder.stem)
        reopened.search().select([reopened.schema.names[0]]).limit(None).to_arrow()
    except Exception as error:  # noqa: BLE001 - any failure to read: the files go back
        logger.warning("superseded files of %s kept (%s)", folder.name, error)
        for path in superseded:
            (aside / f"{path.parent.name}.{path.name}").rename(path)
    shutil.rmtree(aside)


def _manifest_version(path: Path) -> int:
    """The table version of a manifest file (named by the version, or by u64::MAX - version)."""
    number = int(path.stem)
    return (1 << 64) - 1 - number if number >= 1 << 63 else number
