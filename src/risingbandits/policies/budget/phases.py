"""Phase machinery shared by the fixed-budget elimination methods (Successive Halving,
Successive Rejects, R-SR): a schedule of phases, a round robin over the surviving arms, and
eliminations by a statistic of each arm's recent rewards.

A schedule is two integer arrays of the same length P (built once, in Python, from K and T):
``targets[p]``, the pulls every surviving arm has by the end of phase p (cumulative), and
``keep[p]``, how many arms survive phase p. Within a phase the next pull goes to the surviving
arm with the fewest pulls (ties at random or to the lowest index), so every survivor reaches
``targets[p]``; then the arms with the lowest statistic are rejected (ties at random) until
``keep[p]`` are left. A phase whose target is already reached ends at once. After the last phase
the survivor gets every remaining pull (the rounding remainder of the schedule).

The statistic of arm i with n pulls is the mean of its last h rewards, with
h = min(n, max(min_window, floor(eps n))), and 0 while h = 0: eps = 1 is the mean of all
rewards (Successive Rejects), eps < 1 with min_window 0 is R-SR's window (Mussi et al. 2024),
eps = 0 with min_window w the last w rewards (Successive Halving's fixed window).
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import Policy
from risingbandits.policies.common import best_active, lowest_active, show_active
from risingbandits.policies.kernel import register_kernel
from risingbandits.policies.windows import (
    ArmHistory,
    floor_fraction,
    history_push,
    new_history,
    window_sum,
)


class PhaseState(NamedTuple):
    hist: ArmHistory
    active: np.ndarray  # bool per arm: still a candidate
    values: np.ndarray  # each arm's statistic after its last pull
    targets: np.ndarray  # P: cumulative pulls per survivor at the end of each phase
    keep: np.ndarray  # P: survivors after each phase
    phase: np.ndarray  # [p]: the current phase (P once the schedule is done)
    scores: np.ndarray
    terms: np.ndarray  # K x 2: statistic, 0 (active) or -inf (rejected)
    eps: float
    min_window: int
    tie_first: bool  # pull order within a phase: lowest index first, else random


def new_phase_state(
    n_arms: int,
    horizon: int,
    targets: list[int],
    keep: list[int],
    eps: float,
    min_window: int,
    tie_first: bool,
) -> PhaseState:
    """A fresh run over ``n_arms`` arms with the schedule (``targets``, ``keep``)."""
    return PhaseState(
        new_history(n_arms, horizon),
        np.ones(n_arms, np.bool_),
        np.zeros(n_arms),
        np.asarray(targets, np.int64),
        np.asarray(keep, np.int64),
        np.zeros(1, np.int64),
        np.zeros(n_arms),
        np.zeros((n_arms, 2)),
        float(eps),
        int(min_window),
        bool(tie_first),
    )


@helper
def recent_mean(hist: ArmHistory, arm: int, eps: float, min_window: int) -> float:
    """Mean of the arm's last h = min(n, max(min_window, floor(eps n))) rewards; 0 if h = 0."""
    n = hist.counts[arm]
    h = min(n, max(min_window, floor_fraction(n, eps)))
    if h == 0:
        return 0.0
    return window_sum(hist, arm, n - h, n) / h


@helper
def _phase_done(state: PhaseState, target: int) -> bool:
    for i in range(state.active.shape[0]):
        if state.active[i] and state.hist.counts[i] < target:
            return False
    return True


@helper
def _reject_down_to(state: PhaseState, survivors: int, rng: np.ndarray) -> None:
    alive = 0
    for i in range(state.active.shape[0]):
        if state.active[i]:
            alive += 1
    while alive > survivors:
        state.active[lowest_active(state.active, state.values, rng, False)] = False
        alive -= 1


def _select(state: PhaseState, t: int, rng: np.ndarray) -> int:
    show_active(state.scores, state.terms, state.active, state.values)
    return lowest_active(state.active, state.hist.counts, rng, state.tie_first)


def _update(state: PhaseState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    hist = state.hist
    history_push(hist, arm, reward)
    state.values[arm] = recent_mean(hist, arm, state.eps, state.min_window)
    p = state.phase[0]
    # Within a phase the pulled arm had the fewest pulls: the phase can only end when it
    # reaches the target, so the O(K) check runs once per arm and phase.
    if p >= state.targets.shape[0] or hist.counts[arm] < state.targets[p]:
        return
    while p < state.targets.shape[0] and _phase_done(state, state.targets[p]):
        _reject_down_to(state, state.keep[p], rng)
        p += 1
    state.phase[0] = p


def _recommend(state: PhaseState, counts: np.ndarray, last: np.ndarray) -> int:
    return best_active(state.active, state.values)


register_kernel(PhaseState, _select, _update, _recommend)


Schedule = tuple[list[int], list[int]]
"""(targets, keep): cumulative pulls per survivor and survivors after each phase."""


class PhasePolicy(Policy):
    """Base of the phase-based fixed-budget methods: a schedule from (K, T) and a statistic
    window; subclasses give :meth:`schedule` and :meth:`window`. They all use the horizon."""

    trace_terms = ("statistic", "eliminated")
    random_order: ClassVar[bool] = False
    """Pull order within a phase: ties of the fewest-pulls rule at random (else lowest index)."""

    @property
    def uses_horizon(self) -> bool:
        return True

    def schedule(self, n_arms: int, horizon: int) -> Schedule:
        """(targets, keep) of a run over ``n_arms`` arms with budget ``horizon``."""
        raise NotImplementedError

    def window(self) -> tuple[float, int]:
        """(eps, min_window) of the statistic (:func:`recent_mean`)."""
        raise NotImplementedError

    def init_state(self, n_arms: int, horizon: int, noise_proxy: float | None = None) -> Any:
        targets, keep = self.schedule(n_arms, horizon)
        eps, min_window = self.window()
        return new_phase_state(
            n_arms, horizon, targets, keep, eps, min_window, not self.random_order
        )
