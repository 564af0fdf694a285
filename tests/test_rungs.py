"""ASHA and Hyperband with resource measured in cost (issue 22, item 3): their schedules by hand
in pulls, and their kernels driven with a budget in cost (``plan``) as a driver with workers
calls them."""

from __future__ import annotations

import heapq
from collections import Counter

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.budget.rungs import hyperband_schedule
from risingbandits.policies.machinery.kernel import plan_one, select_one, update_one
from risingbandits.policies.machinery.transplant import transplant
from risingbandits.seeding import policy_rng

# flat curves: an arm's statistic (mean of its last quarter of rewards) is its mean
MEANS = np.array([0.1, 0.5, 0.3, 0.9, 0.2, 0.4, 0.8, 0.6, 0.7])


def flat(means: np.ndarray, horizon: int) -> rb.RisingInstance:
    return rb.from_means(np.repeat(means[:, None], horizon, 1), rb.Noise("none"))


def runs(arms: np.ndarray) -> list[tuple[int, int]]:
    """The arm sequence as (arm, consecutive pulls)."""
    out: list[list[int]] = []
    for a in arms.tolist():
        if out and out[-1][0] == a:
            out[-1][1] += 1
        else:
            out.append([a, 1])
    return [(a, n) for a, n in out]


# -- in pulls -----------------------------------------------------------------------------------


def test_asha_promotes_by_the_published_rule_then_continues_the_leader() -> None:
    """K = 9, eta = 3: R = 3 rungs of r = T / 27 = 10, 30, 90 pulls. Arms start in index order;
    once 3 arms completed rung 0 the best of them (arm 1) is promoted, and each new completion
    lets the top floor(n_0 / 3) through (arm 3, then arm 6 once n_0 = 7); rung 1 promotes arm 3
    when 3 arms completed it; arm 8 goes on when n_0 = 9; the rest goes to the leader."""
    res = rb.simulate(flat(MEANS, 270), make_policy("asha"), 270, 1, record_arms=True)
    assert res.arms is not None
    assert runs(res.arms[0]) == [
        (0, 10),
        (1, 10),
        (2, 10),
        (1, 20),  # n_0 = 3: arm 1 (0.5) promoted to r_1 = 30
        (3, 10 + 20),  # arm 3 completes rung 0 and is the top 1 of n_0 = 4
        (4, 10),
        (5, 10),  # n_0 = 6: the top 2 (arms 3, 1) are promoted already
        (6, 10 + 20),  # n_0 = 7: top 2 = arms 3, 6
        (3, 60),  # n_1 = 3 (arms 1, 3, 6): arm 3 to the top rung, r_2 = 90
        (7, 10),
        (8, 10 + 20),  # n_0 = 9: top 3 = arms 3, 6, 8
        (3, 40),  # d) the budget left to the arm at the top rung
    ]
    assert res.recommended.tolist() == [3] and res.pulls.sum() == 270


def test_hyperband_brackets_by_hand() -> None:
    """K = 9, eta = 3, T = 1620: s_max = 2, three brackets of 540 pulls. Bracket s = 2: all 9
    arms, 20 pulls each, the top 3 get 60 more, the top 1 180 more; s = 1: 5 arms drawn at
    random, 54 each, the top 2 get 135 more; s = 0: 3 arms drawn, 180 each."""
    targets, keep = hyperband_schedule(9, 1620, 3)
    np.testing.assert_array_equal(targets, [[20, 80, 260], [54, 189, 0], [180, 0, 0]])
    np.testing.assert_array_equal(keep, [[9, 3, 1, 1], [5, 2, 1, 0], [3, 1, 0, 0]])
    res = rb.simulate(flat(MEANS, 1620), make_policy("hyperband"), 1620, [0, 1], record_arms=True)
    assert res.arms is not None
    for arms, rec in zip(res.arms, res.recommended, strict=True):
        first, second, third = (Counter(arms[b * 540 : (b + 1) * 540].tolist()) for b in range(3))
        assert first == {**dict.fromkeys(range(9), 20), 6: 80, 8: 80, 3: 260}
        drawn = sorted(second, key=lambda a: MEANS[a])
        assert len(drawn) == 5 and [second[a] for a in drawn] == [54, 54, 54, 189, 189]
        assert len(third) == 3 and set(third.values()) == {180}
        finals = {3, drawn[-1], max(third, key=lambda a: MEANS[a])}
        assert rec == max(finals, key=lambda a: MEANS[a]) == 3
    assert not np.array_equal(res.arms[0], res.arms[1])  # the draws follow the seed


