"""ACE-UCB: Affordable Commit-value Estimation, this library's horizon-aware policy.

CURE-UCB's idea kept (Song et al. 2026, Prop. 3.2 and Eq. (index)): with a known budget T, the
best fixed policy commits to one arm, so an arm is worth what committing the remaining
R = T - t + 1 pulls to it would pay per pull, its *commit value*
C_i = (1/R) sum_{k=1..R} mu_i(N_i + k). Its failure modes removed (issue 13; derivation in
``docs/ace-ucb.md``, tuning log in ``docs/ace-ucb-tuning.md``):

* the forecast is bounded by what rewards allow: rising and concave (paper Assumption 3.1)
  curves satisfy mu(N + k) <= level + k slope and rewards are at most ``top`` = 1, so the commit
  value is the mean of min(top, level + k slope) over the remaining pulls (closed form);
* the slope is a concavity bound measured with low noise: a chord between the arm's last w
  rewards and an older window of w (any chord of a concave curve bounds its later slopes),
  chosen among d = w, 2w, ..., N - w as the one with the smallest upper confidence bound;
* the noise level is estimated online (``sigma="estimate"``,
  :mod:`~risingbandits.policies.machinery.noise_level`), not given;
* optimism about growth is *affordable*: an arm gets the slope's confidence width (which,
  multiplied by R, made CURE-UCB's bonus dominate) only when checking that slope is cheap
  compared with what it could gain. Cost: the extra pulls until z SE(slope) falls to the slope
  the arm needs to catch the best point commit value (SE falls like N^-1.5), times its gap to
  it. Benefit: (its optimistic commit value - the best point commit value) x R. Full optimism
  while cost <= eta benefit, none from 2 eta benefit on, linear in between;
* the level gets a UCB bonus c sqrt(2 ln t) sigma / sqrt(w), and arms too young for a chord
  (fewer than 2 w_min pulls) are valued at ``top`` (played first).

Index of arm i with N pulls, window w = max(min(N, w_min), floor(eps N)), level L (mean of the
last w rewards), slope s (chord) with standard error e, lever l = (w + 1)/2:
  P_i = A(L + s+ l, s+)                       point commit value, s+ = max(0, s)
  B_i = A(L + c z sigma/sqrt(w) + g l, g)     the index, g = s+ + phi_i cs z e, z = sqrt(2 ln t)
where A(a, b) = (1/R) sum_{k=0..R-1} min(top, a + b k) and phi_i in [0, 1] the affordability.
Traced terms: level L, expected growth P_i - L, exploration B_i - P_i. Recommendation: the arm
with the highest level. One parameter set for every setting (no presets): eps = 1/2,
w_min = 16, c = 0.7, cs = 0.5, eta = 0.04, chosen on development instances only.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import TIE_BREAK, Param, Policy, sigma_param
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.common import argmax_ties, round_robin, show_forced
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.noise_level import NoiseLevel, noise_observe, noise_sigma
from risingbandits.policies.machinery.trace import finite_point
from risingbandits.policies.machinery.windows import (
    ArmHistory,
    floor_fraction,
    history_push,
    new_history,
    window_sum,
)

CHORD_Z = 2.0
"""Confidence multiplier that picks the chord (the smallest chord + CHORD_Z x its SE)."""

# Columns of AceState.arm, set in _update from the arm's own rewards (POINT in _select)
LEVEL = 0  # mean of the last w rewards
SLOPE = 1  # chord slope
UNIT = 2  # its standard error over sigma (+inf without a chord)
LEVER = 3  # (w + 1) / 2, from the window's centre to the next pull
BONUS = 4  # 1 / sqrt(w)
POINT = 5  # point commit value at the last selection


class AceState(NamedTuple):
    hist: ArmHistory
    scores: np.ndarray
    terms: np.ndarray  # K x 3: level, expected growth, exploration
    arm: np.ndarray  # K x 6: the columns above (one array: kernel.py, speed)
    horizon: int
    eps: float
    w_min: int
    c: float
    cs: float
    eta: float
    top: float
    start: int
    noise: NoiseLevel
    tie_first: bool


@helper
def capped_average(a: float, b: float, r: int, top: float) -> float:
    """Mean of min(top, a + b k) for k = 0..r-1, with b >= 0 (closed form)."""
    value = top
    if a + b * (r - 1) <= top:  # never capped (the common case: no division)
        value = a + b * (r - 1) * 0.5
    elif a < top:
        m = min(r, math.ceil((top - a) / b))  # terms still below the cap
        value = (m * a + b * m * (m - 1) * 0.5 + (r - m) * top) / r
    return value


@helper
def level_window(n: int, eps: float, w_min: int) -> int:
    """w = max(min(N, w_min), floor(eps N))."""
    return max(min(n, w_min), floor_fraction(n, eps))


@helper
def chord_slope(
    prefix: np.ndarray, arm: int, n: int, w: int, recent: float, inv_w: float, sigma: float
) -> tuple[float, float]:
    """(slope, standard error / sigma) of the chord between the mean of the last w rewards (sum
    ``recent``) and that of an older window of w at distance d, the nearest (d = w) or the
    farthest (d = n - w), whichever has the smaller chord + CHORD_Z x SE; (0, +inf) when n < 2 w
    (no chord yet). ``inv_w`` = 1 / w. Written without branches: a branch in ``update`` keeps
    reference counting of the whole state in the step (kernel.py, speed); without a chord the
    reads below n - w wrap around inside the table and their result is dropped."""
    base = math.sqrt(2.0 * inv_w)
    near = (recent - (prefix[arm, n - w] - prefix[arm, n - 2 * w])) * inv_w * inv_w
    inv_d = 1.0 / max(n - w, 1)
    far = (recent - prefix[arm, w]) * inv_w * inv_d  # against the first w pulls
    use_far = far + CHORD_Z * sigma * base * inv_d < near + CHORD_Z * sigma * base * inv_w
    slope = far if use_far else near
    unit = base * (inv_d if use_far else inv_w)
    chord = n >= 2 * w
    return (slope if chord else 0.0), (unit if chord else np.inf)


@helper
def affordability(
    level: float,
    slope: float,
    se: float,
    n: int,
    bar: float,
    remaining: int,
    lever: float,
    level_ucb: float,
    z: float,
    top: float,
    eta: float,
) -> float:
    """phi in [0, 1]: 1 while checking the arm's optimistic slope costs at most eta x what it
    could gain over the best point commit value ``bar``, 0 from twice that (module docstring).

    The cost is (extra pulls) x gap with extra = N ((z SE / need)^(2/3) - 1), need the slope
    that takes the arm to the bar; the two thresholds are tested on cubes, so the root is
    only taken between them. One return (kernel.py, speed)."""
    phi = 1.0
    gap = bar - level
    if gap > 0.0:
        s_top = slope + z * se
        optimistic = capped_average(level_ucb + s_top * lever, s_top, remaining, top)
        allowed = (optimistic - bar) * remaining * eta  # eta x benefit
        phi = 0.0
        if allowed > 0.0:
            inv_gap = 1.0 / gap
            q = allowed * inv_gap / n  # phi = 1 while extra <= N q, 0 from 2 N q
            ratio = z * se * remaining * 0.5 * inv_gap  # z SE / need
            r2 = ratio * ratio
            full = 1.0 + q
            none = full + q
            if r2 <= full * full * full:
                phi = 1.0
            elif r2 < none * none * none:
                phi = 2.0 - (np.cbrt(r2) - 1.0) / q
    return phi


def fresh_arm_stats(n_arms: int) -> np.ndarray:
    """AceState.arm before any pull: no chord (UNIT = +inf), window 1."""
    stats = np.zeros((n_arms, 6))
    stats[:, UNIT] = np.inf
    stats[:, LEVER] = 1.0
    stats[:, BONUS] = 1.0
    return stats


@helper
def ace_index(state: Any, t: int, rng: np.ndarray, active: Any = None, left: Any = None) -> int:
    """The arm to play in round t: the one a forced rule plays (the round-robin start, an arm
    with no pulls yet), else the largest ACE-UCB index (its level, expected growth and
    exploration, kept in ``state.scores`` and ``state.terms``; module docstring). ``state`` is
    an :class:`AceState` or a state with the same fields (HACE-UCB's); ``active`` (a bool per
    arm, or None for every arm) restricts the choice, and the best point commit value, to the
    arms that may be played (the others show -inf; a forced arm outside it is skipped).
    ``left`` (a number per arm, or None) replaces the remaining horizon T - t + 1 by the pulls
    each arm can still make (a budget in cost: the commit value of an arm is what it reaches
    with the time left at its own cost). One function with the choice inside its branch:
    splitting the choice out cost 18% of ACE-UCB's step rate."""
    n_arms = state.scores.shape[0]
    arm = round_robin(t, n_arms, state.start)
    if arm >= 0 and active is not None and not active[arm]:
        arm = -1
    for i in range(n_arms):  # an arm added to a running selector is played first
        if arm < 0 and state.hist.counts[i] == 0 and (active is None or active[i]):
            arm = i
    if arm >= 0:
        show_forced(state.scores, state.terms, arm)
    else:
        sigma = noise_sigma(state.noise)
        remaining = state.horizon - t + 1
        z = math.sqrt(2.0 * math.log(t))
        bar = -np.inf
        for i in range(n_arms):
            if left is not None:
                remaining = max(1, int(left[i]))
            level = state.arm[i, LEVEL]
            point = level
            if state.arm[i, UNIT] < np.inf:
                s_up = max(0.0, state.arm[i, SLOPE])
                point = capped_average(
                    level + s_up * state.arm[i, LEVER], s_up, remaining, state.top
                )
            state.arm[i, POINT] = point
            if active is None or active[i]:
                bar = max(bar, point)
        for i in range(n_arms):
            if left is not None:
                remaining = max(1, int(left[i]))
            value = state.top  # too young for a chord: played first
            if state.arm[i, UNIT] < np.inf:
                se = sigma * state.arm[i, UNIT]
                level_ucb = state.arm[i, LEVEL] + state.c * z * sigma * state.arm[i, BONUS]
                phi = affordability(
                    state.arm[i, LEVEL],
                    state.arm[i, SLOPE],
                    se,
                    state.hist.counts[i],
                    bar,
                    remaining,
                    state.arm[i, LEVER],
                    level_ucb,
                    z,
                    state.top,
                    state.eta,
                )
                growth = max(0.0, state.arm[i, SLOPE]) + phi * state.cs * z * se
                value = capped_average(
                    level_ucb + growth * state.arm[i, LEVER], growth, remaining, state.top
                )
            state.terms[i, 0] = state.arm[i, LEVEL]
            state.terms[i, 1] = state.arm[i, POINT] - state.arm[i, LEVEL]
            state.terms[i, 2] = value - state.arm[i, POINT]
            state.scores[i] = state.terms[i, 0] + state.terms[i, 1] + state.terms[i, 2]
            if active is not None and not active[i]:
                state.terms[i, 0], state.terms[i, 1], state.terms[i, 2] = -np.inf, 0.0, 0.0
                state.scores[i] = -np.inf
        arm = argmax_ties(state.scores, rng, state.tie_first)
    return arm


