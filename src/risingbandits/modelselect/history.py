"""What a model selector was told: every score in order, with its metrics, and per candidate
its steps, its last score and its recent scores on the policy's scale (the fantasy scores of
:mod:`~risingbandits.modelselect.pending`).

Scores are kept as columns (candidate, raw score) and metrics by step, so that a checkpoint
writes them without rebuilding rows.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from risingbandits.modelselect.pending import FANTASY_WINDOW
from risingbandits.modelselect.scores import UNIT, json_values, rescale
from risingbandits.policies.machinery.checkpoint import integer, refuse


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
        cls, data: Any, n_candidates: int, given: tuple[float, float] | None
    ) -> ScoreHistory:
        """Inverse of :meth:`state`, checked (a checkpoint's ``history``): candidate indices,
        one score each in the score range ``given`` (None: [0, 1]), metrics by step."""
        if not isinstance(data, Mapping) or not {"arms", "scores", "metrics"} <= set(data):
            raise refuse("history", data, "use {arms, scores, metrics}")
        last = n_candidates - 1
        allowed = f"use candidate indices in 0..{last}"
        arms = _column("history.arms", data["arms"], "i", 0, last, allowed).astype(np.int64)
        low, high = given or UNIT
        allowed = f"use one number in [{low:g}, {high:g}] (the score range) per step"
        scores = _column("history.scores", data["scores"], "if", low, high, allowed)
        if scores.size != arms.size:
            raise refuse("history.scores", f"{scores.size} scores", allowed)
        out = cls(n_candidates)
        out.arms = arms.tolist()
        out.scores = scores.astype(float).tolist()
        out.metrics = _restore_metrics(data["metrics"], arms.size)
        out.pulls = np.bincount(arms, minlength=n_candidates).tolist()
        for c in range(n_candidates):
            steps = np.flatnonzero(arms == c)[-FANTASY_WINDOW:]
            out.recent[c].extend(rescale(out.scores[s], given) for s in steps)
            if steps.size:
                out.last[c] = out.scores[steps[-1]]
        return out


def _column(
    field: str, values: Any, kinds: str, low: float, high: float, allowed: str
) -> np.ndarray:
    """A checkpoint's list of numbers as an array, refused unless its values are numbers of
    the dtype ``kinds`` (never bools, strings or nested lists) in [low, high] (NaN is not)."""
    try:
        column = np.asarray(values) if isinstance(values, list) else None
    except ValueError:  # ragged nesting
        column = None
    if (
        column is None
        or column.ndim != 1
        or (column.size and column.dtype.kind not in kinds)
        or not np.all((column >= low) & (column <= high))
    ):
        raise refuse(field, values, allowed)
    return column


def _restore_metrics(data: Any, steps: int) -> dict[int, dict[str, Any]]:
    """A checkpoint's ``history.metrics``: ``[step, {name: value}]`` for steps in 0..steps-1."""
    out: dict[int, dict[str, Any]] = {}
    if not isinstance(data, list):
        raise refuse("history.metrics", data, "use a list of [step, metrics] pairs")
    for pair in data:
        metrics = None
        if (
            isinstance(pair, list)
            and len(pair) == 2
            and integer(pair[0])
            and 0 <= pair[0] < steps
            and pair[0] not in out
            and isinstance(pair[1], Mapping)
            and all(isinstance(k, str) for k in pair[1])
        ):
            metrics = json_values(pair[1])
        if metrics is None:
            raise refuse(
                "history.metrics",
                pair,
                f"use [step, {{name: value}}] with a step in 0..{steps - 1}, once each, and "
                "JSON values (finite numbers, strings, lists, mappings)",
            )
        out[int(pair[0])] = metrics
    return out
