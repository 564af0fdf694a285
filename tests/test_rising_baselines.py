"""The rising-bandit baselines: R-ed-UCB (+ deterministic), ET-SWGTS, TI-UCB, R-ed-AE.

Expected values are computed here from the specs' formulas (rising-baselines.md sections 3-6),
independently of the kernels: direct sums over the crafted history, numpy least squares, the
policy's own generator replayed with numpy.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.machinery.kernel import select_one, update_one
from risingbandits.policies.machinery.rng import rng_normal
from risingbandits.rewards import draw_reward
from risingbandits.seeding import policy_rng, reward_key
from test_conformance import online_arms


def feed(state, history: list[tuple[int, float]]) -> int:
    """Apply ``update`` for (arm, reward) pairs in rounds 1, 2, ...; returns the next round."""
    rng = policy_rng(0)
    for t, (arm, x) in enumerate(history, start=1):
        update_one(state, arm, x, t, rng)
    return len(history) + 1


def per_arm(history: list[tuple[int, float]], n_arms: int) -> list[list[float]]:
    out: list[list[float]] = [[] for _ in range(n_arms)]
    for arm, x in history:
        out[arm].append(x)
    return out


# -- R-ed-UCB ----------------------------------------------------------------------------------


def red_direct(x: list[float], t: int, eps: float, sigma: float, log_inv_delta: float) -> float:
    """Spec 3.2 literally: (1/h) sum_{l=N-h+1..N} [X(l) + (t-l)(X(l)-X(l-h))/h] + bonus."""
    n = len(x)
    h = math.floor(eps * n + 1e-9)
    if h == 0:
        return math.inf
    total = 0.0
    for pull in range(n - h + 1, n + 1):
        total += x[pull - 1] + (t - pull) * (x[pull - 1] - x[pull - h - 1]) / h
    return total / h + sigma * (t - n + h - 1) * math.sqrt(10 * log_inv_delta / h**3)


def test_red_ucb_index_by_hand() -> None:
    # X(l) = 0.1 (l - 1), N = 8, eps = 1/4 -> h = 2; the projection of a line is exact:
    # mu_hat(20) = 0.1 * 19; bonus = 0.1 (20 - 8 + 2 - 1) sqrt(10 ln(1000) / 8).
    policy = make_policy("red-ucb", eps=0.25, sigma=0.1, delta=0.001)
    state = policy.init_state(2, 100)
    feed(state, [(0, 0.1 * k) for k in range(8)] + [(1, 0.5)] * 3)
    select_one(state, 20, policy_rng(0))
    expected = 1.9 + 0.1 * 13 * math.sqrt(10 * math.log(1000) / 8)
    assert state.scores[0] == pytest.approx(expected, rel=1e-12)
    assert state.scores[1] == math.inf  # 3 pulls: h = floor(3/4) = 0


@pytest.mark.parametrize("schedule", ["constant", "t^-4"])
def test_red_ucb_index_equals_direct_formula(schedule: str) -> None:
    # Crafted history: windows h = 0, 1, 3 and 7 on four arms (eps = 1/4).
    rng = np.random.default_rng(11)
    sizes = [2, 5, 13, 30]
    history = [
        (arm, float(rng.normal(0.05 * j, 0.2))) for arm in range(4) for j in range(sizes[arm])
    ]
    rng.shuffle(history)
    policy = make_policy("red-ucb", sigma=0.2, delta=0.01, delta_schedule=schedule)
    state = policy.init_state(4, 200)
    t = feed(state, history) + 17
    select_one(state, t, policy_rng(0))
    log_inv_delta = math.log(100) if schedule == "constant" else 4 * math.log(t)
    xs = per_arm(history, 4)
    expected = [red_direct(xs[i], t, 0.25, 0.2, log_inv_delta) for i in range(4)]
    assert [math.floor(0.25 * s) for s in sizes] == [0, 1, 3, 7]
    np.testing.assert_allclose(state.scores, expected, rtol=1e-10, atol=1e-12)


def test_red_ucb_incremental_state_equals_recomputation() -> None:
    rng = np.random.default_rng(5)
    n_arms, eps = 3, 1 / 32
    policy = make_policy("red-ucb", eps=eps, sigma=0.1)
    state = policy.init_state(n_arms, 600)
    xs: list[list[float]] = [[] for _ in range(n_arms)]
    sel_rng = policy_rng(0)
    for t in range(1, 601):
        arm = int(rng.integers(0, n_arms))
        x = float(rng.random())
        update_one(state, arm, x, t, sel_rng)
        xs[arm].append(x)
        n = len(xs[arm])
        np.testing.assert_allclose(state.hist.prefix[arm, : n + 1], np.cumsum([0.0, *xs[arm]]))
        weighted = np.arange(1, n + 1) * np.array(xs[arm])
        np.testing.assert_allclose(state.hist.wprefix[arm, : n + 1], np.cumsum([0.0, *weighted]))
        select_one(state, t + 1, sel_rng)
        expected = [red_direct(xs[i], t + 1, eps, 0.1, math.log(1000)) for i in range(n_arms)]
        np.testing.assert_allclose(state.scores, expected, rtol=1e-9, atol=1e-10)


def test_red_ucb_det_follows_eq_det_red() -> None:
    # mu_0(n) = min(0.5, 0.1 n), mu_1(n) = min(0.9, 0.03 n), no noise; rounds 1-2 start.
    # B_0(t) = 0.1 N + (t - N) 0.1 = 0.1 t while arm 0 rises, 0.5 + (t - 5) 0.1 right after its
    # 5th pull, then 0.5 (slope 0). B_1(t) = 0.03 + (t - 1) 0.03 = 0.03 t with one pull: it
    # first exceeds 0.5 at t = 17; afterwards B_1 = 0.03 N + (t - N) 0.03 = 0.03 t (0.9 once
    # saturated) stays above 0.5. So: 0, 1, then arm 0 in rounds 3..16, then arm 1 to the end.
    instance = rb.ltf([0.5, 0.9], [5, 30], 60, rb.Noise("none"))
    res = rb.simulate(instance, make_policy("red-ucb-det"), 60, [0], record_arms=True)
    assert res.arms is not None
    assert res.arms[0].tolist() == [0, 1] + [0] * 14 + [1] * 44
    policy = make_policy("red-ucb-det")
    start = [(0, 0.1), (1, 0.03)]
    state = policy.init_state(2, 60)
    feed(state, start)
    select_one(state, 3, policy_rng(0))
    np.testing.assert_allclose(state.scores, [0.3, 0.09])
    state = policy.init_state(2, 60)
    feed(state, start + [(0, min(0.5, 0.1 * n)) for n in range(2, 16)])  # arm 0: 15 pulls
    select_one(state, 17, policy_rng(0))
    np.testing.assert_allclose(state.scores, [0.5, 0.51])


# -- ET-SWGTS ----------------------------------------------------------------------------------


def test_et_swgts_forced_phase_is_round_robin() -> None:
    instance = rb.ltf([0.9, 0.5, 0.2], [10, 10, 10], 100, rb.Noise("gaussian", 0.1))
    policy = make_policy("et-swgts", Gamma=5, tau=20)
    res = rb.simulate(instance, policy, 100, [0, 1], record_arms=True)
    assert res.arms is not None
    for arms in res.arms:
        assert arms[:15].tolist() == [0, 1, 2] * 5
        assert np.bincount(arms[:15], minlength=3).tolist() == [5, 5, 5]
    short = rb.simulate(instance, make_policy("et-swgts", Gamma=5), 10, [0], record_arms=True)
    assert short.arms is not None and short.arms[0].tolist() == [0, 1, 2] * 3 + [0]


def replay_posterior(
    policy: rb.Policy, history: list[tuple[int, float]], window: list[tuple[float, int]], t: int
) -> None:
    """The sampled thetas are N(S/M, 1/(gamma M)) with the test's own window (S, M)."""
    state = policy.init_state(3, 500)
    feed(state, history)
    select_one(state, t, policy_rng(4))
    mirror = policy_rng(4)
    gamma = policy.params["gamma"]
    expected = [s / m + rng_normal(mirror, 0.0, 1 / math.sqrt(gamma * m)) for s, m in window]
    np.testing.assert_allclose(state.scores, expected, rtol=1e-12)


