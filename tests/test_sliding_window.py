"""SW-UCB, SW-KL-UCB, SW-TS and their shared round window (nonstationary-baselines.md 2-4).

The kernels are driven step by step (``select_one`` / ``update_one``, the online object's
entry points) so that the run state can be compared with brute-force recomputations.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, special, stats

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.machinery.kernel import select_one, update_one
from risingbandits.policies.machinery.kl_index import bernoulli_kl, kl_ucb_bernoulli
from risingbandits.policies.machinery.round_window import (
    new_round_window,
    window_push,
    window_rounds,
)
from risingbandits.policies.nonstationary.sliding_window import binarise
from risingbandits.seeding import policy_rng


def window_stats(history: list[tuple[int, float]], tau: int, n_arms: int):
    """Brute-force counts and sums of the last ``tau`` entries of ``history``."""
    counts = np.zeros(n_arms, np.int64)
    sums = np.zeros(n_arms)
    for arm, x in history[-tau:] if tau > 0 else []:
        counts[arm] += 1
        sums[arm] += x
    return counts, sums


def drive(state, horizon: int, reward: Callable[[int, int], float], seed: int = 0, check=None):
    """Run a kernel state for ``horizon`` rounds; ``check(t, arm, history)`` after each select."""
    rng = policy_rng(seed)
    history: list[tuple[int, float]] = []
    for t in range(1, horizon + 1):
        arm = int(select_one(state, t, rng))
        if check is not None:
            check(t, arm, history)
        x = reward(t, arm)
        update_one(state, arm, x, t, rng)
        history.append((arm, x))
    return history


# -- the round window --------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n_arms=st.integers(1, 5),
    tau=st.integers(1, 12),
    pushes=st.lists(st.tuples(st.integers(0, 4), st.floats(-3, 3)), max_size=60),
)
def test_round_window_equals_recount_after_every_push(
    n_arms: int, tau: int, pushes: list[tuple[int, float]]
) -> None:
    win = new_round_window(n_arms, tau)
    history: list[tuple[int, float]] = []
    for arm, x in pushes:
        arm %= n_arms
        evicted = window_push(win, arm, x)
        expected_evicted = history[-tau][0] if len(history) >= tau else -1
        history.append((arm, x))
        assert evicted == expected_evicted
        counts, sums = window_stats(history, tau, n_arms)
        np.testing.assert_array_equal(win.counts, counts)
        np.testing.assert_allclose(win.sums, sums, atol=1e-9)
        assert window_rounds(win) == min(len(history), tau)


def test_round_window_rejects_empty_window() -> None:
    with pytest.raises(ValueError, match="tau=0"):
        new_round_window(3, 0)


# -- SW-UCB ------------------------------------------------------------------------------------


def test_sw_ucb_index_and_forgetting() -> None:
    """Arm 0 always pays 1, the others 0: with a small xi arms 1 and 2 drop out of the window
    of tau = 10 rounds, get index +inf and are replayed; every index equals the formula on a
    brute-force recount of the window."""
    tau, xi, n_arms = 10, 0.01, 3
    policy = make_policy("sw-ucb", tau=tau, xi=xi, tie_break="first")
    state = policy.init_state(n_arms, 200)
    replays = []

    def check(t: int, arm: int, history: list[tuple[int, float]]) -> None:
        counts, sums = window_stats(history, tau, n_arms)
        m = min(t - 1, tau)
        for i in range(n_arms):
            if counts[i] == 0:
                assert state.scores[i] == np.inf
            else:
                expected = sums[i] / counts[i] + math.sqrt(xi * math.log(m) / counts[i])
                assert state.scores[i] == pytest.approx(expected, rel=1e-12)
        absent = np.flatnonzero(counts == 0)
        if absent.size:
            assert arm == absent[0]  # tie_break="first" among the +inf arms
            if t > n_arms:
                replays.append((t, arm))

    drive(state, 200, lambda t, arm: 1.0 if arm == 0 else 0.0, check=check)
    # Each of arms 1, 2 is replayed once per window once arm 0 dominates.
    assert {arm for _, arm in replays} == {1, 2}
    assert len(replays) >= 2 * (200 // (tau + 2)) - 4


@pytest.mark.parametrize(("horizon", "tau"), [(10_000, 606), (30_000, 1112), (50_000, 1471)])
def test_sw_ucb_paper_window(horizon: int, tau: int) -> None:
    # tau = floor(2 sqrt(T ln T)), values from nonstationary-baselines.md (computed there).
    state = make_policy("sw-ucb").init_state(5, horizon)
    assert state.win.arms.shape[0] == tau


def test_sw_ucb_explicit_window_is_horizon_free() -> None:
    assert make_policy("sw-ucb").uses_horizon
    assert not make_policy("sw-ucb", tau=300).uses_horizon
    # A window longer than the run only needs T slots and behaves the same as a run-long one.
    assert make_policy("sw-ucb", tau=10**9).init_state(2, 50).win.arms.shape[0] == 50


# -- SW-KL-UCB ---------------------------------------------------------------------------------


def kl_root(p: float, level: float) -> float:
    """max{q in [p, 1] : d(p, q) <= level}, by scipy's brentq on an independent divergence."""

    def g(q: float) -> float:
        return float(special.rel_entr(p, q) + special.rel_entr(1 - p, 1 - q)) - level

    if p >= 1.0:
        return 1.0
    top = 1.0 - 1e-13
    if g(top) <= 0:
        return 1.0
    return float(optimize.brentq(g, p, top, xtol=1e-14, rtol=1e-15))


