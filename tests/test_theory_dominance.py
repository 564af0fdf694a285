"""The dominance check (paper Thm. 5.2), the search for violations and the Hypothesis shrinker."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from risingbandits.theory import dominance
from risingbandits.theory.dominance import (
    FAMILIES,
    DominanceCase,
    candidates,
    check,
    check_horizons,
    critical_horizons,
    search,
)
from risingbandits.theory.exact import ExactLTF, step_run
from risingbandits.theory.shrink import ladder, shrink_case


def cure_never_better(case: DominanceCase) -> bool:
    """A planted, false claim (the inverted inequality): violated wherever CURE-UCB wins."""
    return case.regret_cure >= case.regret_red


def test_issue_example() -> None:
    # b = (1/2, 3/10), t_sat = (100, 20), T = 50: both play arm 1 (slope 3/200 > 1/200) from
    # t = 3 on and never come back to arm 0 (CURE: a0 (1 + (T - t)/2) < 3/10; R-ed: a0 t < 3/10
    # for t < 60). V*(50) = arm 1: 3/200 * 210 + 3/10 * 30 = 243/20; both collect 1/200 +
    # 3/200 * 210 + 3/10 * 29 = 2371/200: regret 59/200 each, so the inequality holds.
    case = check(ExactLTF.create(["0.5", "0.3"], [100, 20]), 50)
    assert case.pulls_cure == case.pulls_red == (1, 49)
    assert case.regret_cure == case.regret_red == F(59, 200)
    assert case.holds and case.excess == 0


def test_smallest_counterexample_by_hand() -> None:
    # See tests/test_theory_exact.py::test_hand_computed_counterexample: 1/2 against 1/3.
    case = check(ExactLTF.create(["1/2", "1/3"], [2, 1]), 4)
    assert not case.holds and case.excess == F(1, 6)
    assert case.to_dict()["holds"] is False
    assert case.to_dict()["regret_cure_exact"] == "1/2"


def test_check_horizons_equals_single_checks() -> None:
    inst = ExactLTF.create(["7/20", "3/4", "17/20"], [1, 31, "9/2"])
    many = check_horizons(inst, [30, 2, 11, 11])
    assert [c.horizon for c in many] == [2, 11, 30]
    for case in many:
        single = check(inst, case.horizon)
        assert (case.regret_cure, case.regret_red) == (single.regret_cure, single.regret_red)


def test_search_counts_and_reproducibility() -> None:
    report = search(instances=7, max_horizon=40, seed=3, shrink=0)
    expected = list(candidates(7, 40, 3))
    assert report.tried == sum(len(c.horizons) for c in expected)
    assert sum(report.instances.values()) == 7
    assert report.instances["small-int"] == 2 and report.instances["adversarial"] == 1
    data = report.to_dict()
    assert data["cases"] == report.tried and set(data["by_family"]) == set(FAMILIES)
    assert search(instances=7, max_horizon=40, seed=3, shrink=0).to_dict() == data


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"instances": 10**30}, "instances=1" + "0" * 30 + " is not allowed"),  # ran until killed
        ({"instances": 1_000_001}, "instances=1000001 is not allowed: use 1..1,000,000"),
        ({"max_horizon": 10**30}, "max_horizon=1" + "0" * 30 + " is not allowed"),  # log10 error
        ({"max_horizon": 10**7 + 1}, "max_horizon=10000001 is not allowed: use 1..10,000,000"),
    ],
)
def test_search_refuses_settings_too_large(
    kwargs: dict[str, int], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("searched with a bad setting")  # instances=10**30 never ended

    monkeypatch.setattr(dominance, "candidates", no_search)
    with pytest.raises(ValueError, match=message):
        search(**kwargs)


def test_search_finds_violations_of_the_theorem() -> None:
    # The finding of docs/theory.md: the paper's inequality fails on small LTF instances.
    report = search(instances=40, max_horizon=100, seed=0, shrink=1)
    assert report.violations
    for v in report.violations:
        inst, horizon = v.case.instance, v.case.horizon
        cure, red = step_run(inst, "cure", horizon), step_run(inst, "red", horizon)
        assert cure.regret() > red.regret()  # recomputed by the round-by-round simulator
    minimal = [v.minimal for v in report.violations if v.minimal is not None]
    assert len(minimal) == 1 and not minimal[0].holds


def test_planted_violation_is_found_and_shrunk() -> None:
    report = search(instances=6, max_horizon=60, seed=1, shrink=2, claim=cure_never_better)
    assert len(report.violations) > 0
    assert all(not cure_never_better(v.case) for v in report.violations)
    shrunk = [v for v in report.violations if v.minimal is not None]
    assert len(shrunk) == 2
    for v in shrunk:
        assert v.minimal is not None
        assert not cure_never_better(v.minimal)  # still a counterexample, recomputed
        assert v.minimal.instance.n_arms <= v.case.instance.n_arms
        assert v.minimal.horizon <= v.case.horizon


def test_shrinker_drops_an_irrelevant_arm_and_simplifies() -> None:
    # The 2-arm counterexample plus a third arm that changes nothing but the start: the start
    # now takes 3 rounds, so the violation needs T = 5. Shrinking must return 2 arms again.
    inst = ExactLTF.create(["1/2", "1/3", "1/1000"], [2, 1, "7/3"])
    case = check(inst, 5)
    assert not case.holds
    minimal = shrink_case(case, lambda c: c.holds, seed=0)
    assert minimal is not None and not minimal.holds
    assert minimal.instance.n_arms == 2 and minimal.horizon <= 5
    assert all(t.denominator == 1 for t in minimal.instance.t_sat)


def test_ladder_is_simplest_first() -> None:
    steps = ladder(F(351, 1000), lambda y: 0 < y < 1, integers=False)
    assert steps[0] == F(1, 2) and F(351, 1000) not in steps
    assert [s.denominator for s in steps] == sorted(s.denominator for s in steps)
    assert ladder(F(37, 3), lambda y: y > 0, integers=True)[:3] == [1, 2, 12]


def test_critical_horizons_include_cure_threshold() -> None:
    inst = ExactLTF.create(["17/20", "7/20"], [45, 17])
    hs = critical_horizons(inst, 10_000)
    # CURE-UCB's threshold for arm 0 after arm 1 saturates: t_sat1 + 2 b1/a0 = 17 + 37.06
    assert {53, 54, 55} <= hs and max(hs) < 10_000
