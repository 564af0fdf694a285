"""The CLI's progress bars (rich, on stderr, removed when done): the library only calls back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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

from risingbandits._jit import COMPILING, kernels_cached


def progress_bar(
    console: Console | None = None,
    *extra: ProgressColumn,
    disable: bool = False,
    description_width: int = 0,
) -> Progress:
    """Description, bar, done / total, any ``extra`` columns (e.g. a rate), elapsed and ETA;
    none when stderr is not a terminal (rich would draw nothing but leave a blank line, before an
    error's one line too)."""
    width = f":<{description_width}" if description_width else ""
    description = "{task.description" + width + "}"
    console = console or Console(stderr=True)
    return Progress(
        TextColumn(description),
        BarColumn(),
        MofNCompleteColumn(),
        *extra,
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=disable or not console.is_terminal,
    )


def bar_task(
    bar: Progress, label: str, total: float | None = None, completed: int = 0, **fields: Any
) -> Callable[[int, int], None]:
    """Add a task to ``bar`` and return its ``progress(done, total)`` callback.

    Until the first call the task reads ``label: compiling kernels (first run only)`` when no
    compiled kernel is cached yet (Numba compiles each kernel on first use, 5-9 s), so a bar
    that does not move says why. ``fields`` are kept on the task for custom columns.
    """
    waiting = label if kernels_cached() else f"{label}: {COMPILING}"
    task = bar.add_task(waiting, total=total, completed=completed, **fields)

    def update(done: int, new_total: int) -> None:
        bar.update(task, description=label, completed=done, total=new_total)

    return update
