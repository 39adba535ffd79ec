"""Parquet tables stored in pieces (issue 40): a table rewritten with one row changed and one row
inserted shares most of its pieces with the table before, and is put back together byte for byte
from the pieces a local copy holds plus the new ones read from packs."""

import hashlib
import random
from pathlib import Path

import pandas as pd

from graphrag_mcp_server.handlers.indexing.blob import objects
from graphrag_mcp_server.handlers.indexing.parquet_pages import arrow_table, table_bytes

WORDS = [f"word{number}" for number in range(2000)]


def _table(rows: int, seed: int = 3) -> pd.DataFrame:
    """A table shaped like graphrag's text units: an id, a text of 60-120 words, a count."""
    chosen = random.Random(seed)
    texts = [" ".join(chosen.choices(WORDS, k=chosen.randint(60, 120))) for _ in range(rows)]
    return pd.DataFrame(
        {
            "id": [f"{chosen.getrandbits(128):032x}" for _ in range(rows)],
            "text": texts,
            "n_tokens": [len(text.split()) for text in texts],
        }
    )


def _edited(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with row 1000's text changed and a new row inserted after row 2000."""
    edited = table.copy()
    edited.loc[1000, "text"] += " and one sentence more"
    new = pd.DataFrame({"id": ["f" * 32], "text": ["a row added by an update"], "n_tokens": [6]})
    return pd.concat([edited.iloc[:2000], new, edited.iloc[2000:]], ignore_index=True)


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """`frame` as parquet_pages writes a table."""
    return table_bytes(arrow_table(frame))


def _new_share(before: bytes, after: bytes) -> float:
    """The share of `after`'s bytes in pieces that `before` does not hold."""
    held = {sha256 for sha256, _, _ in objects.cut(before)}
    return sum(size for sha256, _, size in objects.cut(after) if sha256 not in held) / len(after)


def test_an_edited_table_shares_most_pieces_and_is_put_back_together(tmp_path: Path) -> None:
    """Written by parquet_pages, the edited table's new pieces are under 10% of its bytes (pandas'
    default writer: most of it); the Packer sends only those, and assemble rebuilds the table from
    the old file and the packed pieces, byte for byte."""
    table = _table(3000)
    before, after = parquet_bytes(table), parquet_bytes(_edited(table))
    assert _new_share(before, after) < 0.10
    assert _new_share(table.to_parquet(), _edited(table).to_parquet()) > 0.5

    packs: dict[str, bytes] = {}
    first = objects.Packer("v1", [], packs.__setitem__)
    old_pieces = first.pieces(before)
    first.finish()
    second = objects.Packer("v2", old_pieces, packs.__setitem__)
    new_pieces = second.pieces(after)
    second.finish()
    assert set(packs) == {"v1-0", "v2-0"}
    assert len(packs["v2-0"]) == second.sent_bytes < 0.10 * len(after)
    assert {piece.pack for piece in new_pieces} == {"v1-0", "v2-0"}

    local = tmp_path / "text_units.parquet"
    local.write_bytes(before)
    entry = objects.Entry(
        sha256=hashlib.sha256(after).hexdigest(),
        size=len(after),
        mtime_ns=1_700_000_000 * 10**9,
        pieces=new_pieces,
    )
    own = objects.local_pieces(local)
    wanted = objects.lacking(entry, own)
    assert {piece.pack for piece in wanted} == {"v2-0"}
    reads = objects.spans(wanted)
    fetched = {
        piece.sha256: packs[span.pack][piece.offset : piece.offset + piece.size]
        for span in reads
        for piece in span.pieces
    }
    assert sum(span.end - span.start for span in reads) <= len(packs["v2-0"])
    target = tmp_path / "staging" / "text_units.parquet"
    assert objects.assemble(entry, local, own, fetched, target)
    assert target.read_bytes() == after
    assert target.stat().st_mtime_ns == entry.mtime_ns
    pd.testing.assert_frame_equal(pd.read_parquet(target), _edited(table))


def test_a_table_of_large_rows_changes_only_around_the_changed_row() -> None:
    """Rows of ~12 KiB (a stored extraction, a document): pyarrow's content-defined pages alone
    do not resynchronise after a removed row (most of the table changes); rows grouped by content
    change only the groups around it. The table reads back as written, with no statistics."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphrag_mcp_server.handlers.indexing.parquet_pages import PAGE_OPTIONS

    chosen = random.Random(5)
    texts = [" ".join(chosen.choices(WORDS, k=1500)) for _ in range(300)]
    table = pd.DataFrame({"key": [f"k{number}" for number in range(300)], "result": texts})
    edited = table.drop(index=30).reset_index(drop=True)
    edited.loc[200, "result"] += " and one sentence more"
    before, after = parquet_bytes(table), parquet_bytes(edited)
    assert _new_share(before, after) < 0.15

    def pages_only(frame: pd.DataFrame) -> bytes:
        sink = io.BytesIO()
        pq.write_table(pa.Table.from_pandas(frame), sink, **PAGE_OPTIONS)
        return sink.getvalue()

    assert _new_share(pages_only(table), pages_only(edited)) > 0.4
    written = pq.ParquetFile(pa.BufferReader(after))
    assert written.metadata.num_row_groups > 10
    assert written.metadata.row_group(0).column(1).statistics is None
    pd.testing.assert_frame_equal(pd.read_parquet(io.BytesIO(after)), edited)


def test_rows_that_share_a_key_are_grouped_by_content_too() -> None:
    """Rows in runs of one key (extracted_rows.parquet: a text unit's entity and relationship rows
    under its extraction key): a run that gains two rows changes only the groups around it. With
    one hash a key, groups ended only at MAX_GROUP_BYTES and every group after the run moved
    (half of a 3,000-document table new after one edit)."""
    import pyarrow as pa

    from graphrag_mcp_server.handlers.indexing.parquet_pages import MAX_GROUP_BYTES, group_ends

    chosen = random.Random(7)
    rows = [
        (f"{unit:064x}", row, " ".join(chosen.choices(WORDS, k=chosen.randint(8, 30))))
        for unit in range(3000)
        for row in range(chosen.randint(5, 40))
    ]
    table = pd.DataFrame(rows, columns=["key", "row", "description"])
    at = int(table.index[table["key"] == f"{300:064x}"][-1]) + 1
    added = pd.DataFrame([(f"{300:064x}", 99, "a row more"), (f"{300:064x}", 100, "and another")])
    edited = pd.concat(
        [table.iloc[:at], added.set_axis(table.columns, axis=1), table.iloc[at:]],
        ignore_index=True,
    )
    before, after = parquet_bytes(table), parquet_bytes(edited)
    assert _new_share(before, after) < 0.05
    raw = sum(len(key) + len(text) + 8 for key, _, text in rows)
    ends = group_ends(pa.Table.from_pandas(table, preserve_index=False))
    assert len(ends) > 4 * raw / MAX_GROUP_BYTES, (len(ends), raw)  # by content, not by size


def test_a_table_written_in_parts_has_the_groups_and_bytes_of_one_written_whole() -> None:
    """The memo table is written a part at a time (carry_over.py: a build's memory must not hold it
    twice); a group never ends where a part does, so the file is the one a whole write makes."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphrag_mcp_server.handlers.indexing.parquet_pages import (
        PAGE_OPTIONS,
        write_groups,
        write_streamed,
    )

    chosen = random.Random(7)
    texts = [" ".join(chosen.choices(WORDS, k=chosen.randint(5, 900))) for _ in range(600)]
    table = pa.table({"key": [f"k{number}" for number in range(600)], "result": texts})

    def written(write: object) -> bytes:
        sink = io.BytesIO()
        with pq.ParquetWriter(sink, table.schema, **PAGE_OPTIONS) as writer:
            write(writer)  # type: ignore[operator]
        return sink.getvalue()

    whole = written(lambda writer: write_groups(writer, table))
    parts = [table.slice(start, 7) for start in range(0, 600, 7)]
    streamed = written(lambda writer: write_streamed(writer, iter(parts)))
    groups = pq.ParquetFile(pa.BufferReader(whole)).metadata.num_row_groups
    assert 1 < groups < len(parts) / 3, "a group spans parts"
    assert streamed == whole
    assert written(lambda writer: write_streamed(writer, iter([table.slice(0, 0)]))) == written(
        lambda writer: write_groups(writer, table.slice(0, 0))
    )


def test_a_piece_that_is_not_what_the_listing_says_is_refused(tmp_path: Path) -> None:
    """assemble answers False (the caller's one-line error) when the pieces do not make the listed
    content: a pack changed under the listing must not become a served table."""
    data = parquet_bytes(_table(500))
    packs: dict[str, bytes] = {}
    packer = objects.Packer("v1", [], packs.__setitem__)
    pieces = packer.pieces(data)
    packer.finish()
    entry = objects.Entry(
        sha256=hashlib.sha256(data).hexdigest(), size=len(data), mtime_ns=0, pieces=pieces
    )
    fetched = {piece.sha256: b"x" * piece.size for piece in pieces}
    assert not objects.assemble(entry, None, {}, fetched, tmp_path / "table.parquet")
