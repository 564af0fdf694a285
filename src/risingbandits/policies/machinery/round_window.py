"""A window over the last tau *global rounds*: per-arm counts and reward sums in O(1) per push.

Used by the sliding-window policies (SW-UCB, SW-KL-UCB, SW-TS) and by ET-SWGTS with
``window="rounds"``. At the decision for round t the window holds the completed rounds
max(1, t - tau) .. t - 1 (nonstationary-baselines.md section 1); an arm pulled in none of them
has count 0. Windows over an arm's own last pulls live in
:mod:`risingbandits.policies.machinery.windows`.

API (compiled helpers, callable from kernels):

* :func:`new_round_window` (Python) builds an empty window;
* :func:`window_push` records the round just played and evicts the round that left the window;
* :func:`window_rounds` is the number of rounds in the window, min(rounds pushed, tau);
* ``win.counts[i]`` and ``win.sums[i]`` are arm i's pulls and reward sum in the window.

Sums are kept by adding the new reward and subtracting the evicted one (float drift of order
1e-12 over 10^5 rounds with O(1) rewards; exact for integer rewards).

When a run changes size (:mod:`~risingbandits.policies.machinery.transplant`), a window of another
length is rebuilt from the old one's rounds in time order, and a removed arm's rounds stay in the
window as rounds that happened but count for no arm (slot value -1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.machinery.transplant import ArmPlan, carry_fields, register_transplant


class RoundWindow(NamedTuple):
    """Ring buffer of the last ``tau`` rounds (``tau = arms.shape[0]``) and per-arm window stats.

    ``arms[j]`` / ``rewards[j]`` hold the round pushed at position j (arm -1: slot never used);
    ``pushes[0]`` counts the rounds pushed so far.
    """

    arms: np.ndarray
    rewards: np.ndarray
    counts: np.ndarray
    sums: np.ndarray
    pushes: np.ndarray


def new_round_window(n_arms: int, tau: int) -> RoundWindow:
    """Empty window of the last ``tau`` >= 1 rounds over ``n_arms`` arms.

    A window at least as long as the run never evicts, so a policy may pass min(tau, T).
    """
    if tau < 1:
        raise ValueError(f"tau={tau!r} is not allowed: use an integer >= 1")
    return RoundWindow(
        np.full(tau, -1, np.int64),
        np.zeros(tau),
        np.zeros(n_arms, np.int64),
        np.zeros(n_arms),
        np.zeros(1, np.int64),
    )


@helper
def window_push(win: RoundWindow, arm: int, reward: float) -> int:
    """Record (arm, reward) as the newest round; returns the evicted round's arm, or -1."""
    j = win.pushes[0] % win.arms.shape[0]
    old = win.arms[j]
    if old >= 0:
        win.counts[old] -= 1
        win.sums[old] -= win.rewards[j]
    win.arms[j] = arm
    win.rewards[j] = reward
    win.counts[arm] += 1
    win.sums[arm] += reward
    win.pushes[0] += 1
    return old


@helper
def window_rounds(win: RoundWindow) -> int:
    """Rounds currently in the window: min(rounds pushed, tau)."""
    return min(win.pushes[0], win.arms.shape[0])


def _carry_window(fresh: RoundWindow, old: RoundWindow, plan: ArmPlan) -> RoundWindow:
    """Transplant rule: the newest min(rounds, tau') rounds of ``old``, arms renumbered."""
    if fresh.arms.shape[0] == old.arms.shape[0]:
        win = carry_fields(fresh, old, plan)
        slots = win.arms >= 0
        win.arms[slots] = plan.renumber[win.arms[slots]]
        return win
    pushes = int(old.pushes[0])
    fresh.pushes[0] = pushes
    for back in range(min(pushes, old.arms.shape[0], fresh.arms.shape[0]), 0, -1):
        src, dst = (pushes - back) % old.arms.shape[0], (pushes - back) % fresh.arms.shape[0]
        arm = old.arms[src]
        arm = plan.renumber[arm] if arm >= 0 else -1
        fresh.arms[dst], fresh.rewards[dst] = arm, old.rewards[src]
        if arm >= 0:
            fresh.counts[arm] += 1
            fresh.sums[arm] += old.rewards[src]
    return fresh


register_transplant(RoundWindow, _carry_window)
