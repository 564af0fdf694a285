"""Run states carried over to a new horizon or number of arms, over every registered policy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import risingbandits as rb
from conftest import random_ltf
from risingbandits.policies import POLICIES, make_policy
from risingbandits.policies.machinery.kernel import select_one, update_one
from risingbandits.policies.machinery.round_window import new_round_window, window_push
from risingbandits.policies.machinery.transplant import arm_plan, transplant
from risingbandits.seeding import policy_rng, reward_key

NAMES = sorted(POLICIES)
K, T = 4, 300
NOISE = rb.Noise("gaussian", 0.1)


def drive_online(
    policy: rb.Policy,
    instance: rb.RisingInstance,
    steps: int,
    arms: list[int],
    change: Any = None,
    at: int = -1,
) -> None:
    """``steps`` rounds of the policy's online run on ``instance`` (counter-based rewards);
    ``change(run)`` is applied after round ``at``."""
    run = policy.run
    key = reward_key(0)
    for _ in range(steps):
        arm = run.select()
        pulls = int(run.pulls[arm]) + 1
        run.update(arm, instance.reward(key, arm % instance.n_arms, pulls))
        arms.append(arm)
        if run.t == at:
            change(run)


def leaves(state: Any) -> list[Any]:
    """Scalars and array shapes of a state, in field order."""
    if isinstance(state, np.ndarray):
        return [state.shape]
    if isinstance(state, tuple):
        return [leaf for value in state for leaf in leaves(value)]
    return [state]


@pytest.mark.parametrize("name", NAMES)
def test_noop_transplant_continues_identically(name: str) -> None:
    instance = random_ltf(np.random.default_rng(3), K, T, NOISE)
    policy = make_policy(name)
    straight: list[int] = []
    policy.reset(K, T, seed=4, noise_proxy=0.1)
    drive_online(policy, instance, T, straight)

    def same_size(run: Any) -> None:
        run.transplant(policy.init_state(K, T, 0.1), list(range(K)), T)

    moved: list[int] = []
    policy.reset(K, T, seed=4, noise_proxy=0.1)
    drive_online(policy, instance, T, moved, same_size, at=120)
    assert moved == straight


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("new_horizon", [150, 600])
def test_new_horizon_replans(name: str, new_horizon: int) -> None:
    """Parameters (scalars, window lengths) are those of a fresh state for the new T; a policy
    that does not use T goes on exactly as if nothing happened."""
    instance = random_ltf(np.random.default_rng(5), K, 600, NOISE)
    policy = make_policy(name)
    straight: list[int] = []
    policy.reset(K, 600, seed=1, noise_proxy=0.1)
    drive_online(policy, instance, new_horizon, straight)
    seen: dict[str, Any] = {}

    def new_budget(run: Any) -> None:
        seen["before"] = leaves(run.state)
        run.transplant(policy.init_state(K, new_horizon, 0.1), list(range(K)), new_horizon)
        seen["after"] = leaves(run.state)

    moved: list[int] = []
    policy.reset(K, T, seed=1, noise_proxy=0.1)
    drive_online(policy, instance, new_horizon, moved, new_budget, at=100)
    assert seen["after"] == leaves(policy.init_state(K, new_horizon, 0.1))
    assert policy.run.horizon == new_horizon and policy.t == new_horizon
    if policy.uses_horizon:
        assert seen["after"] != seen["before"]
    else:
        assert moved == straight


def kernel_run(state: Any, rounds: int, rewards: np.ndarray) -> Any:
    """``rounds`` rounds of a kernel with arms in round robin (whatever it selects)."""
    rng = policy_rng(0)
    for t in range(1, rounds + 1):
        select_one(state, t, rng)
        arm = (t - 1) % rewards.shape[0]
        update_one(state, arm, float(rewards[arm, (t - 1) // rewards.shape[0]]), t, rng)
    return state


def test_cure_ucb_index_uses_the_new_horizon() -> None:
    rewards = np.random.default_rng(2).uniform(0, 1, (K, 100))
    policy = make_policy("cure-ucb")
    moved = transplant(
        policy.init_state(K, 2_000),
        kernel_run(policy.init_state(K, 500), 120, rewards),
        K,
        range(K),
    )
    direct = kernel_run(policy.init_state(K, 2_000), 120, rewards)
    stale = kernel_run(policy.init_state(K, 500), 120, rewards)
    for state in (moved, direct, stale):
        select_one(state, 121, policy_rng(9))
    np.testing.assert_array_equal(moved.terms, direct.terms)
    assert not np.allclose(stale.terms[:, 1], direct.terms[:, 1])  # (T - t)/2 x slope


def test_shorter_round_window_keeps_the_newest_rounds() -> None:
    rng = np.random.default_rng(1)
    pushes = [(int(rng.integers(3)), float(rng.uniform())) for _ in range(37)]
    old, direct = new_round_window(3, 10), new_round_window(3, 4)
    for arm, x in pushes:
        window_push(old, arm, x)
        window_push(direct, arm, x)
    moved = transplant(new_round_window(3, 4), old, 3, range(3))
    np.testing.assert_array_equal(moved.counts, direct.counts)
    np.testing.assert_allclose(moved.sums, direct.sums)
    for arm, x in pushes[:9]:  # and it evicts in the same order from then on
        window_push(moved, arm, x)
        window_push(direct, arm, x)
    np.testing.assert_array_equal(moved.counts, direct.counts)
    np.testing.assert_allclose(moved.sums, direct.sums)


def test_retired_arm_leaves_the_round_window_but_its_rounds_stay() -> None:
    win = new_round_window(3, 5)
    for arm, x in [(0, 0.1), (1, 0.2), (2, 0.3), (1, 0.4), (0, 0.5)]:
        window_push(win, arm, x)
    moved = transplant(new_round_window(2, 5), win, 3, [0, 2])
    assert moved.counts.tolist() == [2, 1] and moved.sums.tolist() == [0.6, 0.3]
    assert moved.arms.tolist() == [0, -1, 1, -1, 0] and moved.pushes[0] == 5
    window_push(moved, 1, 1.0)  # evicts round 1 (arm 0)
    assert moved.counts.tolist() == [1, 2]


def test_ser4_round_order_drops_a_retired_arm() -> None:
    policy = make_policy("ser4")
    state = policy.init_state(4, 100)
    rng = policy_rng(0)
    select_one(state, 1, rng)
    update_one(state, int(state.order[0]), 0.5, 1, rng)  # one arm of this round done
    order = state.order.tolist()
    gone = order[2]
    moved = transplant(policy.init_state(3, 100), state, 4, [a for a in range(4) if a != gone])
    renumber = {a: a - (a > gone) for a in range(4) if a != gone}
    assert moved.order[:3].tolist() == [renumber[a] for a in order if a != gone]
    assert moved.cursor.tolist() == [1, 3]


@pytest.mark.parametrize("name", NAMES)
def test_arms_retired_and_added_mid_run(name: str) -> None:
    """Every policy keeps running with valid arms after losing an arm and gaining one (every
    kernel accepts an arm with no pulls at any round)."""
    instance = random_ltf(np.random.default_rng(8), 5, T, NOISE)
    policy = make_policy(name)
    policy.reset(K, T, seed=2, noise_proxy=0.1)

    def retire_then_add(run: Any) -> None:
        before = run.pulls.copy()
        run.transplant(policy.init_state(3, T, 0.1), [0, 2, 3], T)
        assert run.pulls.tolist() == before[[0, 2, 3]].tolist()
        run.transplant(policy.init_state(4, T, 0.1), [0, 1, 2, -1], T)
        assert run.pulls[3] == 0

    arms: list[int] = []
    drive_online(policy, instance, T, arms, retire_then_add, at=60)
    assert max(arms) < 4 and policy.t == T


def test_plan_must_keep_arms_in_order() -> None:
    with pytest.raises(ValueError, match="increasing order"):
        arm_plan(3, [1, 0])
    with pytest.raises(ValueError, match="come after"):
        arm_plan(3, [-1, 0, 1])
    assert arm_plan(3, [0, 2, -1]).renumber.tolist() == [0, -1, 1]


def test_online_run_refuses_a_traced_run_or_a_horizon_already_passed() -> None:
    policy = make_policy("ucb1")
    policy.reset(K, T, trace=True)
    with pytest.raises(ValueError, match="a traced run cannot change size"):
        policy.run.transplant(policy.init_state(K, T), list(range(K)), T)
    policy.reset(K, T)
    for _ in range(5):
        policy.update(policy.select(), 0.5)
    with pytest.raises(ValueError, match="horizon=4 is not allowed: 5 rounds are done"):
        policy.run.transplant(policy.init_state(K, 4), list(range(K)), 4)


def test_online_run_checks_late_updates_and_pulls_in_flight() -> None:
    policy = make_policy("ucb1")
    policy.reset(2, 3)
    with pytest.raises(ValueError, match=r"arm=9 is not allowed: use 0..1"):
        policy.run.update_late(9, 0.5)
    with pytest.raises(RuntimeError, match="3 pulls in flight use up the horizon of 3"):
        policy.run.select_with([(0, 0.5)] * 3)
    arm, state = policy.run.select_with([(0, 0.5), (0, 0.5)])
    assert (
        arm == 1 and state.counts.tolist() == [2, 0] and policy.run.state.counts.tolist() == [0, 0]
    )
    for _ in range(3):
        policy.run.update_late(0, 0.5)
    with pytest.raises(RuntimeError, match="horizon of 3 rounds is used up"):
        policy.run.update_late(0, 0.5)
