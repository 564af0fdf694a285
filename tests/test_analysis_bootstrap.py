"""Percentile bootstrap of a mean, checked against scipy.stats.bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from risingbandits.analysis.bootstrap import bootstrap_ci


@pytest.mark.parametrize("n", [15, 200])
def test_agrees_with_scipy_percentile_bootstrap(n: int) -> None:
    x = np.random.default_rng(n).lognormal(0.0, 1.0, n)  # skewed: not a symmetric interval
    ours = bootstrap_ci(x, n_resamples=40_000, seed=1)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=40_000, method="percentile", confidence_level=0.95, rng=2
    ).confidence_interval
    width = ref.high - ref.low
    # two independent Monte Carlo estimates of the same quantiles
    assert ours.low == pytest.approx(ref.low, abs=0.03 * width)
    assert ours.high == pytest.approx(ref.high, abs=0.03 * width)
    assert ours.mean == pytest.approx(x.mean())
    # the percentile interval of a right-skewed mean reaches further up than down
    assert ours.high - ours.mean > ours.mean - ours.low


def test_seeded_and_batched_without_changing_the_result() -> None:
    x = np.random.default_rng(0).normal(size=50)
    a = bootstrap_ci(x, n_resamples=5_000, seed=7)
    assert bootstrap_ci(x, n_resamples=5_000, seed=7) == a
    assert bootstrap_ci(x, n_resamples=5_000, seed=8) != a


def test_level_widens_the_interval() -> None:
    x = np.random.default_rng(3).normal(size=80)
    narrow = bootstrap_ci(x, level=0.8, seed=0)
    wide = bootstrap_ci(x, level=0.99, seed=0)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_a_single_value_has_no_interval_and_bad_input_is_refused() -> None:
    one = bootstrap_ci(np.array([2.5]))
    assert one.mean == 2.5 and math.isnan(one.low) and math.isnan(one.high)
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_ci(np.array([]))
    with pytest.raises(ValueError, match=r"level=1.5 is not allowed"):
        bootstrap_ci(np.ones(3), level=1.5)
    with pytest.raises(ValueError, match=r"n_resamples=0 is not allowed"):
        bootstrap_ci(np.ones(3), n_resamples=0)
    for huge in (10**10, 10**30, True):  # 10**10 was a MemoryError (74.5 GiB of means)
        with pytest.raises(ValueError, match=r"use an integer from 1 to 1,000,000$"):
            bootstrap_ci(np.ones(3), n_resamples=huge)
