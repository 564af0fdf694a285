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

Speed (measured with Numba 0.68 on the 2-core VM, K = 5): the update reads no field of the
policy's generator ``rng`` and hands no history tuple to a helper; doing either (or drawing the
rejection tie through :func:`~risingbandits.policies.machinery.common.lowest_active`) halved the
compiled step rate, from about 9-10 M to 5 M steps/s, through reference counting Numba could not
remove. Rejection ties therefore draw from ``ties``, a generator of the state keyed from the
policy's own in round 1.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from risingbandits._jit import called_helper, helper
from risingbandits.policies.base import Policy
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.checkpoint import RunFacts, check_within, register_state_check
from risingbandits.policies.machinery.common import (
    best_active,
    lowest_active,
    lowest_ties,
    nth_tied,
    show_active,
)
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.rng import rng_below, rng_next
from risingbandits.policies.machinery.transplant import ArmPlan, carry_fields, register_transplant
from risingbandits.policies.machinery.windows import (
    ArmHistory,
    floor_fraction,
    history_push,
    new_history,
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
    ties: np.ndarray  # uint64[2]: generator of rejection ties, keyed from rng in round 1
    tie_first: bool  # pull order within a phase: lowest index first, else random


def new_phase_state(
    n_arms: int,
    pulls: int,
    targets: list[int],
    keep: list[int],
    eps: float,
    min_window: int,
    tie_first: bool,
) -> PhaseState:
    """A fresh run over ``n_arms`` arms with the schedule (``targets``, ``keep``), holding
    ``pulls`` pulls of each arm."""
    return PhaseState(
        new_history(n_arms, pulls),
        np.ones(n_arms, np.bool_),
        np.zeros(n_arms),
        np.asarray(targets, np.int64),
        np.asarray(keep, np.int64),
        np.zeros(1, np.int64),
        np.zeros(n_arms),
        np.zeros((n_arms, 2)),
        float(eps),
        int(min_window),
        np.zeros(2, np.uint64),
        bool(tie_first),
    )


@helper
def recent_mean(prefix: np.ndarray, arm: int, n: int, eps: float, min_window: int) -> float:
    """Mean of the last h = min(n, max(min_window, floor(eps n))) of the arm's n rewards (0 if
    h = 0), from the prefix sums ``prefix`` of an :class:`ArmHistory`."""
    h = min(n, max(min_window, floor_fraction(n, eps)))
    if h == 0:
        return 0.0
    return (prefix[arm, n] - prefix[arm, n - h]) / h


def _select(state: PhaseState, t: int, rng: np.ndarray) -> int:
    if t == 1:  # key the generator of rejection ties from the policy's own
        state.ties[0] = rng_next(rng)
        state.ties[1] = 0
    show_active(state.scores, state.terms, state.active, state.values)
    return lowest_active(state.active, state.hist.counts, rng, state.tie_first)


@called_helper
def reject_down_to(active: np.ndarray, values: np.ndarray, keep: int, ties: np.ndarray) -> None:
    """Reject the active arms with the lowest value (ties at random) until ``keep`` are left."""
    alive = 0
    for i in range(active.shape[0]):
        if active[i]:
            alive += 1
    for _ in range(alive - keep):
        worst, tied = lowest_ties(active, values)
        if tied > 1:
            worst = nth_tied(active, values, worst, rng_below(ties, tied))
        active[worst] = False


@helper
def end_phases(state: Any, n: int) -> None:
    """After a pull that gave the pulled arm ``n`` pulls: end every phase whose target all
    survivors reached, rejecting the arms with the lowest statistic down to its ``keep``
    (``state``: a :class:`PhaseState` or a state with its phase fields, HACE-UCB's). Within a
    phase the pulled arm had the fewest pulls: a phase can only end when it reaches the target,
    so the O(K) check runs once per arm and phase."""
    p = state.phase[0]
    if p >= state.targets.shape[0] or n < state.targets[p]:
        return
    active, values = state.active, state.values
    while p < state.targets.shape[0]:
        for i in range(active.shape[0]):
            if active[i] and state.hist.counts[i] < state.targets[p]:
                state.phase[0] = p
                return
        reject_down_to(active, values, state.keep[p], state.ties)
        p += 1
    state.phase[0] = p


def _update(state: PhaseState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    history_push(state.hist, arm, reward)
    n = state.hist.counts[arm]
    state.values[arm] = recent_mean(state.hist.prefix, arm, n, state.eps, state.min_window)
    end_phases(state, n)


def _recommend(state: PhaseState, counts: np.ndarray, last: np.ndarray) -> int:
    return best_active(state.active, state.values)


register_kernel(PhaseState, _select, _update, _recommend)


def schedule_from_fresh(fresh: Any, old: Any, plan: ArmPlan) -> Any:
    """Transplant rule of a state with a phase schedule (a changed budget or set of arms): the
    schedule is a parameter, so it comes from the fresh state, re-derived for the new K and T;
    everything else is carried. The current phase goes on under the new schedule (one already
    complete ends at the next pull of an arm that reached its target; a phase past the new
    schedule's end, e.g. a finished schedule that now has fewer phases, is its end); a new arm
    joins the survivors. When every survivor was removed (a model selector retires the
    candidates that fail), the arms left are all survivors again: the phases go on among them
    (with none active, the policy had no arm to play)."""
    targets, keep = fresh.targets.copy(), fresh.keep.copy()
    state = carry_fields(fresh, old, plan)._replace(targets=targets, keep=keep)
    if "phase" in state._fields:
        state.phase[0] = min(int(state.phase[0]), targets.shape[0])
        if not state.active.any():
            state.active[:] = True
    return state


register_transplant(PhaseState, schedule_from_fresh)


def check_phase(field: str, state: Any, facts: RunFacts) -> None:
    """A saved phase indexes the schedule (P: the schedule is done)."""
    check_within(f"{field}.phase", state.phase, 0, state.targets.shape[0])


register_state_check(PhaseState, check_phase)


Schedule = tuple[list[int], list[int]]
"""(targets, keep): cumulative pulls per survivor and survivors after each phase."""


class PhasePolicy(Policy):
    """Base of the phase-based fixed-budget methods: a schedule from (K, T) and a statistic
    window; subclasses give :meth:`schedule` and :meth:`window`. They all use the horizon."""

    trace_terms = ("statistic", "eliminated")
    trace_kind = "elimination"
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

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        targets, keep = self.schedule(n_arms, horizon)
        eps, min_window = self.window()
        return new_phase_state(
            n_arms, held(horizon, capacity), targets, keep, eps, min_window, not self.random_order
        )
