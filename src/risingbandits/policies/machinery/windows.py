"""Windows over an arm's own pulls, from per-arm prefix sums (O(1) update, O(1) window sum).

Used by the policies that read the last h rewards of an arm (CURE-UCB, R-ed-UCB, the
pull-window of ET-SWGTS); the optional pull-index-weighted prefix sums give O(1) window sums of
l X(l) (R-ed-UCB's projection, the least-squares fits of TI-UCB and R-ed-AE). Windows over the
last tau *global rounds* live in :mod:`risingbandits.policies.machinery.round_window`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from risingbandits._jit import helper


class ArmHistory(NamedTuple):
    """Pull counts and prefix sums of each arm's rewards.

    ``prefix[i, n]`` is the sum of the first n rewards of arm i (``prefix[i, 0] = 0``);
    ``wprefix[i, n]`` the sum of l X_i(l) over l <= n when the history is weighted, else
    ``wprefix`` has a single column and stays zero.
    """

    counts: np.ndarray
    prefix: np.ndarray
    wprefix: np.ndarray


def new_history(n_arms: int, pulls: int, weighted: bool = False) -> ArmHistory:
    """Empty history for ``n_arms`` arms and at most ``pulls`` pulls of each (the horizon, or
    an online run's capacity: :mod:`~risingbandits.policies.machinery.capacity`; ``weighted``: also
    keep the prefix sums of l X(l))."""
    return ArmHistory(
        np.zeros(n_arms, np.int64),
        np.zeros((n_arms, pulls + 1)),
        np.zeros((n_arms, pulls + 1 if weighted else 1)),
    )


@helper
def history_push(hist: ArmHistory, arm: int, reward: float) -> None:
    """Append ``reward`` as the next pull of ``arm``."""
    n = hist.counts[arm] + 1
    hist.prefix[arm, n] = hist.prefix[arm, n - 1] + reward
    if hist.wprefix.shape[1] > 1:
        hist.wprefix[arm, n] = hist.wprefix[arm, n - 1] + n * reward
    hist.counts[arm] = n


@helper
def window_sum(hist: ArmHistory, arm: int, lo: int, hi: int) -> float:
    """Sum of X_arm(l) for lo < l <= hi; pulls l <= 0 count as reward 0 (mu(0) = 0)."""
    return hist.prefix[arm, max(hi, 0)] - hist.prefix[arm, max(lo, 0)]


@helper
def weighted_window_sum(hist: ArmHistory, arm: int, lo: int, hi: int) -> float:
    """Sum of l X_arm(l) for lo < l <= hi (a weighted history; pulls l <= 0 count as 0)."""
    return hist.wprefix[arm, max(hi, 0)] - hist.wprefix[arm, max(lo, 0)]


@helper
def floor_fraction(n_pulls: int, eps: float) -> int:
    """floor(eps * N), possibly 0 (a 1e-9 guard keeps e.g. 0.29 * 100 at 29)."""
    return int(eps * n_pulls + 1e-9)


@helper
def fraction_window(n_pulls: int, eps: float) -> int:
    """Window h = max(1, floor(eps * N))."""
    return max(1, floor_fraction(n_pulls, eps))
