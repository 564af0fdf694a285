"""R-SR: Successive Rejects for stochastic rising bandits (Mussi, Montenegro, Trovò, Restelli,
Metelli, "Best Arm Identification for Stochastic Rising Bandits", ICML 2024)."""

from __future__ import annotations

from risingbandits.policies.base import Param
from risingbandits.policies.budget.mussi import AUTHORS_EPS, PAPER, authors_presets
from risingbandits.policies.budget.phases import PhasePolicy, Schedule
from risingbandits.policies.budget.successive_rejects import rejects_schedule


class RisingSR(PhasePolicy):
    """R-SR: Successive Rejects judging each arm by where it is now.

    Paper: Mussi, Montenegro, Trovò, Restelli, Metelli, "Best Arm Identification for Stochastic
    Rising Bandits", ICML 2024; read from the authors' code (MontenegroAlessandro/BestArmIdSRB,
    ``agent/agent.py``, class ``SRSrb``). The phases of Successive Rejects
    (:func:`~risingbandits.policies.budget.successive_rejects.rejects_schedule`) with two
    differences: the statistic is the mean of the arm's last h = floor(eps n) rewards (0 while
    h = 0), and within a phase the next pull goes to the surviving arm with the fewest pulls,
    ties at random. Uses T.

    Parameters: eps, the window fraction in (0, 1], 1/4 as in the authors' experiments (every
    preset); eps = 1 judges by the mean of all rewards, as Successive Rejects.
    Choices: rejection ties at random (as the authors' code); n_k >= 1 (matters only for
    T <= K); a phase whose target is already met ends at once (the authors' code would look for
    an arm to pull among none). Recommendation: the last survivor; before the end, the
    surviving arm with the highest windowed mean.
    """

    name = "r-sr"
    summary = "R-SR: Successive Rejects on the mean of each arm's last floor(eps n) rewards"
    paper = f"{PAPER}, R-SR"
    random_order = True
    params_spec = (
        Param(
            "eps",
            AUTHORS_EPS,
            "window fraction: the statistic is the mean of the last floor(eps n) rewards",
            low=0.0,
            high=1.0,
            low_open=True,
        ),
    )
    presets = authors_presets()

    def schedule(self, n_arms: int, horizon: int) -> Schedule:
        return rejects_schedule(n_arms, horizon)

    def window(self) -> tuple[float, int]:
        return float(self._params["eps"]), 0
