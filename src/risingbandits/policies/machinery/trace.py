"""Traces: what a policy ranked the arms by, round by round (Figure 3 of the CURE-UCB paper).

Index policies keep, in their run state, ``scores`` (the value each arm was ranked by in the
last ``select``) and ``terms`` (its named terms, :attr:`Policy.trace_terms`, which add up to it);
the compiled simulator (``simulate(trace=True)``) and the online object (``reset(trace=True)``)
copy both after each recorded ``select``, so a trace shows exactly the numbers the kernel used.
How the choice follows from them is the policy's :attr:`Policy.trace_kind`; where its index aims
on an arm's curve, its :meth:`Policy.target_point` (:mod:`risingbandits.explain`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TRACE_KINDS: dict[str, str] = {
    "index": "plays the arm with the largest traced value (ties aside; forced rounds show +inf "
    "for the arm played)",
    "sample": "plays the arm with the largest random draw; terms: posterior mean, sample - mean",
    "probability": "draws the arm from the traced probabilities (one term: the probability)",
    "elimination": "plays one of the arms still active; terms: the arm's statistic, 0 while it "
    "is active and -inf once it is eliminated",
}
"""How a policy's choice follows from its trace (:attr:`Policy.trace_kind`)."""


@dataclass(frozen=True, eq=False)
class Trace:
    """What an index policy ranked the arms by, round by round (``simulate(trace=True)``).

    At each recorded round (``rounds``, 1-based, every ``trace_every``-th select), per seed:
    ``index[s, r, i]``, the value arm i was ranked by, and ``terms[s, r, i, :]``, its named
    terms (``term_names``), which add up to it; ``arms[s, r]`` is the arm played. Forced rounds
    (round robin) show +inf for the arm played and -inf for the others; sampling policies show
    their samples, elimination methods each arm's statistic and -inf once it is eliminated.
    """

    rounds: np.ndarray
    index: np.ndarray
    terms: np.ndarray
    term_names: tuple[str, ...]
    arms: np.ndarray


def finite_point(pull: float, value: float) -> tuple[float, float] | None:
    """``(pull, value)``, or None when the value is not finite (a forced round, an empty window):
    a target point computed from traced terms (:meth:`Policy.target_point`)."""
    return (float(pull), float(value)) if np.isfinite(value) else None
