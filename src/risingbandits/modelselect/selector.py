"""Online model selection: spend a training budget on the candidate that will be best at the end.

:class:`ModelSelector` drives any registered policy's kernel (one implementation per algorithm:
the simulator's). :meth:`~ModelSelector.select` names the candidate to train next, the caller
trains it one step (an epoch, a mini-batch) and reports its new validation score with
:meth:`~ModelSelector.update`. A candidate is an arm of a rested rising bandit: its score tends
to grow with the steps it was trained (CURE-UCB, Song et al. 2026, Sec. 1 and the IMDB
experiment).

Sequential use (select, update, select, ...) runs exactly as the compiled simulator would.
Parallel workers (the rule, :mod:`~risingbandits.modelselect.pending`): ``select()`` may be
called again before earlier pulls have reported, up to ``max_pending`` pulls in flight (default:
the number of active candidates). With nothing in flight the policy selects on its own state;
with pulls in flight it selects on a copy of its state to which each pull in flight was applied
with a fantasy score (the candidate's recent mean). Scores may arrive in any order (pulls of one
candidate are matched first in, first out); each enters the policy's real state as it arrives,
after the kernel's ``select`` was re-run on that state when the pull had been chosen on a copy
(:meth:`~risingbandits.policies.machinery.online.OnlineRun.update_late`). ``select(available=...)``
restricts the choice (e.g. to paused trials): an unavailable choice counts as one more pull in
flight and the policy is asked again, at most :data:`MAX_REDIRECTS` times, then the available
candidate it ranked highest is taken. Everything is deterministic given the seed and the order
of the calls.

The budget T counts training steps: a ``select`` beyond T minus the steps started is refused,
so each step is spent exactly once (:meth:`~ModelSelector.cancel` gives back a step that will
never report). ``cost="seconds"`` or ``cost="given"`` makes the budget one in cost
(:mod:`~risingbandits.modelselect.costs`): the wall time of each step, or a cost reported with
each score; the selector is done once the cost spent reaches the budget (the last step may
overrun it), a candidate trains on one worker at a time (one step in flight each), and the
policy's horizon is the steps the budget buys at the mean cost per step, resized as the costs
come in. A policy that plans in cost (the default) is told before each ``select`` each
candidate's steps left at its own cost (:func:`~risingbandits.policies.machinery.kernel.
plan_one`); when it finds nothing worth starting while steps are in flight (every candidate it
would train is training), ``select()`` is refused with a RuntimeError saying to report a result
first, except under ``available=...`` (a worker to fill now), where the available candidate it
ranks highest is taken, as for an unavailable choice.

:meth:`~ModelSelector.set_budget`, :meth:`~ModelSelector.add_candidate` and
:meth:`~ModelSelector.retire` move the policy's run state to the new size
(:mod:`~risingbandits.policies.machinery.transplant`): the horizon-aware policies replan for the
new T, a new candidate first gets :data:`~risingbandits.modelselect.candidates.NEW_CANDIDATE_PULLS`
forced pulls, and no candidate is ever renumbered.

Noise: for a policy with a ``sigma`` the default is ``sigma="estimate"``, an online estimate
from the scores themselves (:mod:`risingbandits.policies.machinery.noise_level`), unless ``params``
set sigma or a ``preset`` is given; ``sigma="auto"`` uses ``noise_proxy`` (default 0.5: a score in
[0, 1] is 1/2-sub-Gaussian by Hoeffding's lemma, valid whatever its distribution but wide).
A configured :class:`~risingbandits.policies.base.Policy` is used as given.

Memory follows the work, not the budget: the policy's run state holds the steps reported so far
and grows by doubling (:mod:`~risingbandits.policies.machinery.capacity`), so a budget of 10^11
steps costs nothing until it is spent, and a checkpoint is as small as the run.

Checkpoints (:meth:`~ModelSelector.save`, :meth:`~ModelSelector.load`,
:mod:`~risingbandits.modelselect.checkpoint`) hold everything, pulls in flight included: a
restored selector continues exactly. A checkpoint is read like any user input: every field is
checked before anything is built from it, and a mistake is one ``ValueError`` line naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.modelselect.candidates import Candidates, candidate_count, candidate_names
from risingbandits.modelselect.checkpoint import (
    FORMAT,
    check_format,
    check_selector_fields,
    checkpoint_path,
    read_checkpoint,
    write_checkpoint,
)
from risingbandits.modelselect.costs import (
    UNITS,
    PullCosts,
    check_cost_mode,
    check_overrun,
    cost_budget,
    first_horizon,
    horizon_goal,
)
from risingbandits.modelselect.history import ScoreHistory
from risingbandits.modelselect.pending import PullsInFlight, fantasy_score
from risingbandits.modelselect.scores import checked_metrics, parse_score_range, unit_score
from risingbandits.modelselect.selection_trace import SelectionTrace
from risingbandits.policies.base import Policy
from risingbandits.policies.machinery.capacity import MAX_HORIZON
from risingbandits.policies.machinery.checkpoint import (
    check_fields,
    integer,
    number,
    refuse,
    shown,
)
from risingbandits.policies.machinery.kernel import plans_in_cost
from risingbandits.policies.machinery.online import OnlineRun
from risingbandits.policies.machinery.trace import Trace
from risingbandits.policies.registry import make_policy, policy_class, policy_from_dict

DEFAULT_POLICY = "hace-ucb"
"""The policy a :class:`ModelSelector` uses when none is given (and the Ray Tune scheduler, the
Optuna helper and ``risingbandits select``): HACE-UCB (issue 21), successive halving rounds
while the budget per candidate is small (until the leader is clear), then ACE-UCB on the
survivors; each of its rules chosen on development instances, then judged on held-out ones at
every budget from 4 pulls per candidate to the full horizon (``risingbandits reproduce
heldout``; README "Which policy should I use")."""
DEFAULT_NOISE_PROXY = 0.5
MAX_REDIRECTS = 3
"""Times the policy is asked again when it chooses an unavailable candidate."""
WAIT = (
    "select() is not allowed now: every candidate worth training is training; report a result "
    "with update() first"
)
"""Why a ``select`` is refused when a policy that plans in cost waits for a result."""


def _int_at_least(name: str, value: Any, low: int, why: str) -> int:
    if not integer(value) or value < low:
        raise ValueError(f"{name}={shown(value)} is not allowed: use an integer >= {low}{why}")
    return int(value)


def _budget(value: Any, low: int, why: str) -> int:
    budget = _int_at_least("budget", value, low, why)
    if budget > MAX_HORIZON:
        raise ValueError(
            f"budget={shown(budget)} is not allowed: use at most 2**53 = {MAX_HORIZON:,} training "
            "steps (steps are counted exactly in floating point up to there)"
        )
    return budget


def _configured(
    policy: str | Policy, preset: str | None, params: Mapping[str, Any] | None
) -> Policy:
    if isinstance(policy, Policy):
        if preset is not None or params:
            raise ValueError("give preset/params with a policy name, not with a Policy")
        return policy_from_dict(policy.to_dict())
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(
            f"params={shown(params)} is not allowed: use a mapping of parameter names to values"
        )
    chosen = dict(params or {})
    has_sigma = any(p.name == "sigma" for p in policy_class(policy).params_spec)
    if has_sigma and preset is None and "sigma" not in chosen:
        chosen["sigma"] = "estimate"
    return make_policy(policy, preset=preset, **chosen)


def _best_allowed(scores: np.ndarray, allowed: list[bool]) -> int:
    """The allowed arm with the highest score (NaN as -inf; ties to the lowest arm)."""
    ranked = np.where(allowed, np.nan_to_num(scores, nan=-np.inf), -np.inf)
    best = int(np.argmax(ranked))
    return best if allowed[best] else allowed.index(True)


class ModelSelector:
    """Choose which of K candidate models to train next, within a budget of T training steps
    (``cost="pulls"``) or of seconds (``cost="seconds"``) or given costs (``cost="given"``).

    ``policy`` is a registry name (with optional ``preset`` and ``params``) or a configured
    :class:`~risingbandits.policies.base.Policy` (copied). ``seed`` fixes the policy's own
    randomness; ``max_pending`` caps the pulls in flight (None: the number of active
    candidates); ``trace=True`` records what each ``select`` ranked the candidates by. Call it
    from one thread (the workers train; the loop that calls ``select``/``update`` is one).
    """

    def __init__(
        self,
        candidates: int | Sequence[str],
        budget: float,
        policy: str | Policy = DEFAULT_POLICY,
        *,
        preset: str | None = None,
        params: Mapping[str, Any] | None = None,
        score_range: Sequence[float] | None = None,
        noise_proxy: float = DEFAULT_NOISE_PROXY,
        seed: int = 0,
        max_pending: int | None = None,
        trace: bool = False,
        cost: str = "pulls",
    ) -> None:
        k = candidate_count(candidates)
        why = f" (the number of candidates, {k}, so that each is trained at least once)"
        self._cost = check_cost_mode(cost)
        self._budget: float = _budget(budget, k, why) if cost == "pulls" else cost_budget(budget)
        names = candidate_names(candidates)
        self._policy = _configured(policy, preset, params)
        if not number(noise_proxy) or noise_proxy < 0:
            raise ValueError(
                f"noise_proxy={shown(noise_proxy)} is not allowed: use a finite number >= 0"
            )
        if not isinstance(trace, bool | np.bool_):
            raise ValueError(f"trace={shown(trace)} is not allowed: use True or False")
        self._seed = _int_at_least("seed", seed, 0, "")
        self._max_pending = (
            None if max_pending is None else _int_at_least("max_pending", max_pending, 1, "")
        )
        if trace and not self._policy.trace_terms:
            raise ValueError(f"trace=True is not allowed for {self._policy.name}: it has no index")
        self._range = parse_score_range(score_range)
        self._noise_proxy = float(noise_proxy)
        self._start(Candidates(names), SelectionTrace() if trace else None)
        horizon = int(self._budget) if cost == "pulls" else first_horizon(self._budget, k)
        self._policy.reset(k, horizon, seed=self._seed, noise_proxy=self._noise_proxy)
        self._run: OnlineRun = self._policy.run

    def _start(self, candidates: Candidates, trace: SelectionTrace | None) -> None:
        self._candidates = candidates
        self._saved_to: set[Path] = set()
        self._pending = PullsInFlight()
        self._history = ScoreHistory(len(candidates.names))
        self._trace = trace
        self._costs = (
            None
            if self._cost == "pulls"
            else PullCosts(len(candidates.names), self._cost == "seconds")
        )

    # -- the loop ----------------------------------------------------------------------------

    def select(self, available: Any = None) -> int:
        """Start a training step: the index of the candidate to train (``names[index]``).

        ``available`` (a mask over all candidates, or names or indices) restricts the choice.
        """
        run = self._run
        if (
            available is None
            and not self._pending.arms
            and not self._candidates.forced
            and self._costs is None
        ):
            if run.t >= self._budget:
                self._check_can_start()
            arm = self._candidates.slots[run.select()]
            self._pending.arms.append(arm)
            if self._trace is not None:
                self._trace.record(run.t + 1, arm, self._candidates.slots, run.state)
            return arm
        return self._select_among(available)

    def _check_can_start(self) -> None:
        in_flight = len(self._pending.arms)
        if self._costs is not None:
            self._check_cost_left(in_flight)
        elif self._run.t + in_flight >= self._budget:
            if in_flight:
                raise RuntimeError(
                    f"the budget of {self._budget} training steps is all started: "
                    f"{in_flight} still in flight; report them with update()"
                )
            raise RuntimeError(f"the budget of {self._budget} training steps is used up")
        if in_flight >= self.max_pending:
            raise RuntimeError(
                f"max_pending={self.max_pending} pulls are in flight: report one with update() "
                "before starting another"
            )

    def _check_cost_left(self, in_flight: int) -> None:
        spent, unit = self.spent, UNITS[self._cost]
        if spent >= self._budget:
            raise RuntimeError(
                f"the budget of {self._budget:g} {unit} is used up ({spent:g} spent)"
            )
        if self.remaining <= 0:
            raise RuntimeError(
                f"the budget of {self._budget:g} {unit} is all started: {in_flight} steps in "
                f"flight are estimated to spend the {self._budget - spent:g} left; report them "
                "with update()"
            )

    def _select_among(self, available: Any) -> int:
        self._check_can_start()
        cands, pending, run = self._candidates, self._pending, self._run
        allowed = cands.allowed(available)
        if self._costs is not None:
            allowed = self._ready(allowed, self._costs)
        round_ = run.t + len(pending.arms) + 1
        for arm, left in cands.forced.items():
            if allowed[arm]:
                cands.forced[arm] = left - 1
                if left == 1:
                    del cands.forced[arm]
                self._begin(arm)
                if self._trace is not None:
                    self._trace.record_forced(
                        round_, arm, cands.slots, len(self._policy.trace_terms)
                    )
                return arm
        pulls = [(cands.slot_of[a], fantasy_score(self._history.recent, a)) for a in pending.arms]
        slot, state = run.select_with(pulls) if pulls else (run.select(), run.state)
        for _ in range(MAX_REDIRECTS):
            if slot < 0 or allowed[cands.slots[slot]] or run.t + len(pulls) + 1 >= run.horizon:
                break
            pulls.append((slot, fantasy_score(self._history.recent, cands.slots[slot])))
            slot, state = run.select_with(pulls)
        if slot < 0 and available is None and pending.arms:
            raise RuntimeError(WAIT)
        if slot < 0 or not allowed[cands.slots[slot]]:
            slot = _best_allowed(state.scores, [allowed[c] for c in cands.slots])
        arm = cands.slots[slot]
        self._begin(arm)
        if self._trace is not None:
            self._trace.record(round_, arm, cands.slots, state)
        return arm

    def _begin(self, arm: int) -> None:
        """Candidate ``arm``'s step starts (in flight; timed under ``cost="seconds"``)."""
        self._pending.arms.append(arm)
        if self._costs is not None:
            self._costs.start(arm)

    def _ready(self, allowed: list[bool], costs: PullCosts) -> list[bool]:
        """With a budget in cost, before a select: the allowed candidates without a step in
        flight (a candidate trains on one worker at a time), the policy's horizon fitted to
        the budget (:func:`~risingbandits.modelselect.costs.horizon_goal`) and, for a policy
        that plans in cost, its plan."""
        busy = set(self._pending.arms)
        free = [a and i not in busy for i, a in enumerate(allowed)]
        if not any(free):
            raise RuntimeError(
                "select() is not allowed now: every candidate offered has a step in flight (with "
                f"cost={self._cost!r} a candidate trains one step at a time); report one first"
            )
        run, slots, budget = self._run, self._candidates.slots, self._budget
        left = budget - costs.spent
        goal = horizon_goal(
            run.horizon, run.t, len(busy), len(slots), left, costs.mean(slots, budget)
        )
        if goal != run.horizon:
            self._resize(list(range(len(slots))), goal)
        if plans_in_cost(run.state):
            per_pull = costs.per_pull(slots, budget, run.horizon)
            run.plan(
                np.array([free[c] for c in slots]),
                max(0.0, left - self._committed(per_pull)) / per_pull,
                np.array([costs.sums[c] for c in slots]),
                budget / run.horizon,
            )
        return free

    def _committed(self, per_pull: np.ndarray) -> float:
        """The estimated cost of the steps in flight (``per_pull``: per active candidate)."""
        slot_of = self._candidates.slot_of
        return float(sum(per_pull[slot_of[a]] for a in self._pending.arms))

    def update(
        self,
        arm: int | str,
        score: float,
        metrics: Mapping[str, Any] | None = None,
        *,
        cost: float | None = None,
    ) -> None:
        """Record the validation score of candidate ``arm`` (index or name) after a step
        started by :meth:`select`; ``metrics`` (JSON values) are kept beside it. ``cost`` is
        the step's cost, required with ``cost="given"`` and refused otherwise."""
        cands, pending, run, costs = self._candidates, self._pending, self._run, self._costs
        # The common case (an int index, a float score in [0, 1]) is checked inline: speed.
        index = arm if type(arm) is int and 0 <= arm < len(cands.names) else cands.index(arm)
        if type(score) is float and self._range is None and 0.0 <= score <= 1.0:
            value = score
        else:
            value = unit_score(score, self._range, cands.names[index])
        extra = None if metrics is None else checked_metrics(metrics, cands.names[index])
        if costs is None:
            if cost is not None:
                raise _cost_refused(f"update({cands.names[index]!r})", cost)
            paid = 0.0
        else:
            paid = costs.charge(index, cost, f"update({cands.names[index]!r})")
        if pending.arms and pending.arms[0] == index:
            del pending.arms[0]
        else:
            pending.finish(index, f"update({cands.names[index]!r})")
        slot = cands.slot_of[index]
        if run.pending == slot:
            run.update(slot, value)
        else:
            run.update_late(slot, value)
        self._history.record(index, float(score), value, extra)
        if costs is not None:
            costs.record(index, paid)

    def cancel(self, arm: int | str, *, cost: float | None = None) -> None:
        """Forget the oldest pull in flight of candidate ``arm`` (a worker that died): nothing
        reaches the policy (a cancelled forced first pull of a new candidate is not forced
        again). A budget of steps gets the step back; a budget in cost is charged what it
        cost (its time under ``cost="seconds"``, ``cost`` if given under ``cost="given"``)."""
        index = self._candidates.index(arm)
        owner = f"cancel({self._candidates.names[index]!r})"
        if self._costs is None and cost is not None:
            raise _cost_refused(owner, cost)
        if self._costs is not None and index in self._pending.arms:
            self._costs.cancel(index, cost, owner)
        self._pending.finish(index, owner)

    # -- changes -----------------------------------------------------------------------------

    def set_budget(self, budget: float) -> None:
        """Make the total budget ``budget`` training steps (at least the steps started); the
        horizon-aware policies replan for it. A budget in cost must be at least the cost spent;
        the policy's horizon follows it at the next ``select``."""
        if self._costs is not None:
            spent = self.spent
            self._budget = cost_budget(budget, spent, f" (spent: {spent:g})")
            return
        started = self._run.t + len(self._pending.arms)
        steps = _budget(budget, max(started, 1), f" (steps started: {started})")
        self._resize(list(range(len(self._candidates.slots))), steps)
        self._budget = steps

    def add_candidate(self, name: str) -> int:
        """Add candidate ``name``; returns its index. Its first
        :data:`~risingbandits.modelselect.candidates.NEW_CANDIDATE_PULLS` pulls are forced."""
        cands = self._candidates
        keep = cands.add(name)
        self._history.add_candidate()
        if self._costs is not None:
            self._costs.add_candidate()
        self._resize(keep, self._run.horizon)
        return len(cands.names) - 1

    def retire(self, arm: int | str) -> None:
        """Stop training candidate ``arm`` (index or name); its index and scores stay."""
        cands = self._candidates
        index = cands.active_index(arm)
        if self._pending.count(index):
            raise ValueError(
                f"retire({cands.names[index]!r}) is not allowed while "
                f"{self._pending.count(index)} of its pulls are in flight: report them first"
            )
        self._resize(cands.retire(index), self._run.horizon)

    def _resize(self, keep: list[int], horizon: int) -> None:
        self._run.resize(keep, horizon)

    # -- what it knows -----------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        """Every candidate's name, retired ones included (``names[index]``)."""
        return tuple(self._candidates.names)

    @property
    def active(self) -> tuple[str, ...]:
        """The candidates still being selected among."""
        return tuple(self._candidates.names[i] for i in self._candidates.slots)

    @property
    def budget(self) -> float:
        """Training steps (an int) or, with a budget in cost, seconds or cost units."""
        return self._budget

    @property
    def cost(self) -> str:
        """What the budget counts: ``"pulls"``, ``"seconds"`` or ``"given"``."""
        return self._cost

    @property
    def spent(self) -> float:
        """Budget spent: the steps reported, or the cost of the steps reported and cancelled."""
        return self._run.t if self._costs is None else self._costs.spent

    @property
    def horizon(self) -> int:
        """The policy's horizon T: the budget, or the steps a budget in cost is estimated to
        buy (:func:`~risingbandits.modelselect.costs.horizon_goal`)."""
        return self._run.horizon

    @property
    def max_pending(self) -> int:
        """Pulls allowed in flight at once."""
        return self._max_pending or len(self._candidates.slots)

    @property
    def policy(self) -> dict[str, Any]:
        """The policy's name and parameters."""
        return self._policy.to_dict()

    @property
    def t(self) -> int:
        """Training steps whose scores were recorded."""
        return self._run.t

    @property
    def in_flight(self) -> tuple[int, ...]:
        """Candidates whose pulls are in flight, oldest first (one entry per pull)."""
        return tuple(self._pending.arms)

    @property
    def remaining(self) -> float:
        """Training steps that can still be started; with a budget in cost, the cost left
        after the steps in flight at their estimated cost (0 when none can start)."""
        costs = self._costs
        if costs is None:
            return self._budget - self._run.t - len(self._pending.arms)
        per_pull = costs.per_pull(self._candidates.slots, self._budget, self._run.horizon)
        return max(0.0, self._budget - costs.spent - self._committed(per_pull))

    @property
    def done(self) -> bool:
        """Whether the whole budget has been trained and reported (with a budget in cost:
        spent; steps in flight may still report)."""
        return self.spent >= self._budget

    @property
    def pulls(self) -> list[int]:
        """Training steps reported for each candidate (a list, JSON-able as it is)."""
        return list(self._history.pulls)

    @property
    def last_scores(self) -> list[float | None]:
        """The last score reported for each candidate (None if never trained; as in
        :meth:`summary`)."""
        return [None if math.isnan(x) else x for x in self._history.last]

    @property
    def history(self) -> list[dict[str, Any]]:
        """Every score reported, in order, with its metrics."""
        return self._history.rows(self._candidates.names)

    def recommend(self) -> int:
        """The candidate the policy would deploy if the budget ended now (its index)."""
        return self._candidates.slots[self._run.recommend()]

    def summary(self) -> dict[str, Any]:
        """JSON-able: pulls and last score per candidate, the recommended candidate and its
        last score, the best last score among all candidates (retired ones included)."""
        names = self._candidates.names
        return {
            "policy": self.policy,
            "cost": self._cost,
            "budget": self._budget,
            "spent": self.spent,
            "steps": self.t,
            "in_flight": [names[i] for i in self._pending.arms],
            "retired": [n for i, n in enumerate(names) if self._candidates.slot_of[i] < 0],
            **self._history.summary(names, self.recommend()),
        }

    def trace(self) -> Trace:
        """What each ``select`` ranked the candidates by (needs ``trace=True``): a one-seed
        :class:`~risingbandits.policies.machinery.trace.Trace` over all candidates, NaN where one
        was not active, ``arms`` holding candidate indices."""
        if self._trace is None:
            raise ValueError("no trace was recorded: create the selector with trace=True")
        return self._trace.trace(len(self._candidates.names), self._policy.trace_terms)

    # -- checkpoints -------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume, as JSON-able data (pulls in flight included)."""
        costs = self._costs
        return {
            "format": FORMAT,
            "candidates": self._candidates.state(),
            "cost": self._cost,
            "budget": self._budget,
            "costs": None if costs is None else costs.state(self._pending.arms),
            "score_range": list(self._range) if self._range else None,
            "noise_proxy": self._noise_proxy,
            "seed": self._seed,
            "max_pending": self._max_pending,
            "in_flight": list(self._pending.arms),
            "history": self._history.state(),
            "trace": None if self._trace is None else self._trace.state(),
            "policy": self._policy.state_dict(),
        }

    @classmethod
    def from_state_dict(cls, data: Mapping[str, Any]) -> ModelSelector:
        """The selector saved by :meth:`state_dict`, ready to continue; a checkpoint that is
        not one is refused with one line naming the field
        (:mod:`~risingbandits.modelselect.checkpoint`)."""
        data = check_format(data)
        check_selector_fields(data)
        selector = cls.__new__(cls)
        selector._restore(data)
        return selector

    def _restore(self, data: Mapping[str, Any]) -> None:
        cands = Candidates.restore(data["candidates"])
        self._cost = data["cost"]
        self._budget = int(data["budget"]) if self._cost == "pulls" else float(data["budget"])
        self._seed = int(data["seed"])
        self._range = parse_score_range(data["score_range"])
        self._noise_proxy = float(data["noise_proxy"])
        self._max_pending = data["max_pending"]
        self._policy = policy_from_dict(data["policy"]["policy"])
        names = cands.names
        trace = data["trace"]
        self._start(
            cands,
            None
            if trace is None
            else SelectionTrace.restore(trace, len(names), len(self._policy.trace_terms)),
        )
        self._history = ScoreHistory.restore(data["history"], len(names), self._range)
        steps = len(self._history.arms)
        if self._cost == "pulls" and self._budget < steps:
            raise refuse("budget", self._budget, f"use at least the {steps} steps reported")
        check_fields(data["policy"])
        horizon = int(self._budget) if self._cost == "pulls" else data["policy"]["horizon"]
        self._pending.arms = self._in_flight(data["in_flight"], steps, horizon)
        started = list(self._history.pulls)
        for index in self._pending.arms:
            started[index] += 1
        cands.check_forced(started)
        if self._trace is not None:
            self._trace.check_rounds(sum(started), self._max_pending or len(names))
        if self._cost != "pulls":
            self._costs = PullCosts.restore(
                data["costs"], self._cost == "seconds", self._history.pulls, self._pending.arms
            )
            most = self._max_pending or len(names)  # in flight at the last start
            check_overrun(self._budget, self._costs, self._history.arms, self._pending.arms, most)
        elif data["costs"] is not None:
            raise refuse("costs", data["costs"], "use null (a budget of steps has no costs)")
        self._check_run(data["policy"])
        self._policy.load_state_dict(data["policy"])
        self._run = self._policy.run

    def _in_flight(self, data: Any, steps: int, horizon: int) -> list[int]:
        """A checkpoint's pulls in flight: active candidates, within the policy's horizon
        left (the budget left, for a budget of steps) and ``max_pending`` (the candidates if
        null), one each with a budget in cost."""
        cands, left = self._candidates, horizon - steps
        if (
            not isinstance(data, list)
            or len(data) > left
            or not all(integer(i) and 0 <= i < len(cands.names) for i in data)
            or any(cands.slot_of[i] < 0 for i in data)
            or (self._cost != "pulls" and len(set(data)) != len(data))
        ):
            each, what = ("", "budget") if self._cost == "pulls" else (", each once", "horizon")
            raise refuse(
                "in_flight",
                data,
                f"use active candidates' indices{each}, at most {left} (the {what} of "
                f"{horizon} less the {steps} steps reported)",
            )
        most = self._max_pending or len(cands.names)
        if len(data) > most:
            raise refuse(
                "in_flight",
                data,
                f"use at most {most} pulls (max_pending, or the number of candidates if null)",
            )
        return list(data)

    def _check_run(self, saved: Mapping[str, Any]) -> None:
        """The saved policy run is the one the selector's fields describe: one arm per active
        candidate, the budget as horizon (a budget of steps), the noise proxy, one round per
        score reported and each arm's pulls those of its candidate."""
        cands, history = self._candidates, self._history
        expected = {
            "n_arms": len(cands.slots),
            "horizon": self._budget if self._cost == "pulls" else saved["horizon"],
            "noise_proxy": self._noise_proxy,
            "t": len(history.arms),
            "pulls": [history.pulls[c] for c in cands.slots],
        }
        for name, value in expected.items():
            if saved.get(name) != value:
                raise refuse(f"policy.{name}", saved.get(name), f"this selector's is {value!r}")

    def save(self, path: str | Path) -> None:
        """Write the checkpoint to ``path`` (JSON, written to a part file of its own beside it
        and renamed into place): saves from several threads at once each write a whole file
        (the last rename wins); a save must not run during a ``select`` or ``update``. A file
        already at ``path`` that this selector did not write is replaced only if it is a
        checkpoint: the user's own file there is refused, not overwritten."""
        target = checkpoint_path(path)
        if target not in self._saved_to and target.is_file():
            try:
                read_checkpoint(target)
            except ValueError:
                raise ValueError(
                    f"checkpoint {str(target)!r} is not written: the file there is not a "
                    "checkpoint; give another path"
                ) from None
        write_checkpoint(target, self.state_dict())
        self._saved_to.add(target)

    @classmethod
    def load(cls, path: str | Path) -> ModelSelector:
        """The selector saved in ``path`` by :meth:`save`."""
        return cls.from_state_dict(read_checkpoint(path))

    def __repr__(self) -> str:
        return (
            f"ModelSelector({len(self._candidates.slots)} candidates, cost={self._cost!r}, "
            f"budget={self._budget:g}, spent={self.spent:g}, policy={self._policy.name!r}, "
            f"t={self.t}, in flight={len(self._pending.arms)})"
        )


def _cost_refused(owner: str, cost: Any) -> ValueError:
    return ValueError(
        f"{owner}: cost={cost!r} is not allowed: this selector's budget counts training steps "
        "(create it with cost='given' to report costs)"
    )
