"""Linear projection of an arm's last h rewards to a target round, in O(1).

R-ed-UCB (Metelli et al., ICML 2022) projects each of the last h rewards along the slope over
h pulls to the current round t; R-UCBE (Mussi et al., ICML 2024) projects to the budget T. Both
read the prefix sums of a weighted :class:`~risingbandits.policies.machinery.windows.ArmHistory`,
passed as its two arrays (handing the history tuple down two levels of helpers halved R-ed-UCB's
compiled step rate: Numba then keeps reference counting in the step loop).
"""

from __future__ import annotations

import numpy as np

from risingbandits._jit import helper


@helper
def projected_mean(
    prefix: np.ndarray, wprefix: np.ndarray, arm: int, n: int, h: int, target: float
) -> float:
    """(1/h) sum_{l=n-h+1..n} [X(l) + (target - l)(X(l) - X(l-h))/h] for a window 1 <= h <= n,
    with ``prefix`` / ``wprefix`` the prefix sums of X(l) and l X(l) over the arm's n pulls.

    Closed form A/h + [target (A - B) - C + D + h B]/h^2, with A, C the sums of X(l), l X(l)
    over the last h pulls and B, D those over the h pulls before (pulls before the first count
    as reward 0).
    """
    mid, low = n - h, max(n - 2 * h, 0)
    a = prefix[arm, n] - prefix[arm, mid]
    b = prefix[arm, mid] - prefix[arm, low]
    c = wprefix[arm, n] - wprefix[arm, mid]
    d = wprefix[arm, mid] - wprefix[arm, low]
    hf = float(h)
    return a / hf + (target * (a - b) - c + d + hf * b) / (hf * hf)