def test_et_swgts_posterior_uses_the_pull_window() -> None:
    rng = np.random.default_rng(3)
    history = [(int(rng.integers(0, 3)), float(rng.normal(0.5, 0.3))) for _ in range(120)]
    tau = 7
    xs = per_arm(history, 3)
    window = [(sum(x[-tau:]), min(tau, len(x))) for x in xs]
    assert min(len(x) for x in xs) > tau  # the window really cuts the history
    policy = make_policy("et-swgts", tau=tau, Gamma=1, gamma=2.0, window="pulls")
    replay_posterior(policy, history, window, len(history) + 1)


def test_et_swgts_posterior_uses_the_round_window() -> None:
    rng = np.random.default_rng(8)
    history = [(int(rng.integers(0, 3)), float(rng.normal(0.5, 0.3))) for _ in range(150)]
    tau = 25
    recent = history[-tau:]
    window = [
        (sum(x for a, x in recent if a == arm), sum(1 for a, _ in recent if a == arm))
        for arm in range(3)
    ]
    assert all(m > 0 for _, m in window)
    policy = make_policy("et-swgts", tau=tau, Gamma=1, window="rounds")
    replay_posterior(policy, history, window, len(history) + 1)


def test_et_swgts_round_window_forces_an_absent_arm() -> None:
    policy = make_policy("et-swgts", tau=10, Gamma=1)  # window="rounds", the default
    state = policy.init_state(3, 100)
    t = feed(state, [(0, 0.2), (1, 0.4), (2, 0.9)] + [(0, 0.5), (2, 0.9)] * 5)
    assert select_one(state, t, policy_rng(0)) == 1  # absent from the last 10 rounds
    pulls = make_policy("et-swgts", tau=10, Gamma=1, window="pulls")  # still holds arm 1
    state = pulls.init_state(3, 100)
    feed(state, [(0, 0.2), (1, 0.4), (2, 0.9)] + [(0, 0.5), (2, 0.9)] * 5)
    select_one(state, t, policy_rng(0))
    assert np.isfinite(state.scores).all()


