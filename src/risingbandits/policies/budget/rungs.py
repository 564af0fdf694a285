"""ASHA and Hyperband over a fixed set of candidates, with resource measured in cost (issue 22).

Both methods give candidates *resource* in steps of a schedule and compare them at equal
resource. Here the resource of a candidate is what was spent on its finished pulls:

* with a budget in cost (a driver that calls ``plan`` before every ``select``: the
  event-driven simulator, a model selector with a cost) it is the cost reported in ``spent``,
  and the budget is B = T x ``unit`` (``unit``: the cost one pull of the horizon T stands for);
* without one (the pull simulator, plain online use) every pull costs 1: the resource is the
  pull count and B = T, so both are ordinary fixed-budget policies in pulls.

The statistic of a candidate is the mean of the last quarter of its rewards (at least one), as
in Successive Halving's default and HACE-UCB's halving rounds
(:func:`~risingbandits.policies.budget.phases.recent_mean`): on a rising curve the mean of every
reward lags far behind the current value.

A driver with W workers calls ``select`` once per free worker, and results arrive for pulls
selected several selects ago. The kernels therefore count only finished pulls (``hist.counts``,
``spent``) and never pull an arm that ``plan`` did not allow (a candidate trains on one worker
at a time, so an arm with a pull in flight is not allowed); ``select`` returns -1 (leave the
worker idle until the next result) when the rule's arm is in flight. An arm whose next pull no
longer fits the budget (``left`` < 1) can never be pulled again: the rules pass over it instead
of waiting for it (otherwise a run could end with budget left, every worker waiting). A driver
reports a finished pull's reward (``update``) before the ``plan`` that counts its cost.

Run state pieces shared by both: :class:`Spend` (what the budget allows), the arm history and
each arm's statistic; the trace view is the elimination kind's (statistic, then 0 for an arm in
play and -inf for the others).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from risingbandits._jit import called_helper, helper
from risingbandits.policies.base import Param, Policy
from risingbandits.policies.budget.phases import recent_mean, reject_down_to, schedule_from_fresh
from risingbandits.policies.budget.successive_halving import AUTO_FRACTION
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.checkpoint import (
    RunFacts,
    check_within,
    refuse,
    register_state_check,
)
from risingbandits.policies.machinery.common import largest, set_terms
from risingbandits.policies.machinery.kernel import register_kernel, register_plan
from risingbandits.policies.machinery.rng import rng_below, rng_next, rng_uniform
from risingbandits.policies.machinery.transplant import ArmPlan, carry_fields, register_transplant
from risingbandits.policies.machinery.windows import ArmHistory, history_push, new_history

# -- shared: the budget, the statistic, the trace ---------------------------------------------


class Spend(NamedTuple):
    """What the budget allows, as the last ``plan`` said (every arm, in pulls, without one)."""

    res: np.ndarray  # K: resource of the finished pulls (cost when planned, else pulls)
    allowed: np.ndarray  # bool K: a worker may start the arm now
    open: np.ndarray  # bool K: its next pull still fits the budget (it may be allowed later)
    planned: np.ndarray  # [bool]: a plan was received
    unit: np.ndarray  # [float]: the cost of one pull of the horizon (1 in pulls)


def new_spend(n_arms: int) -> Spend:
    """A run in pulls until a plan says otherwise."""
    return Spend(
        np.zeros(n_arms),
        np.ones(n_arms, np.bool_),
        np.ones(n_arms, np.bool_),
        np.zeros(1, np.bool_),
        np.ones(1),
    )


@helper
def take_plan(
    spend: Spend, allowed: np.ndarray, left: np.ndarray, spent: np.ndarray, unit: float
) -> None:
    """Copy a plan (:mod:`~risingbandits.policies.machinery.kernel`): resource = cost spent."""
    spend.planned[0] = True
    spend.unit[0] = unit
    for i in range(spend.res.shape[0]):
        spend.res[i] = spent[i]
        spend.allowed[i] = allowed[i]
        spend.open[i] = left[i] >= 1.0


@helper
def observe(state: Any, arm: int, reward: float) -> bool:
    """Record a finished pull and the arm's statistic; in pulls also its resource (then True:
    the caller moves the schedule on; with a plan the next ``plan`` brings the cost)."""
    history_push(state.hist, arm, reward)
    n = state.hist.counts[arm]
    state.values[arm] = recent_mean(state.hist.prefix, arm, n, AUTO_FRACTION, 1)
    if state.spend.planned[0]:
        return False
    state.spend.res[arm] = n
    return True


@helper
def show(state: Any, i: int, in_play: bool) -> None:
    """Arm i in the trace view: its statistic, then 0 if it is in play, else -inf."""
    set_terms(state.scores, state.terms, i, state.values[i], 0.0 if in_play else -np.inf)


def ceil_log(n: int, base: int) -> int:
    """The smallest r with base^r >= n."""
    r = 0
    while base**r < n:
        r += 1
    return r


def floor_log(n: int, base: int) -> int:
    """The largest s with base^s <= n (n >= 1)."""
    s = 0
    while base ** (s + 1) <= n:
        s += 1
    return s


ETA = Param(
    "eta",
    3,
    "reduction factor: the top 1/eta of a rung go on; rung resources grow by eta",
    kind=int,
    low=2,
)


class RungPolicy(Policy):
    """Base of the two: they use the horizon (B = T x unit) and trace like elimination methods."""

    trace_kind = "elimination"

    @property
    def uses_horizon(self) -> bool:
        return True


# -- ASHA ---------------------------------------------------------------------------------------


class AshaState(NamedTuple):
    hist: ArmHistory
    spend: Spend
    values: np.ndarray  # each arm's statistic after its last pull
    level: np.ndarray  # int64 K: rungs completed (0..R)
    goal: np.ndarray  # int64 K: rung its last pull aimed at (-1: never pulled); busy if >= level
    stat: np.ndarray  # K x R: statistic when the arm completed each rung
    top: np.ndarray  # bool K: among the top floor(n_k / eta) of its highest completed rung k
    prio: np.ndarray  # K: random order of statistic ties, drawn when first seen (0: not yet)
    dirty: np.ndarray  # [bool]: rebuild levels and ranks at the next call (fresh, transplanted)
    scores: np.ndarray
    terms: np.ndarray  # K x 2: statistic, 0 (in play) or -inf (paused)
    eta: int
    r0: float  # resource of rung 0 in pulls (B / (K R) with unit 1)


@helper
def rung_resource(state: AshaState, k: int) -> float:
    """r_k = r_0 eta^k, in cost (unit) or pulls."""
    return state.r0 * float(state.eta) ** k * state.spend.unit[0]


@helper
def beats(state: AshaState, a: int, b: int, k: int) -> bool:
    """Whether arm a ranks above arm b in rung k: higher statistic there, ties by the random
    order, then the lower index."""
    sa, sb = state.stat[a, k], state.stat[b, k]
    if sa != sb:
        return sa > sb
    if state.prio[a] != state.prio[b]:
        return state.prio[a] > state.prio[b]
    return a < b


@called_helper
def rank_rung(state: AshaState, k: int) -> None:
    """Mark the arms whose highest completed rung is k that are among its top floor(n_k / eta)
    (n_k: the arms that completed rung k). Runs when an arm joins rung k: only then do n_k or
    the ranking change."""
    level = state.level
    members = 0
    for i in range(level.shape[0]):
        if level[i] > k:
            members += 1
    quota = members // state.eta
    for j in range(level.shape[0]):
        if level[j] == k + 1:
            above = 0
            for m in range(level.shape[0]):
                if above >= quota:
                    break
                if level[m] > k and beats(state, m, j, k):
                    above += 1
            state.top[j] = above < quota


@helper
def reached(state: AshaState, i: int) -> bool:
    """Whether arm i's resource reaches the rung above its level (there is one)."""
    lv = state.level[i]
    return lv < state.stat.shape[1] and state.spend.res[i] >= rung_resource(state, lv)


