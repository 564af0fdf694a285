"""The policies' own generator (risingbandits.policies.machinery.rng): distributions and
determinism."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from risingbandits.policies.machinery.rng import (
    rng_below,
    rng_beta,
    rng_gamma,
    rng_normal,
    rng_uniform,
)
from risingbandits.seeding import policy_rng

N = 40_000


def test_same_seed_same_draws_other_seed_other_draws() -> None:
    a, b, c = policy_rng(5), policy_rng(5), policy_rng(6)
    xa = [rng_uniform(a) for _ in range(100)]
    assert xa == [rng_uniform(b) for _ in range(100)]
    assert xa != [rng_uniform(c) for _ in range(100)]
    assert int(a[1]) == 100  # one counter step per uniform


def test_uniform_is_uniform_on_the_unit_interval() -> None:
    rng = policy_rng(1)
    x = np.array([rng_uniform(rng) for _ in range(N)])
    assert x.min() >= 0.0 and x.max() < 1.0
    assert stats.kstest(x, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("n", [1, 3, 7, 1000])
def test_below_is_uniform_over_its_range(n: int) -> None:
    rng = policy_rng(2)
    x = np.array([rng_below(rng, n) for _ in range(N)])
    assert x.min() >= 0 and x.max() < n
    if 1 < n <= 7:
        counts = np.bincount(x, minlength=n)
        assert stats.chisquare(counts).pvalue > 1e-3


def test_normal_has_its_mean_and_spread() -> None:
    rng = policy_rng(3)
    x = np.array([rng_normal(rng, 0.5, 2.0) for _ in range(N)])
    assert stats.kstest((x - 0.5) / 2.0, "norm").pvalue > 1e-3


@pytest.mark.parametrize("shape", [0.3, 1.0, 4.5])
def test_gamma_matches_scipy(shape: float) -> None:
    rng = policy_rng(4)
    x = np.array([rng_gamma(rng, shape) for _ in range(N)])
    assert stats.kstest(x, "gamma", args=(shape,)).pvalue > 1e-3


@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (4.0, 3.0), (30.0, 2.0)])
def test_beta_matches_scipy(a: float, b: float) -> None:
    rng = policy_rng(5)
    x = np.array([rng_beta(rng, a, b) for _ in range(N)])
    assert stats.kstest(x, "beta", args=(a, b)).pvalue > 1e-3
