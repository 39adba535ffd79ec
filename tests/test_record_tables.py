"""Tables an update writes are read back from memory as the very frames their parquet gives, and
their files written beside the pipeline (record_tables.py `written_tables_kept`)."""

import asyncio
from io import BytesIO
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from graphrag_mcp_server.errors import IndexBuildError
from graphrag_mcp_server.handlers.indexing import record_tables
from graphrag_mcp_server.handlers.indexing.local_files import LocalFileStorage
from graphrag_mcp_server.handlers.indexing.record_tables import (
    RecordParquetTableProvider,
    written_tables_kept,
)

pytestmark = pytest.mark.quick

TABLES = ("documents", "text_units", "entities", "relationships", "communities")


def _provider(folder: Path) -> RecordParquetTableProvider:
    return RecordParquetTableProvider(storage=LocalFileStorage(base_dir=str(folder)))


def _written_frames(built_index: tuple[Path, dict]) -> dict[str, pd.DataFrame]:
    """The fixtures index's tables as a workflow writes them (list columns as Python lists), and
    a frame with missing values and an index of its own."""
    output = built_index[0] / "output"
    frames = {name: pd.read_parquet(output / f"{name}.parquet") for name in TABLES}
    for frame in frames.values():
        for column in frame.columns:
            if frame[column].map(lambda value: hasattr(value, "tolist")).any():
                frame[column] = frame[column].map(lambda value: value.tolist())
    frames["odd"] = pd.DataFrame(
        {"a": [1, None, 3], "b": ["x", None, "z"], "c": [[1.0, 2.0], [], None]}, index=[5, 7, 9]
    )
    return frames


def test_a_kept_table_reads_as_its_parquet_does(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """read_dataframe, a table's rows and read_columns give from memory what they give from the
    file: the same frames (values and dtypes), rows and Arrow columns."""

    async def run() -> None:
        frames = _written_frames(built_index)
        with written_tables_kept():
            kept = _provider(tmp_path)
            for name, frame in frames.items():
                await kept.write_dataframe(name, frame)
        from_files = _provider(tmp_path)
        for name in frames:
            from_disk = pd.read_parquet(BytesIO((tmp_path / f"{name}.parquet").read_bytes()))
            pd.testing.assert_frame_equal(await kept.read_dataframe(name), from_disk)
            pd.testing.assert_frame_equal(await from_files.read_dataframe(name), from_disk)
            columns = list(from_disk.columns[:2])
            assert (await kept.read_columns(name, columns)).to_pylist() == (
                await from_files.read_columns(name, columns)
            ).to_pylist()
            async with kept.open(name) as memory, from_files.open(name) as disk:
                assert await memory.length() == await disk.length() == len(from_disk)
                rows = [row async for row in memory]
                assert str(rows) == str([row async for row in disk])

    asyncio.run(run())


def test_a_kept_table_follows_each_write_and_only_an_update_keeps_any(tmp_path: Path) -> None:
    """A table written again, or appended to, reads as its last write; a provider made outside
    written_tables_kept (a full build) keeps nothing and reads the files."""

    async def run() -> None:
        first = pd.DataFrame({"id": ["a", "b"], "n": [1, 2]})
        with written_tables_kept():
            kept = _provider(tmp_path / "kept")
        plain = _provider(tmp_path / "plain")
        for provider, folder in ((kept, "kept"), (plain, "plain")):
            await provider.write_dataframe("rows", first)
            async with provider.open("rows", truncate=False) as table:
                await table.write({"id": "c", "n": 3})
            file = tmp_path / folder / "rows.parquet"
            assert pd.read_parquet(file)["id"].tolist() == ["a", "b", "c"]
            file.unlink()  # what is read next comes from memory, or from nowhere
        assert (await kept.read_dataframe("rows"))["id"].tolist() == ["a", "b", "c"]
        with pytest.raises(ValueError, match="Could not find rows.parquet"):
            await plain.read_dataframe("rows")

    asyncio.run(run())


def test_files_are_written_by_the_blocks_end_and_a_failed_write_raises_there(
    tmp_path: Path,
) -> None:
    """Within the block a kept table's file is written by another thread, all of them by the
    block's end; a write that fails (a folder where its file goes) raises when the block ends, as
    an IndexBuildError naming the file and the cause (the CLI's one line, no traceback)."""
    frame = pd.DataFrame({"id": [f"row{number}" for number in range(2000)], "n": range(2000)})

    async def write(folder: Path, names: list[str]) -> None:
        provider = _provider(folder)
        for name in names:
            await provider.write_dataframe(name, frame)
            assert await provider.has(name) and name in provider.list()

    names = [f"table{number}" for number in range(6)]
    with written_tables_kept():
        asyncio.run(write(tmp_path, names))
    for name in names:
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / f"{name}.parquet"), frame)

    (tmp_path / "lost.parquet").mkdir()
    failed = r"writing .*lost\.parquet: .*Is a directory"
    with pytest.raises(IndexBuildError, match=failed), written_tables_kept():
        asyncio.run(write(tmp_path, ["lost"]))


def test_a_table_a_later_workflow_writes_again_is_written_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documents written before the pipeline's first workflow and again by
    create_final_documents are encoded and written once, as the second version (read from memory
    meanwhile); the entities of extract_graph, which finalize_graph writes again, are held, and
    written by the block's end when finalize_graph never ran; a table no later workflow writes
    is written at once."""
    encoded: list[tuple[str, int]] = []
    write_table = record_tables.write_table

    def recorded(table: pa.Table, path: Path) -> None:
        encoded.append((path.name, table.num_rows))
        write_table(table, path)

    monkeypatch.setattr(record_tables, "write_table", recorded)
    first, second = pd.DataFrame({"id": ["a"]}), pd.DataFrame({"id": ["a", "b"]})
    pipeline = [
        "create_base_text_units",
        "create_final_documents",
        "extract_graph",
        "finalize_graph",
    ]

    async def run() -> None:
        with written_tables_kept(pipeline) as writes:
            provider = _provider(tmp_path)
            await provider.write_dataframe("documents", first)
            writes.workflow_ended("create_base_text_units")
            assert (await provider.read_dataframe("documents"))["id"].tolist() == ["a"]
            await provider.write_dataframe("documents", second)
            writes.workflow_ended("create_final_documents")
            await provider.write_dataframe("entities", first)
            await provider.write_dataframe("communities", second)
            writes.workflow_ended("extract_graph")
            assert ("entities.parquet", 1) not in encoded

    asyncio.run(run())
    assert encoded == [
        ("documents.parquet", 2),
        ("communities.parquet", 2),
        ("entities.parquet", 1),
    ]
    assert pd.read_parquet(tmp_path / "documents.parquet")["id"].tolist() == ["a", "b"]
    assert pd.read_parquet(tmp_path / "entities.parquet")["id"].tolist() == ["a"]