@helper
def climb(state: AshaState, i: int) -> int:
    """Record the rungs arm i completed (resource >= r_k) with its statistic now; returns its
    level before."""
    before = state.level[i]
    while reached(state, i):
        state.stat[i, state.level[i]] = state.values[i]
        state.level[i] += 1
    return before


@called_helper
def settle(state: AshaState, i: int) -> None:
    """Arm i's completed rungs, and the ranks of the rungs it joined."""
    before = climb(state, i)
    for k in range(before, state.level[i]):
        rank_rung(state, k)


@called_helper
def rebuild(state: AshaState, rng: np.ndarray) -> None:
    """A fresh or transplanted state (its levels within this run's R rungs already,
    :func:`_carry_rungs`): draw the tie order of arms not seen yet, record the rungs completed
    at this run's thresholds (with the statistic now) and rank every rung."""
    rungs = state.stat.shape[1]
    for i in range(state.level.shape[0]):
        if state.prio[i] == 0.0:
            state.prio[i] = 1.0 - rng_uniform(rng)  # in (0, 1]
        climb(state, i)
    for k in range(rungs):
        rank_rung(state, k)
    state.dirty[0] = False


@called_helper
def leader(state: AshaState, only_open: bool) -> int:
    """The arm at the highest rung reached with the best current statistic (ties: lowest
    index); ``only_open``: among the arms whose next pull still fits the budget (-1 if none),
    else an arm that can no longer be pulled counts as at the top rung (with resource in cost,
    an expensive arm climbs the rungs with fewer pulls: at the end of the budget, a cheap arm
    that trained as far as it could competes with it by its statistic)."""
    best, best_level = -1, -1
    rungs = state.stat.shape[1]
    for i in range(state.level.shape[0]):
        if only_open and not state.spend.open[i]:
            continue
        lv = state.level[i] if state.spend.open[i] else rungs
        if (
            best < 0
            or lv > best_level
            or (lv == best_level and state.values[i] > state.values[best])
        ):
            best, best_level = i, lv
    return best


