"""Rexp3 and Ser4, and their restart schedules (nonstationary-baselines.md sections 5-6).

The kernels are driven step by step (``select_one`` / ``update_one``, the online object's
entry points) and their run state is compared with independent recomputations.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from risingbandits.instances.named import named_instance
from risingbandits.policies import make_policy
from risingbandits.policies.machinery.kernel import select_one, update_one
from risingbandits.policies.nonstationary.restarting import sample_index
from risingbandits.seeding import policy_rng
from risingbandits.simulate import simulate

# -- Rexp3 -------------------------------------------------------------------------------------


def test_rexp3_follows_exp3_and_restarts_every_batch() -> None:
    """An independent Exp3 recomputation (raw probabilities from log-weights, importance-weighted
    gains on clipped rewards) matches the state at every round, and the weights are reset to
    zero exactly at the end of rounds 7, 14, 21, ..."""
    n_arms, batch, horizon = 3, 7, 100
    policy = make_policy("rexp3", batch=batch)
    assert not policy.uses_horizon
    state = policy.init_state(n_arms, horizon)
    gamma = min(1.0, math.sqrt(n_arms * math.log(n_arms) / ((math.e - 1) * batch)))
    assert state.gamma == pytest.approx(gamma)
    rng = policy_rng(0)
    rewards = np.random.default_rng(1).uniform(-0.2, 1.2, (horizon + 1, n_arms))
    lw = np.zeros(n_arms)
    for t in range(1, horizon + 1):
        arm = int(select_one(state, t, rng))
        w = np.exp(lw)
        probs = (1 - gamma) * w / w.sum() + gamma / n_arms
        np.testing.assert_allclose(state.scores, probs, rtol=1e-12)
        x = rewards[t, arm]
        update_one(state, arm, x, t, rng)
        lw[arm] += gamma * min(max(x, 0.0), 1.0) / (probs[arm] * n_arms)
        if t % batch == 0:
            lw[:] = 0.0
            assert not state.log_weights.any()
        np.testing.assert_allclose(state.log_weights, lw, rtol=1e-12, atol=1e-15)
        assert state.clock.restarts[0] == t // batch
        assert state.clock.last[0] == batch * (t // batch)


def test_rexp3_log_weights_do_not_overflow() -> None:
    """A batch of 20,000 rounds where arm 0 always pays 1: raw Exp3 weights would overflow
    (a log-weight grows by up to 1 per round); the probabilities stay a distribution that
    concentrates on arm 0."""
    horizon = 20_000
    state = make_policy("rexp3", batch=10**6, gamma=0.5).init_state(2, horizon)
    rng = policy_rng(2)
    for t in range(1, horizon + 1):
        arm = int(select_one(state, t, rng))
        update_one(state, arm, 1.0 if arm == 0 else 0.0, t, rng)
    assert state.log_weights[0] > 1000  # exp(710) already overflows float64
    select_one(state, horizon, rng)
    assert np.isfinite(state.scores).all()
    assert state.scores.sum() == pytest.approx(1.0)
    assert state.scores[0] == pytest.approx(1 - 0.5 / 2)


def test_sample_index_draws_from_the_distribution() -> None:
    probs = np.array([0.2, 0.5, 0.0, 0.3])
    rng = policy_rng(3)
    n = 30_000
    freq = np.bincount([sample_index(probs, rng) for _ in range(n)], minlength=4) / n
    assert freq[2] == 0
    assert np.all(np.abs(freq - probs) < 5 * np.sqrt(probs * (1 - probs) / n) + 1e-12)


@pytest.mark.parametrize(
    ("horizon", "n_arms", "batch", "gamma"),
    [
        (10_000, 2, 327, 0.0497),
        (10_000, 5, 319, 0.1212),
        (30_000, 2, 679, 0.0345),
        (30_000, 5, 662, 0.0841),
        (50_000, 3, 972, 0.0444),
        (50_000, 5, 931, 0.0709),
    ],
)
def test_rexp3_paper_values(horizon: int, n_arms: int, batch: int, gamma: float) -> None:
    # V_T = K; values from the table of nonstationary-baselines.md (computed there).
    policy = make_policy("rexp3")
    assert policy.uses_horizon
    state = policy.init_state(n_arms, horizon)
    assert state.clock.period == batch
    assert state.gamma == pytest.approx(gamma, abs=5e-5)


@pytest.mark.parametrize("variation", [1e-300, 1e-320])
def test_rexp3_auto_batch_is_capped_at_the_horizon(variation: float) -> None:
    """A variation budget near 0 makes the formula's batch longer than the run (10^200 rounds,
    or an infinite float): the batch is T, gamma Exp3's for T rounds, and the policy runs."""
    policy = make_policy("rexp3", variation=variation)
    state = policy.init_state(2, 50)
    assert state.clock.period == 50
    assert state.gamma == pytest.approx(math.sqrt(2 * math.log(2) / ((math.e - 1) * 50)))
    res = simulate(named_instance("intro", 50, None), policy, 50, 2)
    assert res.regret.shape == (2,)


