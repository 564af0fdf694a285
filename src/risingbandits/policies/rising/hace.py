"""HACE-UCB: successive Halving into ACE-UCB, the budget-aware model-selection policy (issue 21).

Why: ACE-UCB (:mod:`~risingbandits.policies.rising.ace`) leads when each candidate can get hundreds
of pulls, but a candidate with fewer than 2 w_min = 32 pulls is valued at the top, so with a few
dozen pulls per candidate its start is close to uniform allocation, and the model it deploys
has had a K-th of the budget. Successive Halving (Karnin et al. 2013) is near-optimal for best
arm identification with few pulls and gives the survivors most of the budget. HACE-UCB runs
the halving rounds a small budget calls for, then ACE-UCB among the survivors:

* **Schedule** (from K and T, :func:`hace_schedule`): the rounds of Successive Halving with eta
  = 2 (R = ceil(log2 K) rounds of floor(T' / (|S| R)) pulls per survivor, keep ceil(|S| / 2),
  on T' = (1 - ``reserve``) T: below), run only while the budget left per survivor is below
  ``index_from`` pulls. With T / K >=
  ``index_from`` no round is run and HACE-UCB is ACE-UCB with the warm-up below (the same
  choices, arm for arm; ACE-UCB itself from T / K >= 2 w_min / ``warmup_share`` = 128).
* **Warm-up** (:func:`warmup_w_min`): ACE-UCB values a candidate with fewer than 2 w_min pulls
  at the top; HACE-UCB caps w_min so that this warm-up takes at most ``warmup_share`` of the
  budget per candidate (w_min = 16 from T / K = 128 on, 8 at 64). With w_min = 16 at T / K = 64,
  half the budget went to the warm-up (``docs/hace-ucb-tuning.md``, step 5).
* **Reserve**: the rounds are planned on (1 - ``reserve``) T, so the last survivor (or ACE-UCB,
  after a hand-over) trains on the rest. The final-model gap is the wrong arm *plus* the
  deployed model's missing training; Successive Halving's schedule serves the first alone (with
  K = 8 its last survivor has had 7/24 of T) and at a few pulls per candidate, where curves are
  steep, the second weighs more (``docs/hace-ucb-tuning.md``, step 17).
* **Halving rounds**: a round robin over the survivors (fewest pulls first, lowest index on
  ties; in the trace +inf for the arm played, minus the pulls for the other survivors,
  :func:`~risingbandits.policies.machinery.common.show_queue`, so a selector whose forced
  candidate is busy starts the next survivor, never an eliminated one); at the end of a round
  the arms with the lowest statistic, the mean of their last ``halving_window`` x n rewards (at
  least one), are eliminated (ties at random:
  :func:`~risingbandits.policies.budget.phases.end_phases`).
* **Hand-over** (:func:`leader_clear`): after a sweep of the round robin (every survivor has
  the same pulls), once the leader's halving statistic leads the runner-up's by ``clear_by``
  x sigma_up x sqrt(2 / q) (q its rewards; sigma_up an upper 95% bound on the noise from the
  residuals alone, :func:`~risingbandits.policies.machinery.noise_level.noise_sigma_upper`),
  the remaining rounds are dropped.
* **Then ACE-UCB** on the survivors with the budget left (its index with the remaining horizon
  T - t + 1; :func:`~risingbandits.policies.rising.ace.ace_index` restricted to them; its
  round-robin start only when no round was run).
* **Commit** (:func:`commit_from`): while the warm-up is scaled (T / K < 128), the last
  ``commit`` x T pulls go to the survivor that would be deployed at each step (the highest
  level; the levels are the index, :func:`show_levels`). With a few dozen pulls per candidate
  ACE-UCB keeps exploring noisy arms to the end and the deployed model misses training (IMDB
  at 64 per candidate: 41% of the budget against R-UCBE's 77%, ``docs/hace-ucb-tuning.md``,
  steps 7 and 21); from T / K = 128 on ACE-UCB's own concentration serves, and a commit lost
  LCDB and live there (step 21).
* **Recommendation**: during the rounds the survivor with the best statistic; then ACE-UCB's,
  the survivor with the highest level (mean of its last w rewards). Correcting the level for
  its lag (plus the rising chord slope times (w - 1) / 2) was tried and deployed worse models
  on the development instances (noisy slopes; ``docs/hace-ucb-tuning.md``).

A budget in cost (issue 22: the event-driven simulator :mod:`risingbandits.simulate_budget`, a
model selector with ``cost=``), through the kernel's ``plan`` (the pulls each arm can still make
at its own cost, the cost spent on each, the lanes that spend the budget at once):

* the halving rounds give each survivor an equal share of *cost*: Successive Halving's schedule
  (on (1 - ``reserve``) T with one lane, on T with more: :func:`round_goal`) times the cost one
  pull of the horizon stands for, a survivor short of its round's goal
  pulled first (least cost spent), one whose next pull no longer fits counted as done, a
  worker with no survivor short of the goal left idle until a result arrives;
* with several lanes the round's leader does not wait for the round (:func:`round_leader`):
  the survivor with the best halving statistic among those with a finished pull is started
  whenever a worker may start it, the others going on with the round. A candidate trains on one
  worker at a time, so every moment the best waits for the round to end is training it never
  gets back (ASHA promotes a candidate as soon as it ranks; ``docs/deadlines-tuning.md``, "The
  leader does not wait for the round");
* they run while halving frees a worker (fewer lanes than survivors) and the survivors could
  not make ``index_from`` pulls of their share (pulls left x lanes / survivors) on average, each
  at least :data:`LEAST_SHARE` of it, decided before each round (:func:`enough_for_index`; when
  every survivor had to reach ``index_from``, one dear candidate kept a run in rounds that judge
  it on a few pulls of equal cost: ``docs/deadlines-tuning.md``, "The index does not wait for
  the dearest candidate"); a round keeps at least as many survivors as
  lanes (a worker freed below the lanes trains no survivor faster, a candidate training on
  one worker at a time: eliminating there only removes a candidate; K = 5 with four workers
  keeps 4, not 3, ``docs/deadlines-tuning.md``);
* ACE-UCB's commit value of an arm is averaged over the pulls *that arm* can still make by the
  deadline at its own cost, not over T - t + 1, and only arms a worker may start are ranked;
* the commit comes with one lane only, once the finished pulls cost what the pulls before it
  stand for (:func:`committed`), among the arms a worker may start;
* the deployed model is the survivor with the best halving statistic (with several workers,
  many candidates end with similar training and the level, a mean over the last half of the
  pulls, lags: ``docs/deadlines-tuning.md``), or in the commit the one it trains; but when the
  rewards are very noisy (the residuals' own estimate of sigma above :data:`DEPLOY_NOISE`,
  :func:`~risingbandits.policies.machinery.noise_level.noise_sigma_residuals`) the survivor with
  the highest level, whose longer mean averages the noise out (LCDB, whose rewards carry its
  spread across data splits; live-v1's real step changes stay below it:
  ``docs/deadlines-tuning.md``, "The longer mean when the rewards are very noisy"); and when
  the estimate exceeds :data:`SHRINK_NOISE` the statistics are compared shrunk toward the
  survivors' mean by each one's own noise, sigma^2 over the rewards it averages
  (:func:`deploy_shrunk`): with unequal costs the candidates reach the deadline with unequal
  pulls, and a candidate judged on one or two noisy rewards no longer wins by its noise
  (``docs/deadlines-tuning.md``, "A statistic trusted by the rewards it averages").

Without a plan (the pull simulator, a budget in steps) nothing of this runs: the choices are
the ones above, arm for arm. With one worker and unit costs the plan changes no choice
(a test), only the deployed model.

Derivation and choices: ``docs/hace-ucb.md`` and ``docs/budgets-in-time.md``; tuning logs
(development instances only): ``docs/hace-ucb-tuning.md``, ``docs/deadlines-tuning.md``.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np

from risingbandits._jit import called_helper, helper, runtime_free
from risingbandits.policies.base import Param
from risingbandits.policies.budget.phases import (
    Schedule,
    check_phase,
    end_phases,
    recent_mean,
    reject_down_to,
    schedule_from_fresh,
)
from risingbandits.policies.budget.successive_halving import halving_schedule
from risingbandits.policies.machinery.checkpoint import register_state_check
from risingbandits.policies.machinery.common import (
    best_active,
    lowest_active,
    show_queue,
    shrunk_best,
)
from risingbandits.policies.machinery.kernel import register_kernel, register_plan
from risingbandits.policies.machinery.noise_level import (
    NoiseLevel,
    noise_sigma_residuals,
    noise_sigma_upper,
)
from risingbandits.policies.machinery.rng import rng_next
from risingbandits.policies.machinery.transplant import ArmPlan, register_transplant
from risingbandits.policies.machinery.windows import ArmHistory, fraction_window
from risingbandits.policies.rising.ace import (
    LEVEL,
    AceState,
    AceUCB,
    ace_index,
    ace_observe,
    highest_level,
    level_window,
)


class HaceState(NamedTuple):
    # ACE-UCB's fields, by the names ace_index and ace_observe read
    hist: ArmHistory
    scores: np.ndarray
    terms: np.ndarray
    arm: np.ndarray
    horizon: int
    eps: float
    w_min: int
    c: float
    cs: float
    eta: float
    top: float
    start: int
    noise: NoiseLevel
    tie_first: bool
    # the halving rounds, by the names end_phases reads
    active: np.ndarray  # bool per arm: still a candidate
    values: np.ndarray  # each arm's halving statistic after its last pull
    targets: np.ndarray  # cumulative pulls per survivor at the end of each round
    keep: np.ndarray  # survivors after each round
    phase: np.ndarray  # [p]: the current round (len(targets) once the rounds are over)
    ties: np.ndarray  # uint64[2]: generator of elimination ties, keyed from rng in round 1
    halving_window: float
    # a budget in cost (the plan, kernel.py): three arrays, not eleven fields (speed:
    # select_in_cost)
    plan: np.ndarray  # 4 x K (rows: contiguous views): ALLOWED, USABLE, LEFT (pulls), SPENT (cost)
    budget: np.ndarray  # [PLANNED, UNIT, ROUND (-1 before the first plan), LANES]
    full: np.ndarray  # R x 3: Successive Halving's whole schedule: targets (pulls of unit), keep,
    # targets of the schedule on (1 - reserve) T
    index_from: int
    clear_by: float
    commit_from: int  # the first round of the commit to the deployed model (T + 1: none)


# Rows of HaceState.plan and entries of HaceState.budget
ALLOWED, USABLE, LEFT, SPENT = 0, 1, 2, 3
PLANNED, UNIT, ROUND, LANES = 0, 1, 2, 3
RESERVED = 2  # column of HaceState.full: the targets with the reserve kept back


def hace_schedule(n_arms: int, horizon: int, index_from: int, reserve: float = 0.0) -> Schedule:
    """The halving rounds of a run (module docstring): Successive Halving's schedule with eta =
    2 (:func:`~risingbandits.policies.budget.successive_halving.halving_schedule`) planned on
    (1 - ``reserve``) T (:func:`rounds_horizon`), cut before the first round at which the
    budget left per survivor (of T) is ``index_from`` pulls or more."""
    targets, keep = halving_schedule(n_arms, rounds_horizon(n_arms, horizon, reserve), 2)
    return cut_schedule(targets, keep, n_arms, horizon, index_from)


def cut_schedule(
    targets: list[int], keep: list[int], n_arms: int, horizon: int, index_from: int
) -> Schedule:
    """The rounds of a halving schedule before the first at which the budget left per survivor
    (of T) is ``index_from`` pulls or more."""
    size, pulls, left = n_arms, 0, horizon
    for r, (target, kept) in enumerate(zip(targets, keep, strict=True)):
        if left >= index_from * size:
            return targets[:r], keep[:r]
        left -= (target - pulls) * size
        size, pulls = kept, target
    return targets, keep


def rounds_horizon(n_arms: int, horizon: int, reserve: float) -> int:
    """The budget the halving rounds are planned on: floor((1 - reserve) T), at least K."""
    return max(n_arms, int((1.0 - reserve) * horizon))


def commit_from(horizon: int, commit: float, w_min: int, ace_w_min: int) -> int:
    """The first round of the commit (module docstring): T - floor(commit x T) + 1 while the
    warm-up is scaled (w_min below ACE-UCB's, T / K < 2 w_min / ``warmup_share``), else
    T + 1 (no commit: HACE-UCB is ACE-UCB)."""
    if w_min >= ace_w_min:
        return horizon + 1
    return horizon - int(commit * horizon) + 1


def warmup_w_min(w_min: int, share: float, n_arms: int, horizon: int) -> int:
    """ACE-UCB's smallest window for a run of K arms and horizon T (module docstring): its
    warm-up, 2 w_min pulls of each candidate, takes at most ``share`` of T / K pulls, so
    w_min = max(1, min(w_min, floor(share x T / (2 K))))."""
    return max(1, min(w_min, int(share * horizon) // (2 * n_arms)))


def _select(state: HaceState, t: int, rng: np.ndarray) -> int:
    if state.budget[PLANNED] > 0:
        return select_in_cost(state, t, rng)
    return select_in_pulls(state, t, rng)


@helper
def select_in_pulls(state: HaceState, t: int, rng: np.ndarray) -> int:
    """``select`` without a plan (module docstring); the pull simulator's loop, which never
    plans, calls it directly (:func:`~risingbandits.policies.machinery.kernel.register_plan`):
    with :func:`select_in_cost` as a call in it, that loop ran 12-15% slower."""
    rounds = state.targets.shape[0]
    if t == 1 and rounds > 0:  # key the generator of elimination ties from the policy's own
        state.ties[0] = rng_next(rng)  # (without rounds, ACE-UCB's draws stay untouched)
        state.ties[1] = 0
    if state.phase[0] < rounds and state.clear_by > 0 and leader_clear(state):
        state.phase[0] = rounds  # the leader is clear: hand over to the index
    if state.phase[0] < rounds:  # a halving round: forced, in the trace
        arm = lowest_active(state.active, state.hist.counts, rng, True)
        return show_queue(state.scores, state.terms, arm, state.active, state.hist.counts)
    arm = show_levels(state, state.active) if t >= state.commit_from else -1
    return arm if arm >= 0 else ace_index(state, t, rng, state.active)


@runtime_free
def select_in_cost(state: HaceState, t: int, rng: np.ndarray) -> int:
    """``select`` under a budget in cost (module docstring): a round's survivors short of its
    goal in cost, least cost spent first, else ACE-UCB's index over the pulls each arm can still
    make; only arms a worker may start; -1 (wait for a result) when none is left. A call
    without Numba's runtime (:func:`~risingbandits._jit.runtime_free`), not inlined: it holds
    a second copy of ACE-UCB's index, which the event loop and the online call would each
    inline and compile again (the pull simulator's loop does not carry it:
    :func:`select_in_pulls`); HACE-UCB's kernels compile in about 100 s instead of 180 s, and
    the event loop runs about 15% slower (``benchmarks/RESULTS.md``). The plan's per-arm
    values are rows of one array (eleven fields of their own made the step loop without a plan
    25% slower: kernel.py, speed)."""
    rounds = state.full.shape[0]
    r = int(state.budget[ROUND])
    if t == 1 and r < rounds:  # key the generator of elimination ties, as without a plan
        state.ties[0] = rng_next(rng)
        state.ties[1] = 0
    if r < rounds and state.clear_by > 0 and leader_clear(state):
        r = rounds  # the leader is clear: hand over to the index
        state.budget[ROUND] = r
    goal = round_goal(state, min(r, rounds - 1))
    plan = state.plan
    found = False
    for i in range(plan.shape[1]):
        short = r >= rounds or plan[SPENT, i] < goal
        plan[USABLE, i] = 1.0 if state.active[i] and plan[ALLOWED, i] > 0 and short else 0.0
        found = found or plan[USABLE, i] > 0
    arm = round_leader(state) if r < rounds and state.budget[LANES] > 1.0 else -1
    if arm >= 0:  # the leader does not wait for the round
        plan[USABLE, arm] = 1.0
        arm = show_queue(state.scores, state.terms, arm, plan[USABLE], plan[SPENT])
    elif found and r < rounds:  # a halving round: forced, in the trace
        arm = lowest_active(plan[USABLE], plan[SPENT], rng, True)
        arm = show_queue(state.scores, state.terms, arm, plan[USABLE], plan[SPENT])
    elif found:
        arm = show_levels(state, plan[USABLE]) if committed(state) else -1
        if arm < 0:
            arm = ace_index(state, t, rng, plan[USABLE], plan[LEFT])
    return arm


@helper
def round_leader(state: HaceState) -> int:
    """In a halving round with several lanes, the survivor with the best halving statistic
    among those with a finished pull, if a worker may start it and its next pull fits, else -1
    (module docstring: the leader does not wait for the round)."""
    lead = -1
    for i in range(state.active.shape[0]):
        pulled = state.active[i] and state.hist.counts[i] > 0
        if pulled and (lead < 0 or state.values[i] > state.values[lead]):
            lead = i
    if lead < 0 or state.plan[ALLOWED, lead] == 0 or state.plan[LEFT, lead] < 1.0:
        return -1
    return lead


@helper
def show_levels(state: HaceState, allowed: Any) -> int:
    """The commit's choice (module docstring): the allowed, pulled arm with the highest level
    (:func:`~risingbandits.policies.rising.ace.highest_level`), -1 if there is none. The levels
    are its index in the trace (-inf for the other arms), so a selector whose candidate is busy
    falls back on the next level, not on the lowest index."""
    arm = highest_level(state, state.hist.counts, allowed)
    if not (allowed[arm] and state.hist.counts[arm] > 0):
        return -1
    for i in range(state.scores.shape[0]):
        pulled = allowed[i] and state.hist.counts[i] > 0
        state.scores[i] = state.arm[i, LEVEL] if pulled else -np.inf
        state.terms[i, 0] = state.scores[i]
        state.terms[i, 1] = 0.0
        state.terms[i, 2] = 0.0
    return arm


@helper
def committed(state: HaceState) -> bool:
    """Whether a run in cost is in its commit (module docstring): one lane, and the cost of
    the finished pulls at least that of the pulls before ``commit_from`` (with one worker and
    unit costs: round t >= ``commit_from``, as without a plan)."""
    if state.budget[LANES] > 1.0:
        return False
    spent = 0.0
    for i in range(state.plan.shape[1]):
        spent += state.plan[SPENT, i]
    return spent >= (state.commit_from - 1) * state.budget[UNIT]


@called_helper
def leader_clear(state: HaceState) -> bool:
    """Whether a sweep of the round robin just ended (every survivor has the same n >= 1
    pulls: statistics compared at equal training; under a budget in cost with unequal costs
    this seldom holds, and the rounds run as before) with the leader's halving statistic above the
    runner-up's by ``clear_by`` x sigma_up x sqrt(2 / q), q = the statistic's rewards, sigma_up
    the noise level's upper 95% bound from the residuals alone (a prior or a few pulls cannot
    hand over)."""
    first, second, n = -np.inf, -np.inf, -1
    for i in range(state.active.shape[0]):
        if state.active[i]:
            n = state.hist.counts[i] if n < 0 else n
            if state.hist.counts[i] != n:
                return False
            v = state.values[i]
            if v > first:
                first, second = v, first
            elif v > second:
                second = v
    q = fraction_window(n, state.halving_window)
    spread = noise_sigma_upper(state.noise) * (2.0 / q) ** 0.5
    return first - second > state.clear_by * spread


def _update(state: HaceState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    ace_observe(state, arm, reward)
    n = state.hist.counts[arm]
    state.values[arm] = recent_mean(state.hist.prefix, arm, n, state.halving_window, 1)
    end_phases(state, n)


DEPLOY_NOISE = 0.06
"""A run in cost ranks the survivors by ACE-UCB's level (a longer mean), not the halving
statistic, once the residuals' own estimate of the noise exceeds this (chosen on the
development instances: ``tuning/deploy_noise_screen.py``, ``docs/deadlines-tuning.md``)."""


SHRINK_NOISE = 0.03
"""From this residual-only noise estimate on, a run in cost deploys by the survivors' statistics
shrunk toward their mean by each one's own noise (:func:`deploy_shrunk`; chosen on the
development instances: ``docs/deadlines-tuning.md``)."""


@helper
def deploy_shrunk(state: HaceState, counts: np.ndarray, sigma: float) -> int:
    """The pulled survivor with the best deployed statistic (ACE-UCB's level above
    :data:`DEPLOY_NOISE`, else the halving statistic) shrunk toward the survivors' mean by its
    own noise, sigma^2 over the rewards it averages
    (:func:`~risingbandits.policies.machinery.common.shrunk_best`): a candidate judged on fewer
    rewards (one that costs more per step) must lead by more."""
    mask = state.active & (counts > 0)
    values, averaged = np.zeros(counts.shape[0]), np.ones(counts.shape[0])
    for i in np.flatnonzero(mask):
        if sigma > DEPLOY_NOISE:
            values[i] = state.arm[i, LEVEL]
            averaged[i] = level_window(counts[i], state.eps, state.w_min)
        else:
            values[i] = state.values[i]
            averaged[i] = fraction_window(counts[i], state.halving_window)
    return max(shrunk_best(values, averaged, mask, sigma), 0)


def _recommend(state: HaceState, counts: np.ndarray, last: np.ndarray) -> int:
    in_cost = state.budget[PLANNED] > 0 and not committed(state)
    if in_cost:
        sigma = noise_sigma_residuals(state.noise)
        if sigma > SHRINK_NOISE:
            return deploy_shrunk(state, counts, sigma)
    if in_cost or state.phase[0] < state.targets.shape[0]:
        return max(best_active(state.active, state.values), 0)
    return highest_level(state, counts, state.active)


LEAST_SHARE = 0.5
"""ACE-UCB's index takes over in cost once the survivors can make ``index_from`` pulls of their
share on average and each at least this fraction of it (:func:`enough_for_index`; chosen on
the development instances: ``docs/deadlines-tuning.md``, "The index does not wait for the
dearest candidate")."""


@helper
def enough_for_index(state: HaceState) -> bool:
    """Whether ACE-UCB's index takes over: halving frees no worker (as many lanes as
    survivors), or the survivors whose next pull still fits can make ``index_from`` pulls of
    their share of the budget left, each at its own cost (its pulls left x lanes / survivors),
    on average, and each at least :data:`LEAST_SHARE` of ``index_from`` (with equal costs:
    every survivor ``index_from``, as in pulls). Requiring it of every survivor kept a run in
    rounds that judge the dearest candidate on a few pulls of equal cost."""
    size = 0
    for i in range(state.active.shape[0]):
        size += 1 if state.active[i] else 0
    lanes = state.budget[LANES]
    least, total, counted = True, 0.0, 0
    for i in range(state.active.shape[0]):
        left = state.plan[LEFT, i]
        if state.active[i] and left >= 1.0:
            share = left * min(1.0, lanes / size)
            least = least and share >= LEAST_SHARE * state.index_from
            total += share
            counted += 1
    return lanes >= size or (least and total >= counted * state.index_from)


@helper
def round_goal(state: HaceState, r: int) -> float:
    """Cost each survivor of round r spends by its end: Successive Halving's target in cost,
    times 1 - reserve with one lane (the last survivor then trains on the reserve alone; with
    more lanes the rounds stop at as many survivors as lanes, which train side by side)."""
    return state.full[r, RESERVED if state.budget[LANES] <= 1.0 else 0] * state.budget[UNIT]


@called_helper
def end_cost_rounds(state: HaceState) -> None:
    """The halving rounds in cost: end every round whose survivors spent its goal (or whose
    next pull no longer fits), rejecting down to its ``keep`` or the lanes, whichever is more;
    before each round, stop them for good when :func:`enough_for_index` (the first plan decides
    whether there is any)."""
    r, rounds = int(state.budget[ROUND]), state.full.shape[0]
    if r < 0:
        state.phase[0] = state.targets.shape[0]  # the rounds in pulls are not used
        r = 0 if not enough_for_index(state) else rounds
    plan = state.plan
    while r < rounds:
        goal = round_goal(state, r)
        for i in range(state.active.shape[0]):
            if state.active[i] and plan[LEFT, i] >= 1.0 and plan[SPENT, i] < goal:
                state.budget[ROUND] = r
                return
        keep = max(int(state.full[r, 1]), int(state.budget[LANES]))
        reject_down_to(state.active, state.values, keep, state.ties)
        r += 1
        if enough_for_index(state):
            r = rounds
    state.budget[ROUND] = r


def _plan(
    state: HaceState,
    allowed: np.ndarray,
    left: np.ndarray,
    spent: np.ndarray,
    unit: float,
    lanes: int,
) -> None:
    for i in range(allowed.shape[0]):
        state.plan[ALLOWED, i] = 1.0 if allowed[i] else 0.0
        state.plan[LEFT, i] = left[i]
        state.plan[SPENT, i] = spent[i]
    state.budget[PLANNED] = 1.0
    state.budget[UNIT] = unit
    state.budget[LANES] = lanes
    if state.budget[ROUND] < state.full.shape[0]:  # (a call only while rounds run)
        end_cost_rounds(state)


def schedule_in_cost_from_fresh(fresh: HaceState, old: HaceState, plan: ArmPlan) -> HaceState:
    """Transplant rule (a changed budget or set of candidates): Successive Halving's whole
    schedule, which the rounds in cost follow, is re-derived for the new K and T like the
    rounds in pulls (:func:`~risingbandits.policies.budget.phases.schedule_from_fresh`); the
    current round goes on under it."""
    full = fresh.full.copy()
    return schedule_from_fresh(fresh, old, plan)._replace(full=full)


register_kernel(HaceState, _select, _update, _recommend)
register_plan(HaceState, _plan, unplanned=select_in_pulls)
register_transplant(HaceState, schedule_in_cost_from_fresh)
register_state_check(HaceState, check_phase)


def fresh_plan(n_arms: int) -> np.ndarray:
    """HaceState.plan before any plan: every arm allowed, nothing spent."""
    plan = np.zeros((4, n_arms))
    plan[ALLOWED] = 1.0
    return plan


class HaceUCB(AceUCB):
    """HACE-UCB: successive halving rounds on half the budget while the budget per candidate is
    small (until the leader is clear), then ACE-UCB on the survivors with the rest, its warm-up
    at most a quarter of T / K; the deployed model is the survivor with the highest level
    (under a budget in cost, planning in cost: the best halving statistic; uses T). This
    library's policy for model selection (issue 21; module docstring, ``docs/hace-ucb.md``).

    Parameters: ACE-UCB's (:class:`~risingbandits.policies.rising.ace.AceUCB`, the same values), and
      index_from: budget left per survivor (pulls) from which ACE-UCB's index takes over from
        the halving rounds; with T / K >= index_from there is no round.
      warmup_share: ACE-UCB's warm-up (2 w_min pulls per candidate) takes at most this share
        of T / K: w_min = max(1, min(w_min, floor(warmup_share x T / (2 K)))).
      clear_by: the rounds end once the leader's statistic leads the runner-up's by this many
        noise units (upper bound) at the end of a sweep; 0 runs every round.
      reserve: the share of T kept for the last survivor: the rounds are planned on
        (1 - reserve) T (whether they run at all is decided on T); under a budget in cost only
        with one lane (with more, the rounds stop at as many survivors as lanes).
      commit: while ACE-UCB's warm-up is scaled (T / K < 2 w_min / warmup_share = 128), the
        last floor(commit x T) pulls train the survivor that would be deployed; 0: none.
      halving_window: the halving statistic is the mean of the last
        max(1, floor(halving_window x n)) of an arm's n rewards.
    One parameter set for every setting, chosen on development instances only
    (``docs/hace-ucb-tuning.md``).
    """

    name = "hace-ucb"
    summary = "HACE-UCB: halving rounds while the budget is small, then ACE-UCB (uses T)"
    paper = "risingbandits (this library), after Karnin et al. 2013 and ACE-UCB; docs/hace-ucb.md"
    params_spec: ClassVar[tuple[Param, ...]] = (
        *AceUCB.params_spec,
        Param(
            "index_from",
            48,
            "budget left per survivor (pulls) from which ACE-UCB's index takes over",
            kind=int,
            low=1,
        ),
        Param(
            "warmup_share",
            0.25,
            "ACE-UCB's warm-up (2 w_min pulls per candidate) takes at most this share of T / K",
            low=0.0,
            high=1.0,
            low_open=True,
        ),
        Param(
            "clear_by",
            2.0,
            "halving rounds end once the leader leads by this many noise units (0: never)",
            low=0.0,
        ),
        Param(
            "reserve",
            0.5,
            "share of the budget kept for the last survivor (rounds planned on the rest)",
            low=0.0,
            high=0.9,
        ),
        Param(
            "commit",
            0.25,
            "share of the budget, at its end, that trains the deployed model (while T / K < 128)",
            low=0.0,
            high=0.9,
        ),
        Param(
            "halving_window",
            0.25,
            "halving statistic: mean of the last max(1, floor(x n)) rewards",
            low=0.0,
            high=1.0,
            low_open=True,
        ),
    )

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        ace: AceState = super().init_state(n_arms, horizon, noise_proxy, capacity)
        share = float(self._params["warmup_share"])
        ace = ace._replace(w_min=warmup_w_min(ace.w_min, share, n_arms, horizon))
        index_from = int(self._params["index_from"])
        reserve = float(self._params["reserve"])
        kept_targets, kept_keep = halving_schedule(
            n_arms, rounds_horizon(n_arms, horizon, reserve), 2
        )
        targets, keep = cut_schedule(kept_targets, kept_keep, n_arms, horizon, index_from)
        full_targets, full_keep = halving_schedule(n_arms, horizon, 2)
        return HaceState(
            *ace._replace(start=0 if targets else ace.start),
            np.ones(n_arms, np.bool_),
            np.zeros(n_arms),
            np.asarray(targets, np.int64),
            np.asarray(keep, np.int64),
            np.zeros(1, np.int64),
            np.zeros(2, np.uint64),
            float(self._params["halving_window"]),
            fresh_plan(n_arms),
            np.array([0.0, 1.0, -1.0, 1.0]),
            np.column_stack([full_targets, full_keep, kept_targets]).astype(float).reshape(-1, 3),
            index_from,
            float(self._params["clear_by"]),
            commit_from(horizon, float(self._params["commit"]), ace.w_min, self._params["w_min"]),
        )