@helper
def promoted_first(state: AshaState, a: int, b: int) -> bool:
    """Whether arm a is promoted before arm b: a higher rung, or the same rung and ranked
    above it there."""
    la, lb = state.level[a], state.level[b]
    return la > lb or (la == lb and beats(state, a, b, la - 1))


@called_helper
def asha_choice(state: AshaState) -> int:
    """The rule of :class:`Asha` (its docstring, a-d)."""
    level, goal, allowed = state.level, state.goal, state.spend.allowed
    rungs = state.stat.shape[1]
    n_arms = level.shape[0]
    for i in range(n_arms):  # a) an unfinished job
        if allowed[i] and goal[i] >= level[i]:
            return i
    best = -1
    for i in range(n_arms):  # b) a promotion, from the top rung down
        lv = level[i]
        promotable = allowed[i] and state.top[i] and 0 < lv < rungs and goal[i] < lv
        if promotable and (best < 0 or promoted_first(state, i, best)):
            best = i
    if best >= 0:
        return best
    for i in range(n_arms):  # c) a candidate never pulled
        if allowed[i] and goal[i] < 0:
            return i
    best = leader(state, True)  # d) the leader goes on (or the worker waits for it)
    return best if best >= 0 and allowed[best] else -1


def _asha_select(state: AshaState, t: int, rng: np.ndarray) -> int:
    if state.dirty[0]:
        rebuild(state, rng)
    arm = asha_choice(state)
    rungs = state.stat.shape[1]
    highest = largest(state.level)
    for i in range(state.level.shape[0]):
        lv, aim = state.level[i], state.goal[i]
        show(state, i, aim >= lv or aim < 0 or (state.top[i] and lv < rungs) or lv == highest)
    return arm


