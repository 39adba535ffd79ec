"""Building an index: graphrag.api.build_index over the documents of a data path."""

import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.config.formats import SUFFIXES
from graphrag_mcp_server.config.index_root import (
    INPUT_FILE_PATTERN,
    SETTINGS_FILE,
    is_offline,
    load_index_config,
    pin_output,
    use_models,
    write_index_root,
)
from graphrag_mcp_server.config.providers import Provider
from graphrag_mcp_server.config.settings import ServerSettings
from graphrag_mcp_server.errors import (
    ConfigError,
    InputDataError,
)
from graphrag_mcp_server.handlers import built_with
from graphrag_mcp_server.handlers.indexing import document_stamps, versions
from graphrag_mcp_server.handlers.indexing.documents import (
    Limits,
    Selection,
    SkipReason,
    select_documents,
)
from graphrag_mcp_server.handlers.indexing.model_caches import caches_follow_models
from graphrag_mcp_server.handlers.indexing.pipeline import run_pipeline
from graphrag_mcp_server.handlers.indexing.readers import CorpusReader, input_folder
from graphrag_mcp_server.handlers.indexing.tuning import (
    changed_prompts,
    prompt_digests,
    prompt_notice,
)
from graphrag_mcp_server.handlers.integrity import passed_check, version_gaps
from graphrag_mcp_server.handlers.results import IndexSummary
from graphrag_mcp_server.handlers.tables import (
    count_rows,
    recorded_vector_rows,
    recorded_vector_widths,
)
from graphrag_mcp_server.providers.usage import Usage, track_usage

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from graphrag.callbacks.workflow_callbacks import WorkflowCallbacks
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    from graphrag_mcp_server.handlers.indexing.kept import Kept

logger = logging.getLogger(__name__)


class IndexMode(StrEnum):
    """How a run treats an existing index. Both run graphrag's full pipeline over every current
    document; incremental also carries over from the previous version what its unchanged input
    allows (kept.py), full carries nothing (exactly a rebuild). A first run builds in full."""

    FULL = "full"
    INCREMENTAL = "incremental"


class IndexMethod(StrEnum):
    """graphrag's indexing methods: standard extracts the graph with the LLM, fast with NLP."""

    STANDARD = "standard"
    FAST = "fast"


def import_pipeline() -> None:
    """Import graphrag's pipeline and the vector store it writes (LanceDB: 1.0-1.3 s): what every
    build runs. A worker started ahead imports them before its job; `seconds` leaves them out."""
    import graphrag.api  # noqa: F401 - imported to be loaded, not used here
    import graphrag_vectors.lancedb  # noqa: F401 - imported to be loaded, not used here


def _check_data_path(data_path: Path) -> None:
    """Refuse a data path that does not exist or is no directory."""
    if not data_path.exists():
        raise InputDataError(f"data path {data_path} does not exist")
    if not data_path.is_dir():
        raise InputDataError(
            f"data path {data_path} is not a directory; give the folder that holds your documents"
        )


def index_config(root: Path, data_path: Path, offline: bool = False) -> "GraphRagConfig":
    """The root's config reading input from `data_path`; a root without settings.yaml gets one. Its
    models are made ready by `build` once it knows there is work (a run with no change imports no
    model library).

    A new root is configured for the offline model when `offline` is asked for or no
    GRAPHRAG_API_KEY is set, else for OpenAI. `offline` refuses a root set up for other models.
    """
    _check_data_path(data_path)
    if not (root / SETTINGS_FILE).exists():
        use_offline = offline or not os.environ.get("GRAPHRAG_API_KEY")
        write_index_root(root, Provider.OFFLINE if use_offline else Provider.OPENAI)
    config = load_index_config(
        root,
        {"input_storage": {"type": "file", "base_dir": str(data_path.resolve())}},
        with_models=False,
    )
    if offline and not is_offline(config):
        msg = (
            f"{root / SETTINGS_FILE} configures other models than the offline one; drop "
            "--offline, or switch this root to it with: graphrag-mcp init --index-path "
            f"{root} --provider offline --force"
        )
        raise ConfigError(msg)
    return config


@contextmanager
def undone_unless_published(root: Path, look_only: bool = False) -> Iterator[None]:
    """A root this block initialises (index_config writes settings.yaml, .env, prompts/ and input/
    into a root without settings) is put back as it was when the block fails before any version is
    published: a failed first run must not tie the root to the model it guessed (say, the offline
    one before a key was set). The LLM cache and logs stay: what was paid for is kept.
    `look_only` (`index --dry-run`): put back when the block ends, whatever happens in it."""
    existed, fresh = root.exists(), not (root / SETTINGS_FILE).exists()

    def put_back() -> None:
        if fresh and versions.current_version(root) is None:
            _remove_initialised(root, remove_root=not existed)

    try:
        yield
    except BaseException:
        put_back()
        raise
    if look_only:
        put_back()


