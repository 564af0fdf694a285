"""Plans (cells grouped into tasks) and run seeds (common random numbers)."""

from __future__ import annotations

import hashlib
import pickle
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest

from risingbandits.experiments import make_plan, parse_spec, run_seed, stable_hash32
from risingbandits.experiments.plan import seed_chunks, steps_per_seed
from test_experiments_spec import TINY


def cells(plan) -> list[tuple[str, str, int, int]]:
    return [
        (t.instance.id, t.policy.label, h, s)
        for t in plan.tasks
        for h in t.horizons
        for s in t.seeds
    ]


@pytest.mark.parametrize("target", [1, 500, 10**9])
def test_tasks_partition_the_cells_exactly(target: int) -> None:
    spec = parse_spec(TINY.replace("seeds = 2", "seeds = 7"))
    plan = make_plan(spec, target_steps=target)
    got = cells(plan)
    assert len(got) == len(set(got)) == plan.n_cells
    expected = {
        (i.id, p.label, h, s)
        for i in spec.instances
        for p in spec.policies
        for h in spec.horizons
        for s in range(spec.seeds)
    }
    assert set(got) == expected
    assert sum(plan.cells_by_policy().values()) == plan.n_cells


def test_task_ids_are_unique_and_deterministic() -> None:
    a = make_plan(parse_spec(TINY), target_steps=400)
    b = make_plan(parse_spec(TINY), target_steps=400)
    ids = [t.id for t in a.tasks]
    assert ids == [t.id for t in b.tasks]
    assert len(set(ids)) == len(ids)


def test_chunks_follow_the_cost_of_a_seed() -> None:
    spec = parse_spec(TINY.replace("seeds = 2", "seeds = 10"))
    # cure-ucb uses T: a seed costs 120 + 300 rounds; ucb1 runs once to T = 300
    cure, ucb = spec.policies[0], spec.policies[1]
    assert steps_per_seed(cure, spec.horizons) == 420
    assert steps_per_seed(ucb, spec.horizons) == 300
    plan = make_plan(spec, target_steps=1300)
    per_policy = Counter(t.policy.label for t in plan.tasks if t.instance.id == "intro")
    assert per_policy["cure-ucb"] == 4  # 3 seeds (1,260 rounds) per task
    assert per_policy["ucb1"] == 3  # 4 seeds (1,200 rounds) per task


def test_an_instances_first_chunks_of_every_policy_come_before_its_second_ones() -> None:
    """Workers that start together compile different kernels: an instance's tasks go through
    every policy's k-th seed chunk before any (k + 1)-th one."""
    plan = make_plan(parse_spec(TINY.replace("seeds = 2", "seeds = 10")), target_steps=1300)
    for instance in {t.instance.id for t in plan.tasks}:
        tasks = [t for t in plan.tasks if t.instance.id == instance]
        waves = [
            sum(
                1
                for u in tasks
                if u.policy.label == t.policy.label and u.seeds.start < t.seeds.start
            )
            for t in tasks
        ]
        assert waves == sorted(waves) and waves[-1] == 3  # cure-ucb has 4 chunks
        first = [t.policy.label for t, w in zip(tasks, waves, strict=True) if w == 0]
        assert len(first) == len(set(first)) == 3  # each of the 3 policies once


@pytest.mark.parametrize(
    ("n", "per_seed", "target"), [(10, 1, 3), (7, 5, 12), (1, 99, 1), (9, 1, 100)]
)
def test_seed_chunks_are_contiguous_and_balanced(n: int, per_seed: int, target: int) -> None:
    chunks = seed_chunks(n, per_seed, target)
    assert [s for c in chunks for s in c] == list(range(n))
    sizes = [len(c) for c in chunks]
    assert max(sizes) - min(sizes) <= 1
    assert max(sizes) * per_seed <= max(target, per_seed)


def test_a_task_pickles_small_without_mean_tables() -> None:
    text = TINY.replace("horizons = [300, 120]", "horizons = [50000]").replace(
        "params = { t_sat_scale = 300 }\n", ""
    )
    task = make_plan(parse_spec(text)).tasks[0]
    assert len(pickle.dumps(task)) < 2_000  # a K x 50,000 table alone is > 800 kB


def test_run_seed_is_sweep_seed_and_instance_hash() -> None:
    digest = hashlib.sha256(b"ltf-v1/0/7").digest()
    expected_hash = int.from_bytes(digest[:4], "big")
    assert stable_hash32("ltf-v1/0/7") == expected_hash
    ss = run_seed(11, "ltf-v1/0/7", 3)
    assert ss.entropy == 11 and ss.spawn_key == (expected_hash, 3)
    other = run_seed(11, "ltf-v1/0/8", 3)
    assert not np.array_equal(ss.generate_state(4), other.generate_state(4))


def test_stable_hash_is_the_same_in_another_process() -> None:
    code = "from risingbandits.experiments import stable_hash32; print(stable_hash32('intro'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == stable_hash32("intro")


def test_negative_seeds_are_refused() -> None:
    with pytest.raises(ValueError, match="use integers >= 0"):
        run_seed(-1, "intro", 0)
