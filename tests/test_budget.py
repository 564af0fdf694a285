"""Fixed-budget baselines (../shared/specs/budget-baselines.md): schedules, survivors, statistics,
R-UCBE's index and recommendation, checked by hand on deterministic instances."""

from __future__ import annotations

import math

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.budget.r_ucbe import auto_exploration, oracle_exploration
from risingbandits.policies.budget.successive_halving import halving_schedule
from risingbandits.policies.budget.successive_rejects import rejects_schedule

NO_NOISE = rb.Noise("none")
CONSTANT = [0.1, 0.5, 0.3, 0.9, 0.7]


def constant_arms(values: list[float], horizon: int) -> rb.RisingInstance:
    return rb.from_means(np.repeat(np.array(values)[:, None], horizon, axis=1), NO_NOISE)


def drive(
    policy: rb.Policy, means: np.ndarray, rounds: int, horizon: int, trace: bool = True
) -> list[int]:
    """Run ``policy`` online for ``rounds`` rounds on noise-free ``means``; the arms played."""
    policy.reset(means.shape[0], horizon, seed=0, trace=trace)
    pulls = np.zeros(means.shape[0], np.int64)
    arms = []
    for _ in range(rounds):
        arm = policy.select()
        policy.update(arm, float(means[arm, pulls[arm]]))
        pulls[arm] += 1
        arms.append(arm)
    return arms


# -- Successive Halving ----------------------------------------------------------------------


def test_halving_pulls_and_survivors_by_hand() -> None:
    # K = 5, T = 150, eta = 2: R = 3 rounds of floor(150 / (|S| 3)) = 10, 16, 25 more pulls for
    # 5, 3, 2 survivors (targets 10, 26, 51), keeping ceil(|S| / 2) = 3, 2, 1 arms.
    assert halving_schedule(5, 150, 2) == ([10, 26, 51], [3, 2, 1])
    res = rb.simulate(constant_arms(CONSTANT, 150), make_policy("successive-halving"), 150, 3)
    # the best three (3, 4, 1) survive round 0, then 3 and 4, then 3, which also gets the
    # 150 - 148 = 2 pulls the rounding left over
    expected = [10, 26, 10, 53, 51]
    assert (res.pulls == expected).all() and (res.recommended == 3).all()


def test_halving_round_robin_and_recommendation_mid_run() -> None:
    policy = make_policy("successive-halving")
    means = np.repeat(np.array(CONSTANT)[:, None], 150, axis=1)
    arms = drive(policy, means, 50, 150)
    assert arms == list(range(5)) * 10  # round 0: index order, ten cycles
    assert policy.recommend() == 3  # the survivor with the best statistic so far
    trace = policy.trace()
    assert trace.terms[0, -1, 0, 1] == 0.0  # nobody eliminated before round 0 ends
    arms = drive(policy, means, 51, 150)
    assert policy.trace().terms[0, -1, 0, 1] == -np.inf and arms[-1] in (1, 3, 4)


@pytest.mark.parametrize(
    ("w", "survivor"),
    [(1, 0), ("auto", 1), (20, 1)],
)
def test_halving_statistic_window(w: int | str, survivor: int) -> None:
    # K = 2, T = 40: one round of 20 pulls each. Arm 0 rises as n / 20, arm 1 is 0.95: the
    # last reward (1.0) beats it, the last quarter (mean of 16..20 / 20 = 0.9) and all 20
    # rewards (0.525) do not.
    table = np.array([np.arange(1, 41) / 20, np.full(40, 0.95)])
    inst = rb.from_means(np.minimum(table, 1.0), NO_NOISE)
    res = rb.simulate(inst, make_policy("successive-halving", w=w), 40, 1)
    assert res.recommended[0] == survivor
    assert res.pulls[0, survivor] == 20 and res.pulls[0, 1 - survivor] == 20


def test_halving_eta_and_tiny_budget() -> None:
    # eta = 3, K = 10: R = 3 (27 >= 10), survivors 10 -> 4 -> 2 -> 1
    targets, keep = halving_schedule(10, 900, 3)
    assert keep == [4, 2, 1] and targets == [30, 30 + 75, 30 + 75 + 150]
    # T < K R: one pull per survivor and round, the budget ends inside a round
    assert halving_schedule(5, 4, 2) == ([1, 2, 3], [3, 2, 1])
    with pytest.raises(ValueError, match="eta=1 is not allowed"):
        make_policy("successive-halving", eta=1)


# -- Successive Rejects and R-SR --------------------------------------------------------------


