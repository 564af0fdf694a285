"""The library entry point of the engine: run (or resume) a sweep into a results directory.

>>> run_sweep("examples/quick.toml", "results/quick", executor="serial")  # doctest: +SKIP

The library prints nothing: ``progress(done_cells, total_cells)`` is called once at the start
(with the cells a previous run already finished) and after each part is on disk.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from risingbandits.experiments.executors import Executor, make_executor
from risingbandits.experiments.plan import TARGET_STEPS, make_plan
from risingbandits.experiments.spec import Spec, load_spec
from risingbandits.experiments.store import Store
from risingbandits.experiments.worker import TaskResult, run_task_part
from risingbandits.outputs import check_ours

SweepProgress = Callable[[int, int], None]
MAX_PENDING_WRITES = 2


@dataclass(frozen=True)
class SweepResult:
    """What a call of :func:`run_sweep` did."""

    path: Path
    resumed: bool
    tasks_total: int
    tasks_run: int
    cells_total: int
    cells_before: int
    elapsed: float
    set_aside: tuple[Path, ...] = ()
    """Damaged, duplicate or foreign part files moved to ``parts/.damaged/`` before running."""

    @property
    def cells_run(self) -> int:
        return self.cells_total - self.cells_before


class _PartWriter:
    """Writes parts in one background thread, so a part's Parquet encoding and fsync overlap
    the next task's simulation (the compiled loop releases the GIL). At most
    ``MAX_PENDING_WRITES`` results wait; ``progress`` is called in the caller's thread once a
    part is on disk. Leaving the block waits for every pending write."""

    def __init__(
        self, store: Store, spec_hash: str, done: int, total: int, progress: SweepProgress | None
    ) -> None:
        self.store, self.spec_hash, self.progress = store, spec_hash, progress
        self.done, self.total = done, total
        self.pending: deque[tuple[Future[None], int]] = deque()
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="risingbandits-writer")

    def __enter__(self) -> _PartWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.thread.shutdown(wait=True)
        if kind is None:
            self._settle(0)

    def submit(self, result: TaskResult) -> None:
        future = self.thread.submit(
            self.store.write_part, result.task_id, result.rows, self.spec_hash
        )
        self.pending.append((future, result.n_cells))
        self._settle(MAX_PENDING_WRITES)

    def _settle(self, keep: int) -> None:
        while self.pending and (len(self.pending) > keep or self.pending[0][0].done()):
            future, n_cells = self.pending.popleft()
            future.result()
            self.done += n_cells
            if self.progress is not None:
                self.progress(self.done, self.total)


def run_sweep(
    spec: Spec | str | Path,
    out: str | Path,
    *,
    executor: str | Executor | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: SweepProgress | None = None,
    target_steps: int = TARGET_STEPS,
) -> SweepResult:
    """Run every cell of ``spec`` (a :class:`Spec` or a TOML file) into the directory ``out``.

    ``executor``: ``"serial"``, ``"processes"`` (default; ``workers`` processes, all cores by
    default) or ``"dask"`` (a local cluster on 127.0.0.1, or the scheduler at ``scheduler``), or
    an executor object. A directory that already holds this spec's sweep is resumed (only the
    missing tasks run, with the task size it was started with) after its damaged, duplicate
    and foreign part files are moved to ``parts/.damaged/``; one of another spec is refused.
    A failed write (a full disk) raises ``OSError`` naming the file; the parts already written
    stay and the store stays resumable.
    """
    sweep_spec = spec if isinstance(spec, Spec) else load_spec(spec)
    store = Store(out)
    if executor is None or isinstance(executor, str):
        runner = make_executor(executor, workers, scheduler)
    else:
        runner = executor
    start = time.perf_counter()
    store.check_new_or_same(sweep_spec)  # refuse before touching the directory
    with store.lock():
        resumed = store.check_new_or_same(sweep_spec)
        store.clean_tmp()
        if resumed:
            plan = store.plan()
            store.parts_dir.mkdir(exist_ok=True)  # removed with all its parts: recompute them
        else:
            plan = make_plan(sweep_spec, target_steps)
            store.create(sweep_spec, plan)
        report = store.inspect(full=True, plan=plan)
        set_aside = store.set_aside(report.problems)
        todo = [t for t in plan.tasks if t.id not in report.good]
        total = plan.n_cells
        before = total - sum(t.n_cells for t in todo)
        if progress is not None:
            progress(before, total)
        if todo:
            writer = _PartWriter(store, sweep_spec.hash, before, total, progress)
            with ExitStack() as stack:
                try:
                    pool = stack.enter_context(runner)
                except BaseException:
                    if not resumed:  # nothing computed (a Dask scheduler out of reach)
                        store.discard_new()
                    raise
                stack.enter_context(writer)
                for result in pool.imap_unordered(run_task_part, todo):
                    writer.submit(result)
    return SweepResult(
        Path(out),
        resumed,
        len(plan.tasks),
        len(todo),
        total,
        before,
        time.perf_counter() - start,
        tuple(set_aside),
    )


def resume_sweep(
    out: str | Path,
    *,
    executor: str | Executor | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: SweepProgress | None = None,
) -> SweepResult:
    """Finish the sweep stored in ``out`` (its spec is read from the manifest)."""
    check_ours(out, "out")  # before its manifest is read
    return run_sweep(
        Store(out).spec(),
        out,
        executor=executor,
        workers=workers,
        scheduler=scheduler,
        progress=progress,
    )
