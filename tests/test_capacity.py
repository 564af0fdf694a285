"""Issue 23, items 6 and 9: an online run's state follows the pulls made (it grows by doubling
and growth never changes a choice), and a value that cannot be a reward is refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import risingbandits as rb
from conftest import random_ltf
from risingbandits.policies import POLICIES, make_policy
from risingbandits.policies.machinery.capacity import INITIAL_CAPACITY, capacity_for
from risingbandits.seeding import reward_key

NAMES = sorted(POLICIES)
NOISE = rb.Noise("gaussian", 0.1)


def drive(policy: rb.Policy, instance: rb.RisingInstance, steps: int) -> tuple[list[int], set[int]]:
    """``steps`` rounds of the policy's online run on the simulator's rewards; the arms played
    and the capacities the run had."""
    run, key = policy.run, reward_key(0)
    arms, capacities = [], {run.capacity}
    for _ in range(steps):
        arm = policy.select()
        policy.update(arm, instance.reward(key, arm, int(run.pulls[arm]) + 1))
        arms.append(arm)
        capacities.add(run.capacity)
    return arms, capacities


@pytest.mark.parametrize("name", NAMES)
def test_a_run_crossing_several_growths_makes_the_compiled_choices(name: str) -> None:
    horizon = 1_500
    instance = random_ltf(np.random.default_rng(4), 3, horizon, NOISE)
    policy = make_policy(name)
    sim = rb.simulate(instance, policy, horizon, [0], record_arms=True)
    policy.reset(3, horizon, seed=0, noise_proxy=NOISE.proxy)
    bound = policy.run.bound
    arms, capacities = drive(policy, instance, horizon)
    assert sim.arms is not None and arms == sim.arms[0].tolist()
    assert policy.recommend() == sim.recommended[0]
    if bound.pulls:  # a history of every pull grew, and again
        assert len(capacities) >= 3 and min(capacities) == INITIAL_CAPACITY
    elif bound.rounds:  # a window of the last tau rounds grew until it held tau (252 here)
        assert len(capacities) >= 2 and min(capacities) == INITIAL_CAPACITY
    else:  # nothing in it follows the horizon (UCB1, Rexp3, Ser4)
        assert capacities == {INITIAL_CAPACITY}


@pytest.mark.parametrize("name", NAMES)
def test_state_bytes_follow_the_pulls_made_not_the_horizon(name: str) -> None:
    """After N rounds over K arms the state holds O(K x N) numbers whatever the horizon: a
    history of every pull at most 4x the pulls of the most-pulled arm (plus 64)."""
    k, steps = 10, 300
    instance = random_ltf(np.random.default_rng(5), k, steps, NOISE)
    sizes = []
    for horizon in (10**4, 10**12):
        policy = make_policy(name).reset(k, horizon, seed=1, noise_proxy=NOISE.proxy)
        drive(policy, instance, steps)
        assert policy.run.capacity <= capacity_for(steps, horizon)
        sizes.append(policy.run.nbytes)
    assert max(sizes) <= 64 * k * (steps + INITIAL_CAPACITY)  # 8 numbers per arm and round


def test_pulls_in_flight_past_the_capacity_are_applied_on_a_larger_copy() -> None:
    policy = make_policy("cure-ucb").reset(2, 10_000, noise_proxy=0.1)
    run = policy.run
    _, state = run.select_with([(0, 0.5)] * 200)
    assert state.hist.counts.tolist() == [200, 0] and state.hist.prefix.shape[1] > 200
    assert run.capacity == INITIAL_CAPACITY and run.state.hist.counts.tolist() == [0, 0]


def test_a_growth_that_does_not_fit_in_memory_is_one_line() -> None:
    policy = make_policy("cure-ucb").reset(2, 10**9, noise_proxy=0.1)
    build = policy.run.build

    def small_machine(n_arms: int, horizon: int, capacity: int | None) -> Any:
        if capacity is not None and capacity > INITIAL_CAPACITY:
            raise MemoryError
        return build(n_arms, horizon, capacity)

    policy.run.build = small_machine
    with pytest.raises(MemoryError, match=r"2 arms and \d+ pulls per arm does not fit") as info:
        for _ in range(200):
            policy.update(policy.select(), 0.5)
    assert "\n" not in str(info.value)


def test_a_horizon_beyond_2_53_is_one_line() -> None:
    with pytest.raises(
        ValueError, match=r"horizon=\d+ is not allowed: use an integer in 1..2\*\*53"
    ):
        make_policy("ucb1").reset(2, 2**53 + 1)


# -- item 9: rewards ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [85.0, 90, -1.5, 2.01, float("nan"), float("inf"), True, np.True_, "0.5", None, "x", [0.5]],
)  # True, np.True_ and "0.5" were taken as 1, 1 and 0.5; None, "x" and [0.5] raised float()'s
# own error
def test_a_value_that_cannot_be_a_reward_is_refused_naming_score_range(bad: float) -> None:
    policy = make_policy("cure-ucb").reset(2, 200, noise_proxy=0.1)
    arm = policy.select()
    with pytest.raises(
        ValueError, match=r"reward=.* is not allowed: .*\[-1, 2\].*score_range"
    ) as info:
        policy.update(arm, bad)
    assert "\n" not in str(info.value)
    assert policy.t == 0 and policy.select() == arm  # nothing was recorded


def test_percentages_fed_as_rewards_are_refused_not_misallocated() -> None:
    """The issue's case: fed 85 and 90 instead of 0.85 and 0.90, a policy silently allocated
    differently; now the first percentage is refused and fractions run as before."""
    policy = make_policy("cure-ucb").reset(2, 200, seed=0, noise_proxy=0.1)
    with pytest.raises(ValueError, match="score_range"):
        policy.update(policy.select(), 85.0)
    for _ in range(200):
        arm = policy.select()
        policy.update(arm, (0.85, 0.90)[arm])
    assert policy.pulls.sum() == 200 and policy.recommend() == 1


@pytest.mark.parametrize("edge", [-1.0, 2.0, -0.3, 1.4])
def test_noisy_rewards_around_the_unit_interval_are_accepted(edge: float) -> None:
    policy = make_policy("ucb1").reset(2, 10)
    policy.update(policy.select(), edge)
    assert policy.t == 1