def _remove_initialised(root: Path, remove_root: bool) -> None:
    for name in (SETTINGS_FILE, ".env", versions.LOCK):
        (root / name).unlink(missing_ok=True)
    shutil.rmtree(root / "prompts", ignore_errors=True)
    for folder in (root / "input", root / versions.VERSIONS, *([root] if remove_root else [])):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


async def read_documents(
    config: "GraphRagConfig", root: Path, limits: Limits | None = None, current: Path | None = None
) -> "tuple[pd.DataFrame, Selection]":
    """The input documents as graphrag's documents table, each selected file read by the graphrag
    reader that fits its format (readers.py), and that selection (what was skipped, and why). A
    text file unchanged since version `current` read it is taken from it (document_stamps.py)."""
    from graphrag_mcp_server.handlers.indexing.local_files import LocalFileStorage

    data_path = input_folder(config)
    pattern = config.input.file_pattern or INPUT_FILE_PATTERN
    selection = select_documents(data_path, root, pattern, limits)
    reader = CorpusReader(
        config, LocalFileStorage(base_dir=str(data_path), encoding=config.input.encoding)
    )
    known = document_stamps.unchanged(current, config, selection.stamps, root)
    taken = set() if known is None else set(known["title"].to_pylist())
    others = [path for path in selection.files if path not in taken]
    read = dict(zip(others, await reader.read_each(others), strict=True))
    selection.read = len(others)
    selection.unreadable.update(reader.unreadable)
    if reader.unreadable:
        selection.skipped[SkipReason.UNREADABLE] += len(reader.unreadable)
        for path in reader.unreadable:
            selection.stamps.pop(path, None)
    if not taken and not any(read.values()):
        left_out = f"; unreadable: {_listed(reader.unreadable)}" if reader.unreadable else ""
        wanted = (
            f"files of the types it reads: .{', .'.join(SUFFIXES)}"
            if pattern == INPUT_FILE_PATTERN
            else f"files matching settings.yaml's input.file_pattern {pattern!r}"
        )
        msg = f"no documents in {data_path} ({wanted}{left_out})"
        raise InputDataError(msg)
    documents = _in_order(selection.files, known, read)
    documents["human_readable_id"] = range(len(documents))
    return documents, selection


def _in_order(
    files: list[str], known: "pa.Table | None", read: "dict[str, list[dict[str, Any]]]"
) -> "pd.DataFrame":
    """The documents of `files`, in their order: the rows of `known` (titled by their file, taken
    from the version before, as Arrow columns: no Python object a row) and the rows `read` gives
    each other file (slices of the known rows where they keep their order: no text copied)."""
    import numpy as np
    import pandas as pd

    from graphrag_mcp_server.handlers.indexing.slices import frame_taken

    place = {path: position for position, path in enumerate(files)}
    rows = [row for path in files for row in read.get(path, [])]
    if known is None or known.num_rows == 0:
        return pd.DataFrame(rows)
    frames = [known.to_pandas().assign(raw_data=None)]
    places = [place[title] for title in known["title"].to_pylist()]
    if rows:
        frames.append(pd.DataFrame(rows))
        places += [place[path] for path in files for _ in read.get(path, [])]
    order = np.argsort(places, kind="stable")
    return frame_taken(pd.concat(frames, ignore_index=True), order)


def _listed(unreadable: dict[str, str]) -> str:
    return "; ".join(f"{path} ({reason})" for path, reason in list(unreadable.items())[:5])


