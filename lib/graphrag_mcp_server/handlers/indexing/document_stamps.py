"""What each text file was when a version read it, so that an update takes an unchanged file's
document from that version instead of reading and hashing it again (2 s of every run at 10,000
documents, a run that changes nothing included).

A file is unchanged when its size, modification time, status-change time and inode are those the
version recorded: the test make and rsync use, made stricter by the status-change time, which any
write, rename or change of permissions moves (even one that sets the modification time back). Only
files graphrag's text reader reads are taken: one document each, titled by its path. The record
also names the data folder and the input settings; a change to either reads every file again.
Files whose stamps moved but not their text (an update that then changes nothing) are recorded in
the index root for the version they match (`refresh`), as that version is sealed.
"""

import json
import os
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.readers import input_folder, one_text_document

if TYPE_CHECKING:
    import pyarrow as pa
    from graphrag.config.models.graph_rag_config import GraphRagConfig

STAMPS = "document_stamps.jsonl"
"""A version's record: a first line naming how files were read, then one line per file."""
REFRESHED = ".document_stamps.jsonl"
"""In the index root: the stamps of the files an update found moved but not changed (a `chmod`, a
restore, a hard link: their text is the version's), for the version it served. An update that
changes nothing publishes no version, and a published version is sealed; without this record
every later update read those files again (1 s at 10,000 documents)."""

Stamp = tuple[int, int, int, int]
"""A file's size, modification and status-change times (ns) and inode."""

DOCUMENT_COLUMNS = ("id", "text", "title", "creation_date")
"""The columns of graphrag's documents table a text file's document is made of (raw_data: none)."""


def stamp(status: os.stat_result) -> Stamp:
    """A file's stamp from its status."""
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def record(version: Path, config: "GraphRagConfig", stamps: dict[str, Stamp]) -> None:
    """Write `version`'s record of the text files it read as `config` reads them (a line each: a
    changed file changes one; each line as `json.dumps` writes the path and its stamp)."""
    text = _record_text({"reading": _reading(config)}, stamps)
    (version / STAMPS).write_text(text, encoding="utf-8")


def refresh(root: Path, version: Path, config: "GraphRagConfig", stamps: dict[str, Stamp]) -> None:
    """Record in `root` the stamps of files whose text is that of `version` (an update that found
    no change), which later updates take over the version's own (`unchanged`)."""
    header = {"reading": _reading(config), "version": version.name}
    written = root / f"{REFRESHED}.tmp"
    written.write_text(_record_text(header, stamps), encoding="utf-8")
    written.replace(root / REFRESHED)


def _record_text(header: dict[str, str], stamps: dict[str, Stamp]) -> str:
    """A record: its header line, then a line for each text file's stamp, by path."""
    files = _text_files(stamps)
    lines = [json.dumps(header), *(_line(path, files[path]) for path in sorted(files))]
    return "\n".join(lines) + "\n"


def _line(path: str, each: Stamp) -> str:
    """`json.dumps([path, *each])`, without making an encoder a line."""
    return f"[{', '.join([encode_basestring_ascii(path), *map(str, each)])}]"


def unchanged(
    version: Path | None, config: "GraphRagConfig", stamps: dict[str, Stamp], root: Path
) -> "pa.Table | None":
    """The rows (DOCUMENT_COLUMNS), from `version`'s documents table, of each text file whose stamp
    is the one `version` recorded when it read files as `config` reads them, or the one `root`
    recorded since for that version (`refresh`), in that table's order. None without a record or
    with a different reading; a malformed record is no record."""
    if version is None:
        return None
    how = _reading(config)
    recorded = _recorded(version / STAMPS, {"reading": how}) | _recorded(
        root / REFRESHED, {"reading": how, "version": version.name}
    )
    same = [path for path, each in _text_files(stamps).items() if recorded.get(path) == each]
    if not same:
        return None
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from graphrag_mcp_server.handlers.indexing.slices import taken

    table = pq.read_table(version / "documents.parquet", columns=list(DOCUMENT_COLUMNS))
    kept = pc.is_in(table["title"], value_set=pa.array(same, table["title"].type))
    # slices of the rows kept: a filter copied every text (31 MB at 10,000 documents)
    return taken(table, np.flatnonzero(kept.to_numpy(zero_copy_only=False)))


def _text_files(stamps: dict[str, Stamp]) -> dict[str, Stamp]:
    """The stamps of the files graphrag's text reader reads (one document each)."""
    return {path: each for path, each in stamps.items() if one_text_document(path)}


def _reading(config: "GraphRagConfig") -> str:
    """How files are read: the data folder and graphrag's input settings."""
    return json.dumps(
        {"data": str(input_folder(config)), "input": config.input.model_dump(mode="json")},
        sort_keys=True,
    )


def _recorded(path: Path, header: dict[str, str]) -> dict[str, Stamp]:
    """The stamps of the record at `path`, when its header is `header` (how files were read, and
    for a refreshed record the version): its lines decoded as one JSON array."""
    if not path.is_file():
        return {}
    try:
        first, *files = path.read_text(encoding="utf-8").splitlines()
        if json.loads(first) != header:
            return {}
        return {line[0]: tuple(line[1:]) for line in json.loads(f"[{','.join(files)}]")}
    except (ValueError, TypeError, IndexError, OSError):
        return {}
