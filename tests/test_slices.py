"""Rows taken in a new order are slices of what holds them while they run in order: the same
rows as Arrow's and pandas' take, and no value copied."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from graphrag_mcp_server.handlers.indexing import slices
from graphrag_mcp_server.handlers.indexing.kept_final_text_units import ids_listed

pytestmark = pytest.mark.quick


def _texts(count: int) -> pa.Table:
    return pa.table(
        {
            "id": [f"u{at}" for at in range(count)],
            "text": [f"text {at} " * 50 for at in range(count)],
        }
    )


def test_runs_are_the_stretches_that_go_up_by_one() -> None:
    order = np.array([0, 1, 2, 7, 3, 4, 9])
    assert slices.runs(order).tolist() == [[0, 3], [3, 4], [4, 6], [6, 7]]
    assert slices.runs(np.array([], dtype=np.int64)).shape == (0, 2)


def test_a_row_inserted_takes_the_same_rows_as_arrow_without_copying_the_texts() -> None:
    table = pa.concat_tables([_texts(2000), pa.table({"id": ["new"], "text": ["fresh text"]})])
    order = np.concatenate([np.arange(0, 1000), [2000], np.arange(1000, 2000)])
    before = pa.total_allocated_bytes()
    sliced = slices.taken(table, order)
    assert pa.total_allocated_bytes() - before < 64 * 1024  # the texts are ~1 MB
    assert sliced.equals(table.take(pa.array(order)))
    column = slices.taken(table["text"], order)
    assert column.equals(table["text"].take(pa.array(order)))
    assert column.num_chunks == 3


def test_rows_in_many_runs_are_copied_in_their_order() -> None:
    table = _texts(3 * slices.MAX_RUNS)
    order = np.random.default_rng(7).permutation(table.num_rows)
    taken = slices.taken(table, order)
    assert taken.equals(table.take(pa.array(order)))
    assert taken["text"].num_chunks == 1
    assert slices.taken(table, np.array([], dtype=np.int64)).num_rows == 0


def test_a_frame_taken_by_slices_equals_pandas_take() -> None:
    frame = _texts(500).to_pandas()
    for order in (
        np.arange(500),
        np.concatenate([np.arange(250, 500), np.arange(0, 250)]),
        np.random.default_rng(3).permutation(500),
    ):
        expected = frame.take(order).reset_index(drop=True)
        pd.testing.assert_frame_equal(slices.frame_taken(frame, order), expected)


def test_ids_listed_are_arrow_lists_in_row_order_with_none_empty() -> None:
    ids = pa.chunked_array([pa.array(["e1", "e2"]), pa.array(["e3", "e4"])])
    keys = pa.chunked_array([pa.array(["u2", "u1"]), pa.array([None, "u2"])])
    listed = ids_listed(ids, keys, pa.array(["u1", "u2", "u3"]))
    assert listed.dtype == pd.ArrowDtype(pa.list_(pa.string()))
    assert [list(value) for value in listed] == [["e2"], ["e1", "e4"], []]