@settings(max_examples=200, deadline=None)
@given(
    p=st.floats(0.0, 1.0),
    level=st.floats(1e-4, 8.0),
    precision=st.sampled_from([1e-4, 1e-6, 1e-10]),
)
def test_kl_ucb_index_solves_the_equation(p: float, level: float, precision: float) -> None:
    q = kl_ucb_bernoulli(p, level, precision, 50)
    assert p <= q <= 1.0
    assert abs(q - kl_root(p, level)) <= precision


@numba.njit
def every_midpoint_bisection(
    means: np.ndarray, levels: np.ndarray, precision: float, max_halvings: int
) -> np.ndarray:
    """The plain bisection: every midpoint's divergence evaluated (the definition)."""
    out = np.empty(means.shape[0])
    for k in range(means.shape[0]):
        mean, level = means[k], levels[k]
        lo, hi = mean, min(1.0, mean + math.sqrt(0.5 * level))
        halvings = 0
        while halvings < max_halvings and hi - lo > precision:
            halvings += 1
            mid = (lo + hi) * 0.5
            if bernoulli_kl(mean, mid) > level:
                hi = mid
            else:
                lo = mid
        out[k] = (lo + hi) * 0.5
    return out


@numba.njit
def shortcut_bisection(
    means: np.ndarray, levels: np.ndarray, precision: float, max_halvings: int
) -> np.ndarray:
    out = np.empty(means.shape[0])
    for k in range(means.shape[0]):
        out[k] = kl_ucb_bernoulli(means[k], levels[k], precision, max_halvings)
    return out


@pytest.mark.parametrize("precision", [1e-10, 1e-4, 1e-14])
def test_kl_index_with_certified_shortcuts_equals_the_plain_bisection_bit_for_bit(
    precision: float,
) -> None:
    """SW-KL-UCB's windows: N in 1..252 clipped rewards, f = ln m + 3 ln ln m (m <= 252); and
    the edges: means at or near 0 and 1, tiny and huge levels, sums of a few rewards."""
    rng = np.random.default_rng(11)
    n = rng.integers(1, 253, 200_000)
    f = np.log(252) + 3 * np.log(np.log(252)) * rng.uniform(0.2, 1.0, n.size)
    means = np.concatenate(
        [
            rng.uniform(0, 1, n.size),
            rng.integers(0, 8, 20_000) / 7,
            np.array([0.0, 1e-15, 1e-12, 1e-9, 0.5, 1 - 1e-9, 1 - 1e-12, 1 - 1e-15, 1.0] * 50),
            1 - 10.0 ** -rng.uniform(0, 15, 20_000),
            10.0 ** -rng.uniform(0, 15, 20_000),
        ]
    )
    levels = np.concatenate(
        [
            f / n,
            10.0 ** rng.uniform(-4, 1, 20_000),
            10.0 ** rng.uniform(-8, 2, 450),
            10.0 ** rng.uniform(-6, 1, 20_000),
            10.0 ** rng.uniform(-6, 1, 20_000),
        ]
    )
    fast = shortcut_bisection(means, levels, precision, 50)
    plain = every_midpoint_bisection(means, levels, precision, 50)
    different = np.flatnonzero(fast != plain)
    assert different.size == 0, list(zip(means[different[:3]], levels[different[:3]], strict=True))