def test_et_swgts_rounds_mode_online_equals_compiled() -> None:
    instance = rb.ltf([0.9, 0.6, 0.3], [300, 50, 10], 400, rb.Noise("bernoulli"))
    policy = make_policy("et-swgts", tau=30, Gamma=3, window="rounds")
    sim = rb.simulate(instance, policy, 400, [2], record_arms=True)
    assert sim.arms is not None
    assert online_arms(policy, instance, 400, 2) == sim.arms[0].tolist()


# -- R-ed-AE (reconstruction) ------------------------------------------------------------------


def test_red_ae_eliminates_a_dominated_arm_and_plays_the_survivor() -> None:
    horizon = 3000
    means = np.vstack(
        [np.full(horizon, 0.2), np.full(horizon, 0.8), np.linspace(0.0, 0.3, horizon)]
    )
    instance = rb.from_means(means, rb.Noise("gaussian", 0.1), require_rising=False)
    res = rb.simulate(instance, make_policy("red-ae"), horizon, [0, 1], record_arms=True)
    assert res.arms is not None
    for arms in res.arms:
        last_other = int(np.flatnonzero(arms != 1).max()) + 1  # last round of arms 0 or 2
        assert last_other < horizon - 500
        assert (arms[last_other:] == 1).all()
        assert arms[: 3 * 2].tolist() == [0, 1, 2] * 2  # round robin while all are active


