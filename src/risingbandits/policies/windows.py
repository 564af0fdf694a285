"""Windows over an arm's own pulls, from per-arm prefix sums (O(1) update, O(1) window sum).

Used by the policies that read the last h rewards of an arm (CURE-UCB, R-ed-UCB, the
pull-window of ET-SWGTS). Windows over the last tau *global rounds* live in
:mod:`risingbandits.policies.round_window`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from risingbandits._jit import helper


class ArmHistory(NamedTuple):
    """Pull counts and prefix sums of each arm's rewards.

    ``prefix[i, n]`` is the sum of the first n rewards of arm i (``prefix[i, 0] = 0``).
    """

    counts: np.ndarray
    prefix: np.ndarray


def new_history(n_arms: int, horizon: int) -> ArmHistory:
    """Empty history for ``n_arms`` arms and at most ``horizon`` pulls."""
    return ArmHistory(np.zeros(n_arms, np.int64), np.zeros((n_arms, horizon + 1)))


@helper
def history_push(hist: ArmHistory, arm: int, reward: float) -> None:
    """Append ``reward`` as the next pull of ``arm``."""
    n = hist.counts[arm] + 1
    hist.prefix[arm, n] = hist.prefix[arm, n - 1] + reward
    hist.counts[arm] = n


@helper
def window_sum(hist: ArmHistory, arm: int, lo: int, hi: int) -> float:
    """Sum of X_arm(l) for lo < l <= hi; pulls l <= 0 count as reward 0 (mu(0) = 0)."""
    return hist.prefix[arm, max(hi, 0)] - hist.prefix[arm, max(lo, 0)]


@helper
def fraction_window(n_pulls: int, eps: float) -> int:
    """Window h = max(1, floor(eps * N)) (a 1e-9 guard keeps e.g. 0.29 * 100 at 29)."""
    return max(1, int(eps * n_pulls + 1e-9))
