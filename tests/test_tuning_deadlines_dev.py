"""``tuning/deadlines_dev.py --draws``: the dev tasks with several candidate draws, pooled, each
(instance, draw) its own unit of the intervals or each task (``--by task``); a bad ``--draws``
is one parser error. The same
for ``tuning/deadlines_heldout.py --pooled``, and its ``--draw`` refuses the report's seeds; the
statistics of ``tuning/deploy_noise_screen.py``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np
import pytest

from conftest import REPO, load_script


def deadlines_dev() -> Any:
    return load_script("tuning/deadlines_dev.py", "deadlines_dev")


def test_draws_are_distinct_seeds_and_a_bad_value_is_named() -> None:
    script = deadlines_dev()
    parser = argparse.ArgumentParser()
    assert script.draw_list(parser, "0") == (0,)
    assert script.draw_list(parser, "0,1,2,3,1") == (0, 1, 2, 3)
    assert script.draw_list(parser, "0-3") == (0, 1, 2, 3)
    for bad in ("x", "-1", "", "0,,1"):
        with pytest.raises(SystemExit) as raised:
            script.draw_list(parser, bad)
        assert raised.value.code == 2


def test_pooled_draws_name_each_instance_with_its_draw_or_its_task() -> None:
    script = deadlines_dev()
    task = {"instance": ["lcdb-v1/0/2", "lcdb-v1/0/2"], "final_gap": [0.1, 0.2]}
    assert script.pooled(task, 0, 1) is task  # one draw: the rows as kept
    assert script.pooled(task, 0, 1, "task") is task
    named = script.pooled(task, 3, 4)
    assert named["instance"] == ["lcdb-v1/0/2@draw3"] * 2 and named["final_gap"] == [0.1, 0.2]
    assert task["instance"] == ["lcdb-v1/0/2"] * 2  # the kept rows are not changed
    other = {"instance": ["lcdb-v1/3/2"], "final_gap": [0.4]}
    by_task = [script.pooled(t, d, 4, "task")["instance"] for t, d in ((task, 0), (other, 3))]
    assert by_task == [["lcdb-v1/2"] * 2, ["lcdb-v1/2"]]  # the draws of a task: one unit
    assert script.task_name("lcdb-v1/9/14@draw9") == "lcdb-v1/14"
    assert script.task_name("lcdb-v1/0/14") == "lcdb-v1/14"


def two_tasks_four_draws() -> list[tuple[int, dict[str, list[Any]]]]:
    """Kept rows of two LCDB tasks with four candidate draws each, in one cell (W = 1, 4 steps):
    the second method lower than the default on every unit, by 0.001 on one task and 0.02 on
    the other; the rest as good as the default."""
    from risingbandits.reproduce.deadlines import COLUMNS, methods

    labels = [label for label, _, _ in methods()]
    kept = []
    for draw in range(4):
        for index, lower in ((1, 0.001), (2, 0.02)):
            rows: dict[str, list[Any]] = {c: [] for c in COLUMNS}
            for j, label in enumerate(labels):
                gap = 0.05 - (lower + 0.0001 * draw if j == 1 else 0.0)
                values = ("lcdb", f"lcdb-v1/{draw}/{index}", 0, 1, 4, label, gap, 0, 0, 1, 0)
                for key, value in zip(COLUMNS, values, strict=True):
                    rows[key].append(value)
            kept.append((draw, rows))
    return kept


def test_intervals_over_tasks_average_each_tasks_draws_first() -> None:
    """Over the eight (instance, draw) units the other method is significantly lower; over the
    two tasks (each one's draws averaged) the interval, with one degree of freedom, is not."""
    from risingbandits.reproduce.deadlines import methods
    from risingbandits.reproduce.sections.deadlines import DeadlineRows

    script = deadlines_dev()
    kept = two_tasks_four_draws()
    cell, other = (1, 4), [label for label, _, _ in methods()][1]
    units = DeadlineRows(script.pooled(t, d, 4) for d, t in kept)
    tasks = DeadlineRows(script.pooled(t, d, 4, "task") for d, t in kept)
    assert units.instances == 8 and tasks.instances == 2
    assert units.paired(cell, other).mean == pytest.approx(tasks.paired(cell, other).mean)
    assert units.paired(cell, other).high < 0 and not units.goal_met(cell)
    assert tasks.paired(cell, other).high > 0 and tasks.goal_met(cell)


def test_the_held_out_script_counts_the_cells_over_units_and_over_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(REPO / "tuning"))
    script = load_script("tuning/deadlines_heldout.py", "deadlines_heldout")
    kept = two_tasks_four_draws()
    met, cells, lines = script.judge([script.pooled(t, d, 4) for d, t in kept])
    assert (met, cells) == (0, 1)
    assert lines[-1].startswith("lcdb W= 1 m=   4 | hace-ucb 0.0500")
    assert lines[-1].endswith("GOAL FAILS") and "!" in lines[-1]
    met, cells, lines = script.judge([script.pooled(t, d, 4, "task") for d, t in kept])
    assert (met, cells) == (1, 1) and lines[-1].endswith("goal holds") and "!" not in lines[-1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--draw", "1"], "--draw=1 reads the report's sets (0, 1, 2); use other seeds"),
        (["--draw", "6,2"], "--draw=6,2 reads the report's sets (0, 1, 2); use other seeds"),
        (["--draw", "6-x"], "--draw='6-x' is not allowed"),
        (["--pooled", "0,x"], "--pooled='0,x' is not allowed"),
        (["--draw", "5", "--pooled", "0-4"], "not allowed with argument"),
        ([], "one of the arguments --draw --pooled is required"),
    ],
)
def test_the_held_out_script_reads_a_fresh_seed_or_pools_sets_already_read(
    argv: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``tuning/deadlines_heldout.py``: ``--draw`` (one seed or several, pooled) refuses the
    report's seeds (a rule is judged on sets nobody read); ``--pooled`` takes sets already read,
    as ``--draws`` does here; one of the two; a bad value is one parser error, before any work."""
    monkeypatch.syspath_prepend(str(REPO / "tuning"))
    script = load_script("tuning/deadlines_heldout.py", "deadlines_heldout")
    monkeypatch.setattr(sys, "argv", ["deadlines_heldout.py", *argv])
    with pytest.raises(SystemExit) as raised:
        script.main()
    assert raised.value.code == 2 and message in capsys.readouterr().err


def test_the_deploy_screen_reads_the_statistics_and_the_noise_as_the_policy_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``tuning/deploy_noise_screen.py``: the mean of the last max(1, floor(share x n)) rewards
    of each candidate's n (the halving statistic and the level's stand-in), and the residuals'
    own noise estimate, sqrt(mean r^2 / 6) of the second differences pooled over candidates (0
    without any: fewer than three rewards each; three residuals are barely forgotten)."""
    monkeypatch.syspath_prepend(str(REPO / "tuning"))
    script = load_script("tuning/deploy_noise_screen.py", "deploy_noise_screen")
    prefix = script.prefix_sums(np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 9.0, 9.0]]))
    assert prefix[:, 0].tolist() == [0.0, 0.0] and prefix[:, -1].tolist() == [10.0, 29.0]
    assert script.recent(prefix, np.array([4, 2]), 0.25).tolist() == [4.0, 6.0]
    assert script.recent(prefix, np.array([4, 3]), 0.5).tolist() == [3.5, 9.0]
    # arm 0 is linear (residuals 0, 0), arm 1's first three give 9 - 12 + 5 = 2
    expected = np.sqrt(4.0 / 3 / 6.0)
    assert script.noise(prefix, np.array([4, 3])) == pytest.approx(expected, rel=0.005)
    assert script.noise(prefix, np.array([2, 1])) == 0.0
    # shrunk by its own noise, arm 1's one reward (0.52) no longer beats arm 0's mean of four
    flat = script.prefix_sums(np.repeat([[0.5], [0.52], [0.3]], 8, axis=1))
    assert script.shrunk(flat, np.array([8, 1, 8]), 0.5, 0.0) == 1
    assert script.shrunk(flat, np.array([8, 1, 8]), 0.5, 0.1) == 0


