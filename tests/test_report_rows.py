"""An update takes the reports of unchanged communities as rows of the previous version's table
(report_rows.py, issue 40): each version records its communities' signatures, and the table an
update writes this way equals the one it writes by decoding the memo (a version without the
record)."""

import asyncio
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import CORPUS
from graphrag_mcp_server.handlers.indexing import report_rows, versions
from graphrag_mcp_server.handlers.indexing.build import IndexMode, build, index_config
from graphrag_mcp_server.handlers.indexing.report_rows import ReportRows

pytestmark = pytest.mark.slow  # builds an index of its own, then updates it twice


def test_unchanged_reports_are_the_previous_rows_and_equal_decoded_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, data = tmp_path / "root", tmp_path / "data"
    shutil.copytree(CORPUS, data)
    start = Path.cwd()

    def index(mode: IndexMode) -> Path:
        try:
            asyncio.run(build(index_config(root, data, offline=True), root, mode))
        finally:
            os.chdir(start)  # graphrag's config loader changes into the index root
        version = versions.current_version(root)
        assert version is not None
        return version

    built = index(IndexMode.FULL)
    recorded = pq.read_table(built / report_rows.FILE)
    reports = pq.read_table(built / "community_reports.parquet")
    assert sorted(recorded["community"].to_pylist()) == sorted(reports["community"].to_pylist())
    (data / "13_new.txt").write_text(
        "Mara Quell founded the Quell Ropeworks at Saltmarsh Quay with Jonah Reeve.\n",
        encoding="utf-8",
    )
    saved = tmp_path / "saved"
    shutil.copytree(root, saved, symlinks=True)
    taken: list[int] = []
    real_rows = ReportRows.rows

    def rows(self: ReportRows, communities: dict[int, tuple[int, int]]):  # type: ignore[no-untyped-def]
        taken.append(len(communities))
        return real_rows(self, communities)

    monkeypatch.setattr(ReportRows, "rows", rows)
    by_rows = pq.read_table(index(IndexMode.INCREMENTAL) / "community_reports.parquet")
    assert taken and taken[0] > 0  # most reports carried as rows

    shutil.rmtree(root)
    shutil.copytree(saved, root, symlinks=True)
    built.chmod(0o755)  # a version is sealed: its folder read-only
    (built / report_rows.FILE).unlink()
    taken.clear()
    decoded = pq.read_table(index(IndexMode.INCREMENTAL) / "community_reports.parquet")
    assert not taken  # a version without the record: every carried report decoded
    assert by_rows.equals(decoded)
    assert by_rows.schema.equals(decoded.schema, check_metadata=True)
