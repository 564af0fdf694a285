"""The event-driven simulator: a budget in cost, W workers, pulls that take time (issue 22).

A pull of arm i costs ``instance.pull_costs[i, n - 1]`` (its n-th pull: seconds of training, a
bill) and occupies one worker for that long; the policy chooses when a worker is free and sees
the reward when the pull finishes. A candidate trains on one worker at a time (its steps are
sequential, as in ``risingbandits select``). Two meanings of a budget B, named:

* ``budget_kind="deadline"``: wall-clock time; the W workers run in parallel until B;
* ``budget_kind="total"``: the cost summed over workers (a cloud bill), whatever the clock.

No pull is started that cannot finish within the budget (the costs of the table are known to the
simulator; online, where they are not, :class:`~risingbandits.modelselect.ModelSelector` starts a
pull while budget is left and the last one may overrun). The loop drives the same compiled
kernels as :func:`risingbandits.simulate` (:mod:`~risingbandits.policies.machinery.kernel`):
before each ``select`` it calls the policy's ``plan`` with the arms it may start (free, next
pull affordable), the pulls each could still make with the budget left at its own cost, and the
cost spent on each; a policy that plans in cost uses them, every other policy runs its
published definition in pulls. Every policy gets the horizon T = the most pulls the budget can
buy (:func:`most_pulls`; with unit costs, B for a total budget and min(W, K) x B for a
deadline), and the run ends when the budget does. If a policy that does not plan in cost
picks an arm it may not start (busy, or its next pull does not fit), the worker takes the
allowed arm the policy ranks highest (its ``scores``), else the allowed arm with the fewest
pulls. With W = 1 and unit costs this is exactly
``simulate(horizon=B)`` (same choices, a test).

Measures (:class:`BudgetResult`): the final-model gap at the deadline against the best value a
candidate alone can reach within the budget (:func:`reachable_pulls`), the regret in cost
(:meth:`BudgetResult.cost_regret`), the wall time used and each worker's idle time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np

from risingbandits._jit import borrow, called_helper, helper, jit, runtime_free
from risingbandits.instances.base import RisingInstance
from risingbandits.policies.base import Policy
from risingbandits.policies.machinery.checkpoint import number
from risingbandits.policies.machinery.kernel import (
    plans_in_cost,
    policy_plan,
    policy_recommend,
    policy_select,
    policy_update,
    trace_view,
)
from risingbandits.policies.registry import as_policy
from risingbandits.rewards import draw_reward
from risingbandits.seeding import SeedLike, policy_rng, reward_key

BudgetKind = Literal["deadline", "total"]
BUDGET_KINDS: tuple[str, ...] = ("deadline", "total")
MAX_WORKERS = 4096


class EventRecord(NamedTuple):
    """Where the compiled loop writes one seed's run."""

    counts: np.ndarray  # K: finished pulls per arm
    last: np.ndarray  # K: each arm's last reward
    busy_time: np.ndarray  # W: time each worker spent on pulls
    result: np.ndarray  # [realised reward, wall time at the last finish, cost spent]
    events: np.ndarray  # P x 4 or 0 x 4: (arm, worker, start, end) of every pull started


class EventScratch(NamedTuple):
    """The event loop's working arrays for one seed, made before it (the loop runs without
    Numba's runtime: :func:`~risingbandits._jit.runtime_free`, so it allocates nothing)."""

    w_arm: np.ndarray  # W: the arm each worker trains (-1: free)
    w_end: np.ndarray  # W: when its pull finishes
    started: np.ndarray  # K: pulls started per arm
    busy: np.ndarray  # K: bool, on a worker now
    allowed: np.ndarray  # K: bool, free and its next pull fits
    left: np.ndarray  # K: the pulls it could still make with the budget left
    reach: np.ndarray  # K: its last pulls_left plus its started
    spent: np.ndarray  # K: the cost of its finished pulls


