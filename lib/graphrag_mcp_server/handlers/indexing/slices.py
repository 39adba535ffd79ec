"""Rows taken in a new order as slices of what holds them, not copies, where they run in order.

An update reorders tables that are mostly the previous version's rows in the previous order:
the documents with one added, the text units of unchanged documents, the previous summaries.
Arrow's `take` copies every value (a 10,000-document corpus's texts are 31 MB, its relationship
descriptions 27 MB), and fresh memory is paid for in page faults (an update's system time grows
with its peak RSS). A table of slices shares the buffers it was read into.
"""

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

MAX_RUNS = 4096
"""Runs past which rows are copied in their order instead of sliced: a table of thousands of
chunks slows every later step over its columns."""
MAX_FRAME_RUNS = 64
"""The same for a pandas frame, whose concatenation costs more a piece."""

Sliced = TypeVar("Sliced", "pa.Table", "pa.ChunkedArray")


def runs(order: "np.ndarray") -> "np.ndarray":
    """The runs of `order` (positions) that go up by one: a [start, stop) pair of places in
    `order` on each row."""
    import numpy as np

    if len(order) == 0:
        return np.empty((0, 2), dtype=np.int64)
    starts = np.flatnonzero(np.diff(order) != 1) + 1
    bounds = np.concatenate(([0], starts, [len(order)]))
    return np.stack([bounds[:-1], bounds[1:]], axis=1)


def taken(values: Sliced, order: "np.ndarray", max_runs: int = MAX_RUNS) -> Sliced:
    """The rows of `values` (a table or a chunked array) at `order`: slices of it while they run
    in at most `max_runs` runs (no value copied), else Arrow's take."""
    import pyarrow as pa

    found = runs(order)
    if len(found) > max_runs:
        return values.take(pa.array(order, pa.int64()))
    pieces = [values.slice(int(order[start]), int(stop - start)) for start, stop in found]
    if isinstance(values, pa.Table):
        return pa.concat_tables(pieces) if pieces else values.slice(0, 0)
    return pa.chunked_array(pieces, values.type)


def frame_taken(frame: "pd.DataFrame", order: "np.ndarray") -> "pd.DataFrame":
    """The rows of `frame` at `order`, numbered from 0: slices of it while few runs (its Arrow
    columns' buffers shared), else pandas' take."""
    import pandas as pd

    found = runs(order)
    if len(found) == 1 and order[0] == 0 and len(order) == len(frame):
        return frame.reset_index(drop=True)
    if len(found) > MAX_FRAME_RUNS or len(found) == 0:
        return frame.take(order).reset_index(drop=True)
    pieces = [
        frame.iloc[int(order[start]) : int(order[start]) + int(stop - start)]
        for start, stop in found
    ]
    return pd.concat(pieces, ignore_index=True)