def test_red_ae_estimates_equal_the_spec_formulas() -> None:
    # After a complete cycle at round t: V = R (b + L x_f), c = R sigma sqrt(2 ln(2KT/delta)
    # (1/n + (x_f - mean_l)^2 / S_ll)), R = T - t, x_f = n + (R + 1)/2, fits by numpy.
    horizon, sigma, delta, n = 100, 1.0, 0.05, 6
    rng = np.random.default_rng(4)
    xs = rng.normal(0.4, 0.3, (3, n)) + 0.05 * np.arange(1, n + 1)
    state = make_policy("red-ae", sigma=sigma, delta=delta).init_state(3, horizon)
    t = feed(state, [(arm, float(xs[arm, j])) for j in range(n) for arm in range(3)]) - 1
    assert state.active.all()  # sigma = 1: nothing can be eliminated yet
    remaining = horizon - t
    target = n + (remaining + 1) / 2
    ls = np.arange(1, n + 1, dtype=float)
    s_ll = ((ls - ls.mean()) ** 2).sum()
    for arm in range(3):
        slope, icpt = np.polyfit(ls, xs[arm], 1)
        lever = (target - ls.mean()) ** 2 / s_ll
        width = (
            remaining * sigma * math.sqrt(2 * math.log(2 * 3 * horizon / delta) * (1 / n + lever))
        )
        assert state.values[arm] == pytest.approx(remaining * (icpt + slope * target), rel=1e-9)
        assert state.widths[arm] == pytest.approx(width, rel=1e-9)