def event_scratch(n_arms: int, n_workers: int) -> EventScratch:
    """Working arrays for one seed: every worker free, nothing started."""
    k = n_arms
    return EventScratch(
        np.full(n_workers, -1, np.int64),
        np.zeros(n_workers),
        np.zeros(k, np.int64),
        np.zeros(k, np.bool_),
        np.zeros(k, np.bool_),
        np.zeros(k),
        np.zeros(k, np.int64),
        np.zeros(k),
    )


@helper
def _pulls_left(cum: np.ndarray, arm: int, done: int, money: float, hint: int) -> int:
    """The most pulls of ``arm`` (``done`` started) that fit in ``money`` (cumulative costs
    ``cum[arm]``), found by walking from ``hint`` (the last answer plus ``done``: between two
    selects it moves little, so this costs a few steps, not a search)."""
    target = cum[arm, done] + money
    last = cum.shape[1] - 1
    n = min(max(hint, done), last)
    while n < last and cum[arm, n + 1] <= target:
        n += 1
    while n > done and cum[arm, n] > target:
        n -= 1
    return n - done


@called_helper
def _fallback(state: Any, allowed: np.ndarray, started: np.ndarray) -> int:
    """The allowed arm a policy that does not plan in cost ranks highest (its last ``scores``),
    else the allowed arm with the fewest pulls (lowest index); -1 if none is allowed."""
    scores, _ = trace_view(state)
    best = -1
    if scores.shape[0] == allowed.shape[0]:
        for i in range(allowed.shape[0]):
            if allowed[i] and scores[i] > -np.inf and (best < 0 or scores[i] > scores[best]):
                best = i
    if best < 0:
        for i in range(allowed.shape[0]):
            if allowed[i] and (best < 0 or started[i] < started[best]):
                best = i
    return best


@runtime_free
def _select_call(state: Any, t: int, rng: np.ndarray) -> int:
    """The policy's ``select`` as one call for the loop's two uses (a free worker to fill; a
    select whose choice is dropped, when two results arrive in a row): its kernel is compiled
    once, not inlined twice. Numba's inlining is most of a kernel's compile time: HACE-UCB's
    event loop compiled in 133 s with two copies, 80 s with the call, at 4.2 -> 3.9 M pulls/s
    (``benchmarks/RESULTS.md``). Without Numba's runtime, as the loop."""
    return policy_select(state, t, rng)


@called_helper
def _plan_called(
    state: Any, allowed: np.ndarray, left: np.ndarray, spent: np.ndarray, unit: float, lanes: int
) -> None:
    """The last ``plan``, after the loop, as a call (the loop's inlined one stays single)."""
    policy_plan(state, allowed, left, spent, unit, lanes)


