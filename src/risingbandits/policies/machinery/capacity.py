"""Run states that hold the pulls made, not the whole horizon: a *capacity*, grown by doubling.

A run state holds each arm's rewards in prefix-sum tables (:class:`~risingbandits.policies.
windows.ArmHistory`, K x (C + 1)) and the last rounds in round windows (:class:`~risingbandits.
policies.round_window.RoundWindow`, min(tau, C) slots). The simulator builds them for the whole
horizon (C = T, ``init_state(..., capacity=None)``): it runs every round anyway. An online run
(:class:`~risingbandits.policies.machinery.online.OnlineRun`) does not know how many rounds it will
make (a model selector's budget of 10^11 steps may end after a thousand), so it starts at
:data:`INITIAL_CAPACITY` and, before an update would need more, moves its state into a fresh
one of twice the capacity (:func:`~risingbandits.policies.machinery.transplant.transplant`, which
copies the overlap of every non-arm axis). Memory then follows the pulls made: a history table holds
at most 4x the pulls of the most-pulled arm (plus 64), a round window at most 4x the rounds.

Growth never changes a choice: a kernel only reads the prefix sums of pulls made, and a round
window of C slots with at most C rounds pushed has evicted nothing, as a window of tau would not
have (the transplant rebuilds it in time order, the same additions in the same order).

A piece is *bound* by the capacity when its length equals the capacity and the capacity is below
the horizon: an arm history then limits each arm's pulls, a round window the rounds. A round
window shorter than the capacity (tau reached) and the unused one-slot pieces of ET-SWGTS are
not bound. Capacities are :data:`INITIAL_CAPACITY` times a power of two, at most the horizon.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from risingbandits.policies.machinery.round_window import RoundWindow
from risingbandits.policies.machinery.windows import ArmHistory

INITIAL_CAPACITY = 64
"""Pulls per arm (and rounds) a fresh online run holds: K x 65 floats per history table."""
MAX_HORIZON = 2**53
"""The largest horizon (budget) of a run: rounds and pulls stay exact in the policies'
floating-point formulas up to 2^53."""


def held(horizon: int, capacity: int | None) -> int:
    """Pulls per arm a state built for ``horizon`` with ``capacity`` holds (None: the horizon,
    the simulator's whole table)."""
    return int(horizon) if capacity is None else min(int(horizon), int(capacity))


def capacity_for(need: int, horizon: int) -> int:
    """The capacity of a run that must hold ``need`` pulls per arm (or rounds): the smallest
    :data:`INITIAL_CAPACITY` x 2^k that is at least ``2 need``, at most the horizon (so that
    after a growth at least ``need`` more rounds pass before the next check)."""
    capacity = INITIAL_CAPACITY
    while capacity < 2 * need and capacity < horizon:
        capacity *= 2
    return min(capacity, int(horizon))


class Bounds(NamedTuple):
    """What a state's capacity limits: each arm's pulls (an arm history is bound), the rounds
    (a round window is bound)."""

    pulls: bool
    rounds: bool


def bounds(state: Any, capacity: int, horizon: int) -> Bounds:
    """Which of a state's pieces built with ``capacity`` for ``horizon`` are bound by it."""
    if capacity >= horizon:
        return Bounds(False, False)
    found = {"pulls": False, "rounds": False}

    def visit(value: Any) -> None:
        if isinstance(value, ArmHistory):
            found["pulls"] |= value.prefix.shape[1] - 1 == capacity
        elif isinstance(value, RoundWindow):
            found["rounds"] |= value.arms.shape[0] == capacity
        elif isinstance(value, tuple):
            for item in value:
                visit(item)

    visit(state)
    return Bounds(found["pulls"], found["rounds"])


def need(bound: Bounds, pulls: np.ndarray, t: int) -> int:
    """Pulls per arm (or rounds) the state must hold now: the most-pulled arm's pulls if an arm
    history is bound, the rounds if a round window is, else 0."""
    most = int(pulls.max()) if bound.pulls and pulls.size else 0
    return max(most, t if bound.rounds else 0)


def state_bytes(state: Any) -> int:
    """Bytes of a run state's arrays."""
    if isinstance(state, np.ndarray):
        return int(state.nbytes)
    if isinstance(state, tuple):
        return sum(state_bytes(v) for v in state)
    return 0
