"""Budgets in time (issue 22): the cost-aware default against the same policy counting pulls,
Successive Halving, Hyperband and ASHA (resource = cost), with the real costs of the test beds,
W workers and a deadline (:func:`risingbandits.simulate_budget.simulate_budget`).

Grid: W in :data:`WORKERS`; deadlines D_m at which the W workers can give every candidate m steps
(:func:`deadline_for`), m in :data:`STEPS` and the full table (every candidate its whole curve).
Test beds: the lcdb-v1 and live-v1 *test* splits (never used to choose anything), with the
candidates of generator seed 0 (the first held-out set) and of :data:`DRAWS`' other seeds (the
second and third held-out sets: other candidates on the same tasks, as in ``reproduce heldout2``
and ``heldout3``); the dev splits are what ``tuning/deadlines_dev.py`` looks at. One task is one
instance; its rows are kept in ``OUT/deadlines-<size>/`` (one JSON file per task, written
atomically), so a reproduction resumes where it stopped. A kept file counts only with its task's
:func:`task_fingerprint` (the methods' parameters and the instance's tables): a rebuilt live-v1,
whose costs are the wall times its build measured, or a changed default is computed again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from risingbandits.experiments.executors import Executor
from risingbandits.instances.base import RisingInstance
from risingbandits.instances.families import family_instance, family_size, full_horizons
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.policies import Policy, make_policy
from risingbandits.reproduce.settings import HELDOUT2_DRAW, HELDOUT3_DRAW, Size
from risingbandits.reproduce.task_rows import (
    compute_tasks,
    fingerprint,
    missing_beds,
    read_fingerprinted,
    read_task,
)
from risingbandits.simulate_budget import budget_capacity, cumulative_costs, simulate_budget

WORKERS = (1, 4, 16)
STEPS = (4, 16, 64, 256)
"""Steps per candidate the deadline allows (the full table is the last deadline)."""
FULL = 0
"""The ``steps`` of the deadline at which every candidate can make its whole table."""
FORMAT = "risingbandits-deadlines-2"
DRAWS = (0, HELDOUT2_DRAW, HELDOUT3_DRAW)
"""Generator seeds of the test beds' candidates: the first held-out set's, the second's, the
third's."""
COUNTING = f"{DEFAULT_POLICY} (counting pulls)"


SH_COST = "successive halving (cost)"
PLOT_KEYS = {
    DEFAULT_POLICY: DEFAULT_POLICY,
    COUNTING: f"{DEFAULT_POLICY}[pulls]",
    SH_COST: "successive-halving[cost]",
    "hyperband": "hyperband",
    "asha": "asha",
}
"""Each method's key in the figures (a registry name, or a variant of one: its colour)."""


def methods() -> list[tuple[str, Policy, bool]]:
    """(label, policy, plans in cost) of every method compared: the default planning in cost,
    the same policy counting pulls, and the fixed-budget tools with resource = cost."""
    default = make_policy(DEFAULT_POLICY)
    return [
        (DEFAULT_POLICY, default, True),
        (COUNTING, default, False),
        (SH_COST, make_policy("hyperband", brackets=1), True),
        ("hyperband", make_policy("hyperband"), True),
        ("asha", make_policy("asha"), True),
    ]


def deadline_for(instance: RisingInstance, steps: int, workers: int) -> float:
    """The wall-clock deadline at which ``workers`` workers can give every candidate ``steps``
    steps (at their real costs): the cost of those steps summed over candidates, spread over
    min(W, K) workers (one candidate trains on one worker at a time). ``steps`` = :data:`FULL`:
    the whole table."""
    m = instance.max_horizon if steps == FULL else min(steps, instance.max_horizon)
    cum = cumulative_costs(instance)
    return float(cum[:, m].sum() / min(workers, instance.n_arms))


@dataclass(frozen=True)
class DeadlineBed:
    """A test bed: the instances of a family split, the runs (seeds) of each, and the
    generator seed that drew their candidates."""

    name: str
    title: str
    family: str
    split: str
    count: int
    seeds: int
    draw: int = 0

    def instance(self, index: int) -> RisingInstance:
        fulls = full_horizons(self.family, index + 1, self.draw, split=self.split)
        horizon = 50_000 if fulls is None else fulls[index]
        return family_instance(self.family, index, self.draw, horizon, None, split=self.split)


def deadline_beds(size: Size, split: str = "test", draw: int = 0) -> tuple[DeadlineBed, ...]:
    """The test beds at ``size`` (quick: the first instances, fewer runs); ``split="dev"`` for
    the development instances; ``draw``: the generator seed of their candidates."""
    quick = size.name == "quick"
    live = family_size("live-v1", 0, split=split) or 0
    drawn = f", candidates of generator seed {draw}" if draw else ""
    return (
        DeadlineBed(
            "lcdb",
            f"LCDB (lcdb-v1 {split}{drawn}, cost = LCDB's traintime)",
            "lcdb-v1",
            split,
            4 if quick else size.lcdb_instances,
            2 if quick else 3,
            draw,
        ),
        DeadlineBed(
            "live",
            f"live training (live-v1 {split}{drawn}, cost = measured seconds)",
            "live-v1",
            split,
            min(live, 4 if quick else live),
            2 if quick else 5,
            draw,
        ),
    )


