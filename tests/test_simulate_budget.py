"""The event-driven simulator: a budget in cost, W workers (issue 22, item 2)."""

from __future__ import annotations

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.simulate_budget import most_pulls, reachable_pulls, simulate_budget


def _curves(n_arms: int = 3, horizon: int = 400) -> np.ndarray:
    n = np.arange(1, horizon + 1)
    tops = np.linspace(0.5, 0.9, n_arms)
    rates = np.linspace(0.2, 0.01, n_arms)
    return tops[:, None] * (1 - np.exp(-rates[:, None] * n[None, :]))


UNIT = rb.from_means(_curves(), rb.Noise("gaussian", 0.1), name="unit")
COSTLY = rb.from_means(_curves(), rb.Noise("gaussian", 0.1), name="costly", costs=[1.0, 3.0, 7.5])


@pytest.mark.parametrize(
    "policy", ["hace-ucb", "ace-ucb", "successive-halving", "ucb1", "rexp3", "cure-ucb"]
)
@pytest.mark.parametrize("budget", [7, 60, 400])
def test_one_worker_unit_costs_is_the_pull_simulator(policy: str, budget: int) -> None:
    pulled = rb.simulate(UNIT, policy, budget, 4)
    timed = rb.simulate(UNIT, policy, budget=budget, seeds=4)
    assert timed.horizon == budget
    np.testing.assert_array_equal(timed.pulls, pulled.pulls)
    np.testing.assert_allclose(timed.reward, pulled.reward)
    np.testing.assert_allclose(timed.cost_regret, pulled.regret, atol=1e-9)
    np.testing.assert_array_equal(timed.idle, 0.0)
    # HACE-UCB planning in cost deploys the survivor with the best halving statistic (its
    # docstring); counting pulls it deploys exactly what the pull simulator does
    deployed = simulate_budget(UNIT, policy, budget, 4, plan=policy != "hace-ucb")
    np.testing.assert_array_equal(deployed.pulls, pulled.pulls)
    np.testing.assert_array_equal(deployed.recommended, pulled.recommended)
    np.testing.assert_allclose(deployed.final_gap, pulled.final_gap, atol=1e-12)


@pytest.mark.parametrize("policy", ["hace-ucb", "ucb1", "successive-halving"])
@pytest.mark.parametrize("workers", [1, 2, 5])
def test_deadline_is_kept_and_a_candidate_trains_on_one_worker_at_a_time(
    policy: str, workers: int
) -> None:
    deadline = 120.0
    res = simulate_budget(COSTLY, policy, deadline, 3, workers=workers, record_events=True)
    assert res.events is not None
    for s in range(3):
        rows = res.events[s][res.events[s, :, 0] >= 0]
        assert rows.shape[0] == res.pulls[s].sum()  # every pull started also finished
        assert rows[:, 3].max() <= deadline + 1e-9
        for key in (0, 1):  # no arm (sequential steps) and no worker runs two pulls at once
            for value in np.unique(rows[:, key]):
                mine = rows[rows[:, key] == value]
                mine = mine[np.argsort(mine[:, 2], kind="stable")]
                assert np.all(mine[1:, 2] >= mine[:-1, 3] - 1e-9)
        busy = np.bincount(rows[:, 1].astype(int), rows[:, 3] - rows[:, 2], workers)
        np.testing.assert_allclose(res.idle[s], deadline - busy)
        assert res.wall_time[s] == pytest.approx(rows[:, 3].max())
    assert np.all(res.pulls <= res.reach)


def test_total_budget_is_a_bill_summed_over_workers() -> None:
    res = simulate_budget(COSTLY, "hace-ucb", 90.0, 3, workers=4, budget_kind="total")
    cum = np.cumsum(COSTLY.pull_costs, axis=1)
    for s in range(3):
        spent = sum(cum[i, n - 1] for i, n in enumerate(res.pulls[s]) if n > 0)
        assert spent == pytest.approx(res.spent[s])
        assert spent <= 90.0 + 1e-9
        assert 90.0 - spent < 7.5  # only a pull that does not fit is left unstarted
    assert np.all(res.idle >= -1e-9)


def test_seeds_make_runs_reproducible() -> None:
    a = simulate_budget(COSTLY, "hace-ucb", 150.0, [3, 5], workers=3)
    b = simulate_budget(COSTLY, "hace-ucb", 150.0, [3, 5], workers=3)
    c = simulate_budget(COSTLY, "hace-ucb", 150.0, [4, 6], workers=3)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    np.testing.assert_array_equal(a.reward, b.reward)
    assert not np.array_equal(a.reward, c.reward)


def test_reach_and_most_pulls() -> None:
    assert list(reachable_pulls(COSTLY, 30.0)) == [30, 10, 4]
    # cheapest first: 30 pulls of arm 0 fill a capacity of 30
    assert most_pulls(COSTLY, reachable_pulls(COSTLY, 30.0), 30.0) == 30
    assert most_pulls(COSTLY, reachable_pulls(COSTLY, 30.0), 60.0) == 30 + 10
    assert most_pulls(UNIT, reachable_pulls(UNIT, 50.0), 4 * 50.0) == 3 * 50


