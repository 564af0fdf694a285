"""The Bernoulli KL-UCB index (Garivier & Cappé, COLT 2011) by bisection.

KL-UCB's upper confidence bound of a [0, 1] arm with empirical mean p after N samples at
exploration level f is max{q in [p, 1] : N d(p, q) <= f}, with d the Bernoulli divergence.
d(p, .) increases on [p, 1], so the root of d(p, q) = f / N is found by bisection on the
bracket [p, min(1, p + sqrt(f / (2N)))] (Pinsker: d(p, q) >= 2 (p - q)^2), stopped when the
bracket is at most ``precision`` wide or after ``max_halvings`` halvings; the midpoint is
returned (nonstationary-baselines.md section 3; the same bracket and stopping rule as
SMPyBandits' ``klucbBern``, so its conventions can be reproduced exactly).

Speed, with the same result to the last bit: after :data:`EXACT_HALVINGS` halvings the root is
located by Newton's method and *certified*: the divergence is evaluated on both sides of it,
:data:`EVAL_ERROR` beyond ``level`` (so the true root lies within ``delta`` of the estimate,
whatever the rounding of those evaluations). From then on a midpoint farther than ``2 delta``
from the estimate goes to the side the root says, which is the side its evaluation would
give (for convex d(p, .), |d(p, m) - level| >= 2 delta (q - p) > EVAL_ERROR there); nearer
ones are evaluated as before. About 10 evaluations instead of about 32 per index (SW-KL-UCB:
2x the step rate); when no certificate is found every midpoint is evaluated.
"""

from __future__ import annotations

import math

import numpy as np

from risingbandits._jit import called_helper, helper

KL_CLIP = 1e-15  # p and q are clipped into [KL_CLIP, 1 - KL_CLIP] inside the divergence


@helper
def bernoulli_kl(p: float, q: float) -> float:
    """d(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q)), arguments clipped away from 0 and 1."""
    p = min(max(p, KL_CLIP), 1.0 - KL_CLIP)
    q = min(max(q, KL_CLIP), 1.0 - KL_CLIP)
    return p * math.log(p / q) + (1.0 - p) * math.log((1.0 - p) / (1.0 - q))


EXACT_HALVINGS = 3
"""Halvings evaluated before the root is located (the bracket is then 1/8 of Pinsker's)."""
EVAL_ERROR = 1e-12
"""Bound on the rounding error of :func:`bernoulli_kl` for arguments in [1e-12, 1 - 1e-9]:
each of its terms is at most about 35 in size and carries a few units in the last place
(2e-16 each), so about 3e-14; 30 times that."""
NEWTON_STEPS = 8
PENDING, FAILED = -1.0, -2.0
"""Margins meaning "no root yet" and "no certificate": every midpoint is evaluated."""


@called_helper
def certified_root(mean: float, level: float, start: float) -> tuple[float, float]:
    """(q, margin): the root q of d(mean, q) = level by Newton's method from ``start`` (right
    of the root) and the distance beyond which a point's side is certain (see the module
    docstring); (nan, :data:`FAILED`) when no certificate is found."""
    q = start
    for _ in range(NEWTON_STEPS):
        step = (bernoulli_kl(mean, q) - level) * q * (1.0 - q) / (q - mean)
        q -= step
        if not mean < q < 1.0:
            return np.nan, FAILED
        if abs(step) <= 1e-15:
            break
    gap = q - mean
    delta = EVAL_ERROR / gap
    certain = (
        mean >= 1e-12
        and q + delta <= 1.0 - 1e-9
        and delta <= 0.25 * gap
        and bernoulli_kl(mean, q + delta) > level + EVAL_ERROR
        and bernoulli_kl(mean, q - delta) < level - EVAL_ERROR
    )
    return (q, 2.0 * delta) if certain else (np.nan, FAILED)


@helper
def kl_ucb_bernoulli(mean: float, level: float, precision: float, max_halvings: int) -> float:
    """Largest q in [mean, 1] with d(mean, q) <= ``level`` (level = f / N >= 0), by bisection."""
    lo = mean
    hi = min(1.0, mean + math.sqrt(0.5 * level))
    root, margin = np.nan, PENDING  # |mid - nan| > margin is False: mid is evaluated
    halvings = 0
    while halvings < max_halvings and hi - lo > precision:
        halvings += 1
        mid = (lo + hi) * 0.5
        # the root's side when certain, else the midpoint's divergence
        above = mid > root if abs(mid - root) > margin else bernoulli_kl(mean, mid) > level
        if above:
            hi = mid
        else:
            lo = mid
        if margin == PENDING and halvings >= EXACT_HALVINGS and hi < 1.0:
            root, margin = certified_root(mean, level, hi)
    return (lo + hi) * 0.5
