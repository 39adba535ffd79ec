"""Index statistics, read from the parquet tables and the LanceDB vector store."""

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.results import IndexIssue, IndexStatistics, ModelNames, VectorStoreInfo
from graphrag_mcp_server.handlers.tables import IndexTables, output_dir, recorded_vector_rows

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
        except Exception:  # noqa: BLE001, S112 - reported by index_issues
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
        models=ModelNames(
            completion=[f"{m.model_provider}/{m.model}" for m in config.completion_models.values()],
            embedding=[f"{m.model_provider}/{m.model}" for m in config.embedding_models.values()],
        ),
        vector_store=VectorStoreInfo(type=str(config.vector_store.type), tables=vector_tables(config)),
        issues=index_issues(config, tables),
    )


def index_issues(config: "GraphRagConfig", tables: IndexTables) -> list[IndexIssue]:
    """Damaged vector tables (errors), entities no community holds, and empty or duplicate community reports
    (warnings)."""
    issues = [IndexIssue(severity="error", message=problem) for problem in dict.fromkeys(tables.vector_problems.values())]
    in_communities = {entity for ids in tables.communities["entity_ids"] for entity in ids}
    if orphans := int((~tables.entities["id"].isin(in_communities)).sum()):
        fix = ("set cluster_graph.use_lcc: false in settings.yaml (it clusters only the largest connected "
               "component) and rebuild" if config.cluster_graph.use_lcc else "rebuild")
        issues.append(IndexIssue(severity="warning", message=(
            f"{orphans} of {len(tables.entities)} entities belong to no community, so local, global and drift search "
            f"never see them; {fix} with: graphrag-mcp index DATA_PATH --full (every entity gets a community)")))
    return issues + _report_issues(tables)


def _report_issues(tables: IndexTables) -> list[IndexIssue]:
    """Reports with no findings (written from an empty context) and reports whose text another community's
    report repeats, each named by its community."""
    reports = tables.community_reports
    issues = []
    empty = reports[[findings is None or len(findings) == 0 for findings in reports["findings"]]]
    if len(empty):
        issues.append(IndexIssue(severity="warning", message=(
            f"{len(empty)} community reports have no findings (communities {_listed(empty['community'])}): "
            "they were written from an empty context; rebuild them with: graphrag-mcp index DATA_PATH --full")))
    repeated = reports[reports.duplicated("full_content", keep=False)]
    if len(repeated):
        issues.append(IndexIssue(severity="warning", message=(
            f"{len(repeated)} community reports repeat another's text word for word (communities "
            f"{_listed(repeated['community'])}): a report says nothing of its own community; rebuild them with: "
            "graphrag-mcp index DATA_PATH --full")))
    return issues


def _listed(communities: "pd.Series", shown: int = 10) -> str:
    numbers = [str(number) for number in communities.head(shown)]
    return ", ".join(numbers) + (f" and {len(communities) - shown} more" if len(communities) > shown else "")
