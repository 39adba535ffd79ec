"""wordfreq's word frequencies, loaded once and in a thread of their own."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any


@functools.cache
def zipf_frequency() -> Callable[[str, str], float]:
    """wordfreq's zipf_frequency, imported in a thread of its own: at import wordfreq finds its
    data through the importer's stack (locate reads the source of every frame), most of a second
    under a pipeline's deep stack, a fifth of that in a fresh thread."""
    found: list[Any] = []

    def load() -> None:
        try:
            from wordfreq import zipf_frequency as loaded

            loaded("the", "en")  # loads the English list
            found.append(loaded)
        except Exception as error:  # noqa: BLE001 - raised again in the caller's thread
            found.append(error)

    thread = threading.Thread(target=load, name="wordfreq-import")
    thread.start()
    thread.join()
    if isinstance(found[0], Exception):
        raise found[0]
    zipf: Callable[[str, str], float] = found[0]
    return zipf
