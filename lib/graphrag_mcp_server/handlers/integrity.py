"""Whether a version of the index is whole: every community reported, every document cut into text
units, every record embedded once and no vector left for a removed record, vectors as wide as the
model's.

graphrag's extractors catch a failed model call, log it and return nothing, so a pipeline that
"succeeds" can still miss reports or extractions. The build checks a new version with `version_gaps`
before it is published (handlers/indexing/build.py), and `stats` / get_statistics list the same gaps
for the version served.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig

EMBEDDED_TABLES = {
    "text_unit_text": "text_units",
    "entity_description": "entities",
    "community_full_content": "community_reports",
}
"""graphrag's embeddings (graphrag.config.embeddings) and the table whose records each one's rows
stand for (graphrag's generate_text_embeddings.EMBEDDING_FIELDS); a vector row's id is its record's
id."""
CHECK_RECORD = "integrity.json"
"""A version's record of the check it passed at build time: its vector tables' ids then matched its
records."""
SHOWN = 5


@dataclass(frozen=True)
class Gap:
    """Something a version lacks: what, how many of how many, and which (the first few)."""

    what: str
    missing: int
    total: int
    which: list[str]

    def __str__(self) -> str:
        names = ", ".join(self.which[:SHOWN]) + (
            f" and {len(self.which) - SHOWN} more" if len(self.which) > SHOWN else ""
        )
        return f"{self.missing} of {self.total} {self.what}" + (f" ({names})" if names else "")


def table_gaps(
    documents: "pd.DataFrame",
    text_units: "pd.DataFrame",
    communities: "pd.DataFrame",
    reports: "pd.DataFrame",
) -> list[Gap]:
    """Communities without a report and documents with text but no text unit (`documents` read
    without their texts when each has a text unit: a tenth of a second at 10,000 documents)."""
    gaps = []
    reported = set(reports["community"].astype(int))
    unreported = sorted(
        int(number) for number in communities["community"] if int(number) not in reported
    )
    if unreported:
        gaps.append(
            Gap(
                "communities have no report",
                len(unreported),
                len(communities),
                [f"community {number}" for number in unreported],
            )
        )
    chunked = set(text_units["document_id"].astype(str))
    if "text" not in documents:  # read without texts: every document has a text unit
        return gaps
    with_text = documents[[bool(str(text or "").strip()) for text in documents["text"]]]
    unchunked = [
        str(title)
        for identity, title in zip(with_text["id"], with_text["title"], strict=True)
        if str(identity) not in chunked
    ]
    if unchunked:
        gaps.append(
            Gap("documents with text have no text unit", len(unchunked), len(with_text), unchunked)
        )
    return gaps


def vector_gaps(
    config: "GraphRagConfig", records: dict[str, "pd.Series"], vector_ids: dict[str, set[str]]
) -> list[Gap]:
    """Records without their vector row and vector rows whose record is gone, per embedding:
    `records` holds each embedded table's ids by table name, `vector_ids` each embedding's ids as
    its LanceDB table holds them."""
    gaps = []
    for name, table in _embedded(config).items():
        if name not in vector_ids or table not in records:
            continue
        held, ids = vector_ids[name], set(records[table].astype(str))
        if missing := sorted(ids - held):
            gaps.append(
                Gap(
                    f"{table.replace('_', ' ')} have no vector in {name}",
                    len(missing),
                    len(ids),
                    missing,
                )
            )
        if extra := sorted(held - ids):
            gaps.append(
                Gap(
                    f"vector rows of {name} belong to no record of {table}",
                    len(extra),
                    len(held),
                    extra,
                )
            )
    return gaps


def width_gap(config: "GraphRagConfig", widths: dict[str, int]) -> str | None:
    """The vector tables' width when it differs from the vector size the settings give the embedding
    model."""
    expected = config.vector_store.vector_size
    found = sorted({width for width in widths.values() if width != expected})
    if not found:
        return None
    model = config.get_embedding_model_config(config.embed_text.embedding_model_id)
    return (
        f"the vector tables hold vectors of {', '.join(map(str, found))} numbers, while "
        f"settings.yaml gives the embedding model {model.model_provider}/{model.model} "
        f"vectors of {expected}"
    )


def _embedded(config: "GraphRagConfig") -> dict[str, str]:
    """embedding name -> LanceDB table name -> source table, for the embeddings this config
    writes."""
    schema = config.vector_store.index_schema or {}
    return {
        schema[name].index_name if name in schema else name: EMBEDDED_TABLES[name]
        for name in config.embed_text.names
        if name in EMBEDDED_TABLES
    }


def lancedb_ids_and_widths(db_uri: str) -> tuple[dict[str, set[str]], dict[str, int]]:
    """Each LanceDB table's ids (the id column alone is read) and vector width."""
    import lancedb

    db = lancedb.connect(db_uri)
    ids: dict[str, set[str]] = {}
    widths: dict[str, int] = {}
    for name in db.list_tables().tables:
        table = db.open_table(name)
        ids[name] = set(table.search().select(["id"]).limit(None).to_arrow()["id"].to_pylist())
        vector = table.schema.field("vector").type
        widths[name] = getattr(vector, "list_size", 0)
    return ids, widths


def version_gaps(
    config: "GraphRagConfig", directory: Path, failed_units: set[str] | None = None
) -> list[Gap]:
    """The gaps of the version whose tables are in `directory` (config pinned to it), reading only
    the columns the check needs and, for LanceDB, each table's ids; `failed_units`: text units whose
    extraction failed."""
    import pandas as pd

    def read(name: str, columns: list[str]) -> "pd.DataFrame":
        return pd.read_parquet(directory / f"{name}.parquet", columns=columns)

    documents, text_units = (
        read("documents", ["id", "title"]),
        read("text_units", ["id", "document_id"]),
    )
    if not _all_in(documents["id"], text_units["document_id"]):
        documents = read("documents", ["id", "title", "text"])  # which have text: read if needed
    communities, reports = (
        read("communities", ["community"]),
        read("community_reports", ["community", "id"]),
    )
    gaps = table_gaps(documents, text_units, communities, reports)
    if failed_units:
        titles = dict(zip(documents["id"].astype(str), documents["title"].astype(str), strict=True))
        failed = text_units[text_units["id"].astype(str).isin(failed_units)]
        gaps.append(
            Gap(
                "text units could not be extracted",
                len(failed_units),
                len(text_units),
                sorted(
                    {titles.get(str(document), str(document)) for document in failed["document_id"]}
                ),
            )
        )
    if config.vector_store.type == "lancedb" and config.vector_store.db_uri:
        ids, _ = lancedb_ids_and_widths(config.vector_store.db_uri)
        records = {
            "text_units": text_units["id"],
            "entities": read("entities", ["id"])["id"],
            "community_reports": reports["id"],
        }
        gaps += vector_gaps(config, records, ids)
    return gaps


def _all_in(values: "pd.Series", among: "pd.Series") -> bool:
    """Whether every one of `values` is among `among`, compared as strings by Arrow (pandas' isin
    on Arrow strings walks them in Python: 0.08 s for 10,000 documents)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    strings = [pa.array(series.astype(str)).cast(pa.large_string()) for series in (values, among)]
    return bool(pc.all(pc.is_in(strings[0], value_set=strings[1])).as_py())


def record_check(directory: Path) -> None:
    """Note in the version that it passed the check (stats then trusts its vector tables while
    unchanged)."""
    (directory / CHECK_RECORD).write_text(json.dumps({"gaps": []}), encoding="utf-8")


def passed_check(directory: Path) -> bool:
    """True when the version recorded a passed check at build time."""
    return (directory / CHECK_RECORD).is_file()
