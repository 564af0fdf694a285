"""The CLI's progress bars (rich, on stderr, removed when done): the library only calls back."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def progress_bar(
    console: Console | None = None,
    *extra: ProgressColumn,
    disable: bool = False,
    description_width: int = 0,
) -> Progress:
    """Description, bar, done / total, any ``extra`` columns (e.g. a rate), elapsed and ETA."""
    width = f":<{description_width}" if description_width else ""
    description = "{task.description" + width + "}"
    return Progress(
        TextColumn(description),
        BarColumn(),
        MofNCompleteColumn(),
        *extra,
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        transient=True,
        disable=disable,
    )
