"""Entities and relationships keep their ids and numbers across updates.

graphrag's finalize step gives every entity and relationship a new uuid and numbers them in
stream order (`human_readable_id`), so an edit early in the corpus renumbers every later record:
the report contexts and the reports citing them change text, and so do their embeddings, although
nothing they say changed. During an incremental run (this module's workflow,
`finalize_graph_kept`, in place of graphrag's `finalize_graph`) an entity keeps the id and number
it had in the previous version (by title), a relationship those of its (source, target) pair; a
new one gets a new uuid and the next free number. A first build and `index --full` keep none and
number as graphrag does (tests/test_stable_ids_unit.py), by columns: graphrag's finalize_graph
streams every row through a dict, which raised a 10,000-document cold build's peak RSS from 1,877 to
2,076 MiB."""

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import SAMPLE_ROWS, run_state, sample
from graphrag_mcp_server.handlers.indexing.record_tables import RecordParquetTableProvider

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

logger = logging.getLogger(__name__)


@dataclass
class Identities:
    """A previous version's entities (id, human_readable_id, title) and relationships (id,
    human_readable_id, source, target) whose ids and numbers a run keeps; None: none kept, every
    record numbered afresh from 0 in row order, as graphrag numbers them."""

    entities: "pd.DataFrame | None" = None
    relationships: "pd.DataFrame | None" = None


STATE = "stable_ids"
"""The key of a run's kept identities in the state graphrag hands its workflows."""
WORKFLOW, REPLACES = "finalize_graph_kept", "finalize_graph"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""
ENTITY_KEYS, RELATIONSHIP_KEYS = ["title"], ["source", "target"]
"""The columns that name an entity and a relationship across versions."""
MERGED_COLUMNS = {
    "entities": ["title", "type", "description", "text_unit_ids", "frequency"],
    "relationships": ["source", "target", "description", "weight", "text_unit_ids"],
}
"""The columns of extract_graph's tables that the finalized tables keep."""


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's finalize_graph workflow (degrees, ids, numbers), its entities and relationships
    keeping the ids and numbers of the previous version; numbered as graphrag numbers them when the
    run keeps none."""
    from graphrag.index.operations.snapshot_graphml import snapshot_graphml
    from graphrag.index.typing.workflow import WorkflowFunctionOutput

    tables = context.output_table_provider
    result = await finalized(tables, run_state(context, STATE) or fresh_identities())
    if config.snapshots.graphml:
        await snapshot_graphml(
            await tables.read_dataframe("relationships"),
            name="graph",
            storage=context.output_storage,
        )
    return WorkflowFunctionOutput(result=result)


async def finalized(tables: Any, identities: Identities) -> dict[str, list[dict[str, Any]]]:
    """graphrag's `finalize_graph` operation by whole columns: degrees over the undirected,
    deduplicated edges; entities deduplicated by title and relationships by (source, target),
    first kept; each with the kept id and number (`identities`); graphrag's final columns.
    graphrag streams every row through a dict (about 10% of an update at 3,000 documents);
    tests/test_stable_ids_unit.py checks the tables equal graphrag's."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from graphrag.data_model.schemas import ENTITIES_FINAL_COLUMNS, RELATIONSHIPS_FINAL_COLUMNS

    entities = await _read_merged(tables, "entities")
    relationships = await _read_merged(tables, "relationships")
    titled = pc.fill_null(pc.not_equal(entities["title"], ""), False)
    if not pc.all(titled).as_py():
        entities = entities.filter(titled)
    codes = _Codes(
        [relationships["source"], relationships["target"], entities["title"]]
        + _previous_keys(identities)
    )
    sources, targets, titles = codes.of(0), codes.of(1), codes.of(2)
    degree = _degrees(sources, targets, codes.count)
    first_titles = _first_rows(titles)
    entities = _taken(entities, first_titles)
    entities = entities.append_column("degree", pa.array(degree[titles[first_titles]]))
    pairs = sources * codes.count + targets
    first_pairs = _first_rows(pairs)
    relationships = _taken(relationships, first_pairs)
    combined = degree[sources[first_pairs]] + degree[targets[first_pairs]]
    relationships = relationships.append_column("combined_degree", pa.array(combined))
    entities = _identified(entities, titles[first_titles], identities.entities, codes, [3])
    relationships = _identified(
        relationships, pairs[first_pairs], identities.relationships, codes, [4, 5]
    )
    final = {
        "entities": entities.select(ENTITIES_FINAL_COLUMNS),
        "relationships": relationships.select(RELATIONSHIPS_FINAL_COLUMNS),
    }
    for name, table in final.items():
        if isinstance(tables, RecordParquetTableProvider):  # no round trip through pandas
            await tables.write_arrow(name, table)
        else:
            await tables.write_dataframe(name, table.to_pandas())
    return {name: sample(table.slice(0, SAMPLE_ROWS).to_pandas()) for name, table in final.items()}


def _taken(table: "pa.Table", rows: "np.ndarray") -> "pa.Table":
    """The rows of `table` at `rows` (all of them, in order, without a copy)."""
    import pyarrow as pa

    return table if len(rows) == table.num_rows else table.take(pa.array(rows))


