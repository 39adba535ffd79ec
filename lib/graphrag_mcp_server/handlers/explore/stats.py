"""Index statistics, read from the parquet tables and the LanceDB vector store."""

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers import built_with
from graphrag_mcp_server.handlers.integrity import (
    Gap,
    lancedb_ids_and_widths,
    passed_check,
    table_gaps,
    vector_gaps,
    width_gap,
)
from graphrag_mcp_server.handlers.results import (
    IndexIssue,
    IndexStatistics,
    ModelNames,
    VectorStoreInfo,
    VersionStatistics,
)
from graphrag_mcp_server.handlers.tables import (
    IndexTables,
    output_dir,
    recorded_vector_rows,
    recorded_vector_widths,
)

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig


def vector_tables(config: "GraphRagConfig") -> dict[str, int]:
    """Rows of each table in the LanceDB vector store (empty for other stores)."""
    if config.vector_store.type != "lancedb" or not config.vector_store.db_uri:
        return {}
    if (recorded := recorded_vector_rows(config)) is not None:
        return recorded
    import lancedb

    try:
        db = lancedb.connect(config.vector_store.db_uri)
        names = db.list_tables().tables
    except Exception:  # noqa: BLE001 - an unreadable store is an issue of its own (index_issues)
        return {}
    counts: dict[str, int] = {}
    for name in names:
        try:
            counts[name] = db.open_table(name).count_rows()
        except Exception:  # noqa: BLE001 - reported by index_issues
            continue
    return counts


def _updated_at(config: "GraphRagConfig") -> datetime | None:
    stats_file = output_dir(config) / "stats.json"
    return datetime.fromtimestamp(stats_file.stat().st_mtime, UTC) if stats_file.exists() else None


def statistics(config: "GraphRagConfig", tables: IndexTables) -> IndexStatistics:
    """Counts, community levels, update time, models and vector tables of a loaded index."""
    return IndexStatistics(
        documents=len(tables.documents),
        text_units=len(tables.text_units),
        entities=len(tables.entities),
        relationships=len(tables.relationships),
        communities=len(tables.communities),
        community_reports=len(tables.community_reports),
        community_levels=int(tables.communities["level"].nunique()),
        covariates=0 if tables.covariates is None else len(tables.covariates),
        index_updated_at=_updated_at(config),
        models=_models_built_with(config),
        vector_store=VectorStoreInfo(
            type=str(config.vector_store.type), tables=vector_tables(config)
        ),
        issues=index_issues(config, tables),
    )


def version_statistics(config: "GraphRagConfig", tables: IndexTables) -> VersionStatistics:
    """`statistics` plus the workflows that built the served version and their seconds."""
    return VersionStatistics(**dict(statistics(config, tables)), workflows=_workflows(config))


def _workflows(config: "GraphRagConfig") -> dict[str, float]:
    """The workflows that built the served version and their seconds, from graphrag's stats.json."""
    stats_file = output_dir(config) / "stats.json"
    try:
        timed = json.loads(stats_file.read_text(encoding="utf-8")).get("workflows", {})
    except (OSError, ValueError):
        return {}
    return {name: round(float(metrics.get("overall", 0.0)), 3) for name, metrics in timed.items()}


def _models_built_with(config: "GraphRagConfig") -> ModelNames:
    """The models the served version was built with (as recorded; settings.yaml's for an index
    without a record)."""
    recorded = built_with.recorded(output_dir(config))
    if recorded is None:
        return ModelNames(
            completion=[f"{m.model_provider}/{m.model}" for m in config.completion_models.values()],
            embedding=[f"{m.model_provider}/{m.model}" for m in config.embedding_models.values()],
        )
    return ModelNames(
        completion=sorted(set(recorded.completion.values())), embedding=[recorded.embedding]
    )


REPAIR = "run graphrag-mcp index DATA_PATH: the next run computes only what is missing"