def deadlines_chance(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(REPO / "tuning"))
    return load_script("tuning/deadlines_chance.py", "deadlines_chance")


def test_the_chance_script_applies_the_reports_test_to_each_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``tuning/deadlines_chance.py``: a cell is lost on a set where the default is not lowest and
    another method's paired interval lies below 0 (as the report judges); the null world flips
    the sign of each paired difference and keeps its size; a set draws tasks, one unit of each."""
    script = deadlines_chance(monkeypatch)
    noise = np.linspace(-0.001, 0.001, 10)
    gaps = np.zeros((10, 3, 2))  # units, cells, methods (the default first)
    gaps[:, :, 0] = 0.05
    gaps[:, 0, 1] = 0.04 + noise  # lower on every unit: lost
    gaps[:, 1, 1] = 0.06 + noise  # higher: kept
    gaps[:, 2, 1] = 0.05 + np.where(np.arange(10) < 5, -0.02, 0.019)  # lower, not significantly
    assert script.lost_cells(gaps[None]).tolist() == [[True, False, False]]
    two = script.lost_cells(gaps[np.array([np.arange(10), np.arange(5).repeat(2)])])
    assert two[1].tolist() == [True, False, True]  # the second set holds the units lower by 0.02

    flipped = script.exchanged(np.repeat(gaps[None], 400, axis=0), np.random.default_rng(0))
    assert np.array_equal(flipped[..., 0], np.repeat(gaps[None, ..., 0], 400, axis=0))
    size = np.abs(flipped[..., 1] - flipped[..., 0])
    assert np.allclose(size, np.abs(gaps[..., 1] - gaps[..., 0])[None])
    assert abs(np.mean(flipped[..., 1] < flipped[..., 0]) - 0.5) < 0.02

    task_of = np.array([2, 0, 1, 0, 1, 1])
    chosen = script.unit_sets(task_of, np.random.default_rng(0), 4000, 3)[:, 0]
    assert chosen.shape == (4000, 3) and chosen.min() >= 0 and chosen.max() <= 5
    share = np.bincount(task_of[chosen].ravel()) / chosen.size
    assert np.allclose(share, 1 / 3, atol=0.02)  # tasks alike, whatever their units
    assert np.allclose(np.bincount(chosen.ravel())[[2, 4, 5]] / chosen.size, 1 / 9, atol=0.015)
    two_each = np.array([1, 0, 1, 0, 1])  # two units of task 0, three of task 1
    both = script.unit_sets(two_each, np.random.default_rng(1), 500, 4, together=2)
    assert both.shape == (500, 2, 4) and both.max() <= 4
    assert np.array_equal(two_each[both[:, 0]], two_each[both[:, 1]])  # the same tasks
    assert np.all(both[:, 0] != both[:, 1])  # each with its candidates of another draw


def test_the_chance_scripts_test_is_the_reports_on_kept_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On task rows as ``reproduce deadlines`` keeps them (instances with several runs each),
    the cells the chance script finds lost on the whole set are those the report's
    ``DeadlineRows.goal_met`` fails, and its gaps are each instance's mean over its runs."""
    from risingbandits.reproduce.deadlines import COLUMNS, methods
    from risingbandits.reproduce.sections.deadlines import DeadlineRows

    script = deadlines_chance(monkeypatch)
    labels = [label for label, _, _ in methods()]
    rng = np.random.default_rng(5)
    cells = [(1, 4), (1, 16), (4, 4), (4, 64), (16, 0)]
    lower = {(1, 4): 0.01, (1, 16): 0.0, (4, 4): 0.002, (4, 64): -0.01, (16, 0): 0.0005}
    tasks = []
    for k in range(12):
        rows: dict[str, list[Any]] = {c: [] for c in COLUMNS}
        for workers, steps in cells:
            for j, label in enumerate(labels):
                for seed in range(3):
                    gap = 0.03 + 0.01 * rng.standard_normal()
                    if j == 1:  # one other method lower (or higher) by the cell's amount
                        gap -= lower[(workers, steps)]
                    values = ("lcdb", f"lcdb-v1/0/{k}", seed, workers, steps, label, gap)
                    for key, value in zip(COLUMNS, (*values, 0.0, 0.0, 1.0, 0.0), strict=True):
                        rows[key].append(value)
        tasks.append(rows)
    report = DeadlineRows(tasks)
    bed = script.BedGaps(report)
    assert bed.gaps.shape == (12, len(cells), len(labels))
    assert bed.task_names.tolist() == sorted({f"lcdb-v1/{k}" for k in range(12)})
    expected = [not report.goal_met(cell) for cell in bed.cells]
    assert script.lost_cells(bed.gaps[None]).tolist() == [expected]
    assert any(expected) and not all(expected)
    first = np.asarray(tasks[0]["final_gap"][:3])  # instance 0, cell (1, 4), the default
    assert bed.gaps[bed.task_names.tolist().index("lcdb-v1/0"), 0, 0] == pytest.approx(first.mean())
