"""A model selector's trace: what each ``select`` ranked the candidates by.

Each row keeps the round, the candidate started, the active candidates (in the policy's arm
order) and the policy's ``scores`` and ``terms`` for them, read from the state the choice was
made on (the run's own state, or the copy with the pulls in flight applied). A candidate's first
pulls forced after :meth:`~risingbandits.modelselect.ModelSelector.add_candidate` show as the
policies' forced rounds do: +inf for it, -inf for the others. :meth:`SelectionTrace.trace`
lays the rows out over all candidates, NaN where a candidate was not active.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from risingbandits.modelselect.candidates import increasing_indices
from risingbandits.policies.machinery.checkpoint import inflate, integer, refuse
from risingbandits.policies.machinery.online import encode_state
from risingbandits.policies.machinery.trace import Trace


class SelectionTrace:
    """The rows recorded so far (``rows``: round, candidate, active candidates, scores,
    terms)."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, tuple[int, ...], np.ndarray, np.ndarray]] = []

    def record(self, round_: int, candidate: int, slots: list[int], state: Any) -> None:
        """A choice made by the policy on ``state``."""
        self.rows.append((round_, candidate, tuple(slots), state.scores.copy(), state.terms.copy()))

    def record_forced(self, round_: int, candidate: int, slots: list[int], n_terms: int) -> None:
        """A forced first pull of a new candidate."""
        scores = np.where(np.array(slots) == candidate, np.inf, -np.inf)
        terms = np.zeros((len(slots), n_terms))
        terms[:, 0] = scores
        self.rows.append((round_, candidate, tuple(slots), scores, terms))

    def trace(self, n_candidates: int, term_names: tuple[str, ...]) -> Trace:
        """The rows as a one-seed :class:`~risingbandits.policies.machinery.trace.Trace` over all
        ``n_candidates`` candidates (``arms`` holds candidate indices)."""
        n_rows = len(self.rows)
        index = np.full((1, n_rows, n_candidates), np.nan)
        terms = np.full((1, n_rows, n_candidates, len(term_names)), np.nan)
        for r, (_, _, slots, row_scores, row_terms) in enumerate(self.rows):
            index[0, r, list(slots)] = row_scores
            terms[0, r, list(slots)] = row_terms
        return Trace(
            np.array([row[0] for row in self.rows], np.int64),
            index,
            terms,
            term_names,
            np.array([[row[1] for row in self.rows]], np.int32).reshape(1, n_rows),
        )

    def state(self) -> list[Any]:
        """JSON-able rows (arrays as in run-state checkpoints)."""
        return [[r, c, list(s), encode_state(a), encode_state(b)] for r, c, s, a, b in self.rows]

    @classmethod
    def restore(cls, data: Any, n_candidates: int, n_terms: int) -> SelectionTrace:
        """Inverse of :meth:`state`, checked (a checkpoint's ``trace``): rows of a round >= 1,
        a candidate index, the active candidates (increasing indices) and their scores and
        ``n_terms`` terms."""
        if not isinstance(data, list):
            raise refuse("trace", data, "use null or a list of rows")
        out = cls()
        last = n_candidates - 1
        for k, row in enumerate(data):
            field = f"trace[{k}]"
            if not isinstance(row, list) or len(row) != 5:
                raise refuse(field, row, "use [round, candidate, active, scores, terms]")
            r, c, s, a, b = row
            if not integer(r) or r < 1 or not integer(c) or not 0 <= c <= last:
                raise refuse(field, row[:2], f"use a round >= 1 and a candidate in 0..{last}")
            if not increasing_indices(s, n_candidates):
                raise refuse(f"{field}.active", s, f"use increasing candidate indices in 0..{last}")
            size, real = len(s), np.dtype(np.float64)
            out.rows.append(
                (
                    int(r),
                    int(c),
                    tuple(int(i) for i in s),
                    inflate(f"{field}.scores", a, real, (size,)),
                    inflate(f"{field}.terms", b, real, (size, n_terms)),
                )
            )
        return out

    def check_rounds(self, started: int, most: int) -> None:
        """A checkpoint's rows against the ``started`` steps reported or in flight: a row's
        round is the steps started once its ``select`` started one, and only cancels (of at
        most ``most`` pulls in flight) take steps back, so each round is at most one past the
        one before (0 before the first) and at most ``most`` below that, and the last is
        ``started`` to ``started + most``."""
        last = 0
        for k, row in enumerate(self.rows):
            if not last + 1 - most <= row[0] <= last + 1:
                raise refuse(
                    f"trace[{k}]",
                    row[0],
                    f"use a round in {max(1, last + 1 - most)}..{last + 1} (one row per select)",
                )
            last = row[0]
        if not started <= last <= started + most:
            raise refuse(
                "trace",
                f"{len(self.rows)} rows",
                f"the last round must be {started}..{started + most} (the steps reported or in "
                "flight, one row per select)",
            )
