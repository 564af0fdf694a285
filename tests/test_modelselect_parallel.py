"""A model selector driven by parallel workers: pulls in flight, any order, exact checkpoints."""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import risingbandits as rb
from conftest import random_ltf
from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector
from risingbandits.policies import POLICIES, make_policy
from risingbandits.seeding import reward_key

NAMES = sorted(POLICIES)
K, BUDGET, WORKERS = 4, 160, 4


def instance() -> rb.RisingInstance:
    return random_ltf(np.random.default_rng(11), K, BUDGET, rb.Noise("bernoulli"))


class Workers:
    """Simulated workers: each trains the candidate it was given for a random (seeded) time,
    then reports the candidate's next reward on ``instance``."""

    def __init__(self, selector: ModelSelector, n: int, delay_seed: int) -> None:
        self.selector, self.n = selector, n
        self.rng = np.random.default_rng(delay_seed)
        self.clock, self.seq = 0.0, 0
        self.running: list[tuple[float, int, int]] = []
        self.started: list[int] = []
        self.reported: list[int] = []
        self.env, self.key = instance(), reward_key(0)

    def step(self) -> None:
        """Start pulls while workers are free, then let the first to finish report."""
        sel = self.selector
        while len(self.running) < self.n and sel.remaining > 0:
            arm = sel.select()
            heapq.heappush(self.running, (self.clock + self.rng.exponential(), self.seq, arm))
            self.seq += 1
            self.started.append(arm)
        self.clock, _, arm = heapq.heappop(self.running)
        score = self.env.reward(self.key, arm % self.env.n_arms, int(sel.pulls[arm]) + 1)
        sel.update(arm, score, metrics={"clock": self.clock})
        self.reported.append(arm)

    def run(self, swap_at: int = -1, swap: Callable[[ModelSelector], ModelSelector] | None = None):
        while not self.selector.done:
            self.step()
            if swap is not None and len(self.reported) == swap_at:
                self.selector = swap(self.selector)
        return self


@pytest.mark.parametrize("name", NAMES)
def test_four_workers_spend_the_budget_once_and_resume_exactly(name: str, tmp_path: Path) -> None:
    straight = Workers(ModelSelector(K, BUDGET, name, seed=3), WORKERS, delay_seed=5).run()
    sel = straight.selector
    assert len(straight.started) == BUDGET and sorted(straight.started) == sorted(straight.reported)
    assert straight.started != straight.reported  # scores did arrive out of order
    assert sel.t == BUDGET and sum(sel.pulls) == BUDGET and sel.in_flight == ()
    assert [h["arm"] for h in sel.history] == straight.reported
    with pytest.raises(RuntimeError, match="budget of 160 training steps is used up"):
        sel.select()

    seen: dict[str, tuple[int, ...]] = {}

    def save_and_load(old: ModelSelector) -> ModelSelector:
        seen["in_flight"] = old.in_flight
        old.save(tmp_path / "sel.json")
        return ModelSelector.load(tmp_path / "sel.json")

    resumed = Workers(ModelSelector(K, BUDGET, name, seed=3), WORKERS, delay_seed=5)
    resumed.run(swap_at=70, swap=save_and_load)
    assert len(seen["in_flight"]) == WORKERS - 1  # saved with pulls in flight
    assert resumed.started == straight.started and resumed.reported == straight.reported
    assert resumed.selector.history == sel.history
    assert resumed.selector.summary() == sel.summary()


def test_parallel_run_is_reproducible_and_seed_dependent() -> None:
    runs = [Workers(ModelSelector(K, BUDGET, seed=s), WORKERS, 1).run().started for s in (0, 0, 1)]
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_last_pulls_are_refused_beyond_the_budget() -> None:
    sel = ModelSelector(2, 3, max_pending=5)
    arms = [sel.select() for _ in range(3)]
    assert sel.remaining == 0 and sel.in_flight == tuple(arms)
    with pytest.raises(RuntimeError, match="all started: 3 still in flight") as info:
        sel.select()
    assert "\n" not in str(info.value)
    sel.cancel(arms[0])  # a worker that died gives its step back
    assert sel.remaining == 1 and sel.in_flight == tuple(arms[1:])
    sel.select()


def test_max_pending_and_fifo_matching() -> None:
    sel = ModelSelector(["a", "b", "c"], 30, max_pending=3)
    assert [sel.select(available=["a"]) for _ in range(2)] == [0, 0]
    assert sel.select(available=[False, True, False]) == 1
    with pytest.raises(RuntimeError, match="max_pending=3 pulls are in flight"):
        sel.select()
    sel.update("a", 0.4)
    assert sel.in_flight == (0, 1)
    sel.update(1, 0.6)
    with pytest.raises(ValueError, match=r"update\('b'\) is not allowed: no pull of it"):
        sel.update("b", 0.6)
    assert ModelSelector(5, 30).max_pending == 5


def test_available_choices_are_respected_and_reproducible() -> None:
    def run() -> list[int]:
        rng = np.random.default_rng(4)
        sel = ModelSelector(K, 120, seed=2)
        chosen = []
        while not sel.done:
            mask = rng.random(K) < 0.5
            mask[rng.integers(K)] = True
            arm = sel.select(available=mask)
            assert mask[arm]
            sel.update(arm, min(1.0, 0.2 + 0.01 * sel.pulls[arm] * (arm + 1) / K))
            chosen.append(arm)
        return chosen

    first = run()
    assert first == run() and len(set(first)) == K


@pytest.mark.parametrize(
    ("available", "message"),
    [
        (["nope"], r"candidate 'nope' is not allowed: use one of"),
        ([], r"available=\[\] is not allowed: it names no candidate"),
        ([True, False], r"available has 2 entries: a mask needs one per candidate \(4\)"),
        ("candidate0", r"available='candidate0' is not allowed: use a mask"),
        ([9], r"arm=9 is not allowed: use 0..3"),
    ],
)
def test_bad_available_one_line(available: object, message: str) -> None:
    sel = ModelSelector(K, 30)
    with pytest.raises(ValueError, match=message) as info:
        sel.select(available=available)
    assert "\n" not in str(info.value) and sel.in_flight == ()


def test_sequential_use_runs_exactly_like_the_simulator() -> None:
    env = instance()
    sim = rb.simulate(
        env, make_policy(DEFAULT_POLICY, sigma="estimate"), BUDGET, [7], record_arms=True
    )
    sel = ModelSelector(K, BUDGET, seed=7)
    key = reward_key(7)
    while not sel.done:
        arm = sel.select()
        sel.update(arm, env.reward(key, arm, int(sel.pulls[arm]) + 1))
    assert sim.arms is not None
    assert [h["arm"] for h in sel.history] == sim.arms[0].tolist()
    assert sel.recommend() == sim.recommended[0]


def test_checkpoint_of_a_parallel_run_is_plain_json(tmp_path: Path) -> None:
    sel = ModelSelector(K, BUDGET, seed=1)
    for _ in range(3):
        sel.select()
    data = json.loads(json.dumps(sel.state_dict(), allow_nan=False))
    assert data["in_flight"] == list(sel.in_flight)
    assert ModelSelector.from_state_dict(data).in_flight == sel.in_flight
