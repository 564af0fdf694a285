"""Linear projection of an arm's last h rewards to a target round, in O(1).

R-ed-UCB (Metelli et al., ICML 2022) projects each of the last h rewards along the slope over
h pulls to the current round t; R-UCBE (Mussi et al., ICML 2024) projects to the budget T. Both
read the same window sums of a weighted :class:`~risingbandits.policies.windows.ArmHistory`.
"""

from __future__ import annotations

from risingbandits._jit import helper
from risingbandits.policies.windows import ArmHistory, weighted_window_sum, window_sum


@helper
def projected_mean(hist: ArmHistory, arm: int, h: int, target: float) -> float:
    """(1/h) sum_{l=N-h+1..N} [X(l) + (target - l)(X(l) - X(l-h))/h] for window h >= 1.

    Closed form A/h + [target (A - B) - C + D + h B]/h^2, with A, C the sums of X(l), l X(l)
    over the last h pulls and B, D those over the h pulls before (pulls before the first count
    as reward 0).
    """
    n = hist.counts[arm]
    a = window_sum(hist, arm, n - h, n)
    b = window_sum(hist, arm, n - 2 * h, n - h)
    c = weighted_window_sum(hist, arm, n - h, n)
    d = weighted_window_sum(hist, arm, n - 2 * h, n - h)
    hf = float(h)
    return a / hf + (target * (a - b) - c + d + hf * b) / (hf * hf)
