"""The index's output tables, read once with graphrag's own DataReader, each checked on the way."""

import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.errors import IndexDamagedError, IndexNotFoundError

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_storage.storage import Storage
    from graphrag_storage.tables.table_provider import TableProvider

CITATION = re.compile(r"\[Data:([^\]]*)\]")
"""graphrag's citation block in reports and answers: [Data: Entities (3, 7); Sources (2)]."""
REQUIRED_TABLES = (
    "documents",
    "text_units",
    "entities",
    "relationships",
    "communities",
    "community_reports",
)
VECTOR_RECORD = "vectors.json"


@dataclass(frozen=True)
class IndexTables:
    """The DataFrames graphrag.api searches take, plus documents for naming sources.

    `vector_problems` names each embedding (LanceDB table) that is missing or unreadable, with
    the fix; the searches that need it refuse to run, the others serve.
    """

    documents: "pd.DataFrame"
    text_units: "pd.DataFrame"
    entities: "pd.DataFrame"
    relationships: "pd.DataFrame"
    communities: "pd.DataFrame"
    community_reports: "pd.DataFrame"
    covariates: "pd.DataFrame | None"
    vector_problems: dict[str, str] = field(default_factory=dict)
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Objects made from these tables once and kept with them (see handlers/prepared.py)."""


def _output_storage(config: "GraphRagConfig") -> "Storage":
    from graphrag_storage import create_storage

    return create_storage(config.output_storage)


def _table_provider(config: "GraphRagConfig", storage: "Storage") -> "TableProvider":
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    return create_table_provider(config.table_provider, storage=storage)


async def count_rows(config: "GraphRagConfig") -> dict[str, int]:
    """Rows of each required table (0 for a table not written); a parquet table's from its footer,
    not decoded (the six tables of a 10,000-document index are over a GiB as DataFrames)."""
    from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider

    storage = _output_storage(config)
    provider = _table_provider(config, storage)
    counts = {}
    for name in REQUIRED_TABLES:
        if not await provider.has(name):
            counts[name] = 0
        elif isinstance(provider, ParquetTableProvider):
            counts[name] = _parquet_rows(await storage.get(f"{name}.parquet", as_bytes=True))
        else:
            counts[name] = len(await provider.read_dataframe(name))
    return counts


def _parquet_rows(data: bytes) -> int:
    """The rows a parquet file's footer records."""
    import io

    import pyarrow.parquet as pq

    rows: int = pq.read_metadata(io.BytesIO(data)).num_rows
    return rows


def output_dir(config: "GraphRagConfig") -> Path:
    """Absolute directory of the index's parquet tables (file storage)."""
    return Path(config.output_storage.base_dir or "output").resolve()


def rebuild_hint(root: Path) -> str:
    """The command that writes a whole new version of the index."""
    return f"rebuild it with: graphrag-mcp index DATA_PATH --index-path {root} --full"


