"""Building an index: graphrag.api.build_index over the documents of a data path."""

import os
import time
from dataclasses import asdict
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.config.index_root import SETTINGS_FILE, is_offline, load_index_config, write_index_root
from graphrag_mcp_server.config.providers import Provider
from graphrag_mcp_server.errors import ConfigError, IndexBuildError, InputDataError
from graphrag_mcp_server.handlers.results import IndexSummary
from graphrag_mcp_server.handlers.stats import count_rows, has_index
from graphrag_mcp_server.providers.usage import track_usage

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.callbacks.workflow_callbacks import WorkflowCallbacks
    from graphrag.config.models.graph_rag_config import GraphRagConfig


class IndexMode(StrEnum):
    """How a run treats an existing index."""

    AUTO = "auto"
    FULL = "full"
    INCREMENTAL = "incremental"


class IndexMethod(StrEnum):
    """graphrag's indexing methods: standard extracts the graph with the LLM, fast with NLP."""

    STANDARD = "standard"
    FAST = "fast"


def _check_data_path(data_path: Path) -> None:
    """Refuse a data path that does not exist or is no directory."""
    if not data_path.exists():
        raise InputDataError(f"data path {data_path} does not exist")
    if not data_path.is_dir():
        raise InputDataError(f"data path {data_path} is not a directory; give the folder that holds your documents")


def index_config(root: Path, data_path: Path, offline: bool = False) -> "GraphRagConfig":
    """The root's config reading input from `data_path`; a root without settings.yaml gets one.

    A new root is configured for the offline model when `offline` is asked for or no
    GRAPHRAG_API_KEY is set, else for OpenAI. `offline` refuses a root set up for other models.
    """
    _check_data_path(data_path)
    if not (root / SETTINGS_FILE).exists():
        use_offline = offline or not os.environ.get("GRAPHRAG_API_KEY")
        write_index_root(root, Provider.OFFLINE if use_offline else Provider.OPENAI)
    config = load_index_config(root, {"input_storage": {"type": "file", "base_dir": str(data_path.resolve())}})
    if offline and not is_offline(config):
        msg = (
            f"{root / SETTINGS_FILE} configures other models than the offline one; drop --offline, "
            f"or switch this root to it with: graphrag-mcp init --index-path {root} --provider offline --force"
        )
        raise ConfigError(msg)
    return config


async def read_documents(config: "GraphRagConfig") -> "pd.DataFrame":
    """The input documents as graphrag's documents table, read with graphrag's own input reader."""
    import pandas as pd
    from graphrag_input import create_input_reader
    from graphrag_storage import create_storage

    reader = create_input_reader(config.input, create_storage(config.input_storage))
    rows = [asdict(document) async for document in reader]
    if not rows:
        pattern = config.input.file_pattern or f"graphrag's default for {config.input.type}"
        msg = f"no documents in {config.input_storage.base_dir} (input type {config.input.type}, files matching {pattern})"
        raise InputDataError(msg)
    documents = pd.DataFrame(rows)
    documents["human_readable_id"] = range(len(documents))
    return documents


async def build(
    config: "GraphRagConfig",
    mode: IndexMode = IndexMode.AUTO,
    method: IndexMethod = IndexMethod.STANDARD,
    callbacks: "list[WorkflowCallbacks] | None" = None,
) -> IndexSummary:
    """Index the configured input; incremental runs use graphrag's own update."""
    from graphrag.api import build_index

    started = time.perf_counter()
    documents = await read_documents(config)
    incremental = mode is IndexMode.INCREMENTAL or (mode is IndexMode.AUTO and await has_index(config))
    if incremental and not await has_index(config):
        incremental = False
    with track_usage() as usage:
        outputs = await build_index(
            config,
            method=method.value,
            is_update_run=incremental,
            callbacks=callbacks,
            input_documents=None if incremental else documents,
        )
    failed = [output for output in outputs if output.error is not None]
    if failed:
        first = failed[0]
        msg = f"indexing failed in workflow {first.workflow}: {first.error} (details in {Path(config.reporting.base_dir).resolve()})"
        raise IndexBuildError(msg)
    counts = await count_rows(config)
    return IndexSummary(
        **counts,
        llm_calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        seconds=round(time.perf_counter() - started, 3),
        mode=IndexMode.INCREMENTAL.value if incremental else IndexMode.FULL.value,
    )
