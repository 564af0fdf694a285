"""Mean and Student-t confidence interval of a sample."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

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


def sample(values: np.ndarray, who: str) -> np.ndarray:
    """``values`` as a flat float array; at least one value (``who`` names the caller)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise ValueError(f"{who} needs at least one value")
    return x


def no_interval(x: np.ndarray) -> MeanCI:
    """The mean of a single value, with NaN bounds."""
    return MeanCI(float(x.mean()), math.nan, math.nan, int(x.size))


def mean_ci(values: np.ndarray, level: float = 0.95) -> MeanCI:
    """Mean +- t_{n-1, (1+level)/2} x s / sqrt(n)."""
    x = sample(values, "mean_ci")
    n = int(x.size)
    if n < 2:
        return no_interval(x)
    mean = float(x.mean())
    half = t_quantile((1.0 + level) / 2.0, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return MeanCI(mean, mean - half, mean + half, n)


@cache
def t_quantile(q: float, df: int) -> float:
    """Student-t quantile, kept per (q, df): a report asks for the same few tens of thousands of
    times, and SciPy's ``ppf`` costs about 0.3 ms a call (a quick report: 78,000 calls, 21 of
    its 117 s under cProfile)."""
    return float(stats.t.ppf(q, df))


def clustered_mean_ci(values: np.ndarray, clusters: np.ndarray, level: float = 0.95) -> MeanCI:
    """The mean of each cluster's mean, with :func:`mean_ci`'s interval over the clusters (``n``:
    the clusters). For runs grouped by instance: the runs of one instance are not independent
    units (on live-v1, which has no reward noise, a policy's runs of one instance are often the
    same run), and an interval over runs counts one instance's difference as many times as it
    has runs. With equal runs per instance the mean is the mean over runs."""
    return mean_ci(cluster_means(sample(values, "clustered_mean_ci"), clusters)[1], level)


def cluster_means(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct cluster labels and each one's mean of ``values`` (one label per
    value, as many as values)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    keys = np.asarray(clusters).ravel()
    if keys.shape != x.shape:
        raise ValueError(f"cluster_means: {x.size} values but {keys.size} cluster labels")
    labels, cluster = np.unique(keys, return_inverse=True)
    return labels, np.bincount(cluster, weights=x) / np.bincount(cluster)


def instance_mean_ci(values: np.ndarray, instances: np.ndarray, level: float = 0.95) -> MeanCI:
    """The interval of a test bed's runs: over instances (:func:`clustered_mean_ci`) when the
    runs come from several, over the runs when from one (the paper's IMDB curves: the runs
    differ by their reward noise, and the question is about that instance)."""
    if np.unique(np.asarray(instances)).size > 1:
        return clustered_mean_ci(values, instances, level)
    return mean_ci(values, level)


def finite_or_none(x: float) -> float | None:
    """``x``, or None when it is NaN or infinite (for strict JSON)."""
    return x if math.isfinite(x) else None


def ci_json(c: MeanCI) -> dict[str, Any]:
    """``{"mean", "ci_low", "ci_high", "n"}`` for strict JSON (NaN bounds become null)."""
    return {
        "mean": c.mean,
        "ci_low": finite_or_none(c.low),
        "ci_high": finite_or_none(c.high),
        "n": c.n,
    }