def index_issues(config: "GraphRagConfig", tables: IndexTables) -> list[IndexIssue]:
    """Damaged vector tables, gaps (communities without a report, documents without text units,
    records without their vector row and the reverse, vectors of another width than settings.yaml's)
    and settings.yaml changed since the build (errors); entities no community holds, and empty or
    duplicate community reports (warnings)."""
    issues = [
        IndexIssue(severity="error", message=problem)
        for problem in dict.fromkeys(tables.vector_problems.values())
    ]
    issues += [
        IndexIssue(severity="error", message=f"{gap}; {REPAIR}") for gap in _gaps(config, tables)
    ]
    if found := width_gap(config, _vector_widths(config)):
        issues.append(
            IndexIssue(
                severity="error",
                message=(
                    f"{found}: searches cannot embed a query for these tables; rebuild with: "
                    "graphrag-mcp index DATA_PATH (it embeds everything again), or set "
                    "vector_size in settings.yaml to the model's width"
                ),
            )
        )
    if (before := built_with.recorded(output_dir(config))) is not None:
        issues += [
            IndexIssue(
                severity="warning",
                message=(
                    "settings.yaml differs from what the served version was built with: "
                    f"{change}; run graphrag-mcp index DATA_PATH to apply it"
                ),
            )
            for change in built_with.changes(before, built_with.built_with(config))
        ]
    in_communities = {entity for ids in tables.communities["entity_ids"] for entity in ids}
    if orphans := int((~tables.entities["id"].isin(in_communities)).sum()):
        fix = (
            (
                "set cluster_graph.use_lcc: false in settings.yaml (it clusters only the largest "
                "connected component) and rebuild"
            )
            if config.cluster_graph.use_lcc
            else "rebuild"
        )
        issues.append(
            IndexIssue(
                severity="warning",
                message=(
                    f"{orphans} of {len(tables.entities)} entities belong to no community, so "
                    f"local, global and drift search never see them; {fix} with: graphrag-mcp "
                    "index DATA_PATH --full (every entity gets a community)"
                ),
            )
        )
    return issues + _report_issues(tables)


def _gaps(config: "GraphRagConfig", tables: IndexTables) -> list[Gap]:
    """What the served version lacks: reports, text units, and vector rows (read from LanceDB unless
    the version passed the same check at build time and its tables are unchanged since)."""
    gaps = table_gaps(
        tables.documents, tables.text_units, tables.communities, tables.community_reports
    )
    if tables.vector_problems or not _is_lancedb(config) or _trusted_vectors(config):
        return gaps
    ids, _ = lancedb_ids_and_widths(config.vector_store.db_uri)
    records = {
        "text_units": tables.text_units["id"],
        "entities": tables.entities["id"],
        "community_reports": tables.community_reports["id"],
    }
    return gaps + vector_gaps(config, records, ids)


def _is_lancedb(config: "GraphRagConfig") -> bool:
    return config.vector_store.type == "lancedb" and bool(config.vector_store.db_uri)


def _trusted_vectors(config: "GraphRagConfig") -> bool:
    return passed_check(output_dir(config)) and recorded_vector_rows(config) is not None


def _vector_widths(config: "GraphRagConfig") -> dict[str, int]:
    """Each vector table's width: as recorded while the tables are unchanged, else read from
    LanceDB."""
    if not _is_lancedb(config):
        return {}
    if (recorded := recorded_vector_widths(config)) is not None:
        return recorded
    try:
        return lancedb_ids_and_widths(config.vector_store.db_uri)[1]
    except Exception:  # noqa: BLE001 - an unreadable store is an issue of its own (vector_problems)
        return {}


def _report_issues(tables: IndexTables) -> list[IndexIssue]:
    """Reports with no findings (written from an empty context) and reports whose text another
    community's report repeats, each named by its community."""
    reports = tables.community_reports
    issues = []
    empty = reports[[findings is None or len(findings) == 0 for findings in reports["findings"]]]
    if len(empty):
        issues.append(
            IndexIssue(
                severity="warning",
                message=(
                    f"{len(empty)} community reports have no findings (communities "
                    f"{_listed(empty['community'])}): they were written from an empty "
                    "context; rebuild them with: graphrag-mcp index DATA_PATH --full"
                ),
            )
        )
    repeated = reports[reports.duplicated("full_content", keep=False)]
    if len(repeated):
        issues.append(
            IndexIssue(
                severity="warning",
                message=(
                    f"{len(repeated)} community reports repeat another's text word for word "
                    f"(communities {_listed(repeated['community'])}): a report says nothing "
                    "of its own community; rebuild them with: graphrag-mcp index DATA_PATH "
                    "--full"
                ),
            )
        )
    return issues


def _listed(communities: "pd.Series", shown: int = 10) -> str:
    numbers = [str(number) for number in communities.head(shown)]
    return ", ".join(numbers) + (
        f" and {len(communities) - shown} more" if len(communities) > shown else ""
    )
