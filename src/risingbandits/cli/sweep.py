"""``risingbandits sweep``: run, resume, status, verify and summary of experiment sweeps.

``run`` and ``resume`` stop like Ctrl-C on SIGTERM and SIGHUP (:mod:`risingbandits.cli.signals`):
one line with the cells kept and how to resume, exit code 128 + the signal number. A failed
write (a full disk) is one line with exit code 1; the parts already written stay.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import ProgressColumn
from rich.progress import Task as BarTask
from rich.table import Column, Table
from rich.text import Text

from risingbandits.analysis.bootstrap import MAX_RESAMPLES
from risingbandits.analysis.ranks import RankRow
from risingbandits.analysis.stats import MeanCI
from risingbandits.analysis.summary import MeanRow, Summary, summarize
from risingbandits.cli.errors import UserError, fail, os_error_text, user_errors
from risingbandits.cli.progress import bar_task, progress_bar
from risingbandits.cli.signals import interruption
from risingbandits.experiments.executors import MAX_WORKERS, SchedulerLost
from risingbandits.experiments.integrity import PartProblem
from risingbandits.experiments.store import SET_ASIDE, Store, StoreError
from risingbandits.experiments.sweep import SweepResult, resume_sweep, run_sweep
from risingbandits.extras import MissingExtra
from risingbandits.provenance import code_digest

app = typer.Typer(
    help="Experiment sweeps: a TOML spec run into a resumable results directory, then summarised.",
    no_args_is_help=True,
)


class ExecutorName(StrEnum):
    serial = "serial"
    processes = "processes"
    dask = "dask"


class OutputFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


class CIName(StrEnum):
    t = "t"
    bootstrap = "bootstrap"


class MetricName(StrEnum):
    regret = "regret"
    final_gap = "final-gap"

    @property
    def column(self) -> str:
        """The analysis layer's name of the metric (a result column)."""
        return self.value.replace("-", "_")


ExecutorOpt = Annotated[
    ExecutorName | None,
    typer.Option(help="serial | processes (default: all cores) | dask (local cluster)."),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(min=1, help=f"Worker processes (default: all cores; at most {MAX_WORKERS:,})."),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option(help="Address of a running Dask scheduler, e.g. tcp://host:8786 (implies dask)."),
]


def cell_rate(cells: int, seconds: float | None) -> str:
    """``12.3 cells/s``: the mean rate since the run started (the bar and the last line)."""
    if not seconds or seconds <= 0:
        return "-- cells/s"
    return f"{cells / seconds:,.1f} cells/s"


class CellRate(ProgressColumn):
    """Cells computed by this run per second since it started (earlier runs' cells, kept in
    the task's ``before`` field, do not count), as in the final ``done:`` line."""

    def render(self, task: BarTask) -> Text:
        return Text(cell_rate(int(task.completed) - task.fields["before"], task.elapsed))


@contextmanager
def cells_progress(console: Console, label: str) -> Iterator[Callable[[int, int], None]]:
    """A bar with cells done / total, cells/s and ETA; yields the engine's progress callback."""
    with progress_bar(console, CellRate(table_column=Column(no_wrap=True, min_width=16))) as bar:
        task: list[Callable[[int, int], None]] = []

        def update(done: int, total: int) -> None:
            if not task:  # the first call reports earlier runs' cells: not part of the speed
                task.append(bar_task(bar, label, total, done, before=done))
            else:
                task[0](done, total)

        yield update


def _code(code: str) -> str:
    """Which code started the sweep, against this one's."""
    if not code:
        return "code not recorded"
    same = "this code" if code == code_digest() else f"not this code, {code_digest()[:12]}"
    return f"code {code[:12]} ({same})"


def _cells_kept(store: Store) -> str:
    """``120 of 400 cells done; `` (empty when the store cannot say)."""
    try:
        status = store.status() if store.exists() else None
    except (StoreError, OSError):
        return ""
    return f"{status.cells_done} of {status.cells_total} cells done; " if status else ""


def _go_on(store: Store, directory: Path, then: str) -> str:
    """How to go on after a stop: resume a sweep whose manifest was written, else start it
    again (a stop before the manifest, or a new sweep whose executor never started)."""
    if store.exists():
        return f"{then} `risingbandits sweep resume {directory}`"
    return "run the same `risingbandits sweep run` again (nothing was kept)"


