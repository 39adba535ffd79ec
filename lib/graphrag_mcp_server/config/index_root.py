"""An index root: graphrag's settings.yaml, written by graphrag's own init and loaded by its
loader."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.config.formats import SUFFIXES
from graphrag_mcp_server.config.providers import (
    DEFAULT_MODELS,
    KNOWN_VECTOR_SIZES,
    Provider,
    model_block,
)
from graphrag_mcp_server.config.runtime import prepare_graphrag, prepare_models
from graphrag_mcp_server.errors import ConfigError, IndexNotFoundError, MissingVariableError
from graphrag_mcp_server.providers import OFFLINE_TYPE

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

SETTINGS_FILE = "settings.yaml"
INPUT_FILE_PATTERN = r"(^|/)[^./][^/]*\.(" + "|".join(SUFFIXES) + ")$"
"""Every format handlers/indexing/readers.py reads (text, Markdown, PDF, Office, HTML, CSV, JSON),
hidden files excluded."""


def _replace_between(text: str, start: str, end: str, new: str) -> str:
    """Replace text[start:end) of graphrag's init template; fail loudly if the template changed."""
    begin, finish = text.find(start), text.find(end)
    if begin < 0 or finish < begin:
        msg = f"graphrag's settings template changed: cannot find {start!r}"
        raise RuntimeError(msg)
    return text[:begin] + new + text[finish:]


def write_index_root(
    root: Path,
    provider: Provider,
    model: str | None = None,
    embedding_model: str | None = None,
    force: bool = False,
    api_base: str | None = None,
) -> Path:
    """Write settings.yaml and prompts/ with graphrag's init, then set the models for `provider`,
    both at `api_base` when given."""
    prepare_graphrag()
    from graphrag.cli.initialize import initialize_project_at

    default_model, default_embedding, default_size = DEFAULT_MODELS[provider]
    model = model or default_model
    embedding_model = embedding_model or default_embedding
    vector_size = (
        default_size
        if embedding_model == default_embedding
        else KNOWN_VECTOR_SIZES.get(embedding_model)
    )
    settings = root / SETTINGS_FILE
    if api_base is not None and provider is Provider.OFFLINE:
        msg = (
            "--api-base is for a provider's models; the offline model calls none (choose "
            "--provider openai, ...)"
        )
        raise ConfigError(msg)
    if settings.exists() and not force:
        msg = (
            f"{settings} already exists; add --force to overwrite it (prompts you edited are "
            "kept only without --force)"
        )
        raise ConfigError(msg)
    initialize_project_at(root, force=force, model=model, embedding_model=embedding_model)

    text = settings.read_text(encoding="utf-8")
    models = (
        model_block(provider, model, "completion", api_base)
        + "\n"
        + model_block(provider, embedding_model, "embedding", api_base)
    )
    text = _replace_between(
        text, "completion_models:", "### Document processing settings ###", models + "\n"
    )
    size_line = (
        f"  vector_size: {vector_size}\n"
        if vector_size
        else "  vector_size: 1536  # TODO: set to your embedding model's dimension\n"
    )
    text = _replace_between(
        text, "\n### Workflow settings ###", "\n### Workflow settings ###", size_line
    )
    pattern = INPUT_FILE_PATTERN.replace(
        "$", "$$"
    )  # graphrag substitutes ${VARS} in the whole file
    text = text.replace(
        "input:\n  type: text", f"input:\n  type: text\n  file_pattern: '{pattern}'", 1
    )
    text = (
        text.replace("  max_gleanings: 1\n", "  max_gleanings: 0\n", 1)
        if provider is Provider.OFFLINE
        else text
    )
    # cluster every connected component: graphrag's default keeps only the largest
    # (docs/configuration.md)
    every_component = (
        "cluster_graph:\n"
        "  use_lcc: false  # cluster every connected component, not only the largest\n"
    )
    text = text.replace("cluster_graph:\n", every_component, 1)
    # graphrag's init writes prompts/drift_reduce_prompt.txt but points settings elsewhere
    text = text.replace("prompts/drift_search_reduce_prompt.txt", "prompts/drift_reduce_prompt.txt")
    settings.write_text(text, encoding="utf-8")
    (root / ".env").write_text(
        "# Credentials for settings.yaml; the environment wins over this file.\n"
        "# GRAPHRAG_API_KEY=\n",
        encoding="utf-8",
    )
    return settings


UNSET_CREDENTIAL = "unset-environment-variable:"
"""Stands in for a ${VAR} that is not set, when the caller needs no model (see
require_credentials)."""


def load_index_config(
    root: Path,
    overrides: dict[str, Any] | None = None,
    *,
    without_credentials: bool = False,
    with_models: bool = True,
) -> "GraphRagConfig":
    """Load the root's settings.yaml with graphrag's loader; errors say what to fix.

    With `without_credentials`, ${VAR} references that are not set load as placeholders, so that
    statistics and context-only searches work without model keys; `require_credentials` then
    refuses a model call that needs one. Without `with_models` the config only locates and
    describes the index: no model provider is registered and LiteLLM (seconds) is not imported.
    graphrag's loader changes the working directory to the root so that its relative paths
    resolve; callers resolve their own paths first.
    """
    config = (
        _load_without_credentials(root, overrides)
        if without_credentials
        else _load(root, overrides)
    )
    if with_models:
        use_models(config)
    return config


