"""The Bernoulli KL-UCB index (Garivier & Cappé, COLT 2011) by bisection.

KL-UCB's upper confidence bound of a [0, 1] arm with empirical mean p after N samples at
exploration level f is max{q in [p, 1] : N d(p, q) <= f}, with d the Bernoulli divergence.
d(p, .) increases on [p, 1], so the root of d(p, q) = f / N is found by bisection on the
bracket [p, min(1, p + sqrt(f / (2N)))] (Pinsker: d(p, q) >= 2 (p - q)^2), stopped when the
bracket is at most ``precision`` wide or after ``max_halvings`` halvings; the midpoint is
returned (nonstationary-baselines.md section 3; the same bracket and stopping rule as
SMPyBandits' ``klucbBern``, so its conventions can be reproduced exactly).
"""

from __future__ import annotations

import math

from risingbandits._jit import helper

KL_CLIP = 1e-15  # p and q are clipped into [KL_CLIP, 1 - KL_CLIP] inside the divergence


@helper
def bernoulli_kl(p: float, q: float) -> float:
    """d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q)), arguments clipped away from 0 and 1."""
    p = min(max(p, KL_CLIP), 1.0 - KL_CLIP)
    q = min(max(q, KL_CLIP), 1.0 - KL_CLIP)
    return p * math.log(p / q) + (1.0 - p) * math.log((1.0 - p) / (1.0 - q))


@helper
def kl_ucb_bernoulli(mean: float, level: float, precision: float, max_halvings: int) -> float:
    """Largest q in [mean, 1] with d(mean, q) <= ``level`` (level = f / N >= 0), by bisection."""
    lo = mean
    hi = min(1.0, mean + math.sqrt(0.5 * level))
    halvings = 0
    while halvings < max_halvings and hi - lo > precision:
        halvings += 1
        mid = (lo + hi) * 0.5
        if bernoulli_kl(mean, mid) > level:
            hi = mid
        else:
            lo = mid
    return (lo + hi) * 0.5
