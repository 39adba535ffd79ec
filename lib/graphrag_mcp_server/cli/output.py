"""What the commands print: index summaries, search contexts and statistics as readable text."""

import sys
from enum import StrEnum
from typing import Any

import typer


class OutputFormat(StrEnum):
    """Output of a command: readable text or one JSON object on stdout."""

    TEXT = "text"
    JSON = "json"


def print_summary(summary: Any, output_format: OutputFormat) -> None:
    """An index run's summary: one JSON object, or two lines, a third naming the workflows that ran
    (and a line on stderr per unread file)."""
    if output_format is OutputFormat.JSON:
        typer.echo(summary.model_dump_json())
        return
    typer.echo(
        f"Indexed ({summary.mode}) {summary.documents} documents into {summary.text_units} text "
        f"units: {summary.entities} entities, {summary.relationships} relationships, "
        f"{summary.communities} communities, {summary.community_reports} community reports.\n"
        f"Documents added {summary.documents_added}, updated {summary.documents_updated}, deleted "
        f"{summary.documents_deleted}, renamed {summary.documents_renamed}. "
        f"{skipped_line(summary.skipped)}LLM calls {summary.llm_calls}, prompt tokens "
        f"{summary.prompt_tokens}, completion tokens {summary.completion_tokens}, embedding calls "
        f"{summary.embedding_calls}, {summary.seconds:.1f} s."
    )
    if summary.workflows:
        typer.echo(f"Workflows: {', '.join(summary.workflows)}.")
    for path, reason in summary.unreadable.items():
        typer.echo(f"Not read: {path}: {reason}", err=True)


SKIPPED_WORDS = {
    "hidden": "hidden",
    "index_root": "in the index root",
    "link_outside": "links leaving the folder",
    "other_type": "of other types",
    "unreadable": "unreadable",
}


def skipped_line(skipped: dict[str, int]) -> str:
    """`Skipped 2 hidden, 1 unreadable. ` (nothing when nothing was skipped)."""
    if not skipped:
        return ""
    return (
        "Skipped "
        + ", ".join(
            f"{count} {SKIPPED_WORDS.get(reason, reason)}" for reason, count in skipped.items()
        )
        + ". "
    )


def render_context(context: Any) -> str:
    """A search context as readable text: reports, entities, relationships, passages, then what was
    left out."""
    lines = [f"# Context ({context.tokens} of {context.max_tokens} tokens)"]
    for report in context.reports:
        lines += [
            f"\n## Report {report.community}: {report.title} (rating {report.rating})",
            report.content,
            f"Documents: {', '.join(report.documents)}",
        ]
    if context.entities:
        lines.append("\n## Entities")
        lines += [
            f"- {entity.name} ({entity.type}): {entity.description} [{', '.join(entity.documents)}]"
            for entity in context.entities
        ]
    if context.relationships:
        lines.append("\n## Relationships")
        lines += [
            f"- {rel.source} -> {rel.target}: {rel.description} [{', '.join(rel.documents)}]"
            for rel in context.relationships
        ]
    for unit in context.text_units:
        lines += [f"\n## Passage from {unit.document}", unit.text]
    if context.omitted:
        left_out = ", ".join(f"{count} {kind}" for kind, count in context.omitted.items())
        lines.append(f"\nLeft out to stay within {context.max_tokens} tokens: {left_out}.")
    return "\n".join(lines)


def plain(value: Any) -> str:
    """A statistic as text: mappings as `key value, ...`, lists comma-separated, nothing as
    `none`."""
    if isinstance(value, dict):
        return ", ".join(f"{key} {plain(item)}" for key, item in value.items()) or "none"
    if isinstance(value, list):
        return ", ".join(map(plain, value)) or "none"
    return "none" if value is None else str(value)


async def print_piece(piece: str) -> None:
    """A piece of a streamed answer, on stdout at once."""
    sys.stdout.write(piece)
    sys.stdout.flush()
