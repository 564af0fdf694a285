"""Mean intervals over clusters: the runs of one instance count once."""

from __future__ import annotations

import numpy as np
import pytest

from risingbandits.analysis.stats import clustered_mean_ci, mean_ci


def test_an_interval_over_clusters_is_the_interval_of_their_means() -> None:
    rng = np.random.default_rng(0)
    means = rng.normal(size=6)
    values = np.concatenate([m + rng.normal(scale=0.1, size=4) for m in means])
    labels = np.repeat([f"i{k}" for k in (3, 1, 0, 5, 2, 4)], 4)  # any order of labels
    got = clustered_mean_ci(values, labels)
    ref = mean_ci(values.reshape(6, 4).mean(axis=1))
    assert got.n == 6 and got.mean == pytest.approx(ref.mean)
    assert (got.low, got.high) == pytest.approx((ref.low, ref.high))
    repeated = clustered_mean_ci(np.repeat(means, 5), np.repeat(np.arange(6), 5))
    assert repeated.half_width == pytest.approx(mean_ci(means).half_width)
    assert repeated.half_width > 2 * mean_ci(np.repeat(means, 5)).half_width  # over 30 copies


def test_one_cluster_has_no_interval_and_labels_must_match() -> None:
    one = clustered_mean_ci(np.array([0.1, 0.3]), np.array(["a", "a"]))
    assert one.n == 1 and one.mean == pytest.approx(0.2) and np.isnan(one.high)
    with pytest.raises(ValueError, match="3 values but 2 cluster labels"):
        clustered_mean_ci(np.zeros(3), np.array(["a", "b"]))


def test_the_kept_t_quantile_is_scipys_and_the_interval_unchanged() -> None:
    from scipy import stats

    from risingbandits.analysis.stats import t_quantile

    for df in (1, 2, 9, 119):
        assert t_quantile(0.975, df) == float(stats.t.ppf(0.975, df))
    x = np.random.default_rng(3).normal(size=12)
    half = float(stats.t.ppf(0.975, 11) * x.std(ddof=1) / np.sqrt(12))
    got = mean_ci(x)
    assert (got.low, got.high) == (x.mean() - half, x.mean() + half)  # bit for bit
