"""Traces: what a policy ranked the arms by, round by round (Figure 3 of the CURE-UCB paper).

Index policies keep, in their run state, ``scores`` (the value each arm was ranked by in the
last ``select``) and ``terms`` (its named terms, :attr:`Policy.trace_terms`, which add up to it);
the compiled simulator (``simulate(trace=True)``) and the online object (``reset(trace=True)``)
copy both after each recorded ``select``, so a trace shows exactly the numbers the kernel used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