@pytest.mark.parametrize(
    ("means", "horizon", "pulls"),
    [
        # K = 9: rounds of 270 / (3 x 9) = 10, 270 / (3 x 3) = 30, 270 / 3 = 90 more pulls
        (MEANS, 270, [10, 10, 10, 130, 10, 10, 40, 10, 40]),
        # K = 10 (not a power of eta): every arm; survivors 10, then 4 (arms 3, 6, 8, 7), then 2
        # (arms 3, 6); 120 / (3 x 10) = 4, 120 / (3 x 4) = 10, 120 / (3 x 2) = 20 more pulls
        (np.append(MEANS, 0.05), 120, [4, 4, 4, 34, 4, 4, 34, 14, 14, 4]),
    ],
)
def test_one_bracket_is_successive_halving_in_cost(
    means: np.ndarray, horizon: int, pulls: list[int]
) -> None:
    res = rb.simulate(flat(means, horizon), make_policy("hyperband", brackets=1), horizon, 2)
    assert res.pulls.tolist() == [pulls, pulls]
    assert res.recommended.tolist() == [3, 3]


@pytest.mark.parametrize("name", ["asha", "hyperband"])
@pytest.mark.parametrize("horizon", [7, 100, 2_000])
def test_the_whole_horizon_is_spent(name: str, horizon: int) -> None:
    instance = rb.ltf([0.3, 0.9, 0.6, 0.8, 0.5], [50, 1500, 200, 900, 30], 2_000)
    res = rb.simulate(instance, make_policy(name), horizon, 3, record_arms=True)
    assert res.arms is not None and (res.arms >= 0).all()
    assert (res.pulls.sum(axis=1) == horizon).all()


def test_rung_statistics_survive_a_transplant_where_rungs_equal_arms() -> None:
    """With eta = 2, K = 3 has R = 3 rungs and K = 2 has R = 2: retiring arm 1 keeps, for arms
    0 and 2, their statistic at rungs 0 and 1 (the default rule would take the rung axis for an
    arm axis and move rung 2 into rung 1)."""
    policy = make_policy("asha", eta=2)
    old = policy.init_state(3, 60)
    old.stat[:] = [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9]]
    moved = transplant(policy.init_state(2, 60), old, 3, [0, 2])
    np.testing.assert_array_equal(moved.stat, [[0.1, 0.2], [0.7, 0.8]])
    assert moved.dirty[0]  # levels and ranks are rebuilt for the new rungs


# -- with a budget in cost: the kernels driven by hand ------------------------------------------


class Driven:
    """A run state of ``name`` over K arms driven like the budget-in-cost simulator: ``plan``
    before every ``select``, rewards reported before the plan that counts their cost."""

    def __init__(self, name: str, n_arms: int, horizon: int, unit: float) -> None:
        self.state = make_policy(name).init_state(n_arms, horizon)
        self.rng = policy_rng(0)
        self.unit, self.t = unit, 0
        self.spent = np.zeros(n_arms)

    def select(self, allowed: list[int], left: list[float] | None = None) -> int:
        mask = np.array(allowed, np.bool_)
        fits = np.full(mask.size, 100.0) if left is None else np.array(left, float)
        plan_one(self.state, mask, fits, self.spent, self.unit, 1)
        self.t += 1
        arm = select_one(self.state, self.t, self.rng)
        assert arm == -1 or mask[arm], f"select returned arm {arm}, not allowed by {allowed}"
        return int(arm)

    def finish(self, arm: int, reward: float, spent: float) -> None:
        update_one(self.state, arm, reward, self.t, self.rng)
        self.spent[arm] = spent


