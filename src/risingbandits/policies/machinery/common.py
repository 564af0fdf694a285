"""Shared compiled pieces of policies: argmax with seeded ties, the lowest active arm (round robin
over a set of arms, eliminations), forced round robin (and how it shows in a trace), the largest
entry of an array, [0, 1] clip.

Compiled helpers (see :func:`risingbandits._jit.helper`): they are compiled into the kernels that
call them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from risingbandits._jit import called_helper, helper
from risingbandits.policies.machinery.rng import rng_below


@called_helper
def argmax_ties(values: np.ndarray, rng: np.ndarray, tie_first: bool) -> int:
    """Index of the largest value; ties go uniformly at random (``rng``) or to the lowest index.

    The generator is only used when there is a tie (DECISIONS.md row 3), so deterministic
    instances without ties consume no randomness.
    """
    best = 0
    top = values[0]
    count = 1
    for i in range(1, values.shape[0]):
        v = values[i]
        if v > top:
            top = v
            best = i
            count = 1
        elif v == top:
            count += 1
    if count > 1 and not tie_first:
        pick = rng_below(rng, count)
        for i in range(best, values.shape[0]):
            if values[i] == top:
                if pick == 0:
                    best = i
                pick -= 1
    return best


@called_helper
def lowest_ties(active: np.ndarray, values: np.ndarray) -> tuple[int, int]:
    """(the first active arm with the lowest value, how many active arms share that value);
    (-1, 0) when no arm is active."""
    best = -1
    count = 0
    for i in range(active.shape[0]):
        if active[i]:
            if best < 0 or values[i] < values[best]:
                best = i
                count = 1
            elif values[i] == values[best]:
                count += 1
    return best, count


@called_helper
def nth_tied(active: np.ndarray, values: np.ndarray, first: int, k: int) -> int:
    """The k-th (from 0) active arm whose value equals ``values[first]``, from ``first`` on."""
    for i in range(first, active.shape[0]):
        if active[i] and values[i] == values[first]:
            if k == 0:
                return i
            k -= 1
    return first


@called_helper
def lowest_active(active: np.ndarray, values: np.ndarray, rng: np.ndarray, tie_first: bool) -> int:
    """The active arm with the lowest value (-1 when none is active); ties go uniformly at random
    (``rng``, only drawn on a tie) or to the lowest index.

    With ``values`` = pull counts it is a round robin over the active arms (elimination methods);
    with a statistic, the arm an elimination step rejects. Inside an ``update`` call
    :func:`lowest_ties` and :func:`nth_tied` directly, with the draw at the update's level
    (see :mod:`~risingbandits.policies.budget.phases`).
    """
    best, count = lowest_ties(active, values)
    if count <= 1 or tie_first:
        return best
    return nth_tied(active, values, best, rng_below(rng, count))


@helper
def round_robin(t: int, n_arms: int, pulls_per_arm: int) -> int:
    """Forced start: arm ``(t - 1) mod K`` in the first ``K * pulls_per_arm`` rounds, else -1."""
    if t <= n_arms * pulls_per_arm:
        return (t - 1) % n_arms
    return -1


@called_helper
def show_forced(scores: np.ndarray, terms: np.ndarray, arm: int) -> int:
    """Record a forced choice (round robin) in an index policy's trace view and return ``arm``:
    index +inf for the arm played, -inf for the others, carried by the first term."""
    for i in range(scores.shape[0]):
        value = np.inf if i == arm else -np.inf
        scores[i] = value
        terms[i, 0] = value
        for j in range(1, terms.shape[1]):
            terms[i, j] = 0.0
    return arm


@helper
def show_queue(
    scores: np.ndarray, terms: np.ndarray, arm: int, queued: Any, order: np.ndarray
) -> int:
    """:func:`show_forced`, with the other ``queued`` arms at -``order`` (the least first)
    instead of -inf: a caller whose forced ``arm`` is busy falls back on the next arm of the
    queue (a round robin over survivors), not on the lowest index."""
    show_forced(scores, terms, arm)
    for i in range(scores.shape[0]):
        if i != arm and queued[i]:
            scores[i] = -order[i]
            terms[i, 0] = scores[i]
    return arm


@helper
def set_terms(scores: np.ndarray, terms: np.ndarray, i: int, a: float, b: float) -> None:
    """Arm i's index a + b with its two terms (most index policies: estimate + bonus).

    Call it once per arm, after choosing the values (e.g. ``a, b = np.inf, 0.0`` for an arm to
    play, then the computed ones): two inlined calls in the branches of the arm loop made whole
    step loops 1.5-3x slower (measured on UCB1, SW-UCB, R-ed-UCB)."""
    terms[i, 0] = a
    terms[i, 1] = b
    scores[i] = a + b


@called_helper
def best_active(active: np.ndarray, values: np.ndarray) -> int:
    """The active arm with the highest value (ties to the lowest index): the recommendation of
    elimination methods (their survivor when one arm is left)."""
    best = -1
    for i in range(active.shape[0]):
        if active[i] and (best < 0 or values[i] > values[best]):
            best = i
    return best


@called_helper
def shrunk_best(values: np.ndarray, averaged: np.ndarray, mask: Any, sigma: float) -> int:
    """The arm in ``mask`` with the best value shrunk toward their mean m by its own noise
    (empirical Bayes, a normal prior across arms): m + (x_i - m) tau^2 / (tau^2 + sigma^2 /
    h_i), h_i = ``averaged[i]`` the rewards x_i averages, tau^2 the values' variance less their
    mean noise (at least 1e-12). Ties to the lowest index; -1 if the mask is empty."""
    k, total, squares, noise = 0, 0.0, 0.0, 0.0
    for i in range(values.shape[0]):
        if mask[i]:
            k += 1
            total += values[i]
            squares += values[i] * values[i]
            noise += sigma * sigma / averaged[i]
    if k == 0:
        return -1
    mean = total / k
    tau2 = max(squares / k - mean * mean - noise / k, 1e-12)
    best, top = -1, -np.inf
    for i in range(values.shape[0]):
        if mask[i]:
            value = mean + (values[i] - mean) * tau2 / (tau2 + sigma * sigma / averaged[i])
            if value > top:
                best, top = i, value
    return best


@called_helper
def show_active(
    scores: np.ndarray, terms: np.ndarray, active: np.ndarray, values: np.ndarray
) -> None:
    """An elimination method's trace view: each arm's value (first term) and 0 if it is still
    active or -inf if it was eliminated (second term)."""
    for i in range(scores.shape[0]):
        set_terms(scores, terms, i, values[i], 0.0 if active[i] else -np.inf)


@called_helper
def largest(values: np.ndarray) -> Any:
    """The largest entry of a non-empty 1-D array (``values.max()`` needs Numba's runtime,
    which the simulator's step loop runs without: :func:`risingbandits._jit.runtime_free`)."""
    top = values[0]
    for i in range(1, values.shape[0]):
        top = max(top, values[i])
    return top


@helper
def clip_unit(x: float) -> float:
    """``x`` clipped to [0, 1] (rewards of the policies that assume [0, 1] rewards)."""
    return min(max(x, 0.0), 1.0)
