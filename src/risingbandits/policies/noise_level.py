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
started at w0 s0^2 and w0. Bernoulli rewards give sigma_hat ~ sqrt(p (1 - p)) <= 0.5, Gaussian
rewards their standard deviation. A number given as ``sigma`` is used as is (``fixed``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.windows import ArmHistory

PRIOR_SIGMA = 0.25
"""Prior noise level (half the bound of any [0, 1] score)."""
PRIOR_WEIGHT = 20.0
"""The prior counts as this many residuals."""
FLOOR = 0.01
"""The smallest noise level ever used."""
MEMORY = 1_000.0
"""Effective number of residuals remembered (forgetting factor 1 - 1/MEMORY)."""
_KEEP = 1.0 - 1.0 / MEMORY


class NoiseLevel(NamedTuple):
    """``fixed >= 0``: that sigma; ``fixed < 0``: estimated, sqrt(S / W) from ``stats`` =
    [S, W]."""

    fixed: float
    stats: np.ndarray


def new_noise_level(sigma: float | None) -> NoiseLevel:
    """A given sigma (a number >= 0), or an online estimate (``None``)."""
    if sigma is None:
        return NoiseLevel(-1.0, np.array([PRIOR_WEIGHT * PRIOR_SIGMA**2, PRIOR_WEIGHT]))
    return NoiseLevel(float(sigma), np.zeros(2))


@helper
def noise_sigma(level: NoiseLevel) -> float:
    """The sigma to use now."""
    if level.fixed >= 0.0:
        return level.fixed
    return max(FLOOR, (level.stats[0] / level.stats[1]) ** 0.5)


@helper
def noise_observe(level: NoiseLevel, hist: ArmHistory, arm: int) -> None:
    """Take the residual of ``arm``'s newest reward (call after it entered ``hist``)."""
    if level.fixed >= 0.0:
        return
    n = hist.counts[arm]
    if n < 3:
        return
    p = hist.prefix
    x0 = p[arm, n] - p[arm, n - 1]
    x1 = p[arm, n - 1] - p[arm, n - 2]
    x2 = p[arm, n - 2] - p[arm, n - 3]
    r = x0 - 2.0 * x1 + x2
    level.stats[0] = _KEEP * level.stats[0] + r * r / 6.0
    level.stats[1] = _KEEP * level.stats[1] + 1.0
