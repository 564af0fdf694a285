"""What a model selector was told: every score in order, with its metrics, and per candidate
its steps, its last score and its recent scores on the policy's scale (the fantasy scores of
:mod:`~risingbandits.modelselect.pending`).

Scores are kept as columns (candidate, raw score) and metrics by step, so that a checkpoint
writes them without rebuilding rows.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from risingbandits.modelselect.pending import FANTASY_WINDOW


class ScoreHistory:
    """Scores reported (``arms``, ``scores``; ``metrics[step]`` for the steps that had some),
    and per candidate: ``pulls``, ``last`` (NaN before any) and ``recent`` (policy scale)."""

    __slots__ = ("arms", "last", "metrics", "pulls", "recent", "scores")

    def __init__(self, n_candidates: int) -> None:
        self.arms: list[int] = []
        self.scores: list[float] = []
        self.metrics: dict[int, dict[str, Any]] = {}
        self.pulls = [0] * n_candidates
        self.last = [math.nan] * n_candidates
        self.recent = [deque[float](maxlen=FANTASY_WINDOW) for _ in range(n_candidates)]

    def add_candidate(self) -> None:
        self.pulls.append(0)
        self.last.append(math.nan)
        self.recent.append(deque(maxlen=FANTASY_WINDOW))

    def record(self, index: int, raw: float, value: float, extra: dict[str, Any] | None) -> None:
        """Candidate ``index`` scored ``raw`` (``value`` on the policy's scale)."""
        if extra is not None:
            self.metrics[len(self.arms)] = extra
        self.arms.append(index)
        self.scores.append(raw)
        self.pulls[index] += 1
        self.last[index] = raw
        self.recent[index].append(value)

    def rows(self, names: Sequence[str]) -> list[dict[str, Any]]:
        """One dict per score: step (1-based), arm, candidate, score, metrics."""
        return [
            {
                "step": s + 1,
                "arm": i,
                "candidate": names[i],
                "score": x,
                "metrics": self.metrics.get(s, {}),
            }
            for s, (i, x) in enumerate(zip(self.arms, self.scores, strict=True))
        ]

    def summary(self, names: Sequence[str], recommended: int) -> dict[str, Any]:
        """JSON-able: pulls and last score per candidate, the last score of ``recommended``,
        the best last score and its candidate (None before any score)."""
        last = [None if math.isnan(x) else x for x in self.last]
        scored = [i for i, x in enumerate(last) if x is not None]
        best = max(scored, key=lambda i: self.last[i]) if scored else None
        return {
            "pulls": dict(zip(names, self.pulls, strict=True)),
            "last_scores": dict(zip(names, last, strict=True)),
            "recommended": names[recommended],
            "recommended_score": last[recommended],
            "best_candidate": None if best is None else names[best],
            "best_last_score": None if best is None else last[best],
        }

    def state(self) -> dict[str, Any]:
        """JSON-able columns."""
        return {
            "arms": list(self.arms),
            "scores": list(self.scores),
            "metrics": [[s, m] for s, m in self.metrics.items()],
        }

    @classmethod
    def restore(
        cls, data: dict[str, Any], n_candidates: int, scale: Callable[[float], float]
    ) -> ScoreHistory:
        """Inverse of :meth:`state`; ``scale`` maps a raw score to the policy's scale."""
        out = cls(n_candidates)
        out.arms = [int(i) for i in data["arms"]]
        out.scores = [float(x) for x in data["scores"]]
        out.metrics = {int(s): dict(m) for s, m in data["metrics"]}
        arms = np.asarray(out.arms, np.int64)
        out.pulls = np.bincount(arms, minlength=n_candidates).tolist()
        for c in range(n_candidates):
            steps = np.flatnonzero(arms == c)[-FANTASY_WINDOW:]
            out.recent[c].extend(scale(out.scores[s]) for s in steps)
            if steps.size:
                out.last[c] = out.scores[steps[-1]]
        return out
