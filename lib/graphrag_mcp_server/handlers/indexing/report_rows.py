"""Reports of unchanged communities taken as rows of the previous version's table.

An update keeps the report of every community whose records did not change
(unchanged_communities.py). Decoding those reports from the memo, to write them again, walked every
report of the corpus: 0.4 s of a one-document update at 10,000 documents, for 2,776 reports of
which 3 were new. So each version records each community's signature beside its reports
(`report_signatures.parquet`), and the next takes an unchanged community's report as the row of
the community that had its signature: its report's columns as they were written, its number,
level and place in the hierarchy those of the community now. A version without the record (one
written before it) has its reports decoded from the memo, as before.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

FILE = "report_signatures.parquet"
"""A version's record: each community's number and signature key (unchanged_communities.py)."""
STATE = "report_rows"
"""The key of the run's ReportRows in the state graphrag hands its workflows."""
REPORT_COLUMNS = (
    "title",
    "summary",
    "full_content",
    "rank",
    "rating_explanation",
    "findings",
    "full_content_json",
)
"""The columns of graphrag's community_reports table that the report wrote (the others are the
community's, or its id, hashed from `full_content`)."""


@dataclass
class ReportRows:
    """The previous version's folder (None: a full build) and this version's."""

    previous: Path | None
    version: Path
    _table: "pa.Table | None" = field(default=None, init=False, repr=False)

    def previous_rows(self) -> dict[str, int]:
        """Signature key -> the row of the previous version's community_reports table holding
        that community's report; empty when the version recorded no signatures, or its tables
        do not match the record."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.previous is None or not (self.previous / FILE).is_file():
            return {}
        try:
            signatures = pq.read_table(self.previous / FILE)
            table = pq.read_table(
                self.previous / "community_reports.parquet",
                columns=["community", *REPORT_COLUMNS],
            )
        except (OSError, KeyError, pa.ArrowException):
            return {}
        row = {community: at for at, community in enumerate(table["community"].to_pylist())}
        self._table = table
        return {
            key: row[community]
            for community, key in zip(
                signatures["community"].to_pylist(), signatures["key"].to_pylist(), strict=True
            )
            if community in row
        }

    def rows(self, communities: Mapping[int, tuple[int, int]]) -> "pd.DataFrame":
        """The reports of `communities` (number -> its level and its row in the previous table,
        from `previous_rows`) as report records: community, level and the report's columns."""
        import pyarrow as pa

        assert self._table is not None, "rows are taken only after previous_rows found them"
        numbers = list(communities)
        taken = self._table.select(list(REPORT_COLUMNS)).take(
            pa.array([communities[number][1] for number in numbers], pa.int64())
        )
        frame = taken.to_pandas()
        frame.insert(0, "level", [communities[number][0] for number in numbers])
        frame.insert(0, "community", numbers)
        return frame

    def record(self, signatures: Mapping[int, str]) -> None:
        """Write this version's record of each community's signature key."""
        import pyarrow as pa

        from graphrag_mcp_server.handlers.indexing.record_tables import write_table_file

        table = pa.table(
            {
                "community": pa.array(list(signatures), pa.int64()),
                "key": pa.array(list(signatures.values()), pa.string()),
            }
        )
        write_table_file(self.version / FILE, table)
