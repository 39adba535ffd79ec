"""An update's imports run with the cyclic collector off, and what they made is frozen; a
server's load of a version runs with it paused."""

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from graphrag_mcp_server.config.runtime import collector_paused, imports_frozen


@contextmanager
def collections_started() -> Iterator[list[int]]:
    """The generation of each collection started inside the block, as it starts."""
    generations: list[int] = []

    def started(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    gc.callbacks.append(started)
    try:
        yield generations
    finally:
        gc.callbacks.remove(started)


def cycles(count: int) -> list[list[Any]]:
    """`count` lists that hold themselves (cycles, as modules and classes make): past the young
    generation's threshold (700 or 50,000) for 60,000."""
    made = []
    for number in range(count):
        pair: list[Any] = [number]
        pair.append(pair)
        made.append(pair)
    return made


def test_a_block_of_imports_runs_no_collection_and_freezes_what_it_made() -> None:
    """Inside the block nothing is collected however much it allocates; after it the collector is
    on again and the objects the block made (cycles among them) are frozen, not walked again by
    the collections that follow (fewer_garbage_collections unfreezes them at its end)."""
    frozen_before = gc.get_freeze_count()
    try:
        with collections_started() as generations, imports_frozen():
            assert not gc.isenabled()
            made = cycles(60_000)
            collected_inside = list(generations)
        assert gc.isenabled() and collected_inside == []
        assert gc.get_freeze_count() >= frozen_before + len(made)
    finally:
        gc.unfreeze()


def test_a_collector_off_before_the_block_stays_off() -> None:
    """The block leaves the collector as it found it: a caller that turned it off keeps it off."""
    gc.disable()
    try:
        with imports_frozen():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_paused_collector_collects_nothing_and_is_on_again_after() -> None:
    """A server's load of a version (state._load) runs with the collector paused: nothing is
    collected inside however much the block allocates, and nothing is frozen."""
    frozen_before = gc.get_freeze_count()
    with collections_started() as generations, collector_paused():
        cycles(60_000)
        collected_inside = list(generations)
    assert collected_inside == [] and gc.isenabled()
    assert gc.get_freeze_count() == frozen_before


def test_a_server_loads_a_version_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """state._load's work runs inside collector_paused; the collector is on again after, also
    when the load fails."""
    from graphrag_mcp_server.server import state

    seen: list[bool] = []

    def pinned_config(root: Path) -> None:  # the load's first step
        seen.append(gc.isenabled())
        raise LookupError("stop here")

    monkeypatch.setattr(state, "_pinned_config", pinned_config)
    with pytest.raises(LookupError):
        state._load(tmp_path)
    assert seen == [False] and gc.isenabled()
