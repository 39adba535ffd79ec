"""The previous version's text units for create_base_text_units_kept (kept_text_units.py): their
ids, which this run's units keep (`UnitIds`), and the units of the documents whose chunker input
is unchanged, carried from its text_units table by Arrow (`unchanged_units`).

Taking every document's chunks from its memo walks the whole corpus: at 10,000 documents, decoding
the memos of the unchanged ones was half a second of a one-document update, and hashing their
texts into memo keys a fifth. A document is unchanged when the previous version had the one
document of its id (graphrag's readers make the id a hash of the text, unless the input names an
id column) and its title (its title that document's alone, so its units keep their ids:
kept_text_units.UnitIds), chunked alike: by these settings (its memos were made with them), no
metadata prepended. Its rows are the previous version's rows of that document, in their order. The
memos of the previous texts are stored again undecoded, but those no current document has.
"""

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import Memo, input_hash

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig


Chunks = list[tuple[str, int]]
"""A document's chunks: (text, n_tokens), in order (a carried chunk as its memo decodes: a list)."""


@dataclass
class UnitIds:
    """The previous version's text units (`units`: id, document_id, in order) and documents
    (`documents`: id, title), whose ids this run's units keep by (document title, chunk position);
    `path`: the version's folder, whose units an update carries over (`unchanged_units`)."""

    units: "pa.Table | None" = None
    documents: "pa.Table | None" = None
    path: "Path | None" = None

    @cached_property
    def kept(self) -> dict[tuple[str, int], str]:
        """Every previous unit's id by (its document's title, its position): the last of a title."""
        return _kept(self.units, self.documents)

    @cached_property
    def reserved(self) -> set[str]:
        return set(self.kept.values())

    def ids_of(self, titles: list[str], chunks: list[Chunks]) -> list[str]:
        """The id of each chunk of each document titled `titles`, in order: the id the previous
        version gave that chunk of the document, else graphrag's hash of its text (salted with the
        title and position when a kept id is that hash: a renamed document's, or text moved between
        documents). Only the titles' previous units are looked at."""
        from graphrag.index.utils.hashing import gen_sha512_hash

        kept = self._kept_of(titles)
        places = [
            (title, position, text)
            for title, each in zip(titles, chunks, strict=True)
            for position, (text, _) in enumerate(each)
        ]
        ids = [kept.get((title, position)) for title, position, _ in places]
        hashed = {
            row: str(gen_sha512_hash({"text": places[row][2]}, ["text"]))
            for row, identity in enumerate(ids)
            if identity is None
        }
        clashing = self._reserved_of(list(hashed.values()))
        for row, identity in hashed.items():
            title, position, text = places[row]
            salted = {"text": f"{title}\x00{position}\x00{text}"}
            ids[row] = identity if identity not in clashing else gen_sha512_hash(salted, ["text"])
        return [str(identity) for identity in ids]

    def _kept_of(self, titles: list[str]) -> dict[tuple[str, int], str]:
        """`kept`, of the previous documents titled `titles` (all, where document ids repeat)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.units is None or self.documents is None:
            return self.kept
        documents = self.documents
        if pc.count_distinct(documents["id"]).as_py() != documents.num_rows:
            return self.kept
        documents = documents.filter(
            pc.is_in(documents["title"], value_set=pa.array(titles, documents["title"].type))
        )
        units = self.units.filter(pc.is_in(self.units["document_id"], value_set=documents["id"]))
        return _kept(units, documents)

    def _reserved_of(self, hashes: list[str]) -> set[str]:
        """Those of `hashes` that are kept ids (`reserved` made only when a hash is a previous
        unit's id)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.units is None or not hashes:
            return set()
        held = pc.is_in(pa.array(hashes, self.units["id"].type), value_set=self.units["id"])
        if not pc.any(held).as_py():
            return set()
        return set(hashes) & self.reserved


def _kept(units: "pa.Table | None", documents: "pa.Table | None") -> dict[tuple[str, int], str]:
    """The ids of `units` by (their document's title, their position in it): the last unit of a
    title and position; units of documents not in `documents` left out."""
    if units is None or documents is None:
        return {}
    titles = [str(title) for title in documents["title"].to_pylist()]
    title_of = dict(zip(documents["id"].to_pylist(), titles, strict=True))
    kept: dict[tuple[str, int], str] = {}
    positions: dict[str, int] = {}
    ids, owners = units["id"].to_pylist(), units["document_id"].to_pylist()
    for identity, document in zip(ids, owners, strict=True):
        position = positions.get(document, 0)
        positions[document] = position + 1
        if (title := title_of.get(document)) is not None:
            kept[(title, position)] = str(identity)
    return kept


@dataclass
class Unchanged:
    """The current documents whose units are carried (`documents`), those units (`rows`: id,
    document_id, text, n_tokens, in the previous table's order) and the document of each
    (`places`: its row in the current documents), and the texts of the previous documents none
    of them is (`gone`)."""

    documents: "np.ndarray"
    rows: "pa.Table"
    places: "np.ndarray"
    gone: "pa.Array"

    @property
    def others(self) -> "np.ndarray":
        """The rows of the current documents whose units are not carried."""
        import numpy as np

        others: np.ndarray = np.flatnonzero(~self.documents)
        return others

    def keep(self, memo: Memo, settings: dict[str, Any], texts: "pd.Series") -> None:
        """Store again, undecoded, every previous chunk memo but those of the gone texts that no
        current document (`texts`) has: the memos of the previous documents' texts (one each)."""
        gone = self.gone.filter(_absent(self.gone, _arrow(texts))) if len(self.gone) else self.gone
        memo.keep_all_but([input_hash(text, settings, None) for text in gone.to_pylist()])

    def joined(self, others: "pd.DataFrame", counts: list[int]) -> "pd.DataFrame":
        """The carried units and `others` (the units of the other documents, in order, `counts`
        of each), in the documents' order: slices of the carried rows (slices.py)."""
        import numpy as np
        import pyarrow as pa

        from graphrag_mcp_server.handlers.indexing.slices import taken

        fresh = pa.Table.from_pandas(others, preserve_index=False).cast(self.rows.schema)
        places = np.concatenate([self.places, np.repeat(self.others, counts)])
        order = np.argsort(places, kind="stable")
        joined: pd.DataFrame = taken(pa.concat_tables([self.rows, fresh]), order).to_pandas()
        return joined


def unchanged_units(
    documents: "pd.DataFrame", ids: "UnitIds", memo: Memo, config: "GraphRagConfig"
) -> Unchanged | None:
    """The units of `documents` carried from the previous version (see the module's docstring);
    None where none can be: no previous version or memos made with these settings, metadata
    prepended, ids not hashes of the texts, or tables without the needed columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if config.chunking.prepend_metadata or config.input.id_column or "title" not in documents:
        return None
    if ids.path is None or ids.units is None or ids.documents is None or not memo.previous:
        return None
    try:
        unit_texts = pq.read_table(ids.path / "text_units.parquet", columns=["text", "n_tokens"])
        if len(unit_texts) != len(ids.units):
            return None
        units = ids.units.select(["id", "document_id"])
        for name in unit_texts.column_names:
            units = units.append_column(name, unit_texts[name])
        return _unchanged(documents, ids.documents, units, ids.path / "documents.parquet")
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None


def _unchanged(
    documents: "pd.DataFrame", before: "pa.Table", units: "pa.Table", stored: "Path"
) -> Unchanged:
    """The documents whose previous document (`before`, stored at `stored`) is the only one of
    its id and title and has its title (its text: the id is its hash), and their units."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    current = {name: _arrow(documents[name]) for name in ("id", "title")}
    at = pc.fill_null(pc.index_in(current["id"], value_set=before["id"]), -1).to_numpy()
    rows = np.maximum(at, 0)
    same = (at >= 0) & _single(current["id"])
    same &= _single(before["id"])[rows] & _single(before["title"])[rows]
    titles = before["title"].take(pa.array(rows)).cast(current["title"].type)
    same &= pc.fill_null(pc.equal(current["title"], titles), False).to_numpy(zero_copy_only=False)
    owners = pc.index_in(units["document_id"], value_set=current["id"].filter(pa.array(same)))
    carried = np.zeros(len(before), dtype=bool)
    carried[rows[same]] = True
    return Unchanged(
        documents=same,
        rows=units.filter(owners.is_valid()),
        places=np.flatnonzero(same)[owners.drop_null().to_numpy()],
        gone=_texts_at(stored, np.flatnonzero(~carried)),
    )


def _texts_at(stored: "Path", rows: "np.ndarray") -> "pa.Array":
    """The texts of the documents at `rows` of the table at `stored`: only the row groups that
    hold them read (an update drops the memos of few documents)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if len(rows) == 0:
        return pa.array([], pa.large_string())
    table = pq.ParquetFile(stored)
    sizes = np.array(
        [table.metadata.row_group(each).num_rows for each in range(table.num_row_groups)]
    )
    starts = np.concatenate([[0], np.cumsum(sizes)])
    group_of = np.searchsorted(starts, rows, side="right") - 1
    groups = np.unique(group_of)
    texts = table.read_row_groups(groups.tolist(), columns=["text"])["text"]
    read_from = np.concatenate([[0], np.cumsum(sizes[groups])])[np.searchsorted(groups, group_of)]
    return _whole(texts).take(pa.array(read_from + rows - starts[group_of]))


def _single(values: "pa.Array") -> "np.ndarray":
    """Whether each value is the only one of its value."""
    import numpy as np
    import pyarrow.compute as pc

    codes = pc.dictionary_encode(_whole(values)).indices.to_numpy(zero_copy_only=False)
    single: np.ndarray = np.bincount(codes, minlength=1)[codes] == 1
    return single


def _absent(texts: "pa.Array", pool: "pa.Array") -> "pa.Array":
    """Whether each of `texts` (few) is not in `pool`: compared with the pool's texts of their
    lengths only (no hash of the whole pool)."""
    import pyarrow.compute as pc

    lengths = pc.binary_length(texts)
    alike = pool.filter(pc.is_in(pc.binary_length(pool), value_set=lengths))
    return pc.invert(pc.is_in(texts, value_set=alike.cast(texts.type)))


def _arrow(column: "pd.Series") -> "pa.Array":
    """A frame's column as one Arrow array."""
    import pyarrow as pa

    return _whole(pa.array(column))


def _whole(values: "pa.Array | pa.ChunkedArray") -> "pa.Array":
    """`values` as one array."""
    import pyarrow as pa

    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