@runtime_free
def _events(
    state: Any,
    means: np.ndarray,
    noise_kind: int,
    noise_sigma: float,
    noise_std: np.ndarray,
    key: np.uint64,
    cum: np.ndarray,
    budget: float,
    total: bool,
    unit: float,
    planning: bool,
    rng: np.ndarray,
    out: EventRecord,
    work: EventScratch,
) -> int:
    """The event loop of one seed; returns the recommended arm at the end (module docstring).
    Compiled without Numba's runtime, as the pull simulator's step loop."""
    counts, last, busy_time = out.counts, out.last, out.busy_time
    n_arms, n_workers, table = counts.shape[0], busy_time.shape[0], means.shape[1]
    lanes = 1 if total else n_workers
    w_arm, w_end, started, busy = work.w_arm, work.w_end, work.started, work.busy
    allowed, left, reach, spent = work.allowed, work.left, work.reach, work.spent
    now, committed, realised = 0.0, 0.0, 0.0
    t, pulls = 0, 0
    updated = True  # the last kernel call was an update (or none yet)
    while True:
        money = budget - committed if total else budget - now
        for w in range(n_workers):  # fill the free workers, lowest index first
            if w_arm[w] >= 0:
                continue
            any_allowed = False
            for i in range(n_arms):
                n = started[i]
                fits = n < table and cum[i, n + 1] - cum[i, n] <= money
                allowed[i] = fits and not busy[i]
                any_allowed = any_allowed or allowed[i]
                if planning:  # (only a plan reads it)
                    more = _pulls_left(cum, i, n, money, reach[i])
                    reach[i] = n + more
                    left[i] = more
            if not any_allowed:
                break
            t += 1
            if planning:
                policy_plan(state, allowed, left, spent, unit, lanes)
            arm = _select_call(state, t, rng)
            updated = False
            if arm >= n_arms or (arm >= 0 and not allowed[arm]) or arm < -1:
                arm = _fallback(state, allowed, started)
            if arm < 0:  # the policy waits for a result
                break
            cost = cum[arm, started[arm] + 1] - cum[arm, started[arm]]
            w_arm[w], w_end[w] = arm, now + cost
            if pulls < out.events.shape[0]:
                out.events[pulls, 0], out.events[pulls, 1] = arm, w
                out.events[pulls, 2], out.events[pulls, 3] = now, now + cost
            busy[arm] = True
            started[arm] += 1
            pulls += 1
            committed += cost
            busy_time[w] += cost
            money = budget - committed if total else budget - now
        first = -1  # the next pull to finish (ties: lowest worker)
        for w in range(n_workers):
            if w_arm[w] >= 0 and (first < 0 or w_end[w] < w_end[first]):
                first = w
        if first < 0:
            break
        arm = w_arm[first]
        now = w_end[first]
        w_arm[first] = -1
        busy[arm] = False
        counts[arm] += 1
        n = counts[arm]
        reward = draw_reward(means, noise_kind, noise_sigma, noise_std, key, arm, n)
        realised += reward
        last[arm] = reward
        spent[arm] += cum[arm, n] - cum[arm, n - 1]
        if updated:  # the kernel contract: a select before each update
            _select_call(state, t, rng)
        policy_update(state, arm, reward, t, rng)
        updated = True
    if planning:  # the finished pulls' cost, for a recommendation in cost (the budget is over)
        for i in range(n_arms):  # (slice assignments would need Numba's runtime)
            allowed[i], left[i] = False, 0.0
        _plan_called(state, allowed, left, spent, unit, lanes)
    out.result[0] = realised
    out.result[1] = now
    out.result[2] = committed
    return policy_recommend(state, counts, last)


@jit
def _run_events(
    state: Any,
    means: np.ndarray,
    noise_kind: int,
    noise_sigma: float,
    noise_std: np.ndarray,
    key: np.uint64,
    cum: np.ndarray,
    budget: float,
    total: bool,
    unit: float,
    planning: bool,
    rng: np.ndarray,
    out: EventRecord,
    work: EventScratch,
) -> int:
    """Run one seed (:func:`_events` on borrowed arrays, as :func:`risingbandits.simulate`)."""
    return _events(
        borrow(state),
        borrow(means),
        noise_kind,
        noise_sigma,
        borrow(noise_std),
        key,
        borrow(cum),
        budget,
        total,
        unit,
        planning,
        borrow(rng),
        borrow(out),
        borrow(work),
    )


def cumulative_costs(instance: RisingInstance) -> np.ndarray:
    """``cum[i, n]``: the cost of arm i's first n pulls (K x (T_max + 1), starting at 0)."""
    costs = instance.pull_costs
    cum = np.zeros((costs.shape[0], costs.shape[1] + 1))
    np.cumsum(costs, axis=1, out=cum[:, 1:])
    return cum


def reachable_pulls(instance: RisingInstance, budget: float) -> np.ndarray:
    """The most pulls each arm alone can make within ``budget`` (its own cost, one worker): a
    candidate's steps are sequential, so under a deadline or a bill of B this is its reach."""
    cum = cumulative_costs(instance)
    return np.array([np.searchsorted(row, budget * (1 + 1e-12), "right") - 1 for row in cum])


def most_pulls(instance: RisingInstance, reach: np.ndarray, capacity: float) -> int:
    """The most pulls a budget can buy (at least 1): each arm at most its ``reach``, and the
    cheapest pulls first within the ``capacity`` of all workers (:func:`budget_capacity`; a bound
    when an arm's costs fall with its pulls, exact when they do not)."""
    costs = np.sort(np.concatenate([instance.pull_costs[i, :n] for i, n in enumerate(reach)]))
    fits = int(np.searchsorted(np.cumsum(costs), capacity * (1 + 1e-12), "right"))
    return max(1, fits)


