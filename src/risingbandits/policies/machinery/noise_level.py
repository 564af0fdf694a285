"""The noise level sigma of a policy's confidence terms: given, or estimated online.

Policies with a ``sigma`` parameter (CURE-UCB, R-ed-UCB, TI-UCB, R-ed-AE, ...) scale their
exploration terms by the sub-Gaussian proxy of the rewards. A practitioner rarely knows it, and a
safe upper bound (0.5 for any score in [0, 1]) makes those terms dominate. ``sigma="estimate"``
estimates it from the rewards themselves (:class:`NoiseLevel`):

* after each pull of arm i with n >= 3 pulls, the second difference of its last three rewards,
  r = X(n) - 2 X(n-1) + X(n-2), is a residual around the arm's local linear trend: for rewards
  mu(l) + noise with independent noise of variance s^2 and a locally linear mu, E[r^2] = 6 s^2
  (the curvature of a learning curve over three pulls is negligible against the noise);
* the squares r^2 / 6 are pooled across arms (the noise of one training loop is shared by its
  candidates) with exponential forgetting, effective memory :data:`MEMORY` residuals, so the
  estimate follows a noise level that changes as training goes on;
* a prior of :data:`PRIOR_WEIGHT` residuals at :data:`PRIOR_SIGMA` keeps the first rounds safe
  (wide confidence terms until data says otherwise; it is forgotten like old residuals), and the
  estimate never goes below :data:`FLOOR` (noise-free rewards would otherwise switch
  exploration off entirely).

So sigma_hat = max(FLOOR, sqrt(S / W)), with S and W the forgetful sums of r^2 / 6 and of 1,
started at w0 s0^2 and w0. A decision that must not trust the prior (HACE-UCB's hand-over) uses
:func:`noise_sigma_upper`: an upper 95% bound from the residuals alone (the prior's share of S
and W removed exactly; half as many degrees of freedom as residuals, since consecutive ones
share rewards; the chi-square quantile by Wilson-Hilferty), +inf before two residuals, and one
that must tell very noisy rewards from a few (HACE-UCB's deployed model under a budget in cost)
:func:`noise_sigma_residuals`, the residuals' own estimate (0 before the first).
Bernoulli rewards give sigma_hat ~ sqrt(p (1 - p)) <= 0.5, Gaussian rewards their standard
deviation. A number given as ``sigma`` is used as is (``fixed``).

The estimated level has a type of its own (:class:`EstimatedNoiseLevel`), and compiled kernels
specialise :func:`noise_sigma` and :func:`noise_observe` on it: with a given sigma none of the
estimator's code is compiled into the step (it made CURE-UCB's step about 35% slower, even
unused; benchmarks/RESULTS.md).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.core import types
from numba.extending import overload

from risingbandits._jit import helper

PRIOR_SIGMA = 0.25
"""Prior noise level (half the bound of any [0, 1] score)."""
PRIOR_WEIGHT = 20.0
"""The prior counts as this many residuals."""
FLOOR = 0.01
"""The smallest noise level ever used."""
MEMORY = 1_000.0
"""Effective number of residuals remembered (forgetting factor 1 - 1/MEMORY)."""
_KEEP = 1.0 - 1.0 / MEMORY
UPPER_Z = 1.645
"""One-sided 95% normal quantile of :func:`noise_sigma_upper`."""


class NoiseLevel(NamedTuple):
    """``fixed >= 0``: that sigma (``stats`` unused); an :class:`EstimatedNoiseLevel` has
    ``fixed = -1`` and the estimate sqrt(S / W) from ``stats`` = [S, W]."""

    fixed: float
    stats: np.ndarray


class EstimatedNoiseLevel(NoiseLevel):
    """The noise level estimated online (the same fields, another type for the kernels)."""

    __slots__ = ()


def new_noise_level(sigma: float | None) -> NoiseLevel:
    """A given sigma (a number >= 0), or an online estimate (``None``)."""
    if sigma is None:
        return EstimatedNoiseLevel(-1.0, np.array([PRIOR_WEIGHT * PRIOR_SIGMA**2, PRIOR_WEIGHT]))
    return NoiseLevel(float(sigma), np.zeros(2))


@helper
def _estimate(stats: np.ndarray) -> float:
    return max(FLOOR, (stats[0] / stats[1]) ** 0.5)


@helper
def _observe(stats: np.ndarray, prefix: np.ndarray, arm: int, n: int) -> None:
    # without a branch: kernel.py, speed (before the third pull the weight is 0)
    m = min(max(n, 3), prefix.shape[1] - 1)
    x0 = prefix[arm, m] - prefix[arm, m - 1]
    x1 = prefix[arm, m - 1] - prefix[arm, m - 2]
    x2 = prefix[arm, m - 2] - prefix[arm, m - 3]
    r = x0 - 2.0 * x1 + x2
    taken = n >= 3
    keep = _KEEP if taken else 1.0
    stats[0] = keep * stats[0] + (r * r / 6.0 if taken else 0.0)
    stats[1] = keep * stats[1] + (1.0 if taken else 0.0)


@helper
def _residual_sums(stats: np.ndarray) -> tuple[float, float]:
    # the residuals' own sums: the prior's weight is w0 k^m after m residuals, and
    # W = w0 k^m + MEMORY (1 - k^m), so k^m = (MEMORY - W) / (MEMORY - w0)
    prior = PRIOR_WEIGHT * (MEMORY - stats[1]) / (MEMORY - PRIOR_WEIGHT)
    return stats[1] - prior, max(0.0, stats[0] - prior * PRIOR_SIGMA**2)


@helper
def _residual_estimate(stats: np.ndarray) -> float:
    count, square = _residual_sums(stats)
    return (square / count) ** 0.5 if count > 0.5 else 0.0


@helper
def _upper(stats: np.ndarray) -> float:
    count, square = _residual_sums(stats)
    dof = 0.5 * count  # consecutive residuals share rewards (squares correlated 4/9, 1/36)
    upper = np.inf
    if dof > 0.5:
        h = 2.0 / (9.0 * dof)  # Wilson-Hilferty: the chi-square's lower 5% point over dof
        base = 1.0 - h - UPPER_Z * h**0.5
        if base > 0.0:
            upper = max(FLOOR, (square / count) ** 0.5 / base**1.5)
    return upper


def noise_sigma(level: NoiseLevel) -> float:
    """The sigma to use now."""
    if isinstance(level, EstimatedNoiseLevel):
        return float(_estimate(level.stats))
    return level.fixed


def noise_sigma_upper(level: NoiseLevel) -> float:
    """An upper 95% confidence bound on sigma from the residuals alone (no prior; +inf while
    they are too few), for a decision that must not trust the prior; a given sigma as is."""
    if isinstance(level, EstimatedNoiseLevel):
        return float(_upper(level.stats))
    return level.fixed


def noise_sigma_residuals(level: NoiseLevel) -> float:
    """sigma estimated from the residuals alone (no prior; 0 before the first); a given sigma as
    is."""
    if isinstance(level, EstimatedNoiseLevel):
        return float(_residual_estimate(level.stats))
    return level.fixed


def noise_observe(level: NoiseLevel, prefix: np.ndarray, arm: int, n: int) -> None:
    """Take the residual of ``arm``'s newest reward, its n-th (call after it entered the prefix
    sums ``prefix``, an :class:`~risingbandits.policies.machinery.windows.ArmHistory`'s); nothing
    for a given sigma. Kernels pass the history's arrays, not the history: a nested tuple handed
    down two levels keeps reference counting in the step (kernel.py, speed)."""
    if isinstance(level, EstimatedNoiseLevel):
        _observe(level.stats, prefix, arm, n)


def _estimated(level: types.Type) -> bool:
    return getattr(level, "instance_class", None) is EstimatedNoiseLevel


# Compiled callers: resolved from the level's type when the kernel is compiled (the overloads'
# parameters are unannotated, as Numba compares them with the implementations').
@overload(noise_sigma, inline="always")
def _noise_sigma_overload(level):
    if _estimated(level):
        return lambda level: _estimate(level.stats)
    return lambda level: level.fixed


@overload(noise_sigma_upper, inline="always")
def _noise_sigma_upper_overload(level):
    if _estimated(level):
        return lambda level: _upper(level.stats)
    return lambda level: level.fixed


@overload(noise_sigma_residuals, inline="always")
def _noise_sigma_residuals_overload(level):
    if _estimated(level):
        return lambda level: _residual_estimate(level.stats)
    return lambda level: level.fixed


@overload(noise_observe, inline="always")
def _noise_observe_overload(level, prefix, arm, n):
    if _estimated(level):
        return lambda level, prefix, arm, n: _observe(level.stats, prefix, arm, n)
    return lambda level, prefix, arm, n: None
