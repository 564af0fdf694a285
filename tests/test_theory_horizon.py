"""The Section 3.1 argument (necessity of horizon awareness) on the intro instance."""

from __future__ import annotations

import pytest

from risingbandits.instances import Noise, intro
from risingbandits.theory.horizon_awareness import (
    agnostic_price,
    case_of,
    check_policies,
    horizon_agnostic_policies,
    intro_switching_horizon,
    least_regret,
)

INTRO = intro(30_000, Noise("none"))


def test_intro_switching_horizon() -> None:
    assert intro_switching_horizon() == 16_000


def test_least_regret_by_hand() -> None:
    # N = 8,000 (all A): keep A, V*(10,000) = 4,000 is reached.   N = 0: all B is optimal at 30k.
    assert least_regret(INTRO, 8_000, 8_000, 10_000) == pytest.approx(0.0, abs=1e-6)
    assert least_regret(INTRO, 0, 8_000, 30_000) == pytest.approx(0.0, abs=1e-6)
    # N = 4,000, T = 10,000: B's first 4,000 pulls give 4000*4001/40000 = 400.1, then A is best
    # (0.4 > B's next means): 0.4 * 6,000 + 400.1 = 2,800.1 -> regret 1,199.9.
    assert least_regret(INTRO, 4_000, 8_000, 10_000) == pytest.approx(1_199.9, abs=1e-6)
    # N = 4,000, T = 30,000: all B after t = 8,000: 1,600 + S_B(26,000) = 1,600 + 10,000.5 +
    # 6,000 against V* = S_B(30,000) = 20,000.5 -> regret 2,400.
    assert least_regret(INTRO, 4_000, 8_000, 30_000) == pytest.approx(2_400.0, abs=1e-6)
    with pytest.raises(ValueError, match="need 0 <= N"):
        least_regret(INTRO, 9_000, 8_000, 10_000)


def test_no_agnostic_split_is_free() -> None:
    price = agnostic_price(INTRO, step=100)
    assert 0 < price.pulls_a < 8_000
    assert price.value > 1_000  # every N loses > 1,000 at T = 10,000 or at T = 30,000
    assert price.randomised <= price.value
    for n in (0, 4_000, 8_000):
        worst = max(least_regret(INTRO, n, 8_000, 10_000), least_regret(INTRO, n, 8_000, 30_000))
        assert worst >= price.value - 1e-6
    assert (case_of(3_999), case_of(4_000), case_of(4_001)) == ("case 1", "N = 4,000", "case 2")


def test_policies_fall_into_a_case_and_pay_the_price() -> None:
    assert "ucb1" in horizon_agnostic_policies() and "cure-ucb" not in horizon_agnostic_policies()
    checks = {c.policy: c for c in check_policies(["ucb1", "cure-ucb"], 2, Noise("gaussian", 0.1))}
    ucb1, cure = checks["ucb1"], checks["cure-ucb"]
    assert not ucb1.uses_horizon and ucb1.pulls_a_short == ucb1.pulls_a_long
    assert ucb1.case == case_of(ucb1.pulls_a_short)
    # per seed, Reg >= least regret of its N, so the means obey the randomised price
    assert max(ucb1.regret_short, ucb1.regret_long) >= agnostic_price(INTRO).randomised
    assert cure.uses_horizon and cure.case == "uses T"
    assert cure.pulls_a_short > cure.pulls_a_long  # CURE-UCB stays on A longer when T is short