def budget_capacity(budget: float, workers: int, budget_kind: str, n_arms: int) -> float:
    """The cost the workers together can spend: B for a total budget; for a deadline, B times
    the workers that can be busy at once, min(W, K) (a candidate trains on one worker at a
    time)."""
    return budget if budget_kind == "total" else budget * min(workers, n_arms)


@dataclass(frozen=True, eq=False)
class BudgetResult:
    """Per-seed results of one policy on one instance with a budget in cost and W workers.

    ``final_gap``: the best value a candidate alone reaches within the budget
    (``best_reachable``; on the test curves when the instance has them) minus the value of the
    recommended candidate after its pulls. ``cost_regret``: the budget's capacity
    (:func:`budget_capacity`) times the cost-weighted mean score of the best single commitment
    (the arm whose reachable pulls have the best score per unit of cost), minus the cost-weighted
    score of the pulls made (sum of cost x mean); with W = 1 and unit costs it is the policy
    regret of :func:`risingbandits.simulate`. ``wall_time``: when the last pull finished;
    ``idle``: each worker's time without a pull, up to the deadline (``deadline``) or to the
    end of the run (``total``). ``reach``: the most pulls each arm alone can make within the
    budget. ``events`` (with ``record_events``): seeds x P x 4, each pull started as (arm,
    worker, start, end) in the order started, rows of -1 after a seed's last pull.
    """

    instance: str
    policy: dict[str, Any]
    budget: float
    budget_kind: str
    workers: int
    horizon: int
    seeds: tuple[Any, ...]
    pulls: np.ndarray
    reward: np.ndarray
    spent: np.ndarray
    wall_time: np.ndarray
    idle: np.ndarray
    recommended: np.ndarray
    final_gap: np.ndarray
    cost_regret: np.ndarray
    best_reachable: float
    reach: np.ndarray = field(repr=False)
    events: np.ndarray | None = field(default=None, repr=False)

    @property
    def pulls_mean(self) -> np.ndarray:
        """Mean pulls per arm over seeds."""
        return np.asarray(self.pulls.mean(axis=0))


def _check_budget(budget: Any, workers: Any, budget_kind: Any) -> None:
    if not number(budget) or budget <= 0:
        raise ValueError(f"budget={budget!r} is not allowed: use a finite number > 0")
    if (
        isinstance(workers, bool)
        or not isinstance(workers, int | np.integer)
        or not 1 <= workers <= MAX_WORKERS
    ):
        raise ValueError(f"workers={workers!r} is not allowed: use an integer in 1..{MAX_WORKERS}")
    if budget_kind not in BUDGET_KINDS:
        raise ValueError(
            f"budget_kind={budget_kind!r} is not allowed: use 'deadline' (wall clock, workers in "
            "parallel) or 'total' (cost summed over workers)"
        )


