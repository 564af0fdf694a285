"""The CLI's progress bar (rich, on stderr, removed when done): the library only calls back."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn


def progress_bar(console: Console | None = None, disable: bool = False) -> Progress:
    """A bar with description, count done / total and time remaining."""
    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console or Console(stderr=True),
        transient=True,
        disable=disable,
    )
