"""Mean and Student-t confidence interval of a sample."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class MeanCI:
    """Sample mean with a two-sided confidence interval (NaN bounds for fewer than 2 values)."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def mean_ci(values: np.ndarray, level: float = 0.95) -> MeanCI:
    """Mean +- t_{n-1, (1+level)/2} x s / sqrt(n)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    n = int(x.size)
    if n == 0:
        raise ValueError("mean_ci needs at least one value")
    mean = float(x.mean())
    if n < 2:
        return MeanCI(mean, math.nan, math.nan, n)
    half = float(stats.t.ppf((1.0 + level) / 2.0, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return MeanCI(mean, mean - half, mean + half, n)


def finite_or_none(x: float) -> float | None:
    """``x``, or None when it is NaN or infinite (for strict JSON)."""
    return x if math.isfinite(x) else None