async def build(
    config: "GraphRagConfig",
    root: Path,
    mode: IndexMode = IndexMode.INCREMENTAL,
    method: IndexMethod = IndexMethod.STANDARD,
    callbacks: "list[WorkflowCallbacks] | None" = None,
    limits: Limits | None = None,
    notice: Callable[[str], None] | None = None,
) -> IndexSummary:
    """Index the current documents into a new version and switch to it.

    Every run is graphrag's full pipeline over all current documents; graphrag's LLM cache answers
    every request that unchanged content repeats, so only what changed costs model calls, and an
    incremental run takes from the previous version its unchanged extractions, summaries, report
    contexts, reports and embeddings, its communities, the ids of its records and its vector rows
    (kept.py): it then differs from a rebuild in how communities are drawn (and so in the reports of
    communities drawn otherwise) and in its records' ids and numbers (kept from the previous
    version; a rebuild draws them). An incremental run with no changed document, prompt or setting
    does nothing on a whole version, without importing graphrag's pipeline or a model library (about
    1 s instead of 6 s). Changed prompts (a prompt tuning), changed settings and the gaps of the
    served version are told to `notice` before any call: the work that depends on them is computed
    again. A new version with gaps (graphrag's extractors swallow failed calls) is not published.
    """
    from graphrag_mcp_server.config.runtime import (
        fewer_garbage_collections,
        imports_frozen,
        log_no_item_progress,
        time_workflows_without_tracemalloc,
    )
    from graphrag_mcp_server.handlers.indexing.local_files import use_local_file_storage
    from graphrag_mcp_server.handlers.indexing.lone_entities import with_every_entity_clustered
    from graphrag_mcp_server.handlers.indexing.record_tables import read_parquet_tables_by_records
    from graphrag_mcp_server.providers.probe import (
        extraction_probe_key,
        probe_models,
        sample_passage,
    )

    started = time.perf_counter()
    with versions.index_lock(root), fewer_garbage_collections():
        current = versions.current_version(root)
        documents, selection = await read_documents(config, root, limits, current)
        versions.crash_point("documents-read")
        manifest = dict(
            zip(documents["title"].astype(str), documents["id"].astype(str), strict=True)
        )
        previous = versions.read_manifest(current)
        changes = versions.diff(previous, manifest)
        incremental = previous is not None and mode is not IndexMode.FULL
        prompts = prompt_digests(config, root)
        prompts_changed = (
            changed_prompts(
                config, root, read_prompt_digests(current), current / versions.MANIFEST, prompts
            )
            if incremental and current is not None
            else []
        )
        stale = _stale(config, current) if incremental and current is not None else []
        if incremental and not changes.any and not prompts_changed and not stale:
            if selection.read and current is not None:  # moved, not changed: read them once
                document_stamps.refresh(root, current, config, selection.stamps)
            return _summary(
                await count_rows(config), changes, selection, Usage(), started, incremental
            )
        for told in ([prompt_notice(prompts_changed)] if prompts_changed else []) + stale:
            if notice is not None:
                notice(told)
        if (before := built_with.recorded(current)) is not None:
            caches_follow_models(config, root, before, built_with.built_with(config))
        importing = time.perf_counter()
        with imports_frozen():
            use_models(config)
            import_pipeline()

        # `seconds` is the run's, as in a worker started ahead, which imported these first
        started += time.perf_counter() - importing
        settings = ServerSettings()
        time_workflows_without_tracemalloc()
        log_no_item_progress()
        read_parquet_tables_by_records()
        use_local_file_storage()
        with track_usage() as usage:  # the model checks are paid for too
            probe_key = extraction_probe_key(config) if method is IndexMethod.STANDARD else None
            sample = (
                sample_passage(documents["text"].astype(str))
                if probe_key is not None and probe_key != _passed_probe(current)
                else None
            )
            dimensions = await probe_models(config, settings.provider_probe_seconds, sample)
            width_changed = _embedding_width_changed(config, root, dimensions)
            if width_changed is not None and notice is not None:
                notice(width_changed)
            version = versions.new_version(root)
            try:
                versions.crash_point("version-made")
                target = with_every_entity_clustered(
                    pin_output(sized_vectors(config, dimensions), version), method.value
                )
                kept, counts = await run_pipeline(
                    target,
                    documents,
                    method.value,
                    callbacks,
                    current,
                    incremental,
                    version,
                    settings.provider_failure_limit,
                    usage,
                )
                (version / PROMPT_DIGESTS).write_text(
                    json.dumps(prompts, indent=1, sort_keys=True), encoding="utf-8"
                )
                built_with.record(version, config)
                document_stamps.record(version, config, selection.stamps)
                if probe_key is not None:
                    (version / PASSED_PROBE).write_text(probe_key, encoding="utf-8")
            except BaseException:
                versions.discard(version)
                raise
        versions.switch_to(root, version, manifest)
    return _summary(counts, changes, selection, usage, started, incremental, kept)


PROMPT_DIGESTS = "prompts.json"
"""A version's record of the prompts it was built with (tuning.prompt_digests)."""


PASSED_PROBE = "extraction_probe"
"""A version's record of the extraction check its build passed (probe.extraction_probe_key): not
sent again while the extraction model, prompt and entity types stay the same."""


