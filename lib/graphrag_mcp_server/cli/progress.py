"""A progress bar per graphrag workflow, drawn on stderr so stdout stays clean for --format json."""

from types import TracebackType
from typing import TYPE_CHECKING

from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

if TYPE_CHECKING:
    from graphrag.logger.progress import Progress as WorkflowProgress


class RichWorkflowProgress(NoopWorkflowCallbacks):
    """graphrag WorkflowCallbacks that show each workflow as a rich progress bar."""

    def __init__(self) -> None:
        self._bars = Progress(
            TextColumn("{task.description:<32}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> "RichWorkflowProgress":
        self._bars.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._bars.stop()

    def workflow_start(self, name: str, instance: object) -> None:
        """Open a bar for the workflow."""
        self._task = self._bars.add_task(name, total=None)

    def workflow_end(self, name: str, instance: object) -> None:
        """Fill the workflow's bar."""
        if self._task is not None:
            task = self._bars.tasks[self._task]
            self._bars.update(self._task, total=task.total or 1, completed=task.total or 1)

    def progress(self, progress: "WorkflowProgress") -> None:
        """Advance the current bar."""
        if self._task is not None and progress.total_items:
            self._bars.update(
                self._task, total=progress.total_items, completed=progress.completed_items or 0
            )
