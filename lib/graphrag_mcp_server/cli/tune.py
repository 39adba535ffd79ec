"""`graphrag-mcp tune`: graphrag's prompt tuning, written into the root's prompts/ once the user
agrees."""

import asyncio
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from graphrag_mcp_server.cli.common import (
    OFFLINE_NOTICE,
    FormatOption,
    fail,
    index_root,
    notice,
    user_errors,
)
from graphrag_mcp_server.cli.output import OutputFormat
from graphrag_mcp_server.handlers.indexing.tuning import DocSelectionType, TuneOptions


@user_errors
def tune(
    root: Annotated[
        Path | None,
        typer.Argument(
            help="Index root (default --index-path, GRAPHRAG_MCP_INDEX_PATH, ./graphrag_index)."
        ),
    ] = None,
    index_path: Annotated[
        Path | None, typer.Option("--index-path", "-i", help="Index root, as ROOT.")
    ] = None,
    data_path: Annotated[
        Path | None,
        typer.Option(
            "--data-path",
            help="Folder of the documents to tune from (default ROOT/input, a graphrag project's).",
        ),
    ] = None,
    domain: Annotated[
        str | None, typer.Option(help="The corpus's domain (default: the model names it).")
    ] = None,
    language: Annotated[
        str | None, typer.Option(help="Language of the prompts (default: detected).")
    ] = None,
    selection_method: Annotated[
        DocSelectionType, typer.Option(help="How text chunks are picked.")
    ] = (DocSelectionType.RANDOM),
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="Chunks to tune from (random, top; default 15, all when fewer)."),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option(min=200, help="Most tokens of the extraction prompt.")
    ] = 2000,
    discover_entity_types: Annotated[
        bool, typer.Option(help="Let the model name the entity types.")
    ] = True,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the tuned prompts into this folder instead of ROOT's prompts/.",
        ),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Overwrite the root's prompts without asking.")
    ] = False,
    output_format: FormatOption = OutputFormat.TEXT,
) -> None:
    """Tune the extraction, summary and report prompts to your corpus (graphrag's prompt tuning);
    the previous prompts are kept in prompts.bak-<time>/, and the next `index` computes again what
    depends on them."""
    from graphrag_mcp_server.config.index_root import is_offline
    from graphrag_mcp_server.handlers.indexing.tuning import (
        tune_prompts,
        tuning_config,
        write_prompts,
    )

    started = time.perf_counter()
    root = index_root(root or index_path)
    if not (root / "settings.yaml").is_file():
        fail(
            f"no settings.yaml in {root}: create the index root first (graphrag-mcp init "
            f"--index-path {root})"
        )
    if output is None and not yes and not sys.stdin.isatty():
        fail(
            "tune writes the root's prompts and there is no terminal to ask on: run it again "
            "with --yes (the current prompts are kept in prompts.bak-<time>/), or with --output "
            "DIR to write the tuned prompts elsewhere"
        )
    config = tuning_config(root, data_path.resolve() if data_path else None)
    if is_offline(config):
        notice(OFFLINE_NOTICE)
    options = TuneOptions(
        domain=domain,
        language=language,
        selection_method=selection_method,
        limit=limit,
        max_tokens=max_tokens,
        discover_entity_types=discover_entity_types,
    )
    result, tuned = asyncio.run(
        tune_prompts(config, root, options, on_stage=lambda stage: notice(f"  {stage}"))
    )
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        for path, text in tuned.items():
            (output / path.name).write_text(text, encoding="utf-8")
        notice(
            f"Wrote the tuned prompts to {output}; copy them into {root / 'prompts'} to index with "
            "them."
        )
    elif result.changed:
        if not yes:
            typer.confirm(
                f"Write the tuned {', '.join(result.changed)} (the current prompts are kept)?",
                abort=True,
                err=True,
            )
        result = write_prompts(root, tuned, result)
    result = result.model_copy(update={"seconds": round(time.perf_counter() - started, 3)})
    if output_format is OutputFormat.JSON:
        typer.echo(result.model_dump_json())
        return
    typer.echo(
        f"Changed: {', '.join(result.changed) or 'none'}. Unchanged: "
        f"{', '.join(result.unchanged) or 'none'}."
    )
    if result.written:
        kept = f"; the previous prompts are in {root / result.backup}" if result.backup else ""
        typer.echo(
            f"Wrote them{kept} (the next `graphrag-mcp index` computes again what depends on them)."
        )
    typer.echo(
        f"LLM calls {result.llm_calls}, prompt tokens {result.prompt_tokens}, completion tokens "
        f"{result.completion_tokens}, embedding calls {result.embedding_calls}, "
        f"{result.seconds:.1f} s."
    )