def simulate_budget(
    instance: RisingInstance,
    policy: Policy | str,
    budget: float,
    seeds: int | Sequence[SeedLike] = 1,
    *,
    workers: int = 1,
    budget_kind: BudgetKind = "deadline",
    plan: bool = True,
    record_events: bool = False,
) -> BudgetResult:
    """Run ``policy`` on ``instance`` with a budget in cost and ``workers`` workers, once per
    seed (module docstring). ``budget_kind`` is ``"deadline"`` (wall clock) or ``"total"``
    (cost summed over workers); seeds as in :func:`risingbandits.simulate`. ``plan=False``
    never tells the policy about the budget in cost: a policy that plans in cost then runs
    counting pulls (the comparison "the same policy counting pulls"). ``record_events`` keeps
    every pull as (arm, worker, start, end) (:attr:`BudgetResult.events`).
    """
    from risingbandits.simulate import _seed_list, check_instance

    check_instance(instance)
    policy = as_policy(policy)
    _check_budget(budget, workers, budget_kind)
    seed_list = _seed_list(seeds)
    n_seeds, n_arms = len(seed_list), instance.n_arms
    capacity = budget_capacity(float(budget), int(workers), budget_kind, n_arms)
    if not number(capacity):
        raise ValueError(
            f"budget={budget!r} is not allowed with workers={workers}: the cost they can spend "
            "together, budget x min(workers, arms), must be a finite number"
        )
    cum = cumulative_costs(instance)
    reach = reachable_pulls(instance, float(budget))
    if not reach.any():
        raise ValueError(
            f"budget={budget!r} is not allowed: it buys no step (the cheapest first step costs "
            f"{float(instance.pull_costs[:, 0].min()):g}); give at least that"
        )
    horizon = most_pulls(instance, reach, capacity)
    unit = capacity / horizon
    pulls = np.zeros((n_seeds, n_arms), np.int64)
    last = np.zeros((n_seeds, n_arms))
    busy_time = np.zeros((n_seeds, int(workers)))
    scalars = np.zeros((n_seeds, 3))
    recommended = np.zeros(n_seeds, np.int64)
    noise = instance.noise
    events = np.full((n_seeds, horizon if record_events else 0, 4), -1.0)
    for s, seed in enumerate(seed_list):
        state = policy.init_state(n_arms, horizon, instance.noise_proxy)
        planning = bool(plan) and plans_in_cost(state)
        out = EventRecord(pulls[s], last[s], busy_time[s], scalars[s], events[s])
        recommended[s] = _run_events(
            state,
            instance.means,
            noise.code,
            noise.sigma,
            instance.noise_table,
            reward_key(seed),
            cum,
            float(budget),
            budget_kind == "total",
            float(unit),
            planning,
            policy_rng(seed),
            out,
            event_scratch(n_arms, int(workers)),
        )
    wall = scalars[:, 1]
    end = np.full(n_seeds, float(budget)) if budget_kind == "deadline" else wall
    judged = instance.oracle.judged
    best = (
        max(float(judged[i, n - 1]) for i, n in enumerate(reach) if n > 0) if reach.any() else 0.0
    )
    n_rec = pulls[np.arange(n_seeds), recommended]
    deployed = np.where(n_rec > 0, judged[recommended, np.maximum(n_rec, 1) - 1], 0.0)
    return BudgetResult(
        instance=instance.name,
        policy=policy.to_dict(),
        budget=float(budget),
        budget_kind=budget_kind,
        workers=int(workers),
        horizon=horizon,
        seeds=tuple(seed_list),
        pulls=pulls,
        reward=scalars[:, 0].copy(),
        spent=scalars[:, 2].copy(),
        wall_time=wall.copy(),
        idle=end[:, None] - busy_time,
        recommended=recommended,
        final_gap=best - deployed,
        cost_regret=_cost_regret(instance, cum, pulls, reach, capacity),
        best_reachable=best,
        reach=reach,
        events=_trimmed(events) if record_events else None,
    )


def _trimmed(events: np.ndarray) -> np.ndarray:
    """The recorded events without the unused rows at the end (seeds x P x 4, -1 padded)."""
    used = int((events[:, :, 0] >= 0).sum(axis=1).max(initial=0))
    return events[:, :used].copy()


def _cost_regret(
    instance: RisingInstance,
    cum: np.ndarray,
    pulls: np.ndarray,
    reach: np.ndarray,
    capacity: float,
) -> np.ndarray:
    """:attr:`BudgetResult.cost_regret` of runs with finished pulls ``pulls`` (seeds x K)."""
    weighted = np.zeros_like(cum)
    np.cumsum(instance.pull_costs * instance.means, axis=1, out=weighted[:, 1:])
    arms = np.arange(instance.n_arms)
    rates = [weighted[i, n] / cum[i, n] for i, n in zip(arms, reach, strict=True) if n > 0]
    best_rate = max(rates) if rates else 0.0
    collected = weighted[arms, pulls].sum(axis=-1)
    return np.asarray(capacity * best_rate - collected, dtype=np.float64)
