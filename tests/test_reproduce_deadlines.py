"""Budgets in time in the reproduction (issue 22): the deadline of a row, one task's rows, the
report's table and its goal, and kept task files read back only when every value has its type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce.deadlines import (
    COLUMNS,
    COUNTING,
    FORMAT,
    FULL,
    STEPS,
    WORKERS,
    DeadlineBed,
    DeadlineTask,
    _read_task,
    deadline_for,
    methods,
    run_deadline_task,
)
from risingbandits.reproduce.sections.deadlines import DeadlineRows, bed_table
from risingbandits.simulate_budget import reachable_pulls

COSTLY = rb.from_means(
    np.tile(np.linspace(0.1, 0.9, 300), (4, 1)) * np.array([[1.0], [0.9], [0.8], [0.7]]),
    rb.Noise("gaussian", 0.05),
    costs=[1.0, 2.0, 0.5, 4.0],
)


@pytest.mark.parametrize("workers", [1, 2, 4, 16])
def test_the_deadline_gives_every_candidate_m_steps_across_the_workers(workers: int) -> None:
    deadline = deadline_for(COSTLY, 10, workers)
    lanes = min(workers, COSTLY.n_arms)
    assert deadline * lanes == pytest.approx(10 * (1.0 + 2.0 + 0.5 + 4.0))
    full = deadline_for(COSTLY, FULL, workers)
    assert full * lanes == pytest.approx(300 * 7.5)
    if workers >= COSTLY.n_arms:  # m steps at the mean cost: the cheap get more, the dear fewer
        reach = reachable_pulls(COSTLY, deadline)
        assert reach[3] < 10 < reach[2]


class _Bed(DeadlineBed):
    def instance(self, index: int) -> rb.RisingInstance:
        return COSTLY


def test_a_task_has_a_row_per_seed_worker_count_deadline_and_method() -> None:
    bed = _Bed("toy", "toy", "none", "test", 1, 2)
    result = run_deadline_task(DeadlineTask(bed, 0))
    rows = result["rows"]
    assert result["format"] == FORMAT and set(rows) == set(COLUMNS)
    expected = 2 * len(WORKERS) * (len(STEPS) + 1) * len(methods())
    assert all(len(v) == expected for v in rows.values())
    assert set(rows["method"]) == {label for label, _, _ in methods()}
    gaps = np.asarray(rows["final_gap"])
    assert np.all(gaps >= -1e-12)
    spent = np.asarray(rows["spent"])
    assert np.all(spent <= 1 + 1e-9) and np.all(spent > 0)
    table = bed_table("toy", DeadlineRows([rows]))
    assert len(table.rows) == len(WORKERS) * (len(STEPS) + 1)


def _rows(default: list[float], other: list[float]) -> dict[str, list[Any]]:
    n = len(default)
    out: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    for method, gaps in ((DEFAULT_POLICY, default), (COUNTING, other)):
        for seed, gap in enumerate(gaps):
            for column, value in zip(
                COLUMNS,
                ("toy", "x/0/0", seed, 4, 16, method, gap, 0.0, 0.0, 1.0, 0.001),
                strict=True,
            ):
                out[column].append(value)
    assert len(out["bed"]) == 2 * n
    return out


def test_the_goal_is_lowest_mean_or_no_method_significantly_lower() -> None:
    base = [0.02, 0.03, 0.01, 0.04, 0.02, 0.03]
    lower = [g - 0.01 for g in base]  # every unit 0.01 lower: significant
    noisy = [0.0, 0.05, 0.0, 0.04, 0.0, 0.04]  # lower mean, not significantly
    assert DeadlineRows([_rows(base, [g + 0.01 for g in base])]).goal_met((4, 16))
    assert not DeadlineRows([_rows(base, lower)]).goal_met((4, 16))
    rows = DeadlineRows([_rows(base, noisy)])
    assert rows.paired((4, 16), COUNTING).mean < 0 and rows.goal_met((4, 16))


def _kept(rows: Any, **changes: Any) -> dict[str, Any]:
    return {"format": FORMAT, "task": "lcdb-test-3", "rows": rows, **changes}


def test_a_kept_task_is_read_back_and_a_damaged_one_is_not(tmp_path: Path) -> None:
    rows = _rows([0.1, 0.2], [0.1, 0.3])
    path = tmp_path / "task.json"
    path.write_text(json.dumps(_kept(rows)))
    assert _read_task(path, "lcdb-test-3") == rows
    for damaged in (
        _kept(rows, format="risingbandits-peers-1"),
        _kept({**rows, "idle": ["x"] * 4}),
        _kept({**rows, "workers": [True] * 4}),
        _kept({k: v for k, v in rows.items() if k != "spent"}),
    ):
        path.write_text(json.dumps(damaged))
        assert _read_task(path, "lcdb-test-3") is None
