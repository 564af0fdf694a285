"""The verdict rules of the reproduction's claims, on synthetic numbers: every rule can say each
of its verdicts, and says the one its wording promises."""

from __future__ import annotations

import math

import pytest

from risingbandits.analysis.stats import MeanCI
from risingbandits.reproduce.claims import (
    CLAIMS,
    NOT_REPRODUCED,
    PARTLY,
    REPRODUCED,
    VERDICTS,
    combine,
    rule_bound,
    rule_clear_gap,
    rule_comparable,
    rule_dominance,
    rule_horizon_price,
    rule_lowest,
    rule_robust_and_split,
    rule_switch,
)


def ci(mean: float, half: float) -> MeanCI:
    return MeanCI(mean, mean - half, mean + half, 30)


NO_CI = MeanCI(1.0, math.nan, math.nan, 1)


def test_combine_is_unanimous_or_partly() -> None:
    assert combine([REPRODUCED, REPRODUCED]) == REPRODUCED
    assert combine([NOT_REPRODUCED, NOT_REPRODUCED]) == NOT_REPRODUCED
    assert combine([REPRODUCED, NOT_REPRODUCED]) == PARTLY
    assert combine([PARTLY, PARTLY]) == PARTLY


@pytest.mark.parametrize(
    ("switches", "verdict"),
    [
        ([16_000], REPRODUCED),
        ([16_150], REPRODUCED),
        ([16_000, 30_000], PARTLY),  # two switches
        ([17_500], PARTLY),  # within 10%
        ([20_000], NOT_REPRODUCED),
        ([], NOT_REPRODUCED),
    ],
)
def test_switch_rule(switches: list[int], verdict: str) -> None:
    assert rule_switch(switches) == verdict


@pytest.mark.parametrize(
    ("cure", "other", "verdict"),
    [
        (ci(500, 50), ci(1500, 50), REPRODUCED),  # separated and 3x
        (ci(500, 50), ci(900, 50), PARTLY),  # separated but < 2x
        (ci(500, 600), ci(1500, 600), PARTLY),  # 3x but the intervals overlap
        (ci(500, 50), ci(500, 50), NOT_REPRODUCED),  # equal means
        (ci(900, 50), ci(500, 50), NOT_REPRODUCED),
        (NO_CI, MeanCI(3.0, math.nan, math.nan, 1), PARTLY),  # no interval: never separated
    ],
)
def test_clear_gap_rule(cure: MeanCI, other: MeanCI, verdict: str) -> None:
    assert rule_clear_gap(cure, other) == verdict


def test_lowest_rule_needs_the_lowest_mean_and_a_positive_paired_gap_everywhere() -> None:
    clear, overlapping = ci(100, 50), ci(100, 150)
    assert rule_lowest([(True, clear), (True, clear)]) == REPRODUCED
    assert rule_lowest([(True, clear), (True, overlapping)]) == PARTLY
    assert rule_lowest([(True, clear), (False, ci(-100, 50))]) == PARTLY
    assert rule_lowest([(False, ci(-100, 50)), (False, ci(-5, 1))]) == NOT_REPRODUCED
    assert rule_lowest([(True, NO_CI)]) == PARTLY


def test_robust_and_split_rule() -> None:
    rising = [ci(2.0, 0.3), ci(3.0, 0.3)]
    non_stationary = [ci(6.0, 0.3), ci(8.0, 0.3)]
    assert rule_robust_and_split([True, True], rising, non_stationary) == REPRODUCED
    # ordered but the worst rising and the best non-stationary intervals overlap
    close = [ci(3.2, 0.5), ci(8.0, 0.3)]
    assert rule_robust_and_split([True, True], rising, close) == PARTLY
    assert rule_robust_and_split([True, False], rising, non_stationary) == PARTLY
    assert rule_robust_and_split([False, True], non_stationary, rising) == NOT_REPRODUCED
    assert rule_robust_and_split([True, True], non_stationary, rising) == PARTLY


def test_comparable_rule_uses_the_upper_bound_everywhere_and_the_lower_bound_at_the_end() -> None:
    red = [ci(1000, 200), ci(3000, 400)]
    assert rule_comparable([ci(1100, 100), ci(2650, 100)], red) == REPRODUCED  # 2,650 <= 2,800
    assert rule_comparable([ci(1100, 100), ci(2900, 100)], red) == PARTLY  # not near the low end
    assert rule_comparable([ci(1300, 100), ci(2650, 100)], red) == PARTLY  # above at T1
    assert rule_comparable([ci(1300, 100), ci(3500, 100)], red) == NOT_REPRODUCED


def test_dominance_rule() -> None:
    assert rule_dominance(0, 0) == REPRODUCED
    assert rule_dominance(5, 0) == PARTLY
    assert rule_dominance(5, 1) == NOT_REPRODUCED


def test_bound_rule() -> None:
    assert rule_bound(10, 0, 0) == REPRODUCED
    assert rule_bound(10, 0, 3) == PARTLY
    assert rule_bound(10, 1, 0) == NOT_REPRODUCED
    assert rule_bound(0, 0, 0) == NOT_REPRODUCED


def test_horizon_price_rule() -> None:
    assert rule_horizon_price(1450.0, 2000.0, 900.0) == REPRODUCED
    assert rule_horizon_price(1450.0, 2000.0, 1800.0) == PARTLY
    assert rule_horizon_price(1450.0, 1200.0, 900.0) == NOT_REPRODUCED  # an agnostic run below it
    assert rule_horizon_price(0.0, 2000.0, 900.0) == NOT_REPRODUCED


def test_claims_are_numbered_with_a_rule_each() -> None:
    assert [c.number for c in CLAIMS] == list(range(1, len(CLAIMS) + 1))
    assert len(CLAIMS) >= 11
    for c in CLAIMS:
        assert c.rule and c.text and "=" in c.rule  # "... = reproduced; ..."
        assert any(v in c.rule for v in VERDICTS)
