"""Successive Rejects (Audibert & Bubeck, "Best Arm Identification in Multi-Armed Bandits",
COLT 2010), as specified in ../shared/specs/budget-baselines.md."""

from __future__ import annotations

import math
from fractions import Fraction

from risingbandits.policies.budget.phases import PhasePolicy, Schedule


def rejects_schedule(n_arms: int, horizon: int) -> Schedule:
    """Phases k = 1..K-1: n_k = ceil((T - K) / (logbar(K) (K + 1 - k))) cumulative pulls per
    survivor, logbar(K) = 1/2 + sum_{i=2..K} 1/i, then one arm rejected (K - k survive).

    Exact rational arithmetic (no rounding at integer ratios). n_k is at least 1: the formula
    gives n_k <= 0 only when T <= K, and one pull per arm then spends the budget on a first look
    at each arm instead of rejecting arms never seen.
    """
    logbar = Fraction(1, 2) + sum(Fraction(1, i) for i in range(2, n_arms + 1))
    targets = [
        max(1, math.ceil(Fraction(horizon - n_arms) / (logbar * (n_arms + 1 - k))))
        for k in range(1, n_arms)
    ]
    return targets, [n_arms - k for k in range(1, n_arms)]


class SuccessiveRejects(PhasePolicy):
    """Successive Rejects: K - 1 phases, each ending with the rejection of the surviving arm
    with the lowest mean of all its rewards.

    Paper: Audibert & Bubeck, "Best Arm Identification in Multi-Armed Bandits", COLT 2010.
    Phase k (k = 1..K-1) pulls every surviving arm until it has
    n_k = ceil((T - K) / (logbar(K) (K + 1 - k))) pulls, logbar(K) = 1/2 + sum_{i=2..K} 1/i
    (:func:`rejects_schedule`); then the survivor with the lowest empirical mean is rejected.
    The phases use at most T pulls; the survivor gets the rest. Uses T; no parameters.

    Choices (the paper leaves them open): within a phase the survivors are pulled in round
    robin, lowest index first (the fewest-pulls rule with deterministic ties; on rested arms the
    order changes nothing at the phase ends); rejection ties at random with the run's generator;
    n_k >= 1 (only matters for T <= K); a phase whose target is already met ends at once.
    Recommendation: the last survivor; before the end, the surviving arm with the highest mean.
    """

    name = "successive-rejects"
    summary = "Successive Rejects: K-1 phases, reject the lowest mean after each"
    paper = "Audibert & Bubeck 2010, Best Arm Identification in Multi-Armed Bandits (COLT)"

    def schedule(self, n_arms: int, horizon: int) -> Schedule:
        return rejects_schedule(n_arms, horizon)

    def window(self) -> tuple[float, int]:
        return 1.0, 0  # h = n: the mean of all rewards