@dataclass(frozen=True)
class DeadlineTask:
    bed: DeadlineBed
    index: int

    @property
    def key(self) -> str:
        draw = f"-draw{self.bed.draw}" if self.bed.draw else ""
        return f"{self.bed.name}-{self.bed.split}-{self.index}{draw}"


COLUMNS = (
    "bed",
    "instance",
    "seed",
    "workers",
    "steps",
    "method",
    "final_gap",
    "cost_regret",
    "idle",
    "spent",
    "seconds",
)
TEXT_COLUMNS = ("bed", "instance", "method")


def run_deadline_task(task: DeadlineTask) -> dict[str, Any]:
    """Every (W, deadline, method) of one instance, each over the bed's seeds. ``cost_regret``
    and ``spent`` are shares of the budget's capacity (min(W, K) x D), ``idle`` the share of the
    workers' time W x D without a pull."""
    instance = task.bed.instance(task.index)
    rows: dict[str, list[Any]] = {k: [] for k in COLUMNS}
    seeds = list(range(task.bed.seeds))
    for workers in WORKERS:
        for steps in (*STEPS, FULL):
            deadline = deadline_for(instance, steps, workers)
            capacity = budget_capacity(deadline, workers, "deadline", instance.n_arms)
            for label, policy, plan in methods():
                start = time.perf_counter()
                res = simulate_budget(instance, policy, deadline, seeds, workers=workers, plan=plan)
                seconds = (time.perf_counter() - start) / len(seeds)
                for s in range(len(seeds)):
                    values = (
                        task.bed.name,
                        instance.name,
                        seeds[s],
                        workers,
                        steps,
                        label,
                        float(res.final_gap[s]),
                        float(res.cost_regret[s] / capacity),
                        float(res.idle[s].sum() / (deadline * workers)),
                        float(res.spent[s] / capacity),
                        seconds,
                    )
                    for key, value in zip(COLUMNS, values, strict=True):
                        rows[key].append(value)
    return {
        "format": FORMAT,
        "task": task.key,
        "fingerprint": task_fingerprint(task, instance),
        "rows": rows,
    }


def task_fingerprint(task: DeadlineTask, instance: RisingInstance | None = None) -> str:
    """The task's :func:`~risingbandits.reproduce.task_rows.fingerprint`: the grid, the seeds,
    each method with its resolved parameters, the instance's tables and the code."""
    grid = {
        "workers": WORKERS,
        "steps": STEPS,
        "seeds": task.bed.seeds,
        "methods": [(label, policy.to_dict(), plan) for label, policy, plan in methods()],
    }
    instance = task.bed.instance(task.index) if instance is None else instance
    return fingerprint(grid, instance, "reproduce/deadlines.py")


def deadline_tasks(size: Size, split: str = "test", draw: int = 0) -> list[DeadlineTask]:
    beds = deadline_beds(size, split, draw)
    return [DeadlineTask(bed, index) for bed in beds for index in range(bed.count)]


def deadlines_folder(out: Path, size: Size) -> Path:
    return out / f"deadlines-{size.name}"


def _read_task(path: Path, key: str, print_: str) -> dict[str, list[Any]] | None:
    return read_task(path, key, FORMAT, COLUMNS, TEXT_COLUMNS, print_)


def tasks_available(size: Size, split: str = "test", draw: int = 0) -> list[DeadlineTask]:
    """:func:`deadline_tasks` of the beds whose data can be read here (live-v1 is recorded on
    demand; LCDB may be missing)."""
    missing = missing_beds(deadline_beds(size, split, draw))
    return [t for t in deadline_tasks(size, split, draw) if t.bed not in missing]


def run_deadlines(
    out: Path,
    size: Size,
    pool: Executor,
    progress: Callable[[int, int], None] | None = None,
    split: str = "test",
    draws: tuple[int, ...] = DRAWS,
) -> Path:
    """Compute the tasks (of the candidates of each of ``draws``) not kept yet in
    ``OUT/deadlines-<size>`` on ``pool``; returns the folder. A test bed whose data is missing
    (an unbuilt live-v1) is skipped: the section says so."""
    folder = deadlines_folder(out, size)
    tasks = [t for draw in draws for t in tasks_available(size, split, draw)]
    expected = {t.key: task_fingerprint(t) for t in tasks}
    read = partial(read_fingerprinted, _read_task, expected)
    compute_tasks(folder, tasks, run_deadline_task, read, pool, progress)
    return folder


def load_deadlines(
    out: Path, size: Size, split: str = "test", draw: int = 0
) -> Iterator[dict[str, list[Any]]]:
    """The rows of every kept task of the candidates of ``draw`` (one column mapping per
    task)."""
    folder = deadlines_folder(out, size)
    for task in tasks_available(size, split, draw):
        rows = _read_task(folder / f"{task.key}.json", task.key, task_fingerprint(task))
        if rows is not None:
            yield rows