def test_rejects_phase_lengths_by_the_formula() -> None:
    # K = 3, T = 100: logbar = 1/2 + 1/2 + 1/3 = 4/3; n_1 = ceil(97 / 4) = 25,
    # n_2 = ceil(97 / (8/3)) = ceil(36.375) = 37
    assert rejects_schedule(3, 100) == ([25, 37], [2, 1])
    for n_arms in range(2, 11):
        for horizon in (n_arms + 1, 57, 1000, 12345):
            logbar = 0.5 + sum(1 / i for i in range(2, n_arms + 1))
            targets, keep = rejects_schedule(n_arms, horizon)
            expected = [
                math.ceil((horizon - n_arms) / (logbar * (n_arms + 1 - k)))
                for k in range(1, n_arms)
            ]
            assert targets == expected and keep == list(range(n_arms - 1, 0, -1))
            # the phases fit in the budget: n_1 + ... + n_{K-1} + n_{K-1} <= T
            assert sum(targets) + targets[-1] <= horizon
    assert rejects_schedule(4, 3) == ([1, 1, 1], [3, 2, 1])  # T <= K: one look at each arm


def test_rejects_pulls_follow_the_phases() -> None:
    # K = 5, T = 1000: n_k = 112, 140, 186, 279; arms rejected in order of their means
    targets, _ = rejects_schedule(5, 1000)
    assert targets == [112, 140, 186, 279]
    res = rb.simulate(constant_arms(CONSTANT, 1000), make_policy("successive-rejects"), 1000, 2)
    expected = np.array([112, 186, 140, 1000 - 112 - 140 - 186 - 279, 279])
    assert (res.pulls == expected).all() and (res.recommended == 3).all()


def late_bloomer(horizon: int) -> rb.RisingInstance:
    # arm 0 constant 0.5, arm 1 rises as n / 60 (capped at 1)
    table = np.array([np.full(horizon, 0.5), np.minimum(1.0, np.arange(1, horizon + 1) / 60)])
    return rb.from_means(table, NO_NOISE)


def test_rsr_judges_the_recent_window_where_sr_judges_all_rewards() -> None:
    # K = 2, T = 102: one phase of n_1 = ceil(100 / 2) = 50 pulls each. The mean of arm 1's 50
    # rewards is 25.5 / 60 = 0.425 < 0.5; the mean of its last floor(50 / 4) = 12 is
    # 44.5 / 60 = 0.742 > 0.5.
    inst = late_bloomer(102)
    sr = rb.simulate(inst, make_policy("successive-rejects"), 102, 1)
    rsr = rb.simulate(inst, make_policy("r-sr"), 102, 1)
    assert sr.recommended[0] == 0 and sr.pulls[0].tolist() == [52, 50]
    assert rsr.recommended[0] == 1 and rsr.pulls[0].tolist() == [50, 52]
    policy = make_policy("r-sr")
    arms = drive(policy, inst.means, 100, 102)
    statistic = policy.trace().terms[0, -1, :, 0]  # the values after 99 rounds
    n = int(np.bincount(arms[:99], minlength=2)[1])
    h = n // 4
    assert statistic[1] == pytest.approx(np.mean(np.arange(n - h + 1, n + 1) / 60))
    assert statistic[0] == pytest.approx(0.5)


def test_rsr_pulls_the_fewest_pulled_survivor_with_random_ties() -> None:
    inst = constant_arms(CONSTANT, 600)
    res = rb.simulate(inst, make_policy("r-sr"), 600, 4, record_arms=True)
    assert res.arms is not None
    n_1 = rejects_schedule(5, 600)[0][0]
    first = res.arms[:, : 5 * n_1]
    for seed in range(4):
        counts = np.zeros(5, np.int64)
        for arm in first[seed]:
            counts[arm] += 1
            assert counts.max() - counts.min() <= 1  # fewest pulls first
    # the order within a cycle is random (seeds differ), unlike Successive Rejects'
    assert len({tuple(a[:10]) for a in first}) > 1
    sr = rb.simulate(inst, make_policy("successive-rejects"), 600, 2, record_arms=True)
    assert sr.arms is not None and sr.arms[0, :10].tolist() == [0, 1, 2, 3, 4] * 2


def test_rsr_with_the_whole_window_rejects_like_sr() -> None:
    inst = rb.ltf([0.3, 0.9, 0.6, 0.8], [50, 900, 200, 600], 800, rb.Noise("gaussian", 0.1))
    sr = rb.simulate(inst, make_policy("successive-rejects"), 800, 6)
    rsr = rb.simulate(inst, make_policy("r-sr", eps=1.0), 800, 6)
    np.testing.assert_array_equal(sr.pulls, rsr.pulls)  # same rejections, same counts


@pytest.mark.parametrize("name", ["successive-halving", "successive-rejects", "r-sr"])
def test_rejection_ties_are_drawn_by_the_run_generator(name: str) -> None:
    # four identical arms: every rejection is a tie, so the survivor varies with the seed
    res = rb.simulate(constant_arms([0.5] * 4, 200), make_policy(name), 200, 40)
    assert len(set(res.recommended.tolist())) == 4
    again = rb.simulate(constant_arms([0.5] * 4, 200), make_policy(name), 200, 40)
    np.testing.assert_array_equal(res.recommended, again.recommended)


# -- R-UCBE -------------------------------------------------------------------------------------


