"""The key hashes that decide where parquet_pages ends a row group (issue 40): computed from the
keys' bytes by numpy (no Python string a row), each key's hash its own whatever its neighbours,
and the same from release to release (a changed hash would move every row group of every stored
table, and blob storage would send every table again)."""

import random

import numpy as np
import pyarrow as pa

from graphrag_mcp_server.handlers.indexing.parquet_pages import LENGTH_RUNS, text_hashes

PINNED = {
    "abc": 5651949215052268837,
    "": 16294208416658607535,
    "abcdefgh": 13388121152529947810,
    "é": 13894501650506617748,
    "0123456789abcdef0123456789abcdef0123": 14489014006305420789,
}


def _alone(texts: list[str | None]) -> list[int]:
    """Each text's hash computed on its own."""
    return [int(text_hashes(pa.array([text], pa.string()))[0]) for text in texts]


def test_the_hashes_are_those_of_earlier_releases() -> None:
    """Pinned values: a change to the mixing is a change to every stored table's row groups."""
    assert _alone(list(PINNED)) == list(PINNED.values())


def test_a_keys_hash_does_not_depend_on_the_keys_beside_it() -> None:
    """Keys of one length, of a few lengths and of many (more than LENGTH_RUNS), in one array, in
    chunks, in reverse, or a slice of a longer array: each key has its hash alone; a null is
    hashed as the empty key."""
    chosen = random.Random(11)
    uuids = [f"{chosen.getrandbits(144):036x}" for _ in range(300)]
    few = [f"{chosen.getrandbits(64):x}"[: chosen.choice([20, 36])] for _ in range(300)]
    many = ["x" * chosen.randint(0, 3 * LENGTH_RUNS) for _ in range(300)] + [None, "é" * 40]
    for keys in (uuids, few, many):
        alone = _alone(keys)
        assert text_hashes(pa.array(keys, pa.string())).tolist() == alone
        assert text_hashes(pa.array(keys[::-1], pa.large_string())).tolist() == alone[::-1]
        chunked = pa.chunked_array([pa.array(keys[:7]), pa.array(keys[7:])], pa.string())
        assert text_hashes(chunked).tolist() == alone
        assert text_hashes(pa.array(["front", *keys]).slice(1)).tolist() == alone
    assert _alone([None]) == _alone([""])
    assert text_hashes(pa.chunked_array([], pa.string())).tolist() == []


def test_distinct_keys_have_distinct_hashes_spread_evenly() -> None:
    """200,000 uuid-shaped keys (a 10,000-document archive's relationships): no two share a hash,
    and the hashes as fractions of 2**64 (a row's chance to end its group) are even."""
    chosen = random.Random(3)
    keys = [f"{chosen.getrandbits(128):032x}" for _ in range(200_000)]
    hashes = text_hashes(pa.array(keys, pa.string()))
    assert len(np.unique(hashes)) == len(keys)
    fractions = hashes / 2.0**64
    counts, _ = np.histogram(fractions, bins=10, range=(0.0, 1.0))
    assert counts.min() > 0.95 * len(keys) / 10
    assert counts.max() < 1.05 * len(keys) / 10