def test_red_ae_eliminates_when_the_spec_criterion_holds() -> None:
    # Brute force of spec 6.1 with numpy fits: the first cycle end where arm 0's upper bound
    # falls below arm 1's lower bound is the last round arm 0 is played.
    horizon, sigma, delta = 2000, 0.1, 0.01
    means = np.vstack([np.full(horizon, 0.3), np.full(horizon, 0.7)])
    instance = rb.from_means(means, rb.Noise("gaussian", 0.1), require_rising=False)
    policy = make_policy("red-ae", sigma=sigma, delta=delta)
    res = rb.simulate(instance, policy, horizon, [3], record_arms=True)
    assert res.arms is not None
    key, code = reward_key(3), instance.noise.code
    x = [
        [
            draw_reward(means, code, 0.1, np.zeros((0, 0)), key, arm, n)
            for n in range(1, horizon + 1)
        ]
        for arm in (0, 1)
    ]
    log_term = math.log(2 * 2 * horizon / delta)
    expected_stop = None
    for n in range(2, horizon // 2 + 1):
        t = 2 * n
        remaining = horizon - t
        bounds = []
        for arm in (0, 1):
            ls = np.arange(1, n + 1, dtype=float)
            slope, icpt = np.polyfit(ls, x[arm][:n], 1)
            target = n + (remaining + 1) / 2
            value = remaining * (icpt + slope * target)
            s_ll = ((ls - ls.mean()) ** 2).sum()
            width = (
                remaining
                * sigma
                * math.sqrt(2 * log_term * (1 / n + (target - ls.mean()) ** 2 / s_ll))
            )
            bounds.append((value - width, value + width))
        if bounds[0][1] < bounds[1][0]:
            expected_stop = t
            break
    assert expected_stop is not None
    arms = res.arms[0]
    assert int(np.flatnonzero(arms == 0).max()) + 1 == expected_stop - 1
    assert (arms[expected_stop:] == 1).all()


# -- parameters --------------------------------------------------------------------------------


SW_TAU = "an integer in [1, 2**63 - 1] or 'auto'"


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("red-ucb", {"eps": 0.5}, "red-ucb: eps=0.5 is not allowed: use a number in (0, 1/2)"),
        (
            "red-ucb",
            {"sigma": -1.0},
            "red-ucb: sigma=-1.0 is not allowed: use a number >= 0, 'auto' or 'estimate'",
        ),
        ("red-ucb", {"delta": 1.0}, "red-ucb: delta=1.0 is not allowed: use a number in (0, 1)"),
        (
            "red-ucb",
            {"delta_schedule": "t^-2"},
            "red-ucb: delta_schedule='t^-2' is not allowed: use one of constant, t^-4",
        ),
        (
            "et-swgts",
            {"tau": 0},
            "et-swgts: tau=0 is not allowed: use an integer in [1, 2**63 - 1]",
        ),
        (
            "et-swgts",
            {"Gamma": -1},
            "et-swgts: Gamma=-1 is not allowed: use an integer in [0, 2**63 - 1]",
        ),
        ("et-swgts", {"gamma": 0.0}, "et-swgts: gamma=0.0 is not allowed: use a number > 0"),
        (
            "et-swgts",
            {"window": "time"},
            "et-swgts: window='time' is not allowed: use one of pulls, rounds",
        ),
        (
            "ti-ucb",
            {"omega": 3},
            "ti-ucb: omega=3 is not allowed: use an integer in [4, 2**63 - 1]",
        ),
        # integers are judged exactly, not through a float (the kernels hold them as int64)
        ("sw-ucb", {"tau": math.nan}, f"sw-ucb: tau=nan is not allowed: use {SW_TAU}"),
        ("sw-ucb", {"tau": math.inf}, f"sw-ucb: tau=inf is not allowed: use {SW_TAU}"),
        ("sw-ucb", {"tau": 2**63}, f"sw-ucb: tau={2**63} is not allowed: use {SW_TAU}"),
        ("sw-ucb", {"tau": 10.5}, f"sw-ucb: tau=10.5 is not allowed: use {SW_TAU}"),
        (
            "successive-halving",
            {"eta": 10**19},
            f"successive-halving: eta={10**19} is not allowed: use an integer in [2, 2**63 - 1]",
        ),
        (
            "cure-ucb",
            {"eps": 10**400},
            f"cure-ucb: eps={str(10**400)[:57]}... is not allowed: use a number in (0, 1/2)",
        ),
        ("ti-ucb", {"gamma": 1.5}, "ti-ucb: gamma=1.5 is not allowed: use a number in [0, 1]"),
        ("red-ae", {"delta": 0.0}, "red-ae: delta=0.0 is not allowed: use a number in (0, 1)"),
        ("red-ucb-det", {"eps": 0.25}, "red-ucb-det: unknown parameter 'eps': allowed are none"),
    ],
)
def test_invalid_parameters_name_the_range(name: str, params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        make_policy(name, **params)


def test_integer_parameters_reach_the_int64_limit() -> None:
    assert make_policy("hace-ucb", index_from=2**63 - 1).params["index_from"] == 2**63 - 1
    assert make_policy("sw-ucb", tau=10**18).params["tau"] == 10**18
    assert make_policy("sw-ucb", tau=np.int64(7)).params["tau"] == 7
    assert make_policy("sw-ucb", tau=12.0).params["tau"] == 12  # a whole float, as before


def test_presets_horizon_and_labels() -> None:
    assert make_policy("red-ucb", preset="imdb").params["eps"] == 1 / 32
    assert make_policy("et-swgts", preset="ltf").params == {
        "gamma": 1.0,
        "tau": 1000,
        "Gamma": 10,
        "window": "rounds",
        "tie_break": "random",
    }
    concave = make_policy("et-swgts", preset="concave").params
    assert (concave["tau"], concave["Gamma"]) == (200, 1000)
    names = ("red-ucb", "red-ucb-det", "et-swgts", "ti-ucb", "red-ae")
    assert [make_policy(n).uses_horizon for n in names] == [False, False, False, False, True]
    for name in ("ti-ucb", "red-ae"):
        info = make_policy(name).info()
        assert info["reconstruction"] is True and "reconstruction" in info["summary"]
    assert make_policy("red-ucb").info()["reconstruction"] is False
