"""Budgets in cost for a model selector (issue 22): what each training step cost, and the horizon
the policy is given.

``ModelSelector(..., cost=...)`` counts its budget in one of :data:`COST_MODES`:

* ``"pulls"``: training steps (the default; nothing here is used);
* ``"seconds"``: the wall time of each step, from the ``select()`` that started it to its
  ``update()``, read on a monotonic clock (:func:`time.monotonic`);
* ``"given"``: any unit (GPU-hours, a bill), the cost of each step given as
  ``update(candidate, score, cost=c)``.

The budget is the cost summed over steps: with W workers in parallel, a wall-clock deadline of D
seconds is a budget of about W x D seconds. A step's cost is known only when it ends, so a step
is started while budget is left (estimated after the steps in flight) and the last one may
overrun the budget. A cancelled step is charged too: under ``"seconds"`` the time it ran, under
``"given"`` the ``cost=`` given to ``cancel`` (none: nothing), so time lost to a failure is spent.
Checkpoints keep the costs; a step in flight under ``"seconds"`` is charged the time it ran
before the save plus the time after the restore (not the time in between, when nothing ran).

A policy counts pulls up to its horizon T: T is the number of steps the budget buys at the mean
cost per step (:func:`horizon_goal`). A cost-aware policy is told each candidate's own cost
instead (:meth:`PullCosts.per_pull`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from time import monotonic
from typing import Any

import numpy as np

from risingbandits.policies.machinery.capacity import MAX_HORIZON
from risingbandits.policies.machinery.checkpoint import number, refuse, shown

COST_MODES = ("pulls", "seconds", "given")
RESIZE_AT = 0.25
"""The horizon follows the budget's estimate of the steps left once it moves by this fraction
(a resize replans the horizon-aware policies; a few per run, not one per step)."""
UNITS = {"seconds": "seconds", "given": "cost units"}
"""How messages name a budget in cost."""


def check_cost_mode(value: Any) -> str:
    """``value`` if it is one of :data:`COST_MODES`."""
    if not isinstance(value, str) or value not in COST_MODES:
        raise ValueError(
            f"cost={value!r} is not allowed: use 'pulls' (a budget of training steps), "
            "'seconds' (wall time of each step, measured) or 'given' (update(..., cost=c))"
        )
    return value


def cost_budget(value: Any, low: float = 0.0, why: str = "") -> float:
    """A budget in cost: a finite number > 0 and at least ``low`` (the cost spent, said in
    ``why``)."""
    if not number(value) or not (value > 0 and value >= low):
        floor = f"at least {low:g}{why}" if low > 0 else "> 0"
        raise ValueError(f"budget={shown(value)} is not allowed: use a finite number {floor}")
    return float(value)


def check_cost(value: Any, owner: str) -> float:
    """A step's given cost: a finite number > 0 (``owner`` names the call in the message)."""
    if not number(value) or not value > 0:
        raise ValueError(
            f"{owner}: cost={shown(value)} is not allowed: use the step's cost, a finite number > 0"
        )
    return float(value)


def least_cost(budget: float) -> float:
    """The least cost a step is estimated at, budget / 2**53: a clock that reads 0 must not
    make a step free, and the steps left at that cost still count exactly in floating point."""
    return budget / MAX_HORIZON


def first_horizon(budget: float, n_arms: int) -> int:
    """The horizon before any cost is known: a step is taken to cost one unit (so that unit
    costs run exactly as a budget of steps), at least one step per candidate."""
    return int(min(MAX_HORIZON, max(n_arms, math.floor(budget))))


def horizon_goal(
    horizon: int, t: int, in_flight: int, n_arms: int, left: float, mean: float | None
) -> int:
    """The policy's horizon before a select: the current one unless the steps the budget left
    buys at the ``mean`` cost per step (None: not known for every candidate yet), t + left /
    mean, moved more than :data:`RESIZE_AT` from it; at least the steps reported and in flight
    plus the one starting, and one per candidate."""
    goal: float = horizon
    if mean is not None and abs(t + left / mean - horizon) > RESIZE_AT * horizon:
        goal = round(t + left / mean)
    return int(min(MAX_HORIZON, max(goal, t + in_flight + 1, n_arms)))


