"""Percentile bootstrap confidence interval of a mean (Efron & Tibshirani 1993, ch. 13).

Resample the values with replacement ``n_resamples`` times (a seeded generator), take the mean
of each resample, and report the ``(1 - level)/2`` and ``(1 + level)/2`` quantiles of those
means. Resampling runs in batches so memory stays bounded for large samples; the means of all
resamples are held for their quantiles, so there are at most :data:`MAX_RESAMPLES`.
"""

from __future__ import annotations

import numpy as np

from risingbandits.analysis.stats import MeanCI, no_interval, sample
from risingbandits.policies.machinery.checkpoint import integer, shown

BATCH_VALUES = 2_000_000
MAX_RESAMPLES = 1_000_000
"""Most resamples (their means take 8 MB; 10**10 asked for 74.5 GiB and failed)."""


def check_resamples(value: int, name: str = "n_resamples") -> int:
    """``value`` as a number of resamples from 1 to :data:`MAX_RESAMPLES` (else one line)."""
    if not integer(value) or not 1 <= value <= MAX_RESAMPLES:
        raise ValueError(
            f"{name}={shown(value)} is not allowed: use an integer from 1 to {MAX_RESAMPLES:,}"
        )
    return int(value)


def bootstrap_ci(
    values: np.ndarray, level: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> MeanCI:
    """Mean of ``values`` with a seeded percentile-bootstrap interval (NaN for n < 2)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level={level} is not allowed: use a number in (0, 1)")
    n_resamples = check_resamples(n_resamples)
    x = sample(values, "bootstrap_ci")
    n = int(x.size)
    if n < 2:
        return no_interval(x)
    mean = float(x.mean())
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    batch = max(1, BATCH_VALUES // n)
    for start in range(0, n_resamples, batch):
        stop = min(n_resamples, start + batch)
        means[start:stop] = x[rng.integers(0, n, (stop - start, n))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return MeanCI(mean, float(low), float(high), n)
