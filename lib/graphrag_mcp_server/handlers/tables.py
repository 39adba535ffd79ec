"""The index's output tables, read once with graphrag's own DataReader."""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.errors import IndexNotFoundError

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig

REQUIRED_TABLES = ("documents", "text_units", "entities", "relationships", "communities", "community_reports")


@dataclass(frozen=True)
class IndexTables:
    """The DataFrames graphrag.api searches take, plus documents for naming sources."""

    documents: "pd.DataFrame"
    text_units: "pd.DataFrame"
    entities: "pd.DataFrame"
    relationships: "pd.DataFrame"
    communities: "pd.DataFrame"
    community_reports: "pd.DataFrame"
    covariates: "pd.DataFrame | None"


def output_dir(config: "GraphRagConfig") -> Path:
    """Absolute directory of the index's parquet tables (file storage)."""
    return Path(config.output_storage.base_dir or "output").resolve()


async def load_tables(config: "GraphRagConfig", root: Path) -> IndexTables:
    """Read every table the searches need; a missing table means there is no complete index."""
    from graphrag.data_model.data_reader import DataReader
    from graphrag_storage import create_storage
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    provider = create_table_provider(config.table_provider, storage=create_storage(config.output_storage))
    missing = [name for name in REQUIRED_TABLES if not await provider.has(name)]
    if missing:
        msg = (
            f"no complete index in {output_dir(config)} (missing: {', '.join(missing)}); "
            f"build it with: graphrag-mcp index DATA_PATH --index-path {root}"
        )
        raise IndexNotFoundError(msg)
    reader = DataReader(provider)
    return IndexTables(
        documents=await reader.documents(),
        text_units=await reader.text_units(),
        entities=await reader.entities(),
        relationships=await reader.relationships(),
        communities=await reader.communities(),
        community_reports=await reader.community_reports(),
        covariates=await reader.covariates() if await provider.has("covariates") else None,
    )