class PullCosts:
    """The costs of the steps reported (a sum and a count per candidate, all candidates), of
    the steps cancelled (``lost``), and under ``"seconds"`` when each step in flight started
    (one per candidate: a candidate trains on one worker at a time)."""

    __slots__ = ("counts", "lost", "seconds", "started", "sums")

    def __init__(self, n_candidates: int, seconds: bool) -> None:
        self.seconds = seconds
        self.sums = [0.0] * n_candidates
        self.counts = [0] * n_candidates
        self.lost = 0.0
        self.started: dict[int, float] = {}

    @property
    def spent(self) -> float:
        """Cost of the steps reported and cancelled (a sum of the saved fields, so that a
        restored selector spends exactly as the one saved)."""
        return math.fsum([*self.sums, self.lost])

    def add_candidate(self) -> None:
        self.sums.append(0.0)
        self.counts.append(0)

    def start(self, index: int) -> None:
        """A step of candidate ``index`` starts now."""
        if self.seconds:
            self.started[index] = monotonic()

    def charge(self, index: int, cost: Any, owner: str) -> float:
        """The cost of candidate ``index``'s step in flight: measured, or ``cost`` checked
        (given to the call ``owner``, which must give one exactly under ``"given"``)."""
        if self.seconds:
            if cost is not None:
                raise ValueError(
                    f"{owner}: cost={cost!r} is not allowed: this selector measures seconds "
                    "itself (create it with cost='given' to report costs)"
                )
            now = monotonic()
            return max(0.0, now - self.started.get(index, now))
        if cost is None:
            raise ValueError(
                f"{owner}: cost= is missing: this selector's budget is in given costs, so "
                "report each step's cost with update(candidate, score, cost=c)"
            )
        paid = check_cost(cost, owner)
        if math.isinf(_total([*self.sums, self.lost, paid])):
            raise ValueError(
                f"{owner}: cost={paid!r} is not allowed: use a cost that keeps the total spent "
                f"a finite number ({self.spent:g} spent so far)"
            )
        return paid

    def record(self, index: int, cost: float) -> None:
        """Candidate ``index``'s step in flight reported, at ``cost``."""
        self.started.pop(index, None)
        self.sums[index] += cost
        self.counts[index] += 1

    def cancel(self, index: int, cost: Any, owner: str) -> None:
        """Candidate ``index``'s step in flight will never report: its cost (measured, or
        ``cost`` if given) is spent all the same."""
        paid = 0.0 if cost is None and not self.seconds else self.charge(index, cost, owner)
        self.started.pop(index, None)
        self.lost += paid

    def mean(self, active: Sequence[int], budget: float) -> float | None:
        """The mean cost per step reported (at least :func:`least_cost`), once every active
        candidate has reported one (before, the candidates that ran first would decide it)."""
        if not all(self.counts[i] for i in active):
            return None
        return max(least_cost(budget), math.fsum(self.sums) / sum(self.counts))

    def per_pull(self, active: Sequence[int], budget: float, horizon: int) -> np.ndarray:
        """Each active candidate's estimated cost per step: the mean of its own costs; without
        one, the mean of those of the candidates that have one; without any, the cost one step
        of the ``horizon`` stands for (budget / horizon); at least :func:`least_cost`."""
        own = [self.sums[i] / self.counts[i] if self.counts[i] else math.nan for i in active]
        known = [c for c in own if not math.isnan(c)]
        default = sum(known) / len(known) if known else budget / horizon
        return np.maximum(least_cost(budget), [default if math.isnan(c) else c for c in own])

    def state(self, in_flight: Sequence[int]) -> dict[str, Any]:
        """JSON-able: each candidate's summed cost, the cancelled cost and, under
        ``"seconds"``, the time each step in flight has run (``running``, in the order of
        ``in_flight``; a restored selector times it on from there)."""
        now = monotonic()
        running = [now - self.started.get(i, now) for i in in_flight] if self.seconds else None
        return {"sums": list(self.sums), "lost": self.lost, "running": running}

    @classmethod
    def restore(
        cls, data: Any, seconds: bool, pulls: Sequence[int], in_flight: Sequence[int]
    ) -> PullCosts:
        """Inverse of :meth:`state`, checked (a checkpoint's ``costs``): a finite sum >= 0 per
        candidate (0 for one never trained; > 0 under ``"given"``), ``lost`` a finite number
        >= 0, ``running`` one finite number >= 0 per step in flight under ``"seconds"``
        (else null). The counts are the candidates' reported steps (``pulls``)."""
        if not isinstance(data, Mapping) or set(data) != {"sums", "lost", "running"}:
            raise refuse("costs", data, "use {sums, lost, running}")
        sums, lost, running = data["sums"], data["lost"], data["running"]
        if (
            not isinstance(sums, list)
            or len(sums) != len(pulls)
            or not all(number(s) and s >= 0 for s in sums)
            or any((s > 0) != (n > 0) for s, n in zip(sums, pulls, strict=True) if s or not seconds)
        ):
            given = "" if seconds else ", > 0 for one trained (a given cost is > 0)"
            raise refuse(
                "costs.sums",
                sums,
                f"use {len(pulls)} finite numbers >= 0, one per candidate: 0 for a candidate "
                f"never trained{given}",
            )
        if not number(lost) or lost < 0:
            raise refuse("costs.lost", lost, "use a finite number >= 0")
        if math.isinf(_total([*sums, lost])):
            raise refuse("costs.sums", sums, "their total with costs.lost must be a finite number")
        out = cls(len(pulls), seconds)
        out.sums, out.counts, out.lost = [float(s) for s in sums], list(pulls), float(lost)
        if seconds:
            if (
                not isinstance(running, list)
                or len(running) != len(in_flight)
                or not all(number(r) and r >= 0 for r in running)
            ):
                raise refuse(
                    "costs.running",
                    running,
                    f"use {len(in_flight)} finite numbers >= 0 (seconds each step in flight ran)",
                )
            now = monotonic()
            out.started = {i: now - float(r) for i, r in zip(in_flight, running, strict=True)}
        elif running is not None:
            raise refuse("costs.running", running, "use null (only cost='seconds' times steps)")
        return out