def _execute(
    directory: Path,
    start: Callable[[Callable[[int, int], None]], SweepResult],
) -> None:
    err = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    store = Store(directory)
    try:
        with cells_progress(err, "cells") as update:
            result = start(update)
    except MissingExtra as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt as exc:
        what, code = interruption(exc)
        kept = _cells_kept(store)
        err.print(f"{what}: {kept}{_go_on(store, directory, 'resume with')}")
        raise typer.Exit(code) from None
    except SchedulerLost as exc:
        kept = _cells_kept(store)
        fail(
            f"{exc}: {kept}{_go_on(store, directory, 'resume with')} once it is back (or with "
            "another executor)",
            code=1,
        )
    except OSError as exc:
        kept = _cells_kept(store)
        fail(
            f"cannot write {os_error_text(exc)}: {kept}make room, then "
            f"{_go_on(store, directory, 'run')}",
            code=1,
        )
    if result.set_aside:
        err.print(
            f"set aside {len(result.set_aside)} damaged, duplicate or foreign part file(s) in "
            f"{directory / 'parts' / SET_ASIDE}; their tasks were computed again"
        )
    if result.resumed:
        err.print(
            f"resumed {directory}: {result.cells_before} of {result.cells_total} cells were "
            "already done"
        )
    err.print(
        f"done: {result.cells_run} cells ({result.tasks_run} tasks) in {result.elapsed:.1f} s "
        f"({cell_rate(result.cells_run, result.elapsed)}) -> {directory}"
    )
    err.print(f"summary: risingbandits sweep summary {directory}")


