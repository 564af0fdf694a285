"""The model you deploy: recommendation rules of the policies and the final-model gap
max_i mu_i(T) - mu_rec(N_rec(T)), checked by hand on tiny instances."""

from __future__ import annotations

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.machinery.common import shrunk_best
from risingbandits.policies.machinery.kernel import _KERNELS, _default_recommend
from risingbandits.seeding import reward_key

# arm 0 blooms late (0.1, 0.2, 0.6, 0.9), arm 1 stays at 0.5
TINY = np.array([[0.1, 0.2, 0.6, 0.9], [0.5, 0.5, 0.5, 0.5]])


def play(policy: rb.Policy, rewards: list[list[float]], horizon: int) -> rb.Policy:
    """Run ``policy`` online; the n-th pull of arm i returns ``rewards[i][n - 1]``."""
    policy.reset(len(rewards), horizon, seed=0)
    pulls = [0] * len(rewards)
    for _ in range(horizon):
        arm = policy.select()
        policy.update(arm, rewards[arm][pulls[arm]])
        pulls[arm] += 1
    return policy


def test_final_gap_by_hand() -> None:
    inst = rb.from_means(TINY, rb.Noise("none"))
    # Successive Rejects, K = 2, T = 4: one phase of n_1 = ceil(2 / 2) = 1 pull each, then
    # arm 0 (0.1 < 0.5) is rejected and arm 1 gets the other 2 pulls: pulls (1, 3), deploy
    # arm 1 trained 3 times, worth 0.5, while arm 0 trained 4 times would be worth 0.9.
    res = rb.simulate(inst, make_policy("successive-rejects"), 4, 2)
    assert res.pulls.tolist() == [[1, 3], [1, 3]] and res.recommended.tolist() == [1, 1]
    assert res.final_gap == pytest.approx([0.4, 0.4])
    assert res.regret == pytest.approx([0.4, 0.4])  # V*(4) = 2.0, collected 0.1 + 1.5
    oracle = inst.oracle
    assert oracle.final_gap(np.array([3, 1]), np.array(0)) == pytest.approx(0.9 - 0.6)
    assert oracle.final_gap(np.array([0, 4]), np.array(0)) == pytest.approx(0.9)  # mu(0) = 0
    # at T = 2 the best model trained with the whole budget is arm 1 (0.5 > 0.2)
    assert oracle.final_gap(np.array([[2, 0], [1, 1]]), np.array([0, 0])) == pytest.approx(
        [0.5 - 0.2, 0.5 - 0.1]
    )


def test_the_gap_is_judged_on_the_test_curves_when_the_instance_has_them() -> None:
    """Rewards and regret follow the validation curve the policy observes; the deployed model
    is judged on data it never saw (issue 20): max_i test_i(T) - test_rec(N_rec)."""
    test = np.array([[0.0, 0.1, 0.3, 0.4], [0.7, 0.7, 0.7, 0.8]])
    inst = rb.RisingInstance(TINY, rb.Noise("none"), test_means=test)
    res = rb.simulate(inst, make_policy("successive-rejects"), 4, 1)
    assert res.pulls.tolist() == [[1, 3]] and res.recommended.tolist() == [1]
    assert res.final_gap == pytest.approx([0.8 - 0.7])  # test: arm 1 best at T = 4
    assert res.regret == pytest.approx([0.4])  # from the validation table, as before
    assert np.array_equal(inst.with_noise(rb.Noise("gaussian", 0.1)).test_means, test)
    with pytest.raises(ValueError, match=r"test_means has shape \(2, 3\): use the shape"):
        rb.RisingInstance(TINY, test_means=test[:, :3])
    with pytest.raises(ValueError, match=r"test_means\[arm 1 \(arm1\), pull 2\] = 1.5 is outside"):
        rb.RisingInstance(TINY, test_means=np.array([[0.1] * 4, [0.5, 1.5, 0.5, 0.5]]))


def test_default_rule_most_pulled_then_higher_last_reward_then_lowest_index() -> None:
    assert _KERNELS[type(make_policy("ucb1").init_state(2, 3))][2].py_func is _default_recommend
    # UCB1 plays every arm once: a tie in pulls goes to the higher last reward ...
    assert play(make_policy("ucb1"), [[0.2], [0.7], [0.9]], 3).recommend() == 2
    # ... then to the lowest index
    assert play(make_policy("ucb1"), [[0.2], [0.7], [0.7]], 3).recommend() == 1
    # more pulls beat a higher last reward: UCB1 plays arm 0 again (higher mean), gets 0.0
    policy = play(make_policy("ucb1"), [[0.9, 0.0], [0.1]], 3)
    assert policy.pulls.tolist() == [2, 1] and policy.recommend() == 0


ELIMINATION_VALUES = {
    "red-ae": "values",
    "ser4": "means",
    "successive-halving": "values",
    "successive-rejects": "values",
    "r-sr": "values",
}


@pytest.mark.parametrize("name", sorted(ELIMINATION_VALUES))
def test_elimination_methods_recommend_their_best_active_arm(name: str) -> None:
    inst = rb.ltf([0.3, 0.9, 0.6, 0.8], [50, 900, 200, 600], 600, rb.Noise("gaussian", 0.1))
    policy = make_policy(name)
    key = reward_key(4)
    for rounds in (25, 250, 600):  # before any elimination, during, at the end
        policy.reset(inst.n_arms, 600, seed=4, noise_proxy=0.1)
        pulls = np.zeros(inst.n_arms, np.int64)
        for _ in range(rounds):
            arm = policy.select()
            pulls[arm] += 1
            policy.update(arm, inst.reward(key, arm, int(pulls[arm])))
        rec = policy.recommend()
        state = policy._online().state
        values = getattr(state, ELIMINATION_VALUES[name])
        active = np.flatnonzero(state.active)
        assert rec == active[np.argmax(values[active])]  # ties to the lowest index
    if name in ("successive-halving", "successive-rejects", "r-sr"):
        assert len(active) == 1  # the survivor at the end of the budget


def test_shrunk_best_trusts_a_value_by_the_rewards_it_averages() -> None:
    """Empirical Bayes across arms: with no noise the best value wins; with noise an arm whose
    value averages one reward must lead by more than one averaging sixteen; with the values'
    spread below their noise (tau^2 at its floor) the least noisy of those above the mean wins;
    the mask is honoured and an empty one gives -1."""
    values = np.array([0.50, 0.52, 0.30])
    averaged = np.array([16.0, 1.0, 16.0])
    every = np.ones(3, np.bool_)
    assert shrunk_best(values, averaged, every, 0.0) == 1
    assert shrunk_best(values, averaged, every, 0.1) == 0
    sigma = 0.1
    tau2 = values.var() - np.mean(sigma**2 / averaged)
    shrunk = 0.44 + (values - 0.44) * tau2 / (tau2 + sigma**2 / averaged)
    assert shrunk[0] > shrunk[1] > shrunk[2]
    close = np.array([0.505, 0.51, 0.485])
    assert shrunk_best(close, np.array([1.0, 1.0, 4.0]), every, 0.2) == 1
    assert shrunk_best(close, np.array([4.0, 1.0, 1.0]), every, 0.2) == 0
    assert shrunk_best(values, averaged, np.array([False, True, True]), 0.1) == 1
    assert shrunk_best(values, averaged, np.zeros(3, np.bool_), 0.1) == -1