def hand_index(
    rewards: list[float], horizon: int, eps: float, sigma: float, a: float
) -> tuple[float, float]:
    """mu_check and beta_check of one arm, summed term by term (spec formulas)."""
    n = len(rewards)
    h = math.floor(eps * n)
    x = [0.0, *rewards]  # x[j] = X(j); X(j) = 0 for j <= 0
    mu = sum(x[j] + (horizon - j) * (x[j] - x[max(j - h, 0)]) / h for j in range(n - h + 1, n + 1))
    return mu / h, sigma * (horizon - n + h - 1) * math.sqrt(a / h**3)


def test_rucbe_index_by_hand_and_recommendation() -> None:
    horizon, eps, sigma, a = 60, 0.25, 0.1, 2.0
    rng = np.random.default_rng(3)
    means = np.sort(rng.uniform(0, 1, (3, horizon)), axis=1)
    policy = make_policy("r-ucbe", eps=eps, sigma=sigma, a=a)
    arms = drive(policy, means, 40, horizon)
    assert arms[:12] == [0, 1, 2] * 4  # warm-up: every arm until floor(n / 4) >= 1
    trace = policy.trace()
    assert np.isinf(trace.index[0, 11]).all()  # forced rounds
    for r in range(12, 40):  # every index round: the kernel's terms equal the hand formula
        counts = np.bincount(arms[:r], minlength=3)
        for i in range(3):
            mu, beta = hand_index(means[i, : counts[i]].tolist(), horizon, eps, sigma, a)
            assert trace.terms[0, r, i, 0] == pytest.approx(mu, rel=1e-9, abs=1e-12)
            assert trace.terms[0, r, i, 1] == pytest.approx(beta, rel=1e-12)
        assert arms[r] == int(np.argmax(trace.index[0, r]))
    counts = np.bincount(arms, minlength=3)
    final = [
        hand_index(means[i, : counts[i]].tolist(), horizon, eps, sigma, a)[0] for i in range(3)
    ]
    assert policy.recommend() == int(np.argmax(final))


def test_rucbe_default_exploration_needs_no_instance() -> None:
    state = make_policy("r-ucbe").init_state(5, 1000)
    assert state.root_a == pytest.approx(math.sqrt(10 * math.log(2 * 5 * 1000 / 0.05)))
    assert auto_exploration(5, 1000, 0.05) == pytest.approx(10 * math.log(2e5))
    state = make_policy("r-ucbe", sigma="estimate").init_state(5, 1000)
    assert state.noise.fixed < 0  # sigma estimated online


def test_rucbe_oracle_exploration_by_hand() -> None:
    table = np.array([np.full(100, 0.9), np.full(100, 0.5), np.full(100, 0.8)])
    phi = 0.4 ** (-2 / 3) + 0.1 ** (-2 / 3)
    lead = 0.5**-2.0  # (1 - 2 eps)^-beta with eps = 1/4, beta = 2
    expected = (math.sqrt(100 / phi) - lead) ** 2 / (4 * 0.1**2 * 0.25**-3)
    assert oracle_exploration(table, 100, 0.25, 0.1, 2.0) == pytest.approx(expected)
    slow = (100**0.3 / phi**1.3 - 0.5**-1.3) ** 2 / (4 * 0.1**2 * 0.25**-3)
    assert oracle_exploration(table, 100, 0.25, 0.1, 1.3) == pytest.approx(slow)
    assert oracle_exploration(table, 100, 0.25, 0.1, 1.0) == 0.0
    with pytest.raises(ValueError, match="same value at the budget"):
        oracle_exploration(np.full((2, 10), 0.5), 10, 0.25, 0.1, 2.0)
    with pytest.raises(ValueError, match="horizon=200 is not allowed"):
        oracle_exploration(table, 200, 0.25, 0.1, 2.0)


def test_a_changed_budget_replans_the_schedule_and_the_projections() -> None:
    """A new budget T' mid-run (the selector's set_budget): the phase schedule and R-UCBE's
    projections and widths are those of T', the rest of the run is kept."""
    means = np.sort(np.random.default_rng(5).uniform(0, 1, (3, 200)), axis=1)
    policy = make_policy("successive-rejects")
    drive(policy, means, 50, 100, trace=False)
    run = policy._online()
    before = run.state
    run.transplant(policy.init_state(3, 200), [0, 1, 2], 200)
    assert run.state.targets.tolist() == rejects_schedule(3, 200)[0]
    np.testing.assert_array_equal(run.state.active, before.active)
    np.testing.assert_array_equal(run.state.hist.counts, before.hist.counts)

    eps, sigma, a = 0.25, 0.1, 2.0
    policy = make_policy("r-ucbe", eps=eps, sigma=sigma, a=a)
    arms = drive(policy, means, 40, 100, trace=False)
    run = policy._online()
    run.transplant(policy.init_state(3, 200), [0, 1, 2], 200)
    counts = np.bincount(arms, minlength=3)
    for i in range(3):
        mu, beta = hand_index(means[i, : counts[i]].tolist(), 200, eps, sigma, a)
        assert run.state.estimates[i] == pytest.approx(mu, rel=1e-9)
        assert sigma * run.state.widths[i] == pytest.approx(beta, rel=1e-12)
