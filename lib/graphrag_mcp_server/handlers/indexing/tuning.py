"""Prompt tuning: graphrag.api.generate_indexing_prompts adapts the extraction, summary and report
prompts to a corpus; the tuned prompts replace the root's after the previous ones are kept in
prompts.bak-<time>/."""

import hashlib
import logging
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from pydantic import BaseModel, Field

from graphrag_mcp_server.config.index_root import INPUT_FILE_PATTERN, load_index_config, use_models
from graphrag_mcp_server.errors import InputDataError
from graphrag_mcp_server.handlers import built_with
from graphrag_mcp_server.handlers.indexing.documents import select_documents
from graphrag_mcp_server.handlers.indexing.versions import current_version
from graphrag_mcp_server.handlers.results import TunedPrompts
from graphrag_mcp_server.providers.usage import track_usage

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

TUNING_LOGGER = "graphrag.api.prompt_tune"
DEFAULT_LIMIT = 15
"""graphrag's default number of chunks to tune from (graphrag.prompt_tune.defaults.LIMIT)."""
LIMIT_WARNING = "Limit out of range"
"""graphrag's warning when the limit exceeds the chunks (logged again by the retry over all)."""


class DocSelectionType(StrEnum):
    """How graphrag picks the chunks it tunes from: the values of
    graphrag.prompt_tune.types.DocSelectionType, not imported here so that `graphrag-mcp --help`
    loads no graphrag."""

    RANDOM = "random"
    TOP = "top"
    ALL = "all"
    AUTO = "auto"


class TuneOptions(BaseModel):
    """graphrag's prompt-tuning options (its `graphrag prompt-tune` command's)."""

    domain: str | None = Field(
        default=None, description="The corpus's domain (default: asked of the model)"
    )
    language: str | None = Field(
        default=None, description="Language of the prompts (default: detected)"
    )
    selection_method: DocSelectionType = DocSelectionType.RANDOM
    limit: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Chunks to tune from (random and top selection; default 15, or all when fewer)",
    )
    max_tokens: int = Field(
        default=2000, ge=200, le=100_000, description="Most tokens of the extraction prompt"
    )
    discover_entity_types: bool = Field(
        default=True, description="Let the model name the entity types"
    )


class TuningArguments(TypedDict):
    """The TuneOptions fields that graphrag.api.generate_indexing_prompts takes as they are."""

    domain: str | None
    language: str | None
    max_tokens: int
    discover_entity_types: bool
    limit: int


def tuning_config(root: Path, data_path: Path | None) -> "GraphRagConfig":
    """The root's config reading the documents to tune from: `data_path`, else the root's own input
    folder (a graphrag project's `input/`), else the folder the served version was built from;
    none holding documents is an InputDataError saying which folder to give."""
    folders = [data_path] if data_path else [root / "input", _built_from(root)]
    for folder in folders:
        if folder is None or not folder.is_dir():
            continue
        config = load_index_config(
            root,
            {"input_storage": {"type": "file", "base_dir": str(folder.resolve())}},
            with_models=False,
        )
        pattern = config.input.file_pattern or INPUT_FILE_PATTERN
        if select_documents(folder, root, pattern).files:
            return config
    where = data_path or root / "input"
    msg = (
        f"no documents to tune from in {where}; give the folder you index with --data-path "
        "(or the data_path argument)"
    )
    raise InputDataError(msg)


def _built_from(root: Path) -> Path | None:
    """The documents folder the served version recorded (built_with.json), if any."""
    record = built_with.recorded(current_version(root))
    return Path(record.data_path) if record and record.data_path else None


def index_prompts(config: "GraphRagConfig", root: Path) -> dict[str, Path]:
    """The prompt files an index build uses, by the work that depends on them."""

    def where(setting: str | None, default: str) -> Path:
        path = Path(setting or default)
        return path if path.is_absolute() else root / path

    return {
        "extract_graph": where(config.extract_graph.prompt, "prompts/extract_graph.txt"),
        "summarize_descriptions": where(
            config.summarize_descriptions.prompt, "prompts/summarize_descriptions.txt"
        ),
        "community_report_graph": where(
            config.community_reports.graph_prompt, "prompts/community_report_graph.txt"
        ),
        "community_report_text": where(
            config.community_reports.text_prompt, "prompts/community_report_text.txt"
        ),
        "extract_claims": where(config.extract_claims.prompt, "prompts/extract_claims.txt"),
    }


PROMPT_WORK = {
    "extract_graph": "entity and relationship extraction of every text unit",
    "summarize_descriptions": "the description summaries",
    "community_report_graph": "the community reports",
    "community_report_text": "the community reports",
    "extract_claims": "claim extraction (when enabled)",
}
"""What an index run computes again when a prompt changes (the rest is carried over as before)."""
TUNED = ("extract_graph", "summarize_descriptions", "community_report_graph")
"""The prompts graphrag's tuning writes, in the order generate_indexing_prompts returns them."""