def _late_bloomer() -> rb.RisingInstance:
    """Arm 0 is cheap and saturates at 0.7; arm 1 reaches 0.95 but costs 10 per pull, so by a
    deadline of 400 it has made only 40 pulls and is at 0.38: the best model reachable is arm
    0's, although arm 1 is the better model given pulls."""
    n = np.arange(1, 2001)
    means = np.vstack([0.7 * (1 - np.exp(-n / 20)), np.minimum(0.95, n / 105)])
    return rb.from_means(means, rb.Noise("gaussian", 0.05), costs=[1.0, 10.0])


def test_the_default_plans_with_each_candidates_own_cost() -> None:
    inst = _late_bloomer()
    assert list(reachable_pulls(inst, 400.0)) == [400, 40]
    planned = simulate_budget(inst, "hace-ucb", 400.0, 20)
    counted = simulate_budget(inst, "hace-ucb", 400.0, 20, plan=False)
    assert planned.best_reachable == pytest.approx(inst.means[0, 399])
    # counting pulls, arm 1 looks like the better investment (it keeps growing); in cost it
    # cannot get there by the deadline
    assert planned.final_gap.mean() < counted.final_gap.mean()
    assert np.mean(planned.recommended == 0) >= 0.9


def test_a_policy_that_does_not_plan_never_starts_a_busy_candidate() -> None:
    res = simulate_budget(COSTLY, "ucb1", 200.0, 2, workers=3, record_events=True)
    assert res.events is not None
    rows = res.events[0][res.events[0, :, 0] >= 0]
    assert set(np.unique(rows[:, 0]).astype(int)) == {0, 1, 2}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": 0}, "budget=0 is not allowed: use a finite number > 0"),
        ({"budget": float("nan")}, "budget=nan is not allowed"),
        ({"budget": "10"}, "budget='10' is not allowed"),
        ({"budget": 10, "workers": 0}, "workers=0 is not allowed: use an integer in 1..4096"),
        ({"budget": 10, "workers": 2.0}, "workers=2.0 is not allowed"),
        ({"budget": 10, "budget_kind": "wall"}, "budget_kind='wall' is not allowed"),
        ({"budget": 10**400}, "^budget=1000.* is not allowed: use a finite number > 0$"),
        ({"budget": 1e308, "workers": 2}, r"^budget=1e\+308 is not allowed with workers=2: the"),
        ({"budget": 10, "seeds": 2**64}, "^seeds=18446744073709551616 is not allowed: use a"),
        ({"budget": 10, "instance": "intro"}, "^instance='intro' is not allowed: use a Rising"),
        # no candidate's first step fits: a run of no pull, reported with a gap of 0 until now
        ({"budget": 0.5}, r"^budget=0.5 is not allowed: it buys no step \(the cheapest first step"),
        (
            {"budget": 0.5, "budget_kind": "total", "workers": 3},
            r"cheapest first step costs 1\); give at least that$",
        ),
    ],
)
def test_bad_input_is_one_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        simulate_budget(**{"instance": COSTLY, "policy": "ucb1", "seeds": 1, **kwargs})
    assert "\n" not in str(info.value)


def test_a_budget_beyond_the_table_buys_the_whole_table() -> None:
    res = simulate_budget(COSTLY, "ucb1", 2**70, workers=2)  # (an int numpy cannot hold)
    assert res.horizon == 3 * 400 and res.pulls.sum() == 3 * 400
    assert np.isfinite(res.spent).all() and np.isfinite(res.cost_regret).all()


def test_simulate_takes_a_horizon_or_a_budget() -> None:
    with pytest.raises(
        ValueError, match=r"give a horizon in pulls or a budget in cost \(not both\)$"
    ):
        rb.simulate(COSTLY, "ucb1", 10, budget=10.0)
    with pytest.raises(ValueError, match=r"budget in cost \(one of the two\)$"):
        rb.simulate(COSTLY, "ucb1")
    res = rb.simulate(COSTLY, "ucb1", budget=50.0, workers=2, budget_kind="total")
    assert isinstance(res, rb.BudgetResult) and res.workers == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [  # each was ignored without a word: workers with a horizon ran one pull after another
        ({"horizon": 10, "workers": 2}, "^workers=2 is not allowed with a horizon: workers and"),
        ({"horizon": 10, "budget_kind": "total"}, "^budget_kind='total' is not allowed with a"),
        ({"budget": 10.0, "record_arms": True}, "^record_arms=True is not allowed with budget="),
        ({"budget": 10.0, "checkpoints": [5]}, r"^checkpoints=\[5\] is not allowed with budget="),
        ({"budget": 10.0, "trace": True}, "^trace=True is not allowed with budget="),
        ({"budget": 10.0, "progress": print}, "^progress=.* is not allowed with budget="),
    ],
)
def test_simulate_refuses_what_the_other_kind_of_run_would_ignore(
    kwargs: dict, message: str
) -> None:
    with pytest.raises(ValueError, match=message) as info:
        rb.simulate(COSTLY, "ucb1", **kwargs)
    assert "\n" not in str(info.value)
