"""An update's imports run with the cyclic collector off, and what they made is frozen."""

import gc
from typing import Any

from graphrag_mcp_server.config.runtime import imports_frozen


def test_a_block_of_imports_runs_no_collection_and_freezes_what_it_made() -> None:
    """Inside the block nothing is collected however much it allocates; after it the collector is
    on again and the objects the block made (cycles among them) are frozen, not walked again by
    the collections that follow (fewer_garbage_collections unfreezes them at its end)."""
    generations: list[int] = []

    def started(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            generations.append(info["generation"])

    frozen_before = gc.get_freeze_count()
    gc.callbacks.append(started)
    try:
        with imports_frozen():
            assert not gc.isenabled()
            made = []
            for number in range(60_000):  # past the young generation's threshold, 700 or 50,000
                pair: list[Any] = [number]
                pair.append(pair)  # a cycle, as modules and classes make
                made.append(pair)
        assert gc.isenabled() and generations == []
        assert gc.get_freeze_count() >= frozen_before + len(made)
    finally:
        gc.callbacks.remove(started)
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
