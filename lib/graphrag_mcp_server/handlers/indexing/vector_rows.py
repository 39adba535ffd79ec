"""The rows of a vector table as Arrow columns: each row's id and embedded text, and the digest
(`input_hash`) of that text that a version records (`vector_rows.parquet`) for the next update to
compare against.

An update's tables differ from the previous version's in a few rows. A row's digest is computed
only where its text may have changed: a row whose text equals the previous version's (joined on
id) carries the digest that version recorded (hashing every text was a fifth of a second of a
one-document update at 10,000 documents). Texts are the ones graphrag's embedding step reads
through pandas: a null is pandas' null value (`_null`), and the entity transformer's text is
`f"{title}:{description}"`, each part `or ""`."""

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import input_hash
from graphrag_mcp_server.handlers.indexing.parquet_pages import write_table
from graphrag_mcp_server.handlers.tables import READ_OPTIONS

if TYPE_CHECKING:
    import pyarrow as pa

ROWS = "vector_rows.parquet"
ID, TEXT = "id", "text"
"""The columns of a table's rows (and of its recorded rows: TEXT holds the digest there)."""
Rows = dict[str, "pa.Table"]
"""Each vector table's rows (ID, TEXT: the text's digest), by table name."""


async def embedded_rows(tables: Any, field: Any) -> "pa.Table":
    """The id and embedded text (TEXT: null where graphrag's step reads pandas' null) of each row
    of `field`'s table, read by those columns only, as Arrow. Any transformer but graphrag's
    entity transformer is handed whole rows."""
    from graphrag.data_model.row_transformers import transform_entity_row_for_embedding

    transform = field.row_transform
    if transform is not None and transform is not transform_entity_row_for_embedding:
        table = tables.open(field.table_name, truncate=False, transformer=transform)
        async with table:
            return _from_rows([row async for row in table], field.embed_column)
    columns = [ID, field.embed_column] if transform is None else [ID, "title", "description"]
    read = getattr(tables, "read_columns", None)
    if read is None:
        frame = await tables.read_dataframe(field.table_name)
        return _texts(_arrow(frame[columns]), field)
    return _texts(await read(field.table_name, columns), field)


def previous_rows(version: Path | None, field: Any) -> "pa.Table | None":
    """`field`'s rows as the version in `version` holds them (`embedded_rows`), read as a sealed
    version's table is (READ_OPTIONS); None when there is no version, another transformer, or a
    table it cannot give."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from graphrag.data_model.row_transformers import transform_entity_row_for_embedding

    transform = field.row_transform
    if version is None or transform not in (None, transform_entity_row_for_embedding):
        return None
    columns = [ID, field.embed_column] if transform is None else [ID, "title", "description"]
    try:
        return _texts(
            pq.read_table(version / f"{field.table_name}.parquet", columns=columns, **READ_OPTIONS),
            field,
        )
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None


def digests(
    rows: "pa.Table", previous: "pa.Table | None", recorded: "pa.Table | None"
) -> "pa.Table":
    """Each row's id and text digest: the `recorded` digest of the `previous` row of the same id
    and text, else `input_hash` of its text (as embed_by_delta embeds it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from graphrag_mcp_server.handlers.indexing.slices import taken

    ids = rows[ID].combine_chunks()
    carried = pa.nulls(rows.num_rows, pa.large_string())
    if previous is not None and recorded is not None and previous.num_rows:
        at = pc.index_in(ids, previous[ID])
        found = at.is_valid()
        # the previous texts as slices where in the same order: no copy of every text
        was = taken(previous[TEXT], pc.fill_null(at, 0).to_numpy())
        same = pc.and_(found, pc.fill_null(pc.equal(rows[TEXT], was), False))
        digest = recorded[TEXT].combine_chunks().take(pc.index_in(ids, recorded[ID]))
        if isinstance(same, pa.ChunkedArray):  # a mask of one piece: its booleans are few bytes
            same = same.combine_chunks()
        carried = pc.if_else(same, digest, carried)
    fresh = pc.is_null(carried)
    if pc.any(fresh).as_py():
        hashed = [input_hash(text) for text in texts(rows.filter(fresh))]
        carried = pc.replace_with_mask(carried, fresh, pa.array(hashed, pa.large_string()))
    return pa.table({ID: ids, TEXT: carried})


def texts(rows: "pa.Table") -> list[Any]:
    """The rows' texts as graphrag's embedding step hands them on (`text or ""`)."""
    null = _null() or ""
    return [null if text is None else text for text in rows[TEXT].to_pylist()]


def as_dicts(rows: "pa.Table", id_column: str, embed_column: str) -> list[dict[str, Any]]:
    """The rows as embed_text's input: a dict a row (only where all rows are embedded, or few)."""
    return [
        {id_column: identity, embed_column: text}
        for identity, text in zip(rows[ID].to_pylist(), texts(rows), strict=True)
    ]


def write(rows: Rows, table: Path, models: str) -> None:
    """Store each table's rows (ID, digest) and the models they were embedded under."""
    import pyarrow as pa

    string = pa.string()
    names = [name for name, some in rows.items() for _ in range(some.num_rows)]
    columns = {
        "table": pa.array(names, string),
        **{
            column: pa.chunked_array(
                [chunk for some in rows.values() for chunk in some[column].cast(string).chunks],
                string,
            )
            for column in (ID, TEXT)
        },
        "models": pa.array([models] * len(names), string),
    }
    write_table(pa.table(columns), table)


def read(version: Path, models: str) -> Rows:
    """A version's recorded rows by table, when recorded under the same models; none otherwise."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(version / ROWS, columns=["table", ID, TEXT, "models"])
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return {}
    same = rows.filter(pc.equal(rows["models"], models))
    return {
        name: same.filter(pc.equal(same["table"], name))
        .select([ID, TEXT])
        .cast(pa.schema({ID: pa.large_string(), TEXT: pa.large_string()}))
        for name in pc.unique(same["table"]).to_pylist()
    }


def _texts(columns: "pa.Table", field: Any) -> "pa.Table":
    """ID and TEXT of `field`'s columns: the embedded column, or the entity transformer's text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = pc.cast(columns[ID], pa.large_string())
    if field.row_transform is None:
        return pa.table({ID: ids, TEXT: pc.cast(columns[field.embed_column], pa.large_string())})
    null = f"{_null() or ''}"
    title, description = (
        pc.fill_null(pc.cast(columns[name], pa.large_string()), null)
        for name in ("title", "description")
    )
    return pa.table(
        {
            ID: ids,
            TEXT: pc.binary_join_element_wise(
                title, description, pa.scalar(":", pa.large_string())
            ),
        }
    )


def _from_rows(rows: list[dict[str, Any]], embed_column: str) -> "pa.Table":
    """ID and TEXT of whole rows a transformer gave (pandas' null value read back as null)."""
    import pyarrow as pa

    return pa.table(
        {
            ID: pa.array([str(row[ID]) for row in rows], pa.large_string()),
            TEXT: pa.array(
                [row.get(embed_column) or "" for row in rows], pa.large_string(), from_pandas=True
            ),
        }
    )


def _arrow(frame: Any) -> "pa.Table":
    """A frame's columns as Arrow (pandas' null values as nulls)."""
    import pyarrow as pa

    return pa.Table.from_pandas(frame, preserve_index=False)


@cache
def _null() -> Any:
    """The value pandas gives a null text (NaN since pandas 3; graphrag's step reads it)."""
    import pyarrow as pa

    return pa.array([None], pa.string()).to_pandas()[0]
