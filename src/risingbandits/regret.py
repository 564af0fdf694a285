"""Oracle and policy regret from the mean table (paper Prop. 3.2; DECISIONS.md row 2).

The optimal policy for a horizon T plays one fixed arm all along, so
V*(T) = max_i sum_{n <= T} mu_i(n), computed for every T at once with cumulative sums. The
policy regret of a run depends only on how often each arm was pulled (rested rewards):
Reg(T) = V*(T) - sum_i sum_{n <= N_i(T)} mu_i(n).

The final-model gap judges what is deployed at the end instead of what was collected on the
way: gap(T) = max_i mu_i(T) - mu_rec(N_rec(T)), how far the recommended arm, trained with the
N_rec pulls it got, is from the best arm trained with the whole budget T (issue "the model you
deploy"; mu(0) = 0 for an arm never pulled). When the instance has test curves (scores on data
the policy never saw: live-v1, lcdb-v1), the gap is judged on them instead:
max_i test_i(T) - test_rec(N_rec(T)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# Cumulative sums of float means differ in the last bits; values this close count as a tie,
# which goes to the lowest arm index (so the intro switch is exactly at T = 16,000).
_REL_TIE = 1e-12


@dataclass(frozen=True)
class Switch:
    """At horizon ``horizon`` the best fixed arm changes from ``before`` to ``after``."""

    horizon: int
    before: int
    after: int


class Oracle:
    """Best fixed arm and optimal value V*(T) for every horizon T = 0..T_max."""

    def __init__(self, means: np.ndarray, test_means: np.ndarray | None = None) -> None:
        n_arms, t_max = means.shape
        self.means = means
        """The mean table the oracle was built from (read-only)."""
        self.judged = means if test_means is None else test_means
        """The table the final-model gap is judged on: the test curves, else the means."""
        cumulative = np.zeros((n_arms, t_max + 1))
        np.cumsum(means, axis=1, out=cumulative[:, 1:])
        cumulative.setflags(write=False)
        self.cumulative = cumulative
        """``cumulative[i, n]`` = expected reward of the first n pulls of arm i."""
        top = cumulative.max(axis=0)
        near = cumulative >= top - _REL_TIE * np.maximum(1.0, np.abs(top))
        best = np.argmax(near, axis=0)  # first arm within the tie tolerance
        best.setflags(write=False)
        top.setflags(write=False)
        self._value = top
        self._best = best

    @property
    def max_horizon(self) -> int:
        return int(self.cumulative.shape[1] - 1)

    def _check(self, horizon: int) -> int:
        if not 0 <= horizon <= self.max_horizon:
            raise ValueError(
                f"horizon={horizon} is not allowed: this instance's table covers T = 1.."
                f"{self.max_horizon}"
            )
        return int(horizon)

    def value(self, horizon: int) -> float:
        """V*(T): expected reward of the best fixed arm over T pulls."""
        return float(self._value[self._check(horizon)])

    def best_arm(self, horizon: int) -> int:
        """The best fixed arm for horizon T (ties to the lowest index)."""
        return int(self._best[self._check(horizon)])

    @property
    def values(self) -> np.ndarray:
        """V*(T) for T = 0..T_max (read-only)."""
        return self._value

    @property
    def best_arms(self) -> np.ndarray:
        """Best fixed arm for T = 0..T_max (entry 0 is arm 0 by convention; read-only)."""
        return self._best

    def switching_horizons(self) -> list[Switch]:
        """Every horizon T >= 2 at which the best fixed arm differs from the one at T - 1."""
        b = self._best[1:]
        where = np.flatnonzero(b[1:] != b[:-1]) + 2
        return [Switch(int(t), int(self._best[t - 1]), int(self._best[t])) for t in where]

    def collected(self, pulls: np.ndarray) -> np.ndarray:
        """Expected reward collected with pull counts ``pulls`` (shape (..., K))."""
        pulls = np.asarray(pulls, dtype=np.int64)
        arms = np.arange(self.cumulative.shape[0])
        return self.cumulative[arms, pulls].sum(axis=-1)

    def final_gap(self, pulls: npt.ArrayLike, recommended: npt.ArrayLike) -> np.ndarray:
        """Final-model gap of runs with pull counts ``pulls`` (shape (..., K)) that recommend
        ``recommended`` (shape (...)): max_i mu_i(T) - mu_rec(N_rec), T = pulls.sum(), on the
        test curves when the instance has them (:attr:`judged`)."""
        pulls = np.asarray(pulls, dtype=np.int64)
        rec = np.asarray(recommended, dtype=np.int64)
        horizons = pulls.sum(axis=-1)
        if np.any(horizons < 1):
            raise ValueError("final_gap needs runs of at least one pull")
        judged = self.judged
        best = judged[:, horizons - 1].max(axis=0)
        n_rec = np.take_along_axis(pulls, rec[..., None], axis=-1)[..., 0]
        deployed = np.where(n_rec > 0, judged[rec, np.maximum(n_rec, 1) - 1], 0.0)
        return np.asarray(best - deployed, dtype=np.float64)

    def regret(self, pulls: np.ndarray) -> np.ndarray:
        """Policy regret of runs with pull counts ``pulls`` (shape (..., K)); T = pulls.sum()."""
        pulls = np.asarray(pulls, dtype=np.int64)
        horizons = pulls.sum(axis=-1)
        return self._value[horizons] - self.collected(pulls)