async def load_tables(config: "GraphRagConfig", root: Path) -> IndexTables:
    """Read every table the searches need; no table at all means there is no index, a missing or
    unreadable one that it is damaged (IndexDamagedError names the file and the fix)."""
    from graphrag.data_model.data_reader import DataReader
    from graphrag_storage import create_storage
    from graphrag_storage.tables.table_provider_factory import create_table_provider

    _check_output_link(config, root)
    no_index = (
        f"no index in {output_dir(config)}; build it with: graphrag-mcp index DATA_PATH "
        f"--index-path {root}"
    )
    if config.output_storage.type == "file" and not output_dir(config).is_dir():
        raise IndexNotFoundError(
            no_index
        )  # before graphrag's file storage creates the folder: reading writes nothing
    provider = create_table_provider(
        config.table_provider, storage=create_storage(config.output_storage)
    )
    present = [name for name in REQUIRED_TABLES if await provider.has(name)]
    if not present:
        raise IndexNotFoundError(no_index)
    if missing := [name for name in REQUIRED_TABLES if name not in present]:
        msg = (
            f"the index in {output_dir(config)} is damaged: {missing[0]}.parquet is missing"
            f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}; {rebuild_hint(root)}"
        )
        raise IndexDamagedError(msg)
    reader = DataReader(_mapped(provider, config))

    async def read(name: str, method: Callable[[], Awaitable[Any]]) -> Any:
        try:
            with _quiet(
                STORAGE_LOGGER
            ):  # it logs a whole traceback; the error below says it in one line
                return await method()
        except Exception as error:
            path = output_dir(config) / f"{name}.parquet"
            reason = " ".join(str(error).split())[:200]
            raise IndexDamagedError(
                f"cannot read {path} ({type(error).__name__}: {reason}); {rebuild_hint(root)}"
            ) from error

    return IndexTables(
        documents=await read("documents", reader.documents),
        text_units=await read("text_units", reader.text_units),
        entities=await read("entities", reader.entities),
        relationships=await read("relationships", reader.relationships),
        communities=await read("communities", reader.communities),
        community_reports=await read("community_reports", reader.community_reports),
        covariates=await read("covariates", reader.covariates)
        if await provider.has("covariates")
        else None,
        vector_problems=vector_problems(config, root),
    )


READ_OPTIONS = {"use_threads": False, "memory_map": True}
"""How a version's tables are read where they are files (they are sealed, never written in place,
and cut in many small row groups: parquet_pages.py): mapped, by one thread, whose decoding costs
less than pyarrow's threads spread over small groups. At 10,000 documents the stored extraction
rows read in 0.3 s of wall time against 0.6 s by pyarrow's defaults on a 2-core machine, the memo
table in 0.3 s against 0.4-0.7 s; a served version's tables load with less work than graphrag's
whole-file read."""


def _mapped(provider: "TableProvider", config: "GraphRagConfig") -> "TableProvider":
    """`provider`, its tables read by READ_OPTIONS where they are parquet files in a local folder:
    the same DataFrames (pandas' own parquet reader either way). A subclass registered by an
    indexing run (record_tables) reads the same files here: its tables held in memory live only
    inside that run, which loads no tables through load_tables."""
    from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider

    class MappedParquetTables(ParquetTableProvider):
        """graphrag's provider over `folder`, each table read by READ_OPTIONS."""

        async def read_dataframe(self, table_name: str) -> "pd.DataFrame":
            import pandas as pd

            path = folder / f"{table_name}.parquet"
            if not path.is_file():
                msg = f"Could not find {path.name} in storage!"  # graphrag's words
                raise ValueError(msg)
            return pd.read_parquet(path, **READ_OPTIONS)

    if not isinstance(provider, ParquetTableProvider) or config.output_storage.type != "file":
        return provider
    folder = output_dir(config)
    return MappedParquetTables(provider._storage)  # the same storage: only reads go another way


STORAGE_LOGGER = "graphrag_storage.tables.parquet_table_provider"


@contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Drop the records of logger `name` inside the block."""
    quiet = logging.getLogger(name)
    quiet.addFilter(_drop)
    try:
        yield
    finally:
        quiet.removeFilter(_drop)


def _drop(_: logging.LogRecord) -> bool:
    return False


def _check_output_link(config: "GraphRagConfig", root: Path) -> None:
    """A dangling `output` link (its version removed) is damage, not a missing index."""
    link = root / "output"
    if link.is_symlink() and not link.exists():
        msg = (
            f"the index's output link {link} points to {link.readlink()}, which does not exist; "
            f"{rebuild_hint(root)}"
        )
        raise IndexDamagedError(msg)


def expected_vector_tables(config: "GraphRagConfig") -> dict[str, str]:
    """embedding name -> LanceDB table name, for every embedding the config writes."""
    schema = config.vector_store.index_schema or {}
    return {
        name: schema[name].index_name if name in schema else name
        for name in config.embed_text.names
    }


def _lancedb_table_state(table: Path) -> list[list[Any]] | None:
    """What identifies a LanceDB table's current version on disk: its `_versions` entries (name,
    size, mtime)."""
    manifests = table / "_versions"
    if not manifests.is_dir():
        return None
    return sorted(
        [entry.name, (found := entry.stat()).st_size, found.st_mtime_ns]
        for entry in manifests.iterdir()
    )


def record_vector_tables(config: "GraphRagConfig") -> None:
    """Write each LanceDB table's rows and on-disk state into the version (`vectors.json`), so that
    readers of an unchanged store (`stats`) need not import LanceDB (~1.7 s) to count and check
    them."""
    if config.vector_store.type != "lancedb" or not config.vector_store.db_uri:
        return
    import lancedb

    uri = Path(config.vector_store.db_uri)
    db = lancedb.connect(str(uri))
    record = {}
    for name in db.list_tables().tables:
        table = db.open_table(name)
        record[name] = {
            "rows": table.count_rows(),
            "state": _lancedb_table_state(uri / f"{name}.lance"),
            "width": getattr(table.schema.field("vector").type, "list_size", 0),
        }
    (output_dir(config) / VECTOR_RECORD).write_text(json.dumps(record), encoding="utf-8")


def recorded_vector_rows(config: "GraphRagConfig") -> dict[str, int] | None:
    """Rows of each LanceDB table as recorded at build time, when every expected table is on disk as
    it was then; None otherwise (no record: an index built by graphrag; a table missing, replaced or
    changed)."""
    record = _unchanged_vector_record(config)
    return None if record is None else {name: entry["rows"] for name, entry in record.items()}


def recorded_vector_widths(config: "GraphRagConfig") -> dict[str, int] | None:
    """The vector width of each LanceDB table as recorded at build time, while the tables are as
    they were then (None also for a version recorded before widths were)."""
    record = _unchanged_vector_record(config)
    if record is None or any("width" not in entry for entry in record.values()):
        return None
    return {name: entry["width"] for name, entry in record.items()}


def _unchanged_vector_record(config: "GraphRagConfig") -> dict[str, dict[str, Any]] | None:
    """The version's vectors.json, when every expected table is on disk as it records."""
    if config.vector_store.type != "lancedb" or not config.vector_store.db_uri:
        return None
    try:
        text = (output_dir(config) / VECTOR_RECORD).read_text(encoding="utf-8")
        record: dict[str, dict[str, Any]] = json.loads(text)
    except (OSError, ValueError):
        return None
    uri = Path(config.vector_store.db_uri)
    if not set(expected_vector_tables(config).values()) <= set(record) or any(
        entry["state"] is None or _lancedb_table_state(uri / f"{name}.lance") != entry["state"]
        for name, entry in record.items()
    ):
        return None
    return record


def vector_problems(config: "GraphRagConfig", root: Path) -> dict[str, str]:
    """embedding name -> what is wrong with its LanceDB table, for each one missing or
    unreadable."""
    if config.vector_store.type != "lancedb" or not config.vector_store.db_uri:
        return {}
    if recorded_vector_rows(config) is not None:
        return {}
    import lancedb

    uri = Path(config.vector_store.db_uri)
    try:
        db = lancedb.connect(str(uri))
        present = set(db.list_tables().tables)
    except Exception as error:  # noqa: BLE001 - an unreadable store is reported for every embedding
        reason = (
            f"cannot open the vector store {uri} ({type(error).__name__}: {error}); "
            f"{rebuild_hint(root)}"
        )
        return dict.fromkeys(expected_vector_tables(config), reason)
    problems: dict[str, str] = {}
    for name, table in expected_vector_tables(config).items():
        path = uri / f"{table}.lance"
        if table not in present:
            problems[name] = f"vector table {path} is missing; {rebuild_hint(root)}"
            continue
        try:
            db.open_table(table).count_rows()
        except Exception as error:  # noqa: BLE001 - any failure to open it is damage to report
            problems[name] = (
                f"cannot read vector table {path} ({type(error).__name__}: {error}); "
                f"{rebuild_hint(root)}"
            )
    return problems
