"""Least-squares line through an arm's rewards over a window of its own pulls, in O(1).

Shared by TI-UCB and R-ed-AE (both reconstructions fit X(l) ~ a + b l against the pull index l;
TI-UCB evaluates the line with :func:`line_predict`).
The sums of X(l) and l X(l) come from a weighted :class:`ArmHistory`; those of l and l^2 over
consecutive integers are closed forms.
"""

from __future__ import annotations

from risingbandits._jit import helper
from risingbandits.policies.machinery.windows import ArmHistory, weighted_window_sum, window_sum


@helper
def line_fit(hist: ArmHistory, arm: int, lo: int, hi: int) -> tuple[float, float, float, float]:
    """OLS fit over the pulls lo < l <= hi (at least 2): (mean reward, slope, mean l, S_ll).

    The fitted value at pull x is ``mean + slope * (x - mean_l)``; ``S_ll`` = sum (l - mean_l)^2.
    """
    m = float(hi - lo)
    mean_l = 0.5 * (lo + hi + 1)
    s_ll = m * (m * m - 1.0) / 12.0
    s_y = window_sum(hist, arm, lo, hi)
    s_ly = weighted_window_sum(hist, arm, lo, hi) - mean_l * s_y
    return s_y / m, s_ly / s_ll, mean_l, s_ll


@helper
def line_predict(hist: ArmHistory, arm: int, lo: int, hi: int, x: float) -> float:
    """The OLS line over the pulls lo < l <= hi (at least 2), evaluated at pull ``x``."""
    mean, slope, mean_l, _ = line_fit(hist, arm, lo, hi)
    return mean + slope * (x - mean_l)
