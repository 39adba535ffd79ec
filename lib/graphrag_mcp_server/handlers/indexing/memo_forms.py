"""The results of a version's base memo table (memo_table.py), read by row group when an update
needs them, not with the table's keys.

An update looks results up by key and name across the whole table (260,000 rows at 10,000
documents) but takes few of them: its changed documents' chunks, its changed names' summaries,
its changed texts' vectors. Their JSON texts and vectors are most of the table's bytes (185 MiB
unpacked of 200 at 10,000 documents), so the keys are read at once and a result only with its
row group.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.tables import READ_OPTIONS

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

FORM_COLUMNS = ["result", "vector"]
"""The columns holding a stored result: its JSON text, or its vector."""


@dataclass
class BaseForms:
    """A base table's results, read by the row groups holding the rows asked for."""

    file: "pq.ParquetFile"
    starts: "np.ndarray"
    """The first row of each row group, and the table's row count after the last."""

    @classmethod
    def of(cls, file: "pq.ParquetFile") -> "BaseForms":
        """The results of the base table open in `file`."""
        import numpy as np

        counts = [file.metadata.row_group(group).num_rows for group in range(file.num_row_groups)]
        return cls(file, np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]))

    def rows(self, positions: "np.ndarray") -> "pa.Table":
        """The results (FORM_COLUMNS) of the base's rows at `positions`, in their order."""
        import numpy as np
        import pyarrow as pa

        groups = np.unique(np.searchsorted(self.starts, positions, side="right") - 1)
        if len(groups) == 0:
            return self.file.schema_arrow.empty_table().select(FORM_COLUMNS)
        read = self.file.read_row_groups(
            groups.tolist(), columns=FORM_COLUMNS, use_threads=READ_OPTIONS["use_threads"]
        )
        sizes = self.starts[groups + 1] - self.starts[groups]
        first_read = np.concatenate([[0], np.cumsum(sizes)[:-1]])  # each group's first row in read
        group_of = np.searchsorted(self.starts[groups], positions, side="right") - 1
        local = first_read[group_of] + positions - self.starts[groups][group_of]
        return read.take(pa.array(local, pa.int64()))


def forms_in_order(
    base: BaseForms, positions: "np.ndarray", added: "pa.Table"
) -> "Callable[[np.ndarray], pa.Table]":
    """The results of rows of a step's table: its first `len(positions)` rows the base's rows at
    `positions`, the others the rows of `added` (the changes', read whole)."""
    import numpy as np
    import pyarrow as pa

    count = len(positions)

    def forms(rows: "np.ndarray") -> "pa.Table":
        in_base = rows < count
        parts = pa.concat_tables(
            [
                base.rows(positions[rows[in_base]]),
                added.select(FORM_COLUMNS).take(pa.array(rows[~in_base] - count, pa.int64())),
            ]
        )
        order = np.concatenate([np.flatnonzero(in_base), np.flatnonzero(~in_base)])
        return parts.take(pa.array(np.argsort(order, kind="stable"), pa.int64()))

    return forms
