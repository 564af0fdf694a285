"""Upsilon and the regret bound of CURE-UCB (paper Thm. 5.4, Appendix C), on small tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.theory.bound import best_bound, bound_curve, regret_bound, upsilon

# gamma_0 = (0.2, 0.1, 0.0), gamma_1 = (0.05, 0.05, 0.05): gamma_max = (0.2, 0.1, 0.05)
TABLE = np.array([[0.1, 0.3, 0.4, 0.4], [0.2, 0.25, 0.3, 0.35]])


def test_upsilon_by_hand() -> None:
    assert upsilon(TABLE, 3, 1.0) == pytest.approx(0.35)
    assert upsilon(TABLE, 2, 1.0) == pytest.approx(0.3)
    assert upsilon(TABLE, 2, 0.5) == pytest.approx(math.sqrt(0.2) + math.sqrt(0.1))
    assert upsilon(TABLE, 3, 0.0) == 3.0
    assert upsilon(TABLE, 0, 0.7) == 0.0
    flat = np.array([[0.5, 0.5, 0.5], [0.1, 0.1, 0.1]])
    assert upsilon(flat, 2, 0.0) == 2.0  # 0^0 = 1 (the module's stated convention)
    assert upsilon(flat, 2, 0.5) == 0.0


def test_bound_by_hand() -> None:
    # K = 2, T = 8, eps = 1/4: M = ceil(0.5 * 8 / 2) = 2, Upsilon(2, 1) = 0.3.
    # increment term = (1 + 2^2) * 2 * 8 / 2 * 0.3 = 12; constant = (4 + 4) * 2 = 16.
    b = regret_bound(TABLE[:, :4], 4, 0.25, 1.0, 0.0)  # T = 4: M = 1, Upsilon = 0.2
    assert b.upsilon == pytest.approx(0.2)
    assert b.increment_term == pytest.approx(5 * 2 * 4 / 2 * 0.2)
    table = np.hstack([TABLE, np.full((2, 6), 0.4)])
    b = regret_bound(table, 8, 0.25, 1.0, 0.0)
    assert b.upsilon == pytest.approx(0.3)
    assert (b.increment_term, b.noise_term, b.constant_term) == pytest.approx((12.0, 0.0, 16.0))
    assert b.total == pytest.approx(28.0) and b.vacuous  # 28 >= T = 8
    # sigma = 0.1: 3K/eps (0.8)^(2/3) (ln 8)^(1/3) (18 + 3)^(1/3) = 24 * 0.86177 * 1.27643 * 2.75892
    noisy = regret_bound(table, 8, 0.25, 1.0, 0.1)
    assert noisy.noise_term == pytest.approx(72.83, abs=0.01)
    # q = 0: Upsilon(2, 0) = 2, (1 + 2) * 2 * 1 / 2 * 2 = 6
    assert regret_bound(table, 8, 0.25, 0.0, 0.0).increment_term == pytest.approx(6.0)


def test_best_bound_is_the_minimum_over_q() -> None:
    inst = rb.intro(4_000)
    qs = [0.0, 0.3, 0.6, 1.0]
    best = best_bound(inst, 4_000, 0.25, 0.1, qs)
    each = [regret_bound(inst, 4_000, 0.25, q, 0.1).total for q in qs]
    assert best.total == pytest.approx(min(each)) and best.q == qs[int(np.argmin(each))]
    curve = bound_curve(inst, [1_000, 4_000], 0.25, 0.1, qs)
    assert curve[1].total == pytest.approx(best.total) and curve[0].total < curve[1].total


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"q=1\.5 is not allowed"):
        upsilon(TABLE, 2, 1.5)
    with pytest.raises(ValueError, match=r"eps=0\.5 is not allowed"):
        regret_bound(TABLE, 4, 0.5, 0.5, 0.1)
    with pytest.raises(ValueError, match="needs mu"):
        upsilon(TABLE, 4, 0.5)
    with pytest.raises(ValueError, match="q grid is empty"):
        best_bound(TABLE, 4, 0.25, 0.1, [])