def prompt_digests(config: "GraphRagConfig", root: Path) -> dict[str, str]:
    """sha256 of each prompt an index build uses (recorded with each version: a changed prompt is a
    change)."""
    return {
        name: hashlib.sha256(path.read_bytes()).hexdigest()
        for name, path in index_prompts(config, root).items()
        if path.is_file()
    }


def changed_prompts(
    config: "GraphRagConfig",
    root: Path,
    previous: dict[str, str] | None,
    built: Path,
    current: dict[str, str],
) -> list[str]:
    """The prompts whose text differs from the previous version's; for a version that recorded none
    (built before versions did), those written after it was (`built`: a file of that version)."""
    if previous is not None:
        return [name for name, digest in current.items() if previous.get(name) != digest]
    since = built.stat().st_mtime if built.exists() else float("inf")
    return [
        name
        for name, path in index_prompts(config, root).items()
        if path.is_file() and path.stat().st_mtime > since
    ]


def prompt_notice(changed: list[str]) -> str:
    """What an index run says before it spends calls on changed prompts."""
    work = list(dict.fromkeys(PROMPT_WORK[name] for name in changed))
    return (
        f"prompts changed since the last version ({', '.join(changed)}): this run computes again "
        f"{'; '.join(work)}; the rest is carried over as for any update"
    )


async def tune_prompts(
    config: "GraphRagConfig",
    root: Path,
    options: TuneOptions,
    on_stage: Callable[[str], None] | None = None,
) -> tuple[TunedPrompts, dict[Path, str]]:
    """Run graphrag's prompt tuning over the config's documents: what would change, and the tuned
    texts by file (nothing is written). `on_stage` hears each stage graphrag logs."""
    started = time.perf_counter()  # graphrag's import and model setup included
    use_models(config)
    from graphrag.api import generate_indexing_prompts
    from graphrag.prompt_tune.types import DocSelectionType as Selection

    with track_usage() as usage, _stages(on_stage), _limit_warnings() as limit_warnings:
        tuning: TuningArguments = {
            "domain": options.domain,
            "language": options.language,
            "max_tokens": options.max_tokens,
            "discover_entity_types": options.discover_entity_types,
            "limit": options.limit or DEFAULT_LIMIT,
        }
        try:
            prompts = await generate_indexing_prompts(
                config, selection_method=Selection(options.selection_method.value), **tuning
            )
        # graphrag's random selection of more chunks than there are (before any call)
        except ValueError as error:
            if "larger sample than population" not in str(error):
                raise
            prompts = await generate_indexing_prompts(
                config, selection_method=Selection.ALL, **tuning
            )
    if limit_warnings and options.limit is not None and on_stage is not None:
        on_stage(f"Fewer chunks than the limit of {options.limit}: tuned from all of them")
    files = index_prompts(config, root)
    tuned = dict(zip((files[name] for name in TUNED), prompts, strict=True))
    changed = [
        path
        for path, text in tuned.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    result = TunedPrompts(
        changed=[str(path.relative_to(root)) for path in changed],
        unchanged=[str(path.relative_to(root)) for path in tuned if path not in changed],
        llm_calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        embedding_calls=usage.embedding_calls,
        seconds=round(time.perf_counter() - started, 3),
    )
    return result, tuned


def write_prompts(root: Path, tuned: dict[Path, str], result: TunedPrompts) -> TunedPrompts:
    """Keep the root's prompts in prompts.bak-<time>/, then write the tuned ones; the result with
    the backup."""
    if not result.changed:
        return result
    prompts = root / "prompts"
    backup = root / f"prompts.bak-{time.strftime('%Y%m%d-%H%M%S')}"
    if prompts.is_dir():
        shutil.copytree(prompts, backup)
    for path, text in tuned.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return result.model_copy(
        update={
            "written": True,
            "backup": str(backup.relative_to(root)) if backup.exists() else None,
        }
    )


@contextmanager
def _limit_warnings() -> Iterator[list[str]]:
    """graphrag's "Limit out of range" warnings, kept from the log and collected for the block:
    the limit was the default, or the tuning says it once in its own words."""
    heard: list[str] = []

    def keep(record: logging.LogRecord) -> bool:
        if record.getMessage().startswith(LIMIT_WARNING):
            heard.append(record.getMessage())
            return False
        return True

    logger = logging.getLogger(TUNING_LOGGER)
    logger.addFilter(keep)
    try:
        yield heard
    finally:
        logger.removeFilter(keep)


@contextmanager
def _stages(on_stage: Callable[[str], None] | None) -> Iterator[None]:
    """graphrag's tuning log lines ("Generating domain...") to `on_stage` for the block."""
    if on_stage is None:
        yield
        return
    hear = on_stage  # narrowed to not None, which the class below does not see of `on_stage`

    class Stage(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            hear(record.getMessage().rstrip("."))

    logger, handler = logging.getLogger(TUNING_LOGGER), Stage(logging.INFO)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
