"""An index build in its own process, reporting progress and its result as JSON lines on stdout.

The server runs its index jobs here: LanceDB segfaults when one process writes a version while
another thread of the same process reads one, and a separate process also keeps the build's CPU
work off the server's interpreter.

    python -m graphrag_mcp_server.handlers.build_worker ROOT DATA_PATH MODE
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from graphrag_mcp_server.errors import GraphRagMcpError


def _emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


class LineProgress:
    """graphrag WorkflowCallbacks that print each step as a JSON line."""

    def pipeline_start(self, names: list[str]) -> None:
        """Announce the workflows."""
        _emit("pipeline_start", total=len(names))

    def workflow_start(self, name: str, instance: object) -> None:
        """A workflow began."""
        _emit("workflow_start", name=name)

    def workflow_end(self, name: str, instance: object) -> None:
        """A workflow ended."""
        _emit("workflow_end", name=name)

    def pipeline_end(self, results: list[Any]) -> None:
        """The workflows that ran."""
        _emit("pipeline_end", total=len(results))

    def progress(self, progress: Any) -> None:
        """Item-level progress is not reported."""

    def pipeline_error(self, error: BaseException) -> None:
        """Errors are reported when the build raises."""


async def _build(root: Path, data_path: Path, mode: str) -> None:
    from graphrag_mcp_server.handlers.index import IndexMode, build, index_config

    config = index_config(root, data_path)
    summary = await build(config, root, IndexMode(mode), callbacks=[LineProgress()])
    _emit("summary", summary=summary.model_dump(mode="json"))


def main() -> int:
    """Build, print the result, exit 0 on success and 1 on failure."""
    root, data_path, mode = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    try:
        asyncio.run(_build(root, data_path, mode))
    except GraphRagMcpError as error:
        _emit("error", message=str(error))
        return 1
    except Exception as error:  # noqa: BLE001 - reported to the job, whatever it is
        _emit("error", message=f"{type(error).__name__}: {error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
