"""Against the tools practitioners use today (issue 20): Optuna's pruners, run by Optuna's own
code on the test beds' curves (:mod:`risingbandits.integrations.optuna_pruners`), and every
policy of the library run with exactly the steps each replay consumed, on the same rewards
(same instance and seed): a paired comparison at equal budget.

Grid: each trial trains at most m steps, m in :data:`PEER_BUDGETS` (the budgets per candidate of
the model-selection section), so a pruner spends at most K x m. Test beds: IMDB (the paper's 7
learners, Bernoulli rewards), the lcdb-v1 test split and the live-v1 test split (never used to
tune anything). One task is one instance; its rows are kept in ``OUT/peers-<size>/`` (one JSON
file per task, written atomically), so a reproduction resumes where it stopped; a kept file counts
only with its task's :func:`task_fingerprint` (the policies' parameters, the instance's tables).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from risingbandits.experiments.executors import Executor
from risingbandits.instances.base import RisingInstance
from risingbandits.instances.families import family_instance, family_size, full_horizons
from risingbandits.integrations.optuna_pruners import PRUNERS, optuna_version, replay
from risingbandits.policies import make_policy
from risingbandits.reproduce.settings import (
    EXTRA_POLICIES,
    LCDB_PRESET,
    PAPER_POLICIES,
    PER_ARM_BUDGETS,
    Size,
)
from risingbandits.reproduce.task_rows import (
    compute_tasks,
    fingerprint,
    missing_beds,
    read_fingerprinted,
    read_task,
)
from risingbandits.simulate import simulate

PEER_BUDGETS = PER_ARM_BUDGETS
"""Budgets per candidate m: each trial (and each policy's share of the budget) at most m steps."""
QUICK_PEER_BUDGETS = (4, 16, 64)
FORMAT = "risingbandits-peers-2"


@dataclass(frozen=True)
class PeerBed:
    """A test bed: the instances of a family split and the runs (seeds) of each."""

    name: str
    title: str
    family: str
    params: tuple[tuple[str, str], ...]
    preset: str
    """The preset of the paper's ten policies on this bed (the others use their defaults)."""
    count: int
    seeds: int

    def instance(self, index: int) -> RisingInstance:
        """Instance ``index``, its table long enough for the largest budget."""
        params = dict(self.params)
        fulls = full_horizons(self.family, index + 1, 0, **params)
        horizon = 50_000 if fulls is None else fulls[index]
        return family_instance(self.family, index, 0, horizon, None, **params)


def peer_beds(size: Size) -> tuple[PeerBed, ...]:
    """The test beds at ``size`` (quick: the first instances, fewer runs)."""
    quick = size.name == "quick"
    return (
        PeerBed("imdb", "IMDB, 7 learners", "imdb-v1", (), "imdb", 1, 3 if quick else 30),
        PeerBed(
            "lcdb",
            "LCDB (lcdb-v1 test)",
            "lcdb-v1",
            (("split", "test"),),
            LCDB_PRESET,
            size.lcdb_instances,
            2 if quick else 3,
        ),
        PeerBed(
            "live",
            "live training (live-v1 test)",
            "live-v1",
            (("split", "test"),),
            LCDB_PRESET,
            4 if quick else family_size("live-v1", 0, split="test") or 0,
            2 if quick else 5,
        ),
    )


def peer_policies(preset: str) -> list[tuple[str, Any]]:
    """(label, configured policy) of every policy the section compares: the paper's ten with
    ``preset``, then the others with their defaults (as in the model-selection section)."""
    entries = [(n, make_policy(n, preset=preset)) for n in PAPER_POLICIES]
    return entries + [(n, make_policy(n)) for n in EXTRA_POLICIES]


@dataclass(frozen=True)
class PeerTask:
    bed: PeerBed
    index: int
    budgets: tuple[int, ...]

    @property
    def key(self) -> str:
        return f"{self.bed.name}-{self.index}"


def run_peer_task(task: PeerTask) -> dict[str, Any]:
    """Every (run, budget, pruner) of one instance: the replay's row, then each policy's at the
    steps it consumed. Columns: bed, instance, seed, budget, pruner, method, used, final_gap,
    regret, seconds (per run)."""
    instance = task.bed.instance(task.index)
    oracle = instance.oracle
    policies = peer_policies(task.bed.preset)
    rows: dict[str, list[Any]] = {k: [] for k in COLUMNS}

    def add(seed: int, m: int, pruner: str, method: str, pulls: Any, rec: Any, sec: float) -> None:
        for key, value in zip(
            COLUMNS,
            (
                task.bed.name,
                instance.name,
                seed,
                m,
                pruner,
                method,
                int(pulls.sum()),
                float(oracle.final_gap(pulls, rec)),
                float(oracle.regret(pulls)),
                sec,
            ),
            strict=True,
        ):
            rows[key].append(value)

    for seed in range(task.bed.seeds):
        for m in task.budgets:
            for pruner in PRUNERS:
                run = replay(instance, pruner, m, seed)
                add(seed, m, pruner, pruner, run.pulls, run.recommended, run.seconds)
                for label, policy in policies:
                    start = time.perf_counter()
                    res = simulate(instance, policy, run.used, [seed])
                    seconds = time.perf_counter() - start
                    add(seed, m, pruner, label, res.pulls[0], res.recommended[0], seconds)
    return {
        "format": FORMAT,
        "task": task.key,
        "fingerprint": task_fingerprint(task, instance),
        "rows": rows,
    }


def task_fingerprint(task: PeerTask, instance: RisingInstance | None = None) -> str:
    """The task's :func:`~risingbandits.reproduce.task_rows.fingerprint`: budgets, seeds,
    pruners and Optuna's version, each policy with its resolved parameters, the instance's
    tables and the code."""
    grid = {
        "budgets": task.budgets,
        "seeds": task.bed.seeds,
        "pruners": list(PRUNERS),
        "optuna": optuna_version(),
        "policies": [(label, p.to_dict()) for label, p in peer_policies(task.bed.preset)],
    }
    instance = task.bed.instance(task.index) if instance is None else instance
    return fingerprint(grid, instance, "reproduce/peers.py", "integrations/optuna_pruners.py")


COLUMNS = (
    "bed",
    "instance",
    "seed",
    "budget",
    "pruner",
    "method",
    "used",
    "final_gap",
    "regret",
    "seconds",
)


def peer_tasks(size: Size) -> list[PeerTask]:
    budgets = QUICK_PEER_BUDGETS if size.name == "quick" else PEER_BUDGETS
    return [PeerTask(bed, index, budgets) for bed in peer_beds(size) for index in range(bed.count)]


def peers_folder(out: Path, size: Size) -> Path:
    return out / f"peers-{size.name}"


TEXT_COLUMNS = ("bed", "instance", "pruner", "method")


def _read_task(path: Path, key: str, print_: str) -> dict[str, list[Any]] | None:
    return read_task(path, key, FORMAT, COLUMNS, TEXT_COLUMNS, print_)


def run_peers(
    out: Path,
    size: Size,
    pool: Executor,
    progress: Callable[[int, int], None] | None = None,
    beds: Sequence[str] | None = None,
) -> Path:
    """Compute the tasks not kept yet in ``OUT/peers-<size>`` on ``pool``; returns the folder.
    A test bed whose data is missing (the shared IMDB curves, an unbuilt live-v1) is skipped:
    the section says so."""
    folder = peers_folder(out, size)
    tasks = [t for t in peer_tasks_available(size) if beds is None or t.bed.name in beds]
    expected = {t.key: task_fingerprint(t) for t in tasks}
    read = partial(read_fingerprinted, _read_task, expected)
    compute_tasks(folder, tasks, run_peer_task, read, pool, progress)
    return folder


def peer_tasks_available(size: Size) -> list[PeerTask]:
    """:func:`peer_tasks` of the beds whose data can be read here (live-v1 is recorded on
    demand; the IMDB curves and LCDB may be missing too)."""
    missing = missing_beds(peer_beds(size))
    return [t for t in peer_tasks(size) if t.bed not in missing]


def load_peers(out: Path, size: Size) -> Iterator[dict[str, list[Any]]]:
    """The rows of every kept task (one column mapping per task)."""
    folder = peers_folder(out, size)
    for task in peer_tasks_available(size):
        rows = _read_task(folder / f"{task.key}.json", task.key, task_fingerprint(task))
        if rows is not None:
            yield rows
