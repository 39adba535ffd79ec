"""The version an update starts from: where it lies, and its graph tables, each read once.

An update's workflows each take something from the previous version: its partition
(stable_communities.py), the ids of its entities, relationships (stable_ids.py) and text units
(kept_text_units.py), its vector rows and LanceDB folder (vector_delta.py) and its memos
(carry_over.py). kept.py `kept_from` makes one `PreviousVersion` and hands it to each, so a table
several of them read is read once, by the columns any of them needs, and only when one of them
asks."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.tables import READ_OPTIONS

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig

COLUMNS = {
    "entities": ["id", "human_readable_id", "title"],
    "relationships": ["id", "human_readable_id", "source", "target", "weight"],
}
"""The columns of each graph table that an update's steps read from the previous version."""


@dataclass
class PreviousVersion:
    """A published version (`path`, a folder of graphrag's output tables) and its LanceDB folder
    (`db`; None when the vector store is shared by every version, or not LanceDB)."""

    path: Path
    db: Path | None = None
    _tables: dict[str, "pd.DataFrame"] = field(default_factory=dict, repr=False)

    @classmethod
    def of(
        cls, path: Path | None, config: "GraphRagConfig", version: Path
    ) -> "PreviousVersion | None":
        """The version in `path` (None: a full build, with nothing to keep), its LanceDB folder
        placed as `config`'s is in the new `version`."""
        if path is None:
            return None
        db_uri = (
            Path(config.vector_store.db_uri)
            if config.vector_store.type == "lancedb" and config.vector_store.db_uri
            else None
        )
        in_version = db_uri is not None and db_uri.is_relative_to(version)
        return cls(path, path / db_uri.relative_to(version) if in_version and db_uri else None)

    def table(self, name: str) -> "pd.DataFrame":
        """Output table `name` (a graph table) by COLUMNS, read on first use, those of them the
        table has, as Arrow-backed columns (its readers take them on as Arrow arrays: as Python
        strings, 200,000 relationships' ends cost 0.3 s of a 10,000-document update); raises
        OSError, ValueError or KeyError when the version cannot give it."""
        import pandas as pd
        import pyarrow.parquet as pq

        if name not in self._tables:
            path = self.path / f"{name}.parquet"
            held = set(pq.read_schema(path).names)
            read = [column for column in COLUMNS[name] if column in held]
            table = pq.read_table(path, columns=read, **READ_OPTIONS)
            self._tables[name] = table.to_pandas(types_mapper=pd.ArrowDtype)
        return self._tables[name]
