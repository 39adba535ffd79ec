"""How this project writes parquet tables: data pages cut where the rows' content says (pyarrow's
content-defined chunking), zstd-compressed, no dictionary pages.

graphrag writes every table whole on each update. Pages cut by size would all move when one row
is inserted; pages cut by content stay byte for byte the same away from the rows that changed, so
blob storage (blob/objects.py) stores and sends only the pieces of a table that an update changed.
A dictionary page would renumber the values after a new one, changing every page that uses them.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

PAGE_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "use_dictionary": False,
    "use_content_defined_chunking": {"min_chunk_size": 8 * 1024, "max_chunk_size": 32 * 1024},
}
"""pyarrow.parquet.write_table's options for every table this project writes (pages of 8-32 KiB
before encoding: small enough that an edit changes a few percent of a table)."""


def parquet_bytes(frame: "pd.DataFrame") -> bytes:
    """`frame` as parquet, as graphrag's `to_parquet()` writes it but with PAGE_OPTIONS."""
    data: bytes = frame.to_parquet(**PAGE_OPTIONS)
    return data