@app.command("run")
@user_errors
def run(
    spec: Annotated[Path, typer.Argument(help="Sweep spec (TOML).")],
    out: Annotated[Path, typer.Option(help="Results directory.")],
    executor: ExecutorOpt = None,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Run every cell of SPEC into --out (a directory of the same spec is resumed)."""
    kind = executor.value if executor else None
    _execute(
        out,
        lambda update: run_sweep(
            spec, out, executor=kind, workers=workers, scheduler=scheduler, progress=update
        ),
    )


@app.command("resume")
@user_errors
def resume(
    directory: Annotated[Path, typer.Argument(help="Results directory of a sweep.")],
    executor: ExecutorOpt = None,
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
) -> None:
    """Finish an interrupted sweep (its spec is read from the directory's manifest)."""
    kind = executor.value if executor else None
    Store(directory).manifest()  # a clear error before any work when it is not a sweep
    _execute(
        directory,
        lambda update: resume_sweep(
            directory, executor=kind, workers=workers, scheduler=scheduler, progress=update
        ),
    )


@app.command("status")
@user_errors
def status(
    directory: Annotated[Path, typer.Argument(help="Results directory of a sweep.")],
) -> None:
    """Cells done / total, overall and by policy."""
    st = Store(directory).status()
    console = Console(highlight=False, markup=False)
    pct = 100.0 * st.cells_done / st.cells_total if st.cells_total else 100.0
    state = "complete" if st.complete else "incomplete"
    console.print(
        f"{st.path}: {st.cells_done} / {st.cells_total} cells ({pct:.1f}%), "
        f"{st.tasks_done} / {st.tasks_total} tasks, {state}"
    )
    console.print(
        f"spec {st.spec_hash[:12]}, created {st.created_at}, risingbandits {st.library_version}"
        f", {_code(st.code)}"
    )
    table = Table()
    table.add_column("policy")
    table.add_column("done", justify="right")
    table.add_column("total", justify="right")
    for p in st.by_policy:
        table.add_row(p.label, str(p.done), str(p.total))
    console.print(table)
    _print_problems(console, directory, st.problems)


def _print_problems(console: Console, directory: Path, problems: Sequence[PartProblem]) -> None:
    """One line per bad part file, then what to do about them."""
    for problem in problems:
        console.print(f"  {problem}")
    if problems:
        console.print(
            f"{len(problems)} part file(s) not counted: `risingbandits sweep resume {directory}` "
            f"moves them to parts/{SET_ASIDE} and computes their tasks again"
        )


@app.command("verify")
@user_errors
def verify(
    directory: Annotated[Path, typer.Argument(help="Results directory of a sweep.")],
) -> None:
    """Check every part against the manifest: readable, page checksums, exactly its task's
    cells (exit code 1 when a part is damaged, a duplicate or foreign)."""
    store = Store(directory)
    plan = store.plan()
    report = store.inspect(full=True, plan=plan)
    console = Console(highlight=False, markup=False, soft_wrap=True)
    checked = len(report.good) + len(report.problems)
    missing = len(plan.tasks) - len(report.good)
    console.print(
        f"{directory}: {checked} part file(s) checked against {store.manifest_path.name}: "
        f"{len(report.good)} good, {len(report.problems)} bad; {missing} of "
        f"{len(plan.tasks)} tasks without a good part"
    )
    _print_problems(console, directory, report.problems)
    if report.problems:
        raise typer.Exit(1)


def _cell(ci: MeanCI, digits: int) -> str:
    if ci.n < 2 or not math.isfinite(ci.low):
        return f"{ci.mean:,.{digits}f}"
    return f"{ci.mean:,.{digits}f} ± {ci.half_width:,.{digits}f}"


def _by_policy_table(
    s: Summary, title: str, rows: Sequence[MeanRow | RankRow], digits: int
) -> Table:
    table = Table(title=title)
    table.add_column("policy")
    for h in s.horizons:
        table.add_column(s.horizon_text(h), justify="right")
    cells = {(r.policy, r.horizon): _cell(r.ci, digits) for r in rows}
    for p in s.policies:
        table.add_row(s.display_name(p.label), *(cells.get((p.label, h), "-") for h in s.horizons))
    return table


METRIC_TITLES = {"regret": "regret", "final_gap": "final-model gap"}
FINAL_GAP_NOTE = (
    "final-model gap = max_i mu_i(T) - mu_rec(N_rec): how far the arm each run would deploy, "
    "trained with the pulls it got, is from the best arm trained with the whole budget"
)


def print_summary(s: Summary, console: Console) -> None:
    """The summary as rich tables with footnotes."""
    level = f"{s.level:.0%}"
    method = "t-interval" if s.ci_method == "t" else "percentile bootstrap"
    head = f"{s.path}: {s.cells_done} / {s.cells_total} cells"
    console.print(head + (f" - {s.description}" if s.description else ""))
    by = METRIC_TITLES[s.metric]
    console.print(_by_policy_table(s, f"Policy regret (mean ± {level} CI, {method})", s.regret, 1))
    if s.final_gap:
        title = f"Final-model gap (mean ± {level} CI, {method})"
        console.print(_by_policy_table(s, title, s.final_gap, 4))
    title = f"Average rank by {by} (1 = best; mean ± {level} CI)"
    console.print(_by_policy_table(s, title, s.ranks, 2))
    for w in s.win_rates:
        # columns are numbered like the rows, so ten policies fit in 80 columns
        title = (
            f"Win rate % at {s.horizon_text(w.horizon)} by {by} (row beats column, ties 1/2; "
            f"{w.units} units)"
        )
        table = Table(title=title)
        table.add_column("policy", no_wrap=True)
        for k in range(len(w.policies)):
            table.add_column(str(k + 1), justify="right", no_wrap=True)
        for i, p in enumerate(w.policies):
            row = (float(v) for v in w.matrix[i])
            values = ["-" if math.isnan(x) else f"{100 * x:.0f}" for x in row]
            table.add_row(f"{i + 1} {s.display_name(p)}", *values)
        console.print(table)
    if s.final_gap:
        console.print(FINAL_GAP_NOTE)
    for note in s.notes:
        console.print(note)


@app.command("summary")
@user_errors
def summary(
    directory: Annotated[Path, typer.Argument(help="Results directory of a sweep.")],
    horizon: Annotated[
        list[int] | None,
        typer.Option(
            help="Only this horizon (repeatable; a percent in a sweep of horizon_percents); "
            "win rates at each one given."
        ),
    ] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table | csv | json.")] = (
        OutputFormat.table
    ),
    ci: Annotated[CIName, typer.Option(help="t (Student t) | bootstrap (percentile).")] = CIName.t,
    metric: Annotated[
        MetricName,
        typer.Option(
            help="What ranks and win rates rank by: regret | final-gap (lower is better)."
        ),
    ] = MetricName.regret,
    resamples: Annotated[
        int, typer.Option(min=1, help=f"Bootstrap resamples (at most {MAX_RESAMPLES:,}).")
    ] = 10_000,
    seed: Annotated[int, typer.Option(min=0, help="Bootstrap seed.")] = 0,
) -> None:
    """Mean regret and final-model gap ± 95% CI, average rank ± CI and pairwise win rates (by
    --metric) per horizon."""
    s = summarize(
        directory, horizon, ci=ci.value, resamples=resamples, seed=seed, metric=metric.column
    )
    if fmt is OutputFormat.json:
        typer.echo(json.dumps(s.to_dict(), indent=2, allow_nan=False))
    elif fmt is OutputFormat.csv:
        typer.echo(s.to_csv(), nl=False)
    else:
        print_summary(s, Console(highlight=False, markup=False))
