"""Run a reproduction: the target's sweeps through the engine, the theory checks, the report.

>>> reproduce("all", "reproduction-quick", quick=True)  # doctest: +SKIP

Stores go to ``OUT/<sweep>-<size>`` (e.g. ``OUT/ltf-full``), so a full and a quick run never
share a store and running a target again resumes it (a finished store computes nothing). One
worker pool serves the whole run (started only when some work is left): the sweeps one after
another without a gap (:mod:`risingbandits.reproduce.relay`) and, while the report is built,
the theory checks, reading the stores and drawing the figures
(:mod:`risingbandits.reproduce.background`). The library prints nothing:
``progress(stage, done, total)`` is called with the sweep name and its cells, with ``"peers"``
and its instances (Optuna's pruners, :mod:`risingbandits.reproduce.peers`), or with ``"theory"``
and ``"report"``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import TypeVar

from risingbandits.experiments.executors import Executor, make_executor
from risingbandits.experiments.spec import Spec, SpecError, parse_spec
from risingbandits.experiments.sweep import run_sweep
from risingbandits.outputs import check_ours, writable_dir
from risingbandits.plots.common import DPI
from risingbandits.reproduce.background import InBackground
from risingbandits.reproduce.claims import ClaimResult
from risingbandits.reproduce.deadlines import deadline_beds, run_deadlines
from risingbandits.reproduce.peers import peer_beds, run_peers
from risingbandits.reproduce.relay import relay
from risingbandits.reproduce.report import Theory, check_before_run, write_report
from risingbandits.reproduce.settings import (
    DEADLINE_TARGETS,
    FULL,
    PEER_TARGETS,
    QUICK,
    THEORY_TARGETS,
    Size,
    SweepDef,
    target_sweeps,
)
from risingbandits.reproduce.task_rows import beds_not_run
from risingbandits.reproduce.theory_checks import keep_theory, load_theory, run_theory_checks

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[str, int, int], None]


class _LentExecutor:
    """One executor lent to several sweeps: started on first use, closed by its owner; a sweep
    entering or leaving it changes nothing (so kernels are loaded once per worker)."""

    def __init__(self, make: Callable[[], Executor], stack: ExitStack) -> None:
        self._make, self._stack = make, stack
        self._inner: Executor | None = None
        self._starting = threading.Lock()  # background threads may ask for it too

    def __enter__(self) -> _LentExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        with self._starting:
            if self._inner is None:
                self._inner = self._stack.enter_context(self._make())
        return self._inner.imap_unordered(fn, items)


@contextmanager
def shared_executor(
    kind: str | None, workers: int | None, scheduler: str | None
) -> Iterator[_LentExecutor]:
    """An executor for the whole reproduction (checked now, started on first use)."""
    executor = make_executor(kind, workers, scheduler)  # bad arguments fail before any work
    with ExitStack() as stack:
        yield _LentExecutor(lambda: executor, stack)


@dataclass(frozen=True)
class SweepRun:
    """What one sweep of the reproduction did."""

    name: str
    path: Path
    resumed: bool
    cells_run: int
    cells_total: int
    elapsed: float


@dataclass(frozen=True)
class ReproduceResult:
    """What :func:`reproduce` did: sweeps, the report (None with ``report=False``), claims."""

    out: Path
    size: str
    sweeps: tuple[SweepRun, ...]
    report: Path | None
    claims: tuple[ClaimResult, ...]
    elapsed: float
    skipped: tuple[tuple[str, str], ...] = ()
    """(sweep, why) of the optional sweeps and of the peers' and deadlines' test beds whose
    instances cannot be read here (live-v1 not recorded, LCDB or the IMDB curves missing)."""

    @property
    def cells_run(self) -> int:
        return sum(s.cells_run for s in self.sweeps)


def reproduce(
    target: str,
    out: str | Path,
    *,
    quick: bool = False,
    executor: str | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    report: bool = True,
    report_only: bool = False,
    overwrite: bool = False,
    dpi: int = DPI,
) -> ReproduceResult:
    """Run ``target`` (one of :data:`~risingbandits.reproduce.settings.TARGETS`: ``intro``,
    ``ltf``, ``concave``, ``imdb``, ``sensitivity``, ``robustness``, ``theory``,
    ``modelselection``, ``heldout``, ``heldout2``, ``heldout3``, ``peers``, ``deadlines`` or
    ``all``) into ``out`` and write the report of every finished store there.

    ``report_only`` runs nothing and only rewrites the figures and the report from the stores;
    ``overwrite`` allows replacing the report of another run (another size or other specs).
    An ``out`` another user could write or replace is refused (one ``ValueError`` line).
    """
    start = time.perf_counter()
    size = QUICK if quick else FULL
    folder = Path(out)
    defs = target_sweeps(target, size)
    check_ours(folder, "out")  # before anything is read from it
    check_before_run(folder, size, overwrite)
    todo, skipped = ([], []) if report_only else _specs(defs, size)
    if not report_only:
        writable_dir(folder, "out")
    with shared_executor(executor, workers, scheduler) as pool:
        jobs = [partial(_sweep, d, spec, folder / d.store_name(size), progress) for d, spec in todo]
        runs = relay(jobs, pool)
        if target in PEER_TARGETS and not report_only:
            run_peers(folder, size, pool, None if progress is None else _stage(progress, "peers"))
            skipped += [(f"peers on {bed}", why) for bed, why in beds_not_run(peer_beds(size))]
        if target in DEADLINE_TARGETS and not report_only:
            stage = None if progress is None else _stage(progress, "deadlines")
            run_deadlines(folder, size, pool, stage)
            skipped += [
                (f"deadlines on {bed}", why) for bed, why in beds_not_run(deadline_beds(size))
            ]
        compute = target in THEORY_TARGETS and not report_only
        if progress is not None and compute:
            progress("theory", 0, 1)
        where = folder / f"theory-{size.name}.json"
        theory = pending_theory(pool, where, size.dominance_instances, compute)
        path: Path | None = None
        claims: list[ClaimResult] = []
        if report:
            if progress is not None:
                progress("report", 0, 1)
            path, claims = write_report(
                folder,
                size,
                theory,
                overwrite=overwrite,
                dpi=dpi,
                pool=None if executor == "serial" else pool,  # nothing to gain in-process
            )
        else:
            theory()
    return ReproduceResult(
        folder,
        size.name,
        tuple(runs),
        path,
        tuple(claims),
        time.perf_counter() - start,
        tuple(skipped),
    )


def _specs(
    defs: list[SweepDef], size: Size
) -> tuple[list[tuple[SweepDef, Spec]], list[tuple[str, str]]]:
    """Each sweep's spec, parsed before any work (a missing extra stops the run here), and the
    optional sweeps whose instances cannot be read (live-v1 not recorded), with why."""
    todo, skipped = [], []
    for d in defs:
        try:
            todo.append((d, parse_spec(d.spec_text(size))))
        except SpecError as exc:
            if not d.optional:
                raise
            skipped.append((d.name, str(exc)))
    return todo, skipped


def pending_theory(
    pool: Executor, path: Path, instances: int, compute: bool
) -> Callable[[], Theory]:
    """The theory checks (dominance search over ``instances`` instances) as a function that
    returns them (None when not kept and not ``compute``). Kept checks are read now; missing
    ones start now on one worker of ``pool`` (beside the report, which needs them only at its
    theory section) and the function waits for them, keeps them in ``path`` and raises what
    they raised."""
    kept = load_theory(path, instances)
    if kept is not None or not compute:
        return lambda: kept
    job = InBackground(pool, run_theory_checks, [instances])

    def result() -> Theory:
        checks = job.get(instances)
        keep_theory(path, checks)
        return checks

    return cache(result)


def _sweep(
    d: SweepDef, spec: Spec, store: Path, progress: Progress | None, pool: Executor
) -> SweepRun:
    step = None if progress is None else _stage(progress, d.name)
    res = run_sweep(spec, store, executor=pool, progress=step)
    return SweepRun(d.name, res.path, res.resumed, res.cells_run, res.cells_total, res.elapsed)


def _stage(progress: Progress, name: str) -> Callable[[int, int], None]:
    def update(done: int, total: int) -> None:
        progress(name, done, total)

    return update
