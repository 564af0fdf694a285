"""Budgets in time in the reproduction (issue 22): the deadline of a row, one task's rows, the
report's table and its goal, and kept task files read back only when every value has its type."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.analysis.stats import mean_ci
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
    task_fingerprint,
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
    assert result["fingerprint"] == task_fingerprint(DeadlineTask(bed, 0))
    expected = 2 * len(WORKERS) * (len(STEPS) + 1) * len(methods())
    assert all(len(v) == expected for v in rows.values())
    assert set(rows["method"]) == {label for label, _, _ in methods()}
    gaps = np.asarray(rows["final_gap"])
    assert np.all(gaps >= -1e-12)
    spent = np.asarray(rows["spent"])
    assert np.all(spent <= 1 + 1e-9) and np.all(spent > 0)
    table = bed_table("toy", DeadlineRows([rows]))
    assert len(table.rows) == len(WORKERS) * (len(STEPS) + 1)


def _rows(default: list[float], other: list[float], runs: int = 1) -> dict[str, list[Any]]:
    """Rows of one cell: unit i is run i % ``runs`` of instance i // ``runs``."""
    n = len(default)
    out: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    for method, gaps in ((DEFAULT_POLICY, default), (COUNTING, other)):
        for i, gap in enumerate(gaps):
            instance, seed = f"x/0/{i // runs}", i % runs
            for column, value in zip(
                COLUMNS,
                ("toy", instance, seed, 4, 16, method, gap, 0.0, 0.0, 1.0, 0.001),
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


def test_intervals_are_over_instances_not_over_their_repeated_runs() -> None:
    """Three instances, five runs each that repeat one another (live-v1 has no reward noise):
    over 15 runs the method's lead would be significant, over 3 instances it is not."""
    base = [0.02, 0.03, 0.01]
    other = [0.015, 0.03, 0.0]  # lower on two of the three instances
    repeated = DeadlineRows(
        [_rows([g for g in base for _ in range(5)], [g for g in other for _ in range(5)], runs=5)]
    )
    diff = repeated.paired((4, 16), COUNTING)
    assert diff.n == 3 and repeated.instances == 3 and repeated.units == 15
    assert diff.mean == pytest.approx(-0.005) and diff.high > 0 and repeated.goal_met((4, 16))
    units = mean_ci(np.repeat(np.subtract(other, base), 5))
    assert units.high < 0  # the interval over the 15 runs: significant, counted five times
    assert repeated.gap((4, 16), DEFAULT_POLICY).n == 3
    caption = bed_table("toy", repeated).caption
    assert caption == "toy: 3 instances x 5 runs per row; intervals over instances"


PRINT = "f" * 64


def _kept(rows: Any, **changes: Any) -> dict[str, Any]:
    return {"format": FORMAT, "task": "lcdb-test-3", "fingerprint": PRINT, "rows": rows, **changes}


def test_a_kept_task_is_read_back_and_a_damaged_one_is_not(tmp_path: Path) -> None:
    rows = _rows([0.1, 0.2], [0.1, 0.3])
    path = tmp_path / "task.json"
    path.write_text(json.dumps(_kept(rows)))
    assert _read_task(path, "lcdb-test-3", PRINT) == rows
    for damaged in (
        _kept(rows, format="risingbandits-peers-2"),
        _kept(rows, fingerprint="e" * 64),
        _kept({**rows, "idle": ["x"] * 4}),
        _kept({**rows, "workers": [True] * 4}),
        _kept({k: v for k, v in rows.items() if k != "spent"}),
    ):
        path.write_text(json.dumps(damaged))
        assert _read_task(path, "lcdb-test-3", PRINT) is None


def test_a_kept_task_counts_only_for_the_instance_and_methods_it_was_computed_on() -> None:
    """live-v1's costs are the seconds its build measured: another build (here the same means
    with other costs) or another default's parameters is another fingerprint, so its kept rows
    are computed again instead of entering the report."""
    bed = _Bed("toy", "toy", "none", "test", 1, 2)
    task = DeadlineTask(bed, 0)
    same = task_fingerprint(task)
    assert task_fingerprint(task, COSTLY) == same
    rebuilt = dataclasses.replace(COSTLY, costs=[1.0, 2.0, 0.5, 4.1])
    assert task_fingerprint(task, rebuilt) != same
    assert task_fingerprint(DeadlineTask(dataclasses.replace(bed, seeds=3), 0)) != same
    folded = rb.from_means(  # the same numbers in another shape: another instance
        COSTLY.means.reshape(2, 600),
        COSTLY.noise,
        costs=COSTLY.pull_costs.reshape(2, 600),
        require_rising=False,
    )
    assert task_fingerprint(task, folded) != same


def test_another_default_is_another_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    from risingbandits.policies import make_policy
    from risingbandits.reproduce import deadlines

    task = DeadlineTask(_Bed("toy", "toy", "none", "test", 1, 2), 0)
    same = task_fingerprint(task)
    other = make_policy(DEFAULT_POLICY, commit=0.5)
    changed = [(label, other, plan) for label, _, plan in methods()]
    monkeypatch.setattr(deadlines, "methods", lambda: changed)
    assert task_fingerprint(task) != same


def test_the_later_held_out_sets_draw_other_candidates_on_the_same_test_tasks() -> None:
    """The beds of the second and third sets (DRAWS[1:], as `reproduce heldout2` and
    `heldout3`) read the same test tasks with generator seeds 1 and 2: other candidates, their
    own task files (keys of the first set unchanged, so its kept rows stay valid)."""
    from risingbandits.reproduce.deadlines import DRAWS, deadline_beds, deadline_tasks
    from risingbandits.reproduce.settings import FULL, HELDOUT2_DRAW, HELDOUT3_DRAW

    assert DRAWS == (0, HELDOUT2_DRAW, HELDOUT3_DRAW) == (0, 1, 2)
    first, second, third = (deadline_tasks(FULL, "test", d) for d in DRAWS)
    assert first[0].key == "lcdb-test-0" and second[0].key == "lcdb-test-0-draw1"
    assert third[0].key == "lcdb-test-0-draw2"
    keys = [{t.key for t in tasks} for tasks in (first, second, third)]
    assert sum(map(len, keys)) == len(set().union(*keys))  # no task file shared
    assert [t.index for t in first] == [t.index for t in second] == [t.index for t in third]
    a, b, c = (deadline_beds(FULL, "test", d)[0] for d in DRAWS)
    assert "generator seed" not in a.title and "candidates of generator seed 1" in b.title
    assert "candidates of generator seed 2" in c.title
    x, y, z = a.instance(0), b.instance(0), c.instance(0)
    assert x.meta["openml_id"] == y.meta["openml_id"] == z.meta["openml_id"]  # the same data
    assert len({x.arm_names, y.arm_names, z.arm_names}) == 3 and len({x.name, y.name, z.name}) == 3


def test_the_report_judges_every_held_out_set(tmp_path: Path) -> None:
    """`reproduce deadlines --quick`: the section tallies the goal on the first set's beds and,
    apart, on the second and third sets'; report.json holds all three, each tally the count of
    its rows' cells where the default is lowest or no method significantly lower."""
    from risingbandits.reproduce import reproduce
    from risingbandits.reproduce.deadlines import deadline_beds
    from risingbandits.reproduce.settings import QUICK
    from risingbandits.reproduce.task_rows import beds_not_run

    out = tmp_path / "out"
    result = reproduce("deadlines", out, quick=True, workers=2)
    assert result.report is not None
    entry = json.loads((out / "report.json").read_text())["deadlines"]
    text = (out / "report.md").read_text().split("## Budgets in time", 1)[1]
    # live-v1 where it is not recorded (CI): said, not hidden
    missing = beds_not_run(deadline_beds(QUICK))
    assert list(result.skipped) == [(f"deadlines on {bed}", why) for bed, why in missing]
    assert text.count("Not in this report: ") == len(missing)
    first, later = text.split("### The second held-out set")
    second, third = later.split("### The third held-out set")
    for block, where in (
        (entry, first),
        (entry["heldout2"], second),
        (entry["heldout3"], third),
    ):
        tasks: dict[tuple[str, int, Any], dict[str, dict[str, Any]]] = {}
        for r in block["rows"]:
            cell = (r["bed"], r["workers"], r["steps_per_candidate"])
            tasks.setdefault(cell, {})[r["method"]] = r
        met = 0
        for rows in tasks.values():
            own = rows[DEFAULT_POLICY]["final_gap"]["mean"]
            others = [r for m, r in rows.items() if m != DEFAULT_POLICY]
            lowest = all(own <= r["final_gap"]["mean"] for r in others)
            met += lowest or all(r["minus_default"]["ci_high"] >= 0 for r in others)
        assert (block["goal_met_cells"], block["cells"]) == (met, len(tasks))
        assert f"met in {met} of {len(tasks)} cells" in where
    assert "candidates of generator seed 1" in second and "generator seed" not in first
    assert "candidates of generator seed 2" in third
    for draw in (1, 2):
        assert (out / "figures" / f"deadlines-lcdb-draw{draw}.png").is_file()


def test_a_bed_whose_data_is_not_here_is_named_with_the_command_that_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without live-v1 the deadlines and peers parts run LCDB (and IMDB) alone: `reproduce`
    lists the skipped bed with the command that records it, and so does the report section
    (a report of one bed says it is half the evaluation); the tuning scripts print the same."""
    from risingbandits.reproduce.deadlines import deadline_beds, tasks_available
    from risingbandits.reproduce.document import Para
    from risingbandits.reproduce.peers import peer_beds, peer_tasks_available
    from risingbandits.reproduce.sections.common import Context
    from risingbandits.reproduce.sections.deadlines import absent_beds
    from risingbandits.reproduce.settings import QUICK
    from risingbandits.reproduce.task_rows import beds_not_run

    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(tmp_path))  # no live-v1 recorded here
    for skipped, beds in (
        (beds_not_run(deadline_beds(QUICK)), {t.bed.name for t in tasks_available(QUICK)}),
        (beds_not_run(peer_beds(QUICK)), {t.bed.name for t in peer_tasks_available(QUICK)}),
    ):
        live = [why for name, why in skipped if name.startswith("live training (")]
        assert len(live) == 1 and "live-v1 is not built: run `risingbandits data live`" in live[0]
        assert not any(name.startswith("LCDB") for name, _ in skipped)
        assert "live" not in beds and "lcdb" in beds
    lcdb, live = deadline_beds(QUICK)
    ctx = Context(QUICK, {}, tmp_path, 100)
    blocks = absent_beds(ctx, [(lcdb, DeadlineRows([]))])
    assert len(blocks) == 1 and isinstance(blocks[0], Para)
    assert blocks[0].text.startswith(f"Not in this report: {live.title}: live-v1 is not built")
    assert absent_beds(ctx, [(lcdb, DeadlineRows([])), (live, DeadlineRows([]))]) == []