@pytest.mark.parametrize(
    "params",
    [{}, {"c": 0.0, "precision": 1e-4, "tau": 40}],
    ids=["paper", "smpybandits-conventions"],
)
def test_sw_kl_ucb_index_on_its_window(params: dict) -> None:
    """Every index equals the KL root N d(mu, q) = ln m + c ln ln m on a brute-force window of
    clipped rewards (Gaussian noise around means in [0, 1] leaves [0, 1] often)."""
    n_arms, horizon = 4, 700
    policy = make_policy("sw-kl-ucb", **params)
    state = policy.init_state(n_arms, horizon)
    tau = params.get("tau", 252)
    c = params.get("c", 3.0)
    precision = params.get("precision", 1e-10)
    noise = np.random.default_rng(5).normal(0, 0.3, (horizon + 1, n_arms))
    means = np.array([0.2, 0.5, 0.6, 0.9])

    def check(t: int, arm: int, history: list[tuple[int, float]]) -> None:
        counts, sums = window_stats([(a, min(max(x, 0), 1)) for a, x in history], tau, n_arms)
        m = min(t - 1, tau)
        f = 0.0 if m <= 1 else math.log(m) + (c * math.log(math.log(m)) if c else 0.0)
        for i in range(n_arms):
            if counts[i] == 0:
                assert state.scores[i] == np.inf
            elif f <= 0:
                assert state.scores[i] == 1.0
            else:
                root = kl_root(sums[i] / counts[i], f / counts[i])
                assert abs(state.scores[i] - root) <= precision

    drive(state, horizon, lambda t, arm: means[arm] + noise[t, arm], check=check)


@pytest.mark.parametrize(("drift", "tau"), [(1e-3, 252), (4e-4, 523), (1e-4, 1585)])
def test_sw_kl_ucb_window_from_drift(drift: float, tau: int) -> None:
    # tau = ceil(drift^(-4/5)), values from nonstationary-baselines.md (computed there).
    policy = make_policy("sw-kl-ucb", drift=drift)
    assert not policy.uses_horizon
    assert policy.init_state(5, 50_000).win.arms.shape[0] == tau


# -- SW-TS -------------------------------------------------------------------------------------


def test_sw_ts_window_counts_are_successes_and_failures() -> None:
    """With 0/1 rewards (no binarisation draw) the window counts are the successes and pulls
    of the last tau rounds after every step."""
    tau, n_arms = 30, 3
    state = make_policy("sw-ts", tau=tau).init_state(n_arms, 400)
    payoff = np.random.default_rng(3).random((401, n_arms)) < np.array([0.3, 0.5, 0.7])

    def check(t: int, arm: int, history: list[tuple[int, float]]) -> None:
        counts, successes = window_stats(history, tau, n_arms)
        np.testing.assert_array_equal(state.win.counts, counts)
        np.testing.assert_array_equal(state.win.sums, successes)

    history = drive(state, 400, lambda t, arm: float(payoff[t, arm]), check=check)
    assert len({arm for arm, _ in history}) == n_arms