def _passed_probe(version: Path | None) -> str | None:
    path = None if version is None else version / PASSED_PROBE
    return path.read_text(encoding="utf-8") if path is not None and path.is_file() else None


def read_prompt_digests(version: Path | None) -> dict[str, str] | None:
    """The prompt digests a version recorded; None for a version from before they were recorded."""
    if version is None or not (version / PROMPT_DIGESTS).is_file():
        return None
    digests: dict[str, str] = json.loads((version / PROMPT_DIGESTS).read_text(encoding="utf-8"))
    return digests


def sized_vectors(config: "GraphRagConfig", dimensions: dict[str, int]) -> "GraphRagConfig":
    """The config with its vector store sized to the vectors the embedding model returned when
    probed (a settings.yaml copied from another model says 3072 where the model gives 1536: LanceDB
    then refused every row); a warning names the setting to change."""
    model = config.embed_text.embedding_model_id
    found, store = dimensions.get(model), config.vector_store
    sizes = {
        store.vector_size,
        *(schema.vector_size for schema in (store.index_schema or {}).values()),
    }
    if found is None or sizes == {found}:
        return config
    logger.warning(
        (
            "embedding model %s returns vectors of %d numbers, settings.yaml's "
            "vector_store.vector_size says %s: indexing with %d (set vector_size: %d in "
            "settings.yaml to say so)"
        ),
        model,
        found,
        store.vector_size,
        found,
        found,
    )
    schemas = {
        name: schema.model_copy(update={"vector_size": found})
        for name, schema in (store.index_schema or {}).items()
    }
    return config.model_copy(
        update={
            "vector_store": store.model_copy(update={"vector_size": found, "index_schema": schemas})
        }
    )


def _stale(config: "GraphRagConfig", current: Path) -> list[str]:
    """Why the served version must be built again although no document changed: settings.yaml
    differs from what it was built with, or it lacks reports, extractions or vectors (each what it
    makes the run redo)."""
    before = built_with.recorded(current)
    told = [
        f"settings.yaml changed since the served version was built: {change}"
        for change in (built_with.changes(before, built_with.built_with(config)) if before else [])
    ]
    if not passed_check(current) or recorded_vector_rows(config) is None:
        gaps = version_gaps(config, current)
        told += (
            [
                (
                    f"the served version is incomplete ({'; '.join(map(str, gaps))}): this run "
                    "computes only what is missing"
                )
            ]
            if gaps
            else []
        )
    return told


def _embedding_width_changed(
    config: "GraphRagConfig", root: Path, dimensions: dict[str, int]
) -> str | None:
    """When the embedding model now returns vectors of another width than the served tables hold (it
    changed behind its name): its cached vectors are dropped, since graphrag's cache answers by the
    request alone and would replay the old model's, and what to tell is returned (every vector is
    computed again: the width is part of the embeddings' fingerprint)."""
    found, held = (
        dimensions.get(config.embed_text.embedding_model_id),
        recorded_vector_widths(config),
    )
    if found is None or not held or set(held.values()) == {found}:
        return None
    told = (
        f"the embedding model now returns vectors of {found} numbers, the served version holds "
        f"{', '.join(map(str, sorted(set(held.values()))))}: every vector is computed again"
    )
    if (storage := config.cache.storage) is not None and storage.type == "file":
        cache = root / (storage.base_dir or "cache") / config.embed_text.model_instance_name
        if cache.is_dir():
            shutil.rmtree(cache)
            told += f", and the old model's cached vectors in {cache} are dropped"
    return told


def _summary(
    counts: dict[str, int],
    changes: "versions.DocumentChanges",
    selection: Selection,
    usage: Usage,
    started: float,
    incremental: bool,
    kept: "Kept | None" = None,
) -> IndexSummary:
    return IndexSummary(
        **counts,
        skipped=dict(sorted(selection.skipped.items())),
        documents_read=selection.read,
        unreadable=selection.unreadable,
        documents_added=len(changes.added),
        documents_updated=len(changes.updated),
        documents_deleted=len(changes.deleted),
        documents_renamed=len(changes.renamed),
        llm_calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        embedding_calls=usage.embedding_calls,
        seconds=round(time.perf_counter() - started, 3),
        mode=IndexMode.INCREMENTAL.value if incremental else IndexMode.FULL.value,
        carried_over={step.value: memo.reused for step, memo in kept.carried.items()}
        if kept
        else {},
        computed={step.value: memo.computed for step, memo in kept.carried.items()} if kept else {},
        clustering=kept.clustering if kept else None,
        vectors_written=kept.vectors.written if kept else {},
        workflows=kept.workflows if kept else [],
    )
