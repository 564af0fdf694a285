"""Pulls in flight: training steps a parallel model selector has started and not yet heard of.

The policy accounts for them with a *fantasy* score (the rule of batch Bayesian optimisation's
"kriging believer", Ginsbourger et al. 2010): a pull in flight counts as a pull whose score is
the candidate's current estimate, the mean of its last :data:`FANTASY_WINDOW` scores (with none
yet, the mean of the other candidates' last scores; with none at all, :data:`NEUTRAL`). A rising
candidate's fantasy is flat, so the policy sees less growth left in a candidate that is already
training and spreads the workers, without ever counting a score that did not arrive.
"""

from __future__ import annotations

from collections import deque

FANTASY_WINDOW = 3
"""Recent scores averaged into a fantasy score (a few, so one noisy score does not decide)."""
NEUTRAL = 0.5
"""Fantasy score (on the policy's [0, 1] scale) before any candidate has a score."""


def fantasy_score(recent: list[deque[float]], index: int) -> float:
    """The score a pull in flight of candidate ``index`` is assumed to give, from each
    candidate's recent scores on the policy's scale (``recent``)."""
    own = recent[index]
    if own:
        return sum(own) / len(own)
    others = [d[-1] for d in recent if d]
    return sum(others) / len(others) if others else NEUTRAL


class PullsInFlight:
    """Candidates whose pulls are in flight (``arms``, oldest first, one entry per pull)."""

    __slots__ = ("arms",)

    def __init__(self) -> None:
        self.arms: list[int] = []

    def finish(self, index: int, owner: str) -> None:
        """Match a score of candidate ``index`` to its oldest pull in flight (first in, first
        out) and remove that pull; refused if it has none (``owner`` names the call)."""
        try:
            self.arms.remove(index)
        except ValueError:
            raise ValueError(
                f"{owner} is not allowed: no pull of it is in flight (call select() first)"
            ) from None

    def count(self, index: int) -> int:
        """Pulls of candidate ``index`` in flight."""
        return self.arms.count(index)
