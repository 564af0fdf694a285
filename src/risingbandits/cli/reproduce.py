"""``risingbandits reproduce``: run the paper's experiments and write the reproduction report."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from risingbandits.cli.errors import UserError, fail, user_errors
from risingbandits.cli.progress import bar_task, progress_bar
from risingbandits.cli.signals import interruption
from risingbandits.cli.sweep import ExecutorName, SchedulerOpt, WorkersOpt
from risingbandits.experiments.executors import SchedulerLost
from risingbandits.extras import MissingExtra
from risingbandits.instances.families import use_curves_dir
from risingbandits.reproduce import ReproduceResult
from risingbandits.reproduce import reproduce as run_reproduction
from risingbandits.reproduce.settings import TARGETS

Target = StrEnum("Target", [(t, t) for t in TARGETS])  # type: ignore[misc]


def _print_result(console: Console, result: ReproduceResult) -> None:
    for s in result.sweeps:
        state = "already done" if s.cells_run == 0 else f"{s.cells_run:,} cells run"
        console.print(
            f"{s.name}: {state} ({s.cells_total:,} cells) in {s.elapsed:.1f} s -> {s.path}"
        )
    for name, why in result.skipped:
        console.print(f"{name}: skipped ({why})")
    if result.report is None:
        return
    table = Table(title="Claims vs our results")
    table.add_column("#", justify="right")
    table.add_column("claim")
    table.add_column("verdict", no_wrap=True)
    for c in result.claims:
        table.add_row(str(c.number), c.claim, c.verdict)
    console.print(table)
    html = result.report.with_suffix(".html")
    console.print(f"report: {result.report} and {html} ({result.elapsed:.1f} s in all)")


@user_errors
def reproduce(
    target: Annotated[Target, typer.Argument(help="What to reproduce.")],
    quick: Annotated[
        bool, typer.Option(help="Small sizes (every figure, a first look; CI).")
    ] = False,
    out: Annotated[Path, typer.Option(help="Output directory (stores, figures, report).")] = Path(
        "risingbandits-reproduction"
    ),
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    executor: Annotated[
        ExecutorName | None,
        typer.Option(help="serial | processes (default: all cores) | dask (local cluster)."),
    ] = None,
    report_only: Annotated[
        bool, typer.Option(help="Run nothing: rewrite figures and report from the stores.")
    ] = False,
    overwrite: Annotated[
        bool, typer.Option(help="Replace a report of another run (other size or specs).")
    ] = False,
    curves: Annotated[
        Path | None,
        typer.Option(
            help="Folder of the IMDB learning curves (curves.npz); default "
            "../shared/data/imdb-learning-curves or $RISINGBANDITS_IMDB_CURVES."
        ),
    ] = None,
) -> None:
    """Reproduce the paper: intro (Fig. 1), ltf (Fig. 4), concave (Fig. 5), imdb (Figs. 6-7),
    sensitivity, robustness, theory; beyond it: modelselection (every policy on IMDB and LCDB,
    which to use per budget), heldout, heldout2 and heldout3 (the default policy on three
    held-out sets), peers (Optuna's pruners), deadlines (budgets in time); or all. Resumable,
    with report.md and a self-contained report.html."""
    if curves is not None:
        use_curves_dir(curves)
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    with progress_bar(err, description_width=24) as bar:
        stages: dict[str, Callable[[int, int], None]] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in stages:
                stages[stage] = bar_task(bar, stage, total, done)
            else:
                stages[stage](done, total)

        try:
            result = run_reproduction(
                target.value,
                out,
                quick=quick,
                executor=executor.value if executor else None,
                workers=workers,
                scheduler=scheduler,
                progress=update,
                report_only=report_only,
                overwrite=overwrite,
            )
        except MissingExtra as exc:
            raise UserError(str(exc)) from None
        except SchedulerLost as exc:
            fail(f"{exc}: run the same command again to resume once it is back", code=1)
        except KeyboardInterrupt as exc:
            what, code = interruption(exc)
            err.print(f"{what}: run the same command again to resume")
            raise typer.Exit(code) from None
    _print_result(err, result)