async def _read_merged(tables: Any, name: str) -> "pa.Table":
    """extract_graph's table `name`, the columns finalized keeps, as Arrow: read as Arrow where
    the provider can (record_tables.py; kept_summaries.described writes Arrow-backed columns),
    else from its frame; without pandas' metadata (the final frames are made from Arrow's
    types)."""
    import pyarrow as pa

    columns = MERGED_COLUMNS[name]
    read_columns = getattr(tables, "read_columns", None)
    if read_columns is not None:
        table: pa.Table = await read_columns(name, columns)
    else:
        frame = await tables.read_dataframe(name)
        table = pa.Table.from_pandas(frame[columns], preserve_index=False)
    return table.replace_schema_metadata(None)  # its frame's dtypes are not the final ones


class _Codes:
    """Strings of several columns numbered by one dictionary (equal strings, equal codes), so
    that titles and pairs of titles are matched as integers."""

    def __init__(self, columns: "list[pa.ChunkedArray | pa.Array]") -> None:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        chunks = [
            chunk.cast(pa.large_string())
            for column in columns
            for chunk in (column.chunks if isinstance(column, pa.ChunkedArray) else [column])
        ]
        joined = pa.chunked_array(chunks, pa.large_string())
        encoded = pc.dictionary_encode(joined, null_encoding="encode").combine_chunks()
        self.count = max(len(encoded.dictionary), 1)
        indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        bounds = np.cumsum([0] + [len(column) for column in columns])
        self.columns = [
            indices[start:end] for start, end in zip(bounds[:-1], bounds[1:], strict=True)
        ]

    def of(self, column: int) -> "np.ndarray":
        """The codes of the strings of the column at `column`."""
        codes: np.ndarray = self.columns[column]
        return codes


def _previous_keys(identities: Identities) -> "list[pa.Array]":
    """The previous version's titles and pairs (columns 3, 4 and 5 of `_Codes`): empty when it
    keeps none."""
    import pyarrow as pa

    def column(frame: "pd.DataFrame | None", name: str) -> "pa.Array":
        if frame is None:
            return pa.array([], pa.large_string())
        return pa.array(frame[name], pa.large_string())

    return [
        column(identities.entities, "title"),
        column(identities.relationships, "source"),
        column(identities.relationships, "target"),
    ]


def _degrees(sources: "np.ndarray", targets: "np.ndarray", count: int) -> "np.ndarray":
    """graphrag's degree of each code: its count of distinct undirected edges (a loop counted
    at both ends)."""
    import numpy as np
    import pandas as pd

    pairs = pd.unique(np.minimum(sources, targets) * count + np.maximum(sources, targets))
    degree: np.ndarray = np.bincount(pairs // count, minlength=count) + np.bincount(
        pairs % count, minlength=count
    )
    return degree.astype(np.int64)


def _first_rows(keys: "np.ndarray") -> "np.ndarray":
    """The rows holding the first of each key, in row order (pandas' drop_duplicates)."""
    import numpy as np
    import pandas as pd

    first: np.ndarray = np.flatnonzero(~pd.Series(keys).duplicated().to_numpy())
    return first


def _identified(
    table: "pa.Table",
    keys: "np.ndarray",
    previous: "pd.DataFrame | None",
    codes: _Codes,
    columns: list[int],
) -> "pa.Table":
    """`table` with each row's id and number: those its key (`keys`: a title's code, or a pair's
    code) had in `previous` (its keys in `codes`' `columns`), else a new uuid and the next number
    after the previous version's highest, in row order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = table.num_rows
    at = np.full(rows, -1, dtype=np.int64)
    ids, numbers, start = pa.nulls(rows, pa.large_string()), np.zeros(rows, dtype=np.int64), 0
    if previous is not None and len(previous):
        before = codes.of(columns[0])
        if len(columns) == 2:
            before = before * codes.count + codes.of(columns[1])
        found = pc.index_in(pa.array(keys), value_set=pa.array(before))
        at = pc.fill_null(found, -1).to_numpy()
        kept = pa.array(at, mask=at < 0)
        ids = pa.array(previous["id"], pa.large_string()).take(kept)
        stored = previous["human_readable_id"].astype(int).to_numpy()
        numbers = np.where(at >= 0, stored[np.maximum(at, 0)], 0)
        start = int(stored.max()) + 1
    new = at < 0
    numbers[new] = np.arange(start, start + int(new.sum()))
    fresh = pa.array([str(uuid.uuid4()) for _ in range(int(new.sum()))], pa.large_string())
    ids = pc.replace_with_mask(ids, pa.array(new), fresh)
    return table.append_column("id", ids).append_column(
        "human_readable_id", pa.array(numbers, pa.int64())
    )


def fresh_identities() -> Identities:
    """No identities to keep: new uuids, numbers from 0 in row order (graphrag's)."""
    return Identities()


def identities_kept(previous: "PreviousVersion | None") -> "Identities | None":
    """The identities of the `previous` version for this run's finalize step to keep (None: it
    numbers afresh, as a rebuild)."""
    return _read(previous) if previous is not None else None


def _read(version: "PreviousVersion") -> Identities | None:
    try:
        entities = version.table("entities")
        relationships = version.table("relationships")
    except (OSError, ValueError, KeyError) as error:
        logger.info("no previous identities to keep (%s): numbering afresh", error)
        return None
    return Identities(
        entities[["id", "human_readable_id", *ENTITY_KEYS]],
        relationships[["id", "human_readable_id", *RELATIONSHIP_KEYS]],
    )
