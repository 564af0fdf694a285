"""One task -> rows: the same numbers as direct ``simulate`` calls with the run seeds."""

from __future__ import annotations

import json

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.experiments import make_plan, parse_spec, run_seed
from risingbandits.experiments.worker import ROW_SCHEMA, load_instance, run_task
from test_experiments_spec import TINY

REQUIRED = {
    "instance",
    "family",
    "n_arms",
    "policy",
    "params",
    "horizon",
    "seed",
    "regret",
    "reward",
    "pulls",
    "optimal_arm",
    "wall_time",
}


@pytest.fixture(scope="module")
def plan():
    return make_plan(parse_spec(TINY.replace("seeds = 2", "seeds = 3")), target_steps=800)


@pytest.mark.parametrize("label", ["cure-ucb", "ucb1"])
def test_rows_equal_direct_simulation_with_the_run_seeds(plan, label: str) -> None:
    task = next(t for t in plan.tasks if t.policy.label == label and t.instance.id == "intro")
    assert len(task.seeds) < 3  # a chunk, not seeds 0..2 at once
    table = run_task(task)
    assert set(table.column_names) >= REQUIRED and table.schema == ROW_SCHEMA
    rows = table.to_pylist()
    assert len(rows) == task.n_cells
    instance = rb.intro(max(task.horizons))
    policy = rb.make_policy(task.policy.name, **task.policy.params)
    for row in rows:
        seed = run_seed(task.sweep_seed, "intro", row["seed"])
        direct = rb.simulate(instance, policy, row["horizon"], [seed])  # a fresh run at this T
        assert row["regret"] == pytest.approx(direct.regret[0], abs=1e-9)
        assert row["reward"] == pytest.approx(direct.reward[0], abs=1e-9)
        assert row["pulls"] == direct.pulls[0].tolist()
        assert row["optimal_arm"] == instance.oracle.best_arm(row["horizon"])
        assert sum(row["pulls"]) == row["horizon"]
        assert row["n_arms"] == 2 and row["family"] == "intro"
        assert row["policy"] == label and row["policy_name"] == task.policy.name
        assert json.loads(row["params"]) == policy.params
        assert row["wall_time"] > 0
    assert sorted((r["horizon"], r["seed"]) for r in rows) == [
        (h, s) for h in task.horizons for s in task.seeds
    ]


def test_every_policy_meets_the_same_rewards_on_an_instance(plan) -> None:
    """Common random numbers: two policies with the same pull counts get the same reward."""
    tasks = [t for t in plan.tasks if t.instance.id == "ltf-v1/0/1" and 0 in t.seeds]
    rows = {t.policy.label: run_task(t).to_pylist() for t in tasks}
    labels = list(rows)
    assert len(labels) == 3
    instance = load_instance(tasks[0].instance, 300)
    key = rb.seeding.reward_key(run_seed(tasks[0].sweep_seed, "ltf-v1/0/1", 0))
    for label in labels:
        for row in rows[label]:
            if row["seed"] != 0:
                continue
            # the realised reward is the sum of the counter-based rewards of the pulls made,
            # whatever policy made them
            expected = sum(
                instance.reward(key, arm, n)
                for arm, count in enumerate(row["pulls"])
                for n in range(1, count + 1)
            )
            assert row["reward"] == pytest.approx(expected, abs=1e-9)


def test_the_instance_cache_reuses_tables(plan) -> None:
    ref = plan.tasks[0].instance
    assert load_instance(ref, 300) is load_instance(ref, 300)
    assert np.array_equal(load_instance(ref, 300).means, ref.build(300).means)
