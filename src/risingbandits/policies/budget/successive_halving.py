"""Successive Halving (Karnin, Koren, Somekh, ICML 2013; Jamieson & Talwalkar, AISTATS 2016,
Algorithm 1), as specified in ../shared/specs/budget-baselines.md."""

from __future__ import annotations

import math

from risingbandits.policies.base import Param
from risingbandits.policies.budget.phases import PhasePolicy, Schedule

AUTO_FRACTION = 0.25
"""``w = "auto"``: the statistic is the mean of the last max(1, floor(n / 4)) rewards."""


def halving_schedule(n_arms: int, horizon: int, eta: int) -> Schedule:
    """R = ceil(log_eta K) rounds; round r gives each of the |S_r| survivors
    max(1, floor(T / (|S_r| R))) more pulls, then keeps ceil(|S_r| / eta) of them.

    The rounds use at most T pulls (the survivor gets the rest) except when T < |S_r| R, where
    one pull per survivor and round replaces zero and the budget ends inside a round.
    """
    rounds = 0
    while eta**rounds < n_arms:
        rounds += 1
    targets, keep = [], []
    size, pulls = n_arms, 0
    for _ in range(rounds):
        pulls += max(1, horizon // (size * rounds))
        size = math.ceil(size / eta)
        targets.append(pulls)
        keep.append(size)
    return targets, keep


class SuccessiveHalving(PhasePolicy):
    """Successive Halving: rounds of equal budget, each keeping the best 1/eta of the arms.

    Papers: Karnin, Koren, Somekh, "Almost Optimal Exploration in Multi-Armed Bandits", ICML
    2013 (Sequential Halving); Jamieson & Talwalkar, "Non-stochastic Best Arm Identification and
    Hyperparameter Optimization", AISTATS 2016, Algorithm 1. R = ceil(log_eta K) rounds; in
    round r each of the |S_r| survivors gets floor(T / (|S_r| R)) more pulls in round robin,
    then the top ceil(|S_r| / eta) by the statistic survive (scikit-learn's rule; the Hyperband
    paper uses floor) (:func:`halving_schedule`). Uses T.

    Parameters:
      eta: reduction factor, an integer >= 2; 2 (Karnin et al.), 3 (scikit-learn's
        HalvingRandomSearchCV) and 4 (Optuna's SuccessiveHalvingPruner) are the usual values.
      w: the statistic is the mean of the arm's last w rewards (all of them if it has fewer);
        "auto" (default): w = max(1, floor(n / 4)) for an arm with n pulls, the last quarter
        of its pulls (the window fraction of R-SR and R-UCBE). A fixed w is a number of pulls
        whatever the budget; the last reward alone (w = 1) is fragile with noisy rewards.

    Choices: survival ties at random (the run's generator); the rounding remainder goes to the
    survivor, which is also what ``select`` returns after the last round; a round gives at
    least one pull per survivor (matters only for T < K R); the round robin within a round is
    in index order. Recommendation: the survivor; before the end, the surviving arm with the
    best statistic.
    """

    name = "successive-halving"
    summary = "Successive Halving: ceil(log_eta K) equal-budget rounds, keep the top 1/eta"
    paper = (
        "Karnin, Koren, Somekh 2013 (ICML), Sequential Halving; Jamieson & Talwalkar 2016 "
        "(AISTATS), Algorithm 1"
    )
    params_spec = (
        Param("eta", 2, "reduction factor: keep ceil(|S| / eta) arms per round", kind=int, low=2),
        Param(
            "w",
            "auto",
            "statistic window: the last w rewards; auto = max(1, floor(n/4))",
            kind=int,
            low=1,
            special=("auto",),
        ),
    )

    def schedule(self, n_arms: int, horizon: int) -> Schedule:
        return halving_schedule(n_arms, horizon, int(self._params["eta"]))

    def window(self) -> tuple[float, int]:
        w = self._params["w"]
        return (AUTO_FRACTION, 1) if w == "auto" else (0.0, int(w))