# -- Ser4 --------------------------------------------------------------------------------------


def first_elimination_round(delta: float, eps: float, gap: float, n_arms: int, c: float) -> int:
    """Smallest tau with gap + eps >= sqrt(c ln(4 K tau^2 / delta) / tau)."""
    tau = 1
    while gap + eps < math.sqrt(c * math.log(4 * n_arms * tau**2 / delta) / tau):
        tau += 1
    return tau


def run_ser4(state, payoff, horizon: int, seed: int = 0):
    """Drive Ser4; yields (t, arm, active set before the pull, restarts so far) per round."""
    rng = policy_rng(seed)
    for t in range(1, horizon + 1):
        active = state.active.copy()
        arm = int(select_one(state, t, rng))
        update_one(state, arm, payoff(t, arm), t, rng)
        yield t, arm, active, int(state.clock.restarts[0])


@pytest.mark.parametrize("elim_const", [2.0, 0.5])
def test_ser4_eliminates_a_clearly_bad_arm(elim_const: float) -> None:
    """Arms 0 and 1 always pay 1, arm 2 pays 0 (gap 1), no resets: arm 2 leaves the active set
    exactly after the first round tau with 1 + eps >= r(tau); the tied best arms stay; every
    round plays each active arm once, in varying orders."""
    n_arms, delta, eps = 3, 0.01, 0.001
    policy = make_policy("ser4", delta=delta, eps=eps, phi=0.0, elim_const=elim_const)
    assert not policy.uses_horizon
    state = policy.init_state(n_arms, 1000)
    tau_star = first_elimination_round(delta, eps, 1.0, n_arms, elim_const)
    assert tau_star > 3  # the test must see full rounds before the elimination
    steps = list(run_ser4(state, lambda t, arm: 0.0 if arm == 2 else 1.0, 300))
    arms = [arm for _, arm, _, _ in steps]
    switch = n_arms * tau_star  # the pull that ends round tau_star
    assert all(active.all() for t, _, active, _ in steps if t <= switch)
    assert all(list(active) == [True, True, False] for t, _, active, _ in steps if t > switch)
    rounds = [arms[i : i + 3] for i in range(0, switch, 3)]
    assert all(sorted(r) == [0, 1, 2] for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1  # the order is shuffled
    late = arms[switch:]
    assert sorted(set(late)) == [0, 1]
    assert all(sorted(late[i : i + 2]) == [0, 1] for i in range(0, len(late) - 1, 2))


def test_ser4_means_are_since_the_last_reset() -> None:
    """After every completed round, each active arm's mean is the mean of its clipped rewards
    since the last reset."""
    n_arms = 4
    state = make_policy("ser4", phi=0.02, delta=0.1, eps=0.0).init_state(n_arms, 3000)
    rewards = np.random.default_rng(4).normal(0.5, 0.4, 3001)
    since_reset: dict[int, list[float]] = {k: [] for k in range(n_arms)}
    last_resets = 0
    for t, arm, _, resets in run_ser4(state, lambda t, arm: rewards[t] + 0.1 * arm, 3000):
        since_reset[arm].append(min(max(rewards[t] + 0.1 * arm, 0.0), 1.0))
        if resets != last_resets:  # reset at the end of this round
            last_resets = resets
            since_reset = {k: [] for k in range(n_arms)}
            assert state.active.all() and not state.means.any() and state.rounds[0] == 0
        elif state.cursor[0] == state.cursor[1]:  # the round is complete
            for k in np.flatnonzero(state.active):
                assert len(since_reset[k]) == state.rounds[0]
                assert state.means[k] == pytest.approx(np.mean(since_reset[k]), rel=1e-12)
    assert last_resets > 0


def test_ser4_resets_bring_eliminated_arms_back() -> None:
    """With a clearly bad arm 2 and phi = 0.05, arm 2 is eliminated, then a reset makes it
    active again and it is played in the very next round."""
    policy = make_policy("ser4", delta=0.01, eps=0.0, phi=0.05)
    state = policy.init_state(3, 5000)
    steps = list(run_ser4(state, lambda t, arm: 0.0 if arm == 2 else 1.0, 5000, seed=1))
    comebacks = 0
    for i in range(1, len(steps) - 3):
        _, _, active, resets = steps[i]
        if not active[2] and resets > steps[i - 1][3]:  # reset at the end of this round
            assert steps[i + 1][2].all()
            assert 2 in [arm for _, arm, _, _ in steps[i + 1 : i + 4]]
            comebacks += 1
    assert comebacks >= 2


def test_ser4_reset_rate_is_phi_per_round() -> None:
    """No arm is ever eliminated (equal rewards, eps = 0): resets come at the end of a round
    with probability phi, and only there."""
    n_arms, phi, horizon = 2, 0.1, 40_000
    state = make_policy("ser4", delta=0.1, eps=0.0, phi=phi).init_state(n_arms, horizon)
    steps = list(run_ser4(state, lambda t, arm: 0.5, horizon))
    ends = [t for t, _, _, _ in steps if t % n_arms == 0]
    resets = steps[-1][3]
    pairs = itertools.pairwise(steps)
    assert all(b == a for (_, _, _, a), (t, _, _, b) in pairs if t % n_arms)
    sd = math.sqrt(len(ends) * phi * (1 - phi))
    assert abs(resets - phi * len(ends)) < 5 * sd


def test_ser4_never_empties_the_active_set() -> None:
    """A huge eps eliminates every arm but the empirical best after the first round."""
    state = make_policy("ser4", delta=0.5, eps=100.0, phi=0.0).init_state(4, 100)
    steps = list(run_ser4(state, lambda t, arm: 0.1 * arm, 100))
    assert list(state.active) == [False, False, False, True]
    assert {arm for _, arm, _, _ in steps[4:]} == {3}


@pytest.mark.parametrize(
    ("horizon", "n_arms", "phi1", "phi_k"),
    [(10_000, 2, 2.25e-3, 3.18e-3), (30_000, 5, 7.48e-4, 1.67e-3), (50_000, 5, 5.67e-4, 1.27e-3)],
)
def test_ser4_paper_values(horizon: int, n_arms: int, phi1: float, phi_k: float) -> None:
    # delta = 1/T, eps = 1/(KT), phi = sqrt(N / (T K ln(KT))): nonstationary-baselines.md table.
    policy = make_policy("ser4")
    assert policy.uses_horizon
    state = policy.init_state(n_arms, horizon)
    assert state.delta == pytest.approx(1 / horizon)
    assert state.eps == pytest.approx(1 / (n_arms * horizon))
    assert state.clock.prob == pytest.approx(phi1, rel=5e-3)
    phi = make_policy("ser4", n_changes=n_arms).init_state(n_arms, horizon).clock.prob
    assert phi == pytest.approx(phi_k, rel=5e-3)


@pytest.mark.parametrize(
    ("name", "param", "value"),
    [
        ("rexp3", "batch", 0),
        ("rexp3", "gamma", 0.0),
        ("rexp3", "gamma", 1.5),
        ("rexp3", "variation", -1.0),
        ("ser4", "delta", 1.0),
        ("ser4", "eps", -0.1),
        ("ser4", "phi", 1.5),
        ("ser4", "n_changes", 0),
        ("ser4", "elim_const", 0.0),
    ],
)
def test_parameter_validation(name: str, param: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"{name}: {param}={value!r} is not allowed"):
        make_policy(name, **{param: value})