def _load_without_credentials(root: Path, overrides: dict[str, Any] | None) -> "GraphRagConfig":
    """`_load`, with a placeholder for each ${VAR} that is not set."""
    missing: list[str] = []
    while True:
        try:
            with _placeholders(missing):
                return _load(root, overrides)
        except MissingVariableError as error:
            if error.variable in missing:
                raise
            missing.append(error.variable)


def use_models(config: "GraphRagConfig") -> None:
    """Import LiteLLM, register this project's model providers, point the config's models at its
    usage accounting: what a config loaded without models needs before its first model call
    (idempotent)."""
    from graphrag_mcp_server.providers import register_providers
    from graphrag_mcp_server.providers.usage import enable_usage_tracking

    prepare_models()
    register_providers()
    enable_usage_tracking(config)


@contextmanager
def _placeholders(variables: list[str]) -> Iterator[None]:
    """Set each unset variable to a placeholder naming it, for the duration of the block."""
    for variable in variables:
        os.environ[variable] = UNSET_CREDENTIAL + variable
    try:
        yield
    finally:
        for variable in variables:
            os.environ.pop(variable, None)


def require_credentials(config: "GraphRagConfig", model_ids: list[str]) -> None:
    """Refuse, naming the variable, when one of these models' credentials was not set at load."""
    models = {**config.completion_models, **config.embedding_models}
    for model_id in model_ids:
        key = models[model_id].api_key if model_id in models else None
        if key is not None and key.startswith(UNSET_CREDENTIAL):
            variable = key.removeprefix(UNSET_CREDENTIAL)
            msg = (
                f"model {model_id} needs the environment variable {variable}: export it where "
                "the server runs (or put it in the index root's .env); context_only searches "
                "and statistics work without it"
            )
            raise ConfigError(msg)


def _load(root: Path, overrides: dict[str, Any] | None) -> "GraphRagConfig":
    prepare_graphrag()
    from graphrag.config.load_config import load_config
    from graphrag_common.config.load_config import ConfigParsingError
    from pydantic import ValidationError

    root = root.resolve()
    if not (root / SETTINGS_FILE).exists():
        msg = (
            f"no index at {root} (no {SETTINGS_FILE}); build one with: graphrag-mcp index "
            f"DATA_PATH --index-path {root}"
        )
        raise IndexNotFoundError(msg)
    try:
        config = load_config(root_dir=root, cli_overrides=overrides)
    except ConfigParsingError as error:
        cause = error.__cause__
        if isinstance(cause, KeyError):
            variable = cause.args[0]
            msg = (
                f"{root / SETTINGS_FILE} needs the environment variable {variable}: export it "
                f"(or put it in {root / '.env'}), or switch to the offline model: "
                f"graphrag-mcp init --index-path {root} --provider offline --force"
            )
            raise MissingVariableError(msg, variable) from error
        raise ConfigError(f"cannot read {root / SETTINGS_FILE}: {error}") from error
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ConfigError(f"invalid {root / SETTINGS_FILE}: {problems}") from error
    except ValueError as error:  # string.Template: a "$" that is no ${VAR} reference
        msg = f"cannot read {root / SETTINGS_FILE}: {error}; write a literal $ as $$"
        raise ConfigError(msg) from error
    output = root / (config.output_storage.base_dir or "output")
    if output.is_symlink():
        return pin_output(config, output.resolve())
    if not output.exists() and (legacy := root / LEGACY_OUTPUT).is_dir():
        return pin_output(config, legacy)
    return config


LEGACY_OUTPUT = Path("versions") / "legacy"
"""Where a `graphrag index` output folder is kept once a version replaces it
(handlers/indexing/versions.py)."""


def served_output(root: Path) -> Path | None:
    """The folder a root serves: where `output` points (or `output` itself, a folder written by
    `graphrag index`); `versions/legacy` while no `output` exists beside it (a takeover killed
    between moving the folder aside and linking `output`); None for a root without an index."""
    output = root / "output"
    if output.exists():
        return output.resolve()
    legacy = root / LEGACY_OUTPUT
    return legacy if not output.is_symlink() and legacy.is_dir() else None


def pin_output(config: "GraphRagConfig", directory: Path) -> "GraphRagConfig":
    """The config reading and writing its tables in `directory` (and LanceDB too, when it lives
    under the output folder), so that a reader holds one version however `output` moves."""
    output = Path(config.output_storage.base_dir or "output")
    storage = config.output_storage.model_copy(update={"base_dir": str(directory)})
    vectors = config.vector_store
    db_uri = (
        Path(vectors.db_uri) if vectors.db_uri else None
    )  # graphrag made it absolute, through the link
    for place in (output.absolute(), output.resolve()):
        if db_uri is not None and db_uri.is_relative_to(place):
            vectors = vectors.model_copy(
                update={"db_uri": str(directory / db_uri.relative_to(place))}
            )
            break
    return config.model_copy(update={"output_storage": storage, "vector_store": vectors})


def is_offline(config: "GraphRagConfig") -> bool:
    """True when every model of the config is the offline model."""
    models = [*config.completion_models.values(), *config.embedding_models.values()]
    return all(model.type == OFFLINE_TYPE for model in models)