def check_overrun(
    budget: float, costs: PullCosts, arms: Sequence[int], in_flight: Sequence[int], most: int
) -> None:
    """Refuse a checkpoint's ``budget`` below what was spent before the budget could be
    overrun. A step starts only while the cost spent is below the budget (and
    :meth:`ModelSelector.set_budget` keeps it at least the cost spent), so only the steps in
    flight at the last start can report past it: at most ``most`` (max_pending), one per
    candidate, none of those still in flight (``in_flight``), each its candidate's last report:
    the longest run of such candidates at the end of the reports (``arms``). Their sums, and
    ``lost`` (cancelled steps), may all be the overrun; the other candidates' sums may not."""
    overrun: set[int] = set()
    for arm in reversed(arms):
        if arm in overrun or arm in in_flight or len(overrun) >= most - len(in_flight):
            break
        overrun.add(arm)
    before = math.fsum(s for i, s in enumerate(costs.sums) if i not in overrun)
    if before > budget:
        raise refuse(
            "budget",
            budget,
            f"use at least {before:g}, the cost spent before the budget could be overrun (only "
            "the steps in flight when it was reached report after it)",
        )


def _total(costs: Sequence[float]) -> float:
    """The exact sum of ``costs`` (finite numbers >= 0) rounded once; inf past the largest float."""
    try:
        return math.fsum(costs)
    except OverflowError:
        return math.inf