def test_sw_ts_draws_from_the_window_posterior() -> None:
    """Window: arm 0 has 3 successes in 5 pulls, arm 1 has 2 in 6. Beta-SWTS plays arm 0 with
    probability P(Beta(4, 3) > Beta(3, 5)); the Beta(N + 1, N - S + 1) of the reference code
    would give a clearly different rate."""
    state = make_policy("sw-ts", tau=11).init_state(2, 100)
    rng = policy_rng(0)
    pushes = [(0, 1.0), (0, 1.0), (0, 1.0), (0, 0.0), (0, 0.0)] + [(1, 1.0)] * 2 + [(1, 0.0)] * 4
    for t, (arm, x) in enumerate(pushes, start=1):
        update_one(state, arm, x, t, rng)

    def win_prob(a0: float, b0: float, a1: float, b1: float) -> float:
        dens = lambda x: stats.beta.pdf(x, a0, b0) * stats.beta.cdf(x, a1, b1)  # noqa: E731
        return float(integrate.quad(dens, 0, 1)[0])

    expected = win_prob(4, 3, 3, 5)
    wrong = win_prob(6, 3, 7, 5)
    n = 20_000
    rate = np.mean([select_one(state, 12, rng) == 0 for _ in range(n)])
    sd = math.sqrt(expected * (1 - expected) / n)
    assert abs(rate - expected) < 5 * sd
    assert abs(wrong - expected) > 20 * sd


def test_binarise_is_bernoulli_of_the_clipped_reward() -> None:
    rng = policy_rng(1)
    draws = np.array([binarise(0.3, rng) for _ in range(20_000)])
    assert set(np.unique(draws)) <= {0.0, 1.0}
    assert abs(draws.mean() - 0.3) < 5 * math.sqrt(0.3 * 0.7 / draws.size)
    state = rng.copy()
    assert [binarise(x, rng) for x in (-0.5, 0.0, 1.0, 1.7)] == [0.0, 0.0, 1.0, 1.0]
    assert (rng == state).all()  # sure outcomes consume no randomness


@pytest.mark.parametrize(("horizon", "tau"), [(10_000, 100), (30_000, 174), (50_000, 224)])
def test_sw_ts_paper_window(horizon: int, tau: int) -> None:
    # tau = ceil(T^(1 - beta)), beta = 0.5, values from nonstationary-baselines.md.
    assert make_policy("sw-ts").init_state(5, horizon).win.arms.shape[0] == tau


# -- all three ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "param", "value"),
    [
        ("sw-ucb", "tau", 0),
        ("sw-ucb", "xi", 0.0),
        ("sw-ucb", "bound", -1.0),
        ("sw-kl-ucb", "drift", 0.0),
        ("sw-kl-ucb", "drift", 1.0),
        ("sw-kl-ucb", "c", -1.0),
        ("sw-kl-ucb", "precision", 0.0),
        ("sw-kl-ucb", "max_halvings", 0),
        ("sw-ts", "beta", 1.0),
        ("sw-ts", "tau", 2.5),
    ],
)
def test_parameter_validation(name: str, param: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"{name}: {param}={value!r} is not allowed"):
        make_policy(name, **{param: value})


@pytest.mark.parametrize("name", ["sw-ucb", "sw-kl-ucb", "sw-ts"])
def test_sliding_windows_track_a_change(name: str) -> None:
    """Restless switch: arm 0 pays Bernoulli(0.8) throughout, arm 1 Bernoulli(0.95) up to
    round 2,000 and Bernoulli(0.2) after. A sliding window moves to arm 0 (most of the last
    1,500 rounds); UCB1, whose mean of arm 1 remembers the good past, lags behind."""
    horizon = 4000
    payoff = np.random.default_rng(8).random((horizon + 1, 2))

    def reward(t: int, arm: int) -> float:
        mean = 0.8 if arm == 0 else (0.95 if t <= 2000 else 0.2)
        return float(payoff[t, arm] < mean)

    def late_share(policy: rb.Policy) -> float:
        arms = [arm for arm, _ in drive(policy.init_state(2, horizon), horizon, reward)]
        return float(np.mean(np.array(arms[-1500:]) == 0))

    share = late_share(make_policy(name, **({"tau": 200} if name != "sw-ts" else {})))
    assert share > 0.75
    assert late_share(make_policy("ucb1")) < share - 0.05