def _asha_update(state: AshaState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    if state.dirty[0]:
        rebuild(state, rng)
    lv = state.level[arm]
    if lv < state.stat.shape[1] and state.goal[arm] < lv:
        state.goal[arm] = lv  # pulled past its last rung: promoted (or started) towards rung lv
    if observe(state, arm, reward) and reached(state, arm):
        settle(state, arm)


def _asha_recommend(state: AshaState, counts: np.ndarray, last: np.ndarray) -> int:
    return leader(state, False)


def _asha_plan(
    state: AshaState,
    allowed: np.ndarray,
    left: np.ndarray,
    spent: np.ndarray,
    unit: float,
    lanes: int,
) -> None:
    take_plan(state.spend, allowed, left, spent, unit)
    if not state.dirty[0]:  # (else the next select rebuilds everything)
        for i in range(state.level.shape[0]):
            if reached(state, i):  # (settle is a call: only for an arm that climbs)
                settle(state, i)


def _carry_rungs(fresh: AshaState, old: AshaState, plan: ArmPlan) -> AshaState:
    """Transplant rule: R, r_0 and eta come from the fresh state (the new K and T); each kept
    arm keeps its progress and its statistic at the rungs both runs have, and the next call
    rebuilds levels and ranks for the new thresholds (:func:`rebuild`). The statistic table is
    copied here by arm and rung (R may equal K, where the default rule would take the rung axis
    for an arm axis). Levels and goals are brought within the new R rungs here, not at the next
    call: a checkpoint saved before it kept them past the rungs, and loading it refused them."""
    stat, dirty = fresh.stat.copy(), fresh.dirty.copy()
    rows = np.flatnonzero(plan.keep >= 0)
    width = min(stat.shape[1], old.stat.shape[1])
    stat[rows, :width] = old.stat[plan.keep[rows], :width]
    state = carry_fields(fresh, old, plan)._replace(stat=stat, dirty=dirty)
    np.minimum(state.level, stat.shape[1], out=state.level)
    np.minimum(state.goal, stat.shape[1] - 1, out=state.goal)
    return state


def _check_rungs(field: str, state: AshaState, facts: RunFacts) -> None:
    """Levels and goals index the rungs."""
    rungs = state.stat.shape[1]
    check_within(f"{field}.level", state.level, 0, rungs)
    check_within(f"{field}.goal", state.goal, -1, rungs - 1)


register_kernel(AshaState, _asha_select, _asha_update, _asha_recommend)
register_plan(AshaState, _asha_plan)
register_transplant(AshaState, _carry_rungs)
register_state_check(AshaState, _check_rungs)


class Asha(RungPolicy):
    """ASHA, asynchronous successive halving (promotion rule), over a fixed set of candidates,
    with resource measured in cost (uses T).

    Paper: Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht, Talwalkar, "A System for
    Massively Parallel Hyperparameter Tuning", MLSys 2020, Algorithm 2. Resource, budget and
    statistic: module docstring. Rungs k = 0..R-1 with R = ceil(log_eta K) + 1 and rung
    resource r_k = r_0 eta^k, r_0 = B / (K R): Successive Halving's first-round share with R
    rounds, so that the rungs of a synchronous run fit in B. An arm *completes rung k* when its
    resource reaches r_k; its statistic then is its statistic at rung k. A free worker gets:

    a) an unfinished job: an arm started towards r_0, or promoted towards r_{k+1}, that has not
       reached it (lowest index first);
    b) else a promotion, from the top rung down: in rung k (the arms that completed it), of the
       top floor(n_k / eta) by their statistic at rung k, the best one not yet promoted beyond
       k (the paper's rule, with the top rung's arms never promoted);
    c) else a candidate never pulled, lowest index first (the paper draws a new configuration;
       here the candidates are given, and exchangeable a priori);
    d) else, as there is no new configuration to draw (K is finite; this completion rule is
       ours, not the paper's), the arm at the highest rung reached with the best statistic goes
       on (in pulls, the rest of the budget).

    Only arms the budget allows are chosen; when d)'s arm has a pull in flight the worker
    waits (-1). Recommendation: the arm at the highest rung reached with the best current
    statistic (ties: lowest index). Ties of statistics within a rung follow a random order of
    the candidates, drawn once (the policy's generator). Trace: statistic, and 0 for the arms
    in play (a job, a promotion, a start, the highest rung), -inf for the paused ones (ASHA
    may resume a paused arm when more arms complete its rung).

    Parameter:
      eta: reduction factor, an integer >= 2. Default 3, the Hyperband paper's, Syne Tune's and
        Optuna's HyperbandPruner's; the ASHA paper's experiments and Ray Tune's ASHAScheduler
        use 4. The same default as :class:`Hyperband` here, so that the two compare at equal
        eta.
    """

    name = "asha"
    summary = "ASHA: asynchronous successive halving over the candidates, resource in cost"
    paper = (
        "Li, Jamieson, Rostamizadeh, Gonina, Ben-tzur, Hardt, Recht, Talwalkar 2020 (MLSys), "
        "Algorithm 2 (ASHA)"
    )
    params_spec = (ETA,)
    trace_terms = ("statistic", "paused")

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        eta = int(self._params["eta"])
        rungs = ceil_log(n_arms, eta) + 1
        return AshaState(
            new_history(n_arms, held(horizon, capacity)),
            new_spend(n_arms),
            np.zeros(n_arms),
            np.zeros(n_arms, np.int64),
            np.full(n_arms, -1, np.int64),
            np.zeros((n_arms, rungs)),
            np.zeros(n_arms, np.bool_),
            np.zeros(n_arms),
            np.ones(1, np.bool_),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            eta,
            float(horizon) / (n_arms * rungs),
        )


# -- Hyperband ----------------------------------------------------------------------------------


class HyperbandState(NamedTuple):
    hist: ArmHistory
    spend: Spend
    values: np.ndarray  # each arm's statistic after its last pull
    active: np.ndarray  # bool K: a survivor of the current bracket
    final: np.ndarray  # bool K: a final survivor of a completed bracket
    base: np.ndarray  # K: resource at the start of the current bracket
    targets: np.ndarray  # brackets x (s_max + 1): resource per survivor within the bracket
    keep: np.ndarray  # brackets x (s_max + 2): bracket size, then survivors after each round
    pos: np.ndarray  # int64 [bracket, round]: round -1 before the bracket's draw
    ties: np.ndarray  # uint64[2]: generator of draws and elimination ties, keyed once
    keyed: np.ndarray  # [bool]
    scores: np.ndarray
    terms: np.ndarray  # K x 2: statistic, 0 (a survivor) or -inf


def hyperband_schedule(
    n_arms: int, horizon: float, eta: int, brackets: int | str = "all"
) -> tuple[np.ndarray, np.ndarray]:
    """(targets, keep) of :class:`Hyperband` over ``n_arms`` candidates and budget ``horizon``
    (pulls at unit cost): s_max = floor(log_eta K); bracket b runs s = s_max - b with budget
    B / (number of brackets) and n_s = min(K, ceil((s_max + 1) eta^s / (s + 1))) candidates
    (all K for s = s_max); round i gives each of its |S_i| survivors
    budget / ((s + 1) |S_i|) more (``targets[b, i]``: cumulative within the bracket) and keeps
    ceil(|S_i| / eta) (``keep[b, i + 1]``; ``keep[b, 0]`` = n_s)."""
    s_max = floor_log(n_arms, eta)
    count = s_max + 1 if brackets == "all" else min(int(brackets), s_max + 1)
    targets = np.zeros((count, s_max + 1))
    keep = np.zeros((count, s_max + 2), np.int64)
    for b in range(count):
        s = s_max - b
        size = n_arms if s == s_max else min(n_arms, -(-(s_max + 1) * eta**s // (s + 1)))
        keep[b, 0] = size
        given = 0.0
        for i in range(s + 1):
            given += horizon / (count * (s + 1) * size)
            targets[b, i] = given
            size = -(-size // eta)
            keep[b, i + 1] = size
    return targets, keep


@called_helper
def draw_bracket(active: np.ndarray, size: int, ties: np.ndarray) -> None:
    """``size`` arms drawn uniformly without replacement (all when size >= K)."""
    n_arms = active.shape[0]
    for i in range(n_arms):
        active[i] = size >= n_arms
    if size >= n_arms:
        return
    for j in range(size):
        pick = rng_below(ties, n_arms - j)
        for i in range(n_arms):
            if not active[i]:
                if pick == 0:
                    active[i] = True
                    break
                pick -= 1


@helper
def round_short(state: HyperbandState, b: int, i: int) -> bool:
    """Whether a survivor of round i of bracket b is short of the round's target and can still
    be pulled (its next pull fits the budget): the round goes on."""
    goal = state.targets[b, i] * state.spend.unit[0]
    res = state.spend.res
    for j in range(state.active.shape[0]):
        if state.active[j] and state.spend.open[j] and res[j] - state.base[j] < goal:
            return True
    return False


@helper
def settled(state: HyperbandState) -> bool:
    """Whether :func:`advance` would change nothing now (not keyed yet, the brackets over, or
    a round that goes on): the plan, select and update skip that call, which passes the whole
    state (Hyperband's event loop ran at 1.8 M pulls/s with two such calls per pull)."""
    b, i = state.pos[0], state.pos[1]
    brackets, width = state.targets.shape
    if not state.keyed[0] or b >= brackets:
        return True
    return 0 <= i < width - b and round_short(state, b, i)


@called_helper
def advance(state: HyperbandState) -> None:
    """Move the schedule on as far as the resource allows: draw a bracket's candidates, end the
    rounds every survivor has reached (or can no longer reach: its next pull does not fit the
    budget), end the bracket after its last round (its survivors become final survivors)."""
    if not state.keyed[0]:
        return
    pos, active, res = state.pos, state.active, state.spend.res
    brackets, width = state.targets.shape
    while pos[0] < brackets:
        b, i = pos[0], pos[1]
        if i < 0:
            draw_bracket(active, state.keep[b, 0], state.ties)
            state.base[:] = res
            pos[1] = 0
        elif i >= width - b:
            for j in range(active.shape[0]):
                state.final[j] = state.final[j] or active[j]
                active[j] = False
            pos[0], pos[1] = b + 1, -1
        elif round_short(state, b, i):
            return
        else:
            reject_down_to(active, state.values, state.keep[b, i + 1], state.ties)
            pos[1] = i + 1


@helper
def best_in(state: HyperbandState, pool: np.ndarray, only_open: bool) -> int:
    """The arm of ``pool`` with the best statistic (ties: lowest index; -1 if none);
    ``only_open``: among those whose next pull still fits the budget."""
    best = -1
    for i in range(pool.shape[0]):
        usable = pool[i] and (not only_open or state.spend.open[i])
        if usable and (best < 0 or state.values[i] > state.values[best]):
            best = i
    return best


@called_helper
def hyperband_recommend(state: HyperbandState, only_open: bool) -> int:
    """The best statistic among the completed brackets' final survivors, else among the current
    survivors (:func:`best_in`)."""
    best = best_in(state, state.final, only_open)
    return best if best >= 0 else best_in(state, state.active, only_open)


@called_helper
def hyperband_choice(state: HyperbandState) -> int:
    """In a round, the allowed survivor below its target with the least resource within the
    bracket (ties: lowest index); after the last bracket, the recommended arm; -1: wait."""
    allowed, res = state.spend.allowed, state.spend.res
    if state.pos[0] >= state.targets.shape[0]:
        best = hyperband_recommend(state, True)
        return best if best >= 0 and allowed[best] else -1
    goal = state.targets[state.pos[0], state.pos[1]] * state.spend.unit[0]
    best = -1
    for j in range(allowed.shape[0]):
        got = res[j] - state.base[j]
        short = state.active[j] and allowed[j] and got < goal
        if short and (best < 0 or got < res[best] - state.base[best]):
            best = j
    return best


def _hyperband_select(state: HyperbandState, t: int, rng: np.ndarray) -> int:
    if not state.keyed[0]:  # key the generator of draws and ties from the policy's own, once
        state.ties[0] = rng_next(rng)
        state.ties[1] = 0
        state.keyed[0] = True
    if not settled(state):
        advance(state)
    arm = hyperband_choice(state)
    done = state.pos[0] >= state.targets.shape[0]
    for i in range(state.active.shape[0]):
        show(state, i, state.active[i] or (done and state.final[i]))
    return arm


def _hyperband_update(
    state: HyperbandState, arm: int, reward: float, t: int, rng: np.ndarray
) -> None:
    if observe(state, arm, reward) and not settled(state):
        advance(state)


def _hyperband_recommend(state: HyperbandState, counts: np.ndarray, last: np.ndarray) -> int:
    return max(hyperband_recommend(state, False), 0)


def _hyperband_plan(
    state: HyperbandState,
    allowed: np.ndarray,
    left: np.ndarray,
    spent: np.ndarray,
    unit: float,
    lanes: int,
) -> None:
    take_plan(state.spend, allowed, left, spent, unit)
    if not settled(state):
        advance(state)


def _carry_hyperband(fresh: HyperbandState, old: HyperbandState, plan: ArmPlan) -> HyperbandState:
    """Transplant rule: the schedule's (:func:`schedule_from_fresh`), with the position brought
    within the new schedule: past its last bracket is its end, a round past a bracket's last
    ends the bracket (the old position was kept, and a checkpoint saved with it was refused on
    loading: 9 candidates retired to 2 leave one bracket of three)."""
    state = schedule_from_fresh(fresh, old, plan)
    brackets, width = state.targets.shape
    if state.pos[0] >= brackets:
        state.pos[:] = (brackets, -1)
    else:
        state.pos[1] = min(int(state.pos[1]), width - int(state.pos[0]))
    return state


def _check_position(field: str, state: HyperbandState, facts: RunFacts) -> None:
    """The position indexes the schedule (a bracket, a round or -1 before its draw)."""
    brackets, width = state.targets.shape
    check_within(f"{field}.pos", state.pos, -1, np.array([brackets, width]))
    if state.pos[0] < 0:
        raise refuse(f"{field}.pos[0]", int(state.pos[0]), f"use 0..{brackets}")


register_kernel(HyperbandState, _hyperband_select, _hyperband_update, _hyperband_recommend)
register_plan(HyperbandState, _hyperband_plan)
register_transplant(HyperbandState, _carry_hyperband)
register_state_check(HyperbandState, _check_position)


class Hyperband(RungPolicy):
    """Hyperband over a fixed set of candidates, synchronous, with resource measured in cost
    (uses T).

    Paper: Li, Jamieson, DeSalvo, Rostamizadeh, Talwalkar, "Hyperband: A Novel Bandit-Based
    Approach to Hyperparameter Optimization", JMLR 18(185), 2018, Algorithm 1. Resource, budget
    and statistic: module docstring. s_max = floor(log_eta K); brackets s = s_max, ..., 0, each
    with budget B / (s_max + 1); bracket s takes n_s = min(K, ceil((s_max + 1) eta^s / (s + 1)))
    candidates drawn at random (the policy's generator), all K for s = s_max (a choice for a
    fixed set: the formula's eta^s_max <= K would leave candidates out of the most exploratory
    bracket), and runs Successive Halving over them: s + 1 rounds, round i gives each survivor
    budget / ((s + 1) |S_i|) more resource (resource spent within this bracket) and keeps the
    ceil(|S_i| / eta) with the best statistic (ties at random) (:func:`hyperband_schedule`).
    Within a round the next pull goes to an allowed survivor below its target, least resource
    first (ties: lowest index); with none allowed the worker waits (-1). A survivor whose next
    pull no longer fits the budget counts as having reached its target. A candidate trained in
    an earlier bracket keeps its training (rested arms: training cannot be undone) and is
    compared by its statistic then. After the last bracket the rest of the budget goes to the
    recommended arm: the best statistic among every completed bracket's final survivors (before
    the first bracket ends, among the current survivors; ties: lowest index).

    Parameters:
      eta: reduction factor, an integer >= 2; default 3, the paper's (and Ray Tune's
        HyperBandScheduler's, Optuna's HyperbandPruner's).
      brackets: how many brackets, from s = s_max down, sharing B equally; "all" (default) is
        s_max + 1 (a larger number means all). brackets = 1 is Successive Halving over every
        candidate, with floor(log_eta K) + 1 rounds and resource in cost.
    """

    name = "hyperband"
    summary = "Hyperband: brackets of successive halving over the candidates, resource in cost"
    paper = "Li, Jamieson, DeSalvo, Rostamizadeh, Talwalkar 2018 (JMLR), Algorithm 1 (Hyperband)"
    params_spec = (
        ETA,
        Param(
            "brackets",
            "all",
            "brackets from s_max down, sharing the budget; all = floor(log_eta K) + 1",
            kind=int,
            low=1,
            special=("all",),
        ),
    )
    trace_terms = ("statistic", "eliminated")

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        targets, keep = hyperband_schedule(
            n_arms, horizon, int(self._params["eta"]), self._params["brackets"]
        )
        return HyperbandState(
            new_history(n_arms, held(horizon, capacity)),
            new_spend(n_arms),
            np.zeros(n_arms),
            np.zeros(n_arms, np.bool_),
            np.zeros(n_arms, np.bool_),
            np.zeros(n_arms),
            targets,
            keep,
            np.array([0, -1], np.int64),
            np.zeros(2, np.uint64),
            np.zeros(1, np.bool_),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
        )


__all__ = ["Asha", "Hyperband", "hyperband_schedule"]
