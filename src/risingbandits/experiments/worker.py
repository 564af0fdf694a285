"""Run one task: rebuild its instance and policy from their descriptions, simulate, make rows.

Workers never receive mean tables (a 100-instance family at T = 50,000 is ~200 MB): they build
each instance from its small :class:`~risingbandits.experiments.spec.InstanceRef` and keep the
last few in a per-process cache (tasks come instance-major, so neighbours share instances).
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from risingbandits.experiments.plan import Task
from risingbandits.experiments.seeds import run_seed
from risingbandits.experiments.spec import InstanceRef
from risingbandits.instances import RisingInstance
from risingbandits.simulate import simulate_horizons

ROW_SCHEMA = pa.schema(
    [
        ("instance", pa.string()),
        ("family", pa.string()),
        ("n_arms", pa.int32()),
        ("noise", pa.string()),
        ("policy", pa.string()),
        ("policy_name", pa.string()),
        ("params", pa.string()),
        ("reconstruction", pa.bool_()),
        ("horizon", pa.int64()),
        ("seed", pa.int64()),
        ("regret", pa.float64()),
        ("final_gap", pa.float64()),
        ("recommended", pa.int32()),
        ("reward", pa.float64()),
        ("pulls", pa.list_(pa.int64())),
        ("optimal_arm", pa.int32()),
        ("optimal_value", pa.float64()),
        ("wall_time", pa.float64()),
    ]
)
"""Columns of a result row. ``policy`` is the spec label, ``params`` the resolved parameters
(JSON), ``seed`` the seed index, ``regret`` the expected policy regret of the run, ``final_gap``
its final-model gap and ``recommended`` the arm it would deploy (see
:class:`~risingbandits.simulate.SimulationResult`), ``reward`` its realised reward,
``optimal_arm`` the best fixed arm at that horizon, ``wall_time`` the seconds of the simulation
that produced the row (for a horizon-free policy: its one run to the largest horizon, shared by
the rows of every horizon)."""


@lru_cache(maxsize=8)
def load_instance(ref: InstanceRef, horizon: int) -> RisingInstance:
    """The instance described by ``ref`` with a table of length ``horizon`` (cached)."""
    return ref.build(horizon)


class TaskResult(NamedTuple):
    """A finished task: its id, its number of cells and its rows."""

    task_id: str
    n_cells: int
    rows: pa.Table


def run_task_part(task: Task) -> TaskResult:
    """:func:`run_task` with the task's id (what executors send back to the writer)."""
    return TaskResult(task.id, task.n_cells, run_task(task))


def run_task(task: Task) -> pa.Table:
    """The rows of every cell of ``task`` (ordered by horizon, then seed)."""
    instance = load_instance(task.instance, max(task.horizons))
    policy = task.policy.build()
    seeds = [run_seed(task.sweep_seed, task.instance.id, s) for s in task.seeds]
    durations: list[float] = []
    clock = [time.perf_counter()]

    def tick(done: int, total: int) -> None:
        now = time.perf_counter()
        durations.append(now - clock[0])
        clock[0] = now

    results = simulate_horizons(instance, policy, task.horizons, seeds, progress=tick)
    n_seeds = len(seeds)
    wall = np.asarray(durations).reshape(-1, n_seeds)  # one row per simulated horizon
    columns: dict[str, list] = {name: [] for name in ROW_SCHEMA.names}
    for k, horizon in enumerate(task.horizons):
        res = results[horizon]
        times = wall[k] if policy.uses_horizon else wall[0]
        columns["horizon"].extend([horizon] * n_seeds)
        columns["seed"].extend(task.seeds)
        columns["regret"].extend(res.regret.tolist())
        columns["final_gap"].extend(res.final_gap.tolist())
        columns["recommended"].extend(res.recommended.tolist())
        columns["reward"].extend(res.reward.tolist())
        columns["pulls"].extend(res.pulls.tolist())
        columns["optimal_arm"].extend([res.best_arm] * n_seeds)
        columns["optimal_value"].extend([res.optimal_value] * n_seeds)
        columns["wall_time"].extend(times.tolist())
    n_rows = len(columns["horizon"])
    constants = {
        "instance": task.instance.id,
        "family": str(instance.meta.get("family", "table")),
        "n_arms": instance.n_arms,
        "noise": str(instance.noise),
        "policy": task.policy.label,
        "policy_name": task.policy.name,
        "params": task.policy.params_json,
        "reconstruction": task.policy.reconstruction,
    }
    for name, value in constants.items():
        columns[name] = [value] * n_rows
    return pa.Table.from_pydict(columns, schema=ROW_SCHEMA)
