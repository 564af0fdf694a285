"""Shared compiled pieces of policies: argmax with seeded ties, forced round robin, [0, 1] clip.

Compiled helpers (see :func:`risingbandits._jit.helper`): they are compiled into the kernels that
call them.
"""

from __future__ import annotations

import numpy as np

from risingbandits._jit import helper


@helper
def argmax_ties(values: np.ndarray, rng: np.random.Generator, tie_first: bool) -> int:
    """Index of the largest value; ties go uniformly at random (``rng``) or to the lowest index.

    The generator is only used when there is a tie (DECISIONS.md row 3), so deterministic
    instances without ties consume no randomness.
    """
    best = 0
    top = values[0]
    count = 1
    for i in range(1, values.shape[0]):
        v = values[i]
        if v > top:
            top = v
            best = i
            count = 1
        elif v == top:
            count += 1
    if count == 1 or tie_first:
        return best
    pick = rng.integers(0, count)
    for i in range(best, values.shape[0]):
        if values[i] == top:
            if pick == 0:
                return i
            pick -= 1
    return best


@helper
def round_robin(t: int, n_arms: int, pulls_per_arm: int) -> int:
    """Forced start: arm ``(t - 1) mod K`` in the first ``K * pulls_per_arm`` rounds, else -1."""
    if t <= n_arms * pulls_per_arm:
        return (t - 1) % n_arms
    return -1


@helper
def clip_unit(x: float) -> float:
    """``x`` clipped to [0, 1] (rewards of the policies that assume [0, 1] rewards)."""
    return min(max(x, 0.0), 1.0)