def _select(state: AceState, t: int, rng: np.ndarray) -> int:
    return ace_index(state, t, rng)


@helper
def ace_observe(state: Any, arm: int, reward: float) -> None:
    """Record ``reward`` as the arm's next pull and update its level, chord slope and their
    widths (``state`` as in :func:`ace_index`)."""
    history_push(state.hist, arm, reward)
    noise_observe(state.noise, state.hist.prefix, arm, state.hist.counts[arm])
    n = state.hist.counts[arm]
    w = level_window(n, state.eps, state.w_min)
    inv_w = 1.0 / w
    recent = window_sum(state.hist, arm, n - w, n)
    state.arm[arm, LEVEL] = recent * inv_w
    sigma = noise_sigma(state.noise)
    slope, unit = chord_slope(state.hist.prefix, arm, n, w, recent, inv_w, sigma)
    state.arm[arm, SLOPE] = slope
    state.arm[arm, UNIT] = unit
    state.arm[arm, LEVER] = (w + 1) * 0.5
    state.arm[arm, BONUS] = math.sqrt(inv_w)


def _update(state: AceState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    ace_observe(state, arm, reward)


@helper
def highest_level(state: Any, counts: np.ndarray, active: Any = None) -> int:
    """ACE-UCB's recommendation: the pulled arm with the highest level (ties to the lowest
    index; arm 0 before any pull), among the ``active`` ones when a mask is given (as in
    :func:`ace_index`)."""
    best = -1
    for i in range(counts.shape[0]):
        if (
            counts[i] > 0
            and (active is None or active[i])
            and (best < 0 or state.arm[i, LEVEL] > state.arm[best, LEVEL])
        ):
            best = i
    return max(best, 0)


def _recommend(state: AceState, counts: np.ndarray, last: np.ndarray) -> int:
    return highest_level(state, counts)


register_kernel(AceState, _select, _update, _recommend)


class AceUCB(Policy):
    """ACE-UCB: UCB on the affordable, capped commit value of each arm (uses T).

    This library's policy (issue 13), built on CURE-UCB (Song et al. 2026): an arm is valued by
    the mean reward of committing the rest of the budget to it, forecast from a concavity chord
    of its own curve, capped at ``top``, with a UCB bonus on its level and optimism about its
    growth only when that optimism can be checked at a cost worth paying. Derivation and every
    term: module docstring and ``docs/ace-ucb.md``.

    Parameters (one set for every setting, tuned on development instances only,
    ``docs/ace-ucb-tuning.md``):
      eps: level window fraction, w = max(min(N, w_min), floor(eps N)); 1/2.
      w_min: smallest window; an arm is valued at ``top`` (played) until it has 2 w_min pulls.
      c: level bonus c sqrt(2 ln t) sigma / sqrt(w); 0.7.
      cs: growth optimism cs sqrt(2 ln t) SE(slope), scaled by the affordability; 0.5.
      eta: affordability, the share of an arm's possible gain its check may cost; 0.04.
      top: the largest mean reward (rewards in [0, 1]: 1).
      start: round-robin pulls per arm first; 3.
      sigma: "estimate" (online, default), "auto" or a number.
      tie_break: "random" or "first".
    Choices: chords use windows of w on both ends and distances doubling from w; the chord is
    picked with 2 x its SE; growth below 0 counts as 0 (rising arms); the affordability's bar is
    the best level or point commit value of any arm; the recommendation is the highest level
    (mean of the last w rewards).
    """

    name = "ace-ucb"
    summary = "ACE-UCB: UCB on the capped commit value, affordable growth optimism (uses T)"
    paper = "risingbandits (this library), after Song et al. 2026; docs/ace-ucb.md"
    trace_terms = ("level", "expected growth", "exploration")
    params_spec: ClassVar[tuple[Param, ...]] = (
        Param("eps", 0.5, "level window fraction", low=0.0, high=1.0, low_open=True),
        Param("w_min", 16, "smallest level window", kind=int, low=1),
        Param("c", 0.7, "level bonus multiplier", low=0.0),
        Param("cs", 0.5, "growth optimism multiplier", low=0.0),
        Param("eta", 0.04, "affordability: cost share of the possible gain", low=0.0),
        Param("top", 1.0, "the largest mean reward", low=0.0, low_open=True),
        Param("start", 3, "round-robin pulls per arm first", kind=int, low=1),
        sigma_param("noise level of the rewards", default="estimate"),
        TIE_BREAK,
    )

    @property
    def uses_horizon(self) -> bool:
        return True

    def target_point(
        self, pulls: int, t: int, horizon: int, terms: np.ndarray
    ) -> tuple[float, float] | None:
        """The pull N + (T - t + 1)/2 with the point commit value (level + expected growth):
        the mean of the remaining pulls on the capped forecast."""
        return finite_point(pulls + (horizon - t + 1) / 2, terms[0] + terms[1])

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        p = self._params
        noise = self._noise_level(noise_proxy)
        return AceState(
            new_history(n_arms, held(horizon, capacity)),
            np.zeros(n_arms),
            np.zeros((n_arms, 3)),
            fresh_arm_stats(n_arms),
            int(horizon),
            float(p["eps"]),
            int(p["w_min"]),
            float(p["c"]),
            float(p["cs"]),
            float(p["eta"]),
            float(p["top"]),
            int(p["start"]),
            noise,
            p["tie_break"] == "first",
        )