def test_asha_planned_rungs_are_in_cost_and_it_waits_for_its_leader() -> None:
    """K = 3, eta = 3: R = 2, r_0 = T / (K R) = 2 pulls, r_1 = 6; with unit = 2.5 the rungs
    are a cost of 5 and 15."""
    run = Driven("asha", 3, 12, unit=2.5)
    assert [run.select([1, 1, 1]), run.select([0, 1, 1]), run.select([0, 0, 1])] == [0, 1, 2]
    assert run.select([0, 0, 0]) == -1  # every arm in flight
    run.finish(0, 0.9, spent=4.0)
    assert run.select([1, 0, 0]) == 0  # a) its job: 4.0 < r_0 = 5 (in pulls it completed r_0)
    assert run.state.level.tolist() == [0, 0, 0]
    run.finish(1, 0.2, spent=6.0)
    run.finish(2, 0.4, spent=6.0)
    run.finish(0, 0.9, spent=5.0)
    assert run.select([1, 1, 1]) == 0  # b) the top floor(3 / 3) = 1 of rung 0 is promoted
    assert run.state.level.tolist() == [1, 1, 1]
    assert run.state.stat[:, 0].tolist() == [0.9, 0.2, 0.4]
    assert run.state.top.tolist() == [True, False, False]
    assert run.select([0, 1, 1]) == -1  # d) the leader, arm 0, is in flight: wait for it
    run.finish(0, 0.95, spent=14.9)
    assert run.select([1, 1, 1]) == 0  # a) its job: 14.9 < r_1 = 15
    run.finish(0, 0.95, spent=15.0)
    # d) arm 0 reached the top rung, but its next pull no longer fits the budget: the leader of
    # the arms that can still be pulled goes on
    assert run.select([0, 0, 1], left=[0, 0, 3]) == 2
    assert run.state.level.tolist() == [2, 1, 1]


def test_hyperband_planned_rounds_are_in_cost() -> None:
    """K = 3, eta = 3: s_max = 1, two brackets of T / 2 = 6 pulls; bracket s = 1 takes all 3:
    round 0 gives each 6 / (2 x 3) = 1 pull, with unit = 4 a cost of 4, then keeps 1."""
    run = Driven("hyperband", 3, 12, unit=4.0)
    assert [run.select([1, 1, 1]), run.select([0, 1, 1]), run.select([0, 0, 1])] == [0, 1, 2]
    assert run.select([0, 0, 0]) == -1
    run.finish(0, 0.9, spent=3.5)
    assert run.select([1, 0, 0]) == 0  # 3.5 < 4: still below its target
    run.finish(0, 0.9, spent=4.0)
    assert run.select([1, 0, 0]) == -1  # arm 0 reached it; arms 1, 2 are in flight
    run.finish(1, 0.3, spent=4.0)
    assert run.state.active.tolist() == [True, True, True]
    # arm 2's next pull would not fit the budget: it counts as having reached its target, the
    # round ends and arm 0 (the best statistic) goes on alone to 6 / 2 = 3 pulls more (cost 16)
    assert run.select([1, 1, 0], left=[3, 3, 0]) == 0
    assert run.state.active.tolist() == [True, False, False]


@pytest.mark.parametrize("name", ["asha", "hyperband"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_run_with_workers_and_unequal_costs_spends_its_budget(name: str, seed: int) -> None:
    """Three workers, costs 0.5-3 per pull, a total budget of 120: every selected arm is free
    and affordable, and the run stops with less budget left than one pull costs."""
    rng = np.random.default_rng(seed)
    costs = rng.uniform(0.5, 3.0, 6)
    budget, workers = 120.0, 3
    horizon = int(budget / costs.mean())
    run = Driven(name, 6, horizon, unit=budget / horizon)
    pulls = np.zeros(6, np.int64)
    running: list[tuple[float, int]] = []
    busy = np.zeros(6, np.bool_)
    committed, clock = 0.0, 0.0
    while True:
        while len(running) < workers:
            money = budget - committed
            allowed = ~busy & (costs <= money)
            if not allowed.any():
                break
            arm = run.select(allowed.tolist(), np.floor(money / costs).tolist())
            if arm < 0:
                break
            busy[arm] = True
            committed += costs[arm]
            heapq.heappush(running, (clock + costs[arm], arm))
        if not running:
            break
        clock, arm = heapq.heappop(running)
        busy[arm] = False
        pulls[arm] += 1
        run.finish(arm, 0.5 + 0.4 * arm / 6 + 0.01 * pulls[arm] / horizon, pulls[arm] * costs[arm])
    assert budget - costs.max() < committed <= budget
    assert (pulls > 0).all()
