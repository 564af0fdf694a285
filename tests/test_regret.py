"""Oracle values, best arms, switching horizons and policy regret, checked exactly."""

from __future__ import annotations

import numpy as np
import pytest

import risingbandits as rb


def test_intro_oracle_exact() -> None:
    oracle = rb.intro(50_000).oracle
    for T in (1, 100, 9_999, 15_999):
        assert oracle.value(T) == pytest.approx(0.4 * T, rel=1e-12)
        assert oracle.best_arm(T) == 0
    for T in (16_000, 20_000, 30_000, 50_000):
        expected = sum(min(1.0, n / 20_000) for n in range(1, T + 1))
        assert oracle.value(T) == pytest.approx(expected, rel=1e-12)
        assert oracle.best_arm(T) == 1


def test_intro_switch_is_exactly_16000() -> None:
    # 0.4 T = T (T + 1) / 40000 at T = 15,999 (a tie, which goes to arm A); B wins from 16,000.
    switches = rb.intro(50_000).oracle.switching_horizons()
    assert [(s.horizon, s.before, s.after) for s in switches] == [(16_000, 0, 1)]


def test_regret_from_pulls() -> None:
    inst = rb.from_means([[0.5, 0.5, 0.5, 0.5], [0.1, 0.4, 0.9, 1.0]])
    oracle = inst.oracle
    assert oracle.value(4) == pytest.approx(2.4) and oracle.best_arm(4) == 1
    assert oracle.value(2) == pytest.approx(1.0) and oracle.best_arm(2) == 0
    pulls = np.array([[2, 2], [4, 0], [0, 4]])
    np.testing.assert_allclose(oracle.regret(pulls), [2.4 - 1.5, 2.4 - 2.0, 0.0])
    with pytest.raises(ValueError, match="horizon=5"):
        oracle.value(5)
