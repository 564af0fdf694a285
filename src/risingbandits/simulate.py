"""The compiled simulator: run a policy's kernel on an instance for many seeds.

The step loop is one Numba function for every policy: it calls the policy kernel registered for
the run state (the same code the online object calls), draws the counter-based reward of the
pull (:mod:`risingbandits.rewards`) and keeps pull counts. Regret comes from the counts and the
instance's oracle (:mod:`risingbandits.regret`). A policy that does not use the horizon can be
run once to the largest horizon and read at smaller ones (``checkpoints``): the prefix of its run
is exactly the run at the smaller horizon.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

import numpy as np

from risingbandits._jit import borrow, called_helper, jit, runtime_free
from risingbandits.instances.base import RisingInstance
from risingbandits.instances.memory import bytes_text, short_of
from risingbandits.policies.base import Policy, check_run_size
from risingbandits.policies.machinery.checkpoint import integer
from risingbandits.policies.machinery.kernel import (
    policy_recommend,
    policy_select_unplanned,
    policy_update,
    trace_view,
)
from risingbandits.policies.machinery.trace import Trace
from risingbandits.policies.registry import as_policy
from risingbandits.regret import Oracle
from risingbandits.rewards import draw_reward
from risingbandits.seeding import SeedLike, as_seed_sequence, policy_rng, reward_key

if TYPE_CHECKING:
    from risingbandits.simulate_budget import BudgetResult

ProgressCallback = Callable[[int, int], None]


class RunRecord(NamedTuple):
    """Where the compiled loop writes one seed's run (arrays of size 0 when not asked for)."""

    counts: np.ndarray  # K: pulls per arm
    last: np.ndarray  # K: each arm's last reward
    arms: np.ndarray  # T or 0: the arm of every round
    checkpoints: np.ndarray  # C: rounds at which to record the three below
    checkpoint_pulls: np.ndarray  # C x K
    checkpoint_reward: np.ndarray  # C
    checkpoint_recommended: np.ndarray  # C
    trace_every: int  # record the trace after every trace_every-th select (rounds 1, 1 + k, ...)
    trace_index: np.ndarray  # R x K or 0 x 0
    trace_terms: np.ndarray  # R x K x n or 0 x 0 x 0
    trace_arms: np.ndarray  # R or 0


@called_helper
def _record_trace(state: Any, out: RunRecord, r: int, arm: int) -> None:
    """Copy the trace of round ``r`` (``arm`` and the policy's scores and terms) into ``out``."""
    index, terms = trace_view(state)
    # element by element: a slice assignment compiles Numba's shape-mismatch error, 11 s of a
    # process's first kernel (the shapes agree by construction)
    for i in range(index.shape[0]):
        out.trace_index[r, i] = index[i]
    for i in range(terms.shape[0]):
        for j in range(terms.shape[1]):
            out.trace_terms[r, i, j] = terms[i, j]
    out.trace_arms[r] = arm


@runtime_free
def _steps(
    state: Any,
    means: np.ndarray,
    noise_kind: int,
    noise_sigma: float,
    noise_std: np.ndarray,
    key: np.uint64,
    horizon: int,
    rng: np.ndarray,
    out: RunRecord,
) -> tuple[float, int]:
    """The step loop of one seed; returns (realised reward, recommended arm at the end).
    Compiled without Numba's runtime (:func:`~risingbandits._jit.runtime_free`): the policy's
    inlined select and update count no references."""
    counts, last = out.counts, out.last
    n_arms = counts.shape[0]
    record = out.arms.shape[0] > 0
    tracing = out.trace_arms.shape[0] > 0
    next_checkpoint = 0
    total = 0.0
    for t in range(1, horizon + 1):
        arm = policy_select_unplanned(state, t, rng)  # (this loop never plans in cost)
        if arm < 0 or arm >= n_arms:
            raise ValueError("policy kernel returned an invalid arm")
        if tracing and (t - 1) % out.trace_every == 0:
            _record_trace(state, out, (t - 1) // out.trace_every, arm)
        counts[arm] += 1
        reward = draw_reward(means, noise_kind, noise_sigma, noise_std, key, arm, counts[arm])
        total += reward
        last[arm] = reward
        policy_update(state, arm, reward, t, rng)
        if record:
            out.arms[t - 1] = arm
        if next_checkpoint < out.checkpoints.shape[0] and out.checkpoints[next_checkpoint] == t:
            for i in range(n_arms):  # (a slice assignment would need Numba's runtime)
                out.checkpoint_pulls[next_checkpoint, i] = counts[i]
            out.checkpoint_reward[next_checkpoint] = total
            out.checkpoint_recommended[next_checkpoint] = policy_recommend(state, counts, last)
            next_checkpoint += 1
    return total, policy_recommend(state, counts, last)


@jit
def _run(
    state: Any,
    means: np.ndarray,
    noise_kind: int,
    noise_sigma: float,
    noise_std: np.ndarray,
    key: np.uint64,
    horizon: int,
    rng: np.ndarray,
    out: RunRecord,
) -> tuple[float, int]:
    """Run one seed (:func:`_steps` on borrowed arrays: no reference counting in the loop)."""
    return _steps(
        borrow(state),
        borrow(means),
        noise_kind,
        noise_sigma,
        borrow(noise_std),
        key,
        horizon,
        borrow(rng),
        borrow(out),
    )


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Per-seed results of one policy on one instance at one horizon.

    ``regret`` is the expected policy regret of the pulls made (V*(T) minus the expected
    reward of those pulls); ``reward`` is the realised reward beside it. ``recommended`` is
    the arm the policy would deploy at the end and ``final_gap`` how far that model is from the
    best model trained with the whole budget (:meth:`risingbandits.regret.Oracle.final_gap`).
    """

    instance: str
    policy: dict[str, Any]
    horizon: int
    noise: str
    seeds: tuple[Any, ...]
    pulls: np.ndarray
    reward: np.ndarray
    regret: np.ndarray
    optimal_value: float
    best_arm: int
    recommended: np.ndarray
    final_gap: np.ndarray
    arms: np.ndarray | None = None
    trace: Trace | None = field(default=None, repr=False)
    checkpoint_horizons: tuple[int, ...] = ()
    checkpoint_pulls: np.ndarray | None = field(default=None, repr=False)
    checkpoint_reward: np.ndarray | None = field(default=None, repr=False)
    checkpoint_recommended: np.ndarray | None = field(default=None, repr=False)
    oracle: Oracle | None = field(default=None, repr=False)

    @property
    def pulls_mean(self) -> np.ndarray:
        """Mean pulls per arm over seeds."""
        return np.asarray(self.pulls.mean(axis=0))

    @cached_property
    def _checkpoint_column(self) -> dict[int, int]:
        """Checkpoint horizon -> its column (a dict: ``at`` over many horizons stays linear)."""
        return {h: c for c, h in enumerate(self.checkpoint_horizons)}

    def at(self, horizon: int) -> SimulationResult:
        """The result truncated at a recorded checkpoint horizon (prefix of every run)."""
        oracle = self.oracle
        c = self._checkpoint_column.get(horizon)
        if c is None or oracle is None:
            shown = list(self.checkpoint_horizons)
            shown_text = str(shown) if len(shown) <= 10 else f"{shown[:5]} ... {shown[-5:]}"
            raise ValueError(f"horizon={horizon} was not recorded: checkpoints are {shown_text}")
        assert self.checkpoint_pulls is not None and self.checkpoint_reward is not None
        assert self.checkpoint_recommended is not None
        pulls = self.checkpoint_pulls[:, c, :].copy()
        recommended = self.checkpoint_recommended[:, c].copy()
        return replace(
            self,
            horizon=horizon,
            pulls=pulls,
            reward=self.checkpoint_reward[:, c].copy(),
            regret=oracle.regret(pulls),
            optimal_value=oracle.value(horizon),
            best_arm=oracle.best_arm(horizon),
            recommended=recommended,
            final_gap=oracle.final_gap(pulls, recommended),
            arms=None if self.arms is None else self.arms[:, :horizon].copy(),
            trace=None,
            checkpoint_horizons=(),
            checkpoint_pulls=None,
            checkpoint_reward=None,
            checkpoint_recommended=None,
        )


BYTES_PER_SEED = 100
"""The least memory a seed takes: its entry in the seed list and the result's tuple, its
reward, recommendation, regret and gap (more with more arms, checkpoints or a trace)."""


def check_seed_memory(n_seeds: int) -> None:
    """Refuse a count of seeds whose results do not fit in the memory available (10**10 seeds
    were a MemoryError traceback while the seed list was built)."""
    need = n_seeds * BYTES_PER_SEED
    available = short_of(need)
    if available is not None:
        raise ValueError(
            f"seeds={n_seeds:,} is not allowed: their results take at least {bytes_text(need)} "
            f"and {bytes_text(available)} of memory is available: use fewer seeds"
        )


def _seed_list(seeds: int | Sequence[SeedLike]) -> list[SeedLike]:
    refused = ValueError(
        f"seeds={seeds!r} is not allowed: use an integer count >= 1 or a list of seeds"
    )
    if isinstance(seeds, float | np.floating | bool | str | bytes):
        raise refused
    if isinstance(seeds, int | np.integer):
        if not 1 <= seeds <= sys.maxsize:
            raise ValueError(
                f"seeds={seeds} is not allowed: use a count in 1..{sys.maxsize} or a list of seeds"
            )
        check_seed_memory(int(seeds))
        return list(range(int(seeds)))
    if isinstance(seeds, np.random.SeedSequence):
        return [seeds]
    try:
        out = list(seeds)
    except TypeError:
        raise refused from None
    if not out:
        raise ValueError("seeds=[] is not allowed: give at least one seed")
    for i, s in enumerate(out):
        try:
            as_seed_sequence(s)
        except ValueError:
            raise ValueError(
                f"seeds[{i}]={s!r} is not allowed: use non-negative integers or SeedSequences"
            ) from None
    return out


def check_instance(instance: Any) -> None:
    """``instance`` is a :class:`RisingInstance` (one clear line otherwise)."""
    if not isinstance(instance, RisingInstance):
        raise ValueError(
            f"instance={instance!r} is not allowed: use a RisingInstance (risingbandits.intro(), "
            "from_means, ...)"
        )


def _check_pulls_only(**options: Any) -> None:
    """Options of a run in pulls (``record_arms``, ``checkpoints``, ``trace``, ``progress``)
    given with a budget in cost: refused, not ignored."""
    for name, value in options.items():
        unset = np.size(value) == 0 if name == "checkpoints" else value is None or value is False
        if not unset:
            raise ValueError(
                f"{name}={value!r} is not allowed with budget=: it goes with a horizon in pulls "
                "(a budget's pulls: rb.simulate_budget(..., record_events=True))"
            )


def _check_horizon(instance: RisingInstance, horizon: Any) -> None:
    check_run_size(instance.n_arms, horizon)
    if horizon > instance.max_horizon:
        raise ValueError(
            f"horizon={horizon} is not allowed: instance {instance.name!r} has means for "
            f"T <= {instance.max_horizon}"
        )


def _check_progress(progress: Any) -> None:
    if progress is not None and not callable(progress):
        raise ValueError(
            f"progress={progress!r} is not allowed: use None or a function progress(done, total)"
        )


def _sorted_integers(name: str, values: Any) -> list[int]:
    """``values`` (integers, numpy's too) sorted without repeats; one line naming the first
    entry that is not an integer otherwise (a float is not truncated)."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(f"{name}={values!r} is not allowed: use a list of integers")
    out = set()
    for i, value in enumerate(values):
        if not integer(value):
            raise ValueError(f"{name}[{i}]={value!r} is not allowed: use an integer")
        out.add(int(value))
    return sorted(out)


TRACE_LIMIT = 50_000_000
"""Most numbers a trace may hold (seeds x recorded rounds x K x (1 + terms); 400 MB)."""


@overload
def simulate(
    instance: RisingInstance,
    policy: Policy | str,
    horizon: int,
    seeds: int | Sequence[SeedLike] = 1,
    *,
    record_arms: bool = False,
    checkpoints: Sequence[int] = (),
    trace: bool = False,
    trace_every: int = 1,
    progress: ProgressCallback | None = None,
) -> SimulationResult: ...


@overload
def simulate(
    instance: RisingInstance,
    policy: Policy | str,
    horizon: None = None,
    seeds: int | Sequence[SeedLike] = 1,
    *,
    budget: float,
    workers: int = 1,
    budget_kind: Literal["deadline", "total"] = "deadline",
) -> BudgetResult: ...


def simulate(
    instance: RisingInstance,
    policy: Policy | str,
    horizon: int | None = None,
    seeds: int | Sequence[SeedLike] = 1,
    *,
    record_arms: bool = False,
    checkpoints: Sequence[int] = (),
    trace: bool = False,
    trace_every: int = 1,
    progress: ProgressCallback | None = None,
    budget: float | None = None,
    workers: int = 1,
    budget_kind: Literal["deadline", "total"] = "deadline",
) -> SimulationResult | BudgetResult:
    """Run ``policy`` (a :class:`Policy`, or a registered name with its default parameters) on
    ``instance`` for ``horizon`` rounds, once per seed.

    With ``budget=B`` instead of a horizon, the budget is in cost and ``workers`` workers pull
    at once (``budget_kind`` "deadline" or "total"): the event-driven simulator
    :func:`risingbandits.simulate_budget.simulate_budget`, which returns a
    :class:`~risingbandits.simulate_budget.BudgetResult`.

    ``seeds`` is an integer count n (seeds 0..n-1) or a list of ints / ``SeedSequence`` objects.
    ``record_arms`` keeps the arm sequence of every seed (shape seeds x T).
    ``checkpoints`` (horizons <= T) records pulls, reward and recommendation at those rounds;
    only for policies that do not use the horizon, where that prefix equals a run at the smaller
    horizon.
    ``trace`` records what the policy ranked the arms by after every ``trace_every``-th select
    (:class:`Trace`); tracing changes no choice, and a trace larger than :data:`TRACE_LIMIT`
    numbers is refused (raise ``trace_every``).
    ``progress(done, total)`` is called after each seed.
    """
    if horizon is None or budget is not None:
        if horizon is not None or budget is None:  # both, or neither
            which = "not both" if budget is not None else "one of the two"
            raise ValueError(
                f"horizon={horizon!r}, budget={budget!r} are not allowed: give a horizon in "
                f"pulls or a budget in cost ({which})"
            )
        _check_pulls_only(
            record_arms=record_arms, checkpoints=checkpoints, trace=trace, progress=progress
        )
        from risingbandits.simulate_budget import simulate_budget

        return simulate_budget(
            instance, policy, budget, seeds, workers=workers, budget_kind=budget_kind
        )
    if workers != 1 or budget_kind != "deadline":
        given = f"workers={workers!r}" if workers != 1 else f"budget_kind={budget_kind!r}"
        raise ValueError(
            f"{given} is not allowed with a horizon: workers and budget_kind go with a budget in "
            "cost (budget=); a horizon counts pulls made one after another"
        )
    check_instance(instance)
    policy = as_policy(policy)
    _check_horizon(instance, horizon)
    cps = _sorted_integers("checkpoints", checkpoints)
    if cps and (cps[0] < 1 or cps[-1] > horizon):
        raise ValueError(f"checkpoints={cps} are not allowed: use horizons in 1..{horizon}")
    if cps and policy.uses_horizon and cps != [horizon]:
        raise ValueError(
            f"{policy.name} uses the horizon: a prefix of its run is not a run at a smaller T; "
            "simulate it once per horizon"
        )
    seed_list = _seed_list(seeds)
    _check_progress(progress)
    n_seeds, n_arms = len(seed_list), instance.n_arms
    n_terms, n_traced = _trace_size(policy, trace, trace_every, horizon, n_seeds, n_arms)
    pulls = np.zeros((n_seeds, n_arms), np.int64)
    last = np.zeros((n_seeds, n_arms))
    reward = np.zeros(n_seeds)
    recommended = np.zeros(n_seeds, np.int64)
    arms = np.zeros((n_seeds, horizon if record_arms else 0), np.int32)
    cp_array = np.asarray(cps, np.int64)
    cp_pulls = np.zeros((n_seeds, len(cps), n_arms), np.int64)
    cp_reward = np.zeros((n_seeds, len(cps)))
    cp_rec = np.zeros((n_seeds, len(cps)), np.int64)
    t_index = np.zeros((n_seeds, n_traced, n_arms if n_traced else 0))
    t_terms = np.zeros((n_seeds, n_traced, n_arms if n_traced else 0, n_terms))
    t_arms = np.zeros((n_seeds, n_traced), np.int32)
    noise, noise_proxy, noise_table = instance.noise, instance.noise_proxy, instance.noise_table
    for s, seed in enumerate(seed_list):
        out = RunRecord(
            pulls[s],
            last[s],
            arms[s],
            cp_array,
            cp_pulls[s],
            cp_reward[s],
            cp_rec[s],
            int(trace_every),
            t_index[s],
            t_terms[s],
            t_arms[s],
        )
        state = policy.init_state(n_arms, horizon, noise_proxy)
        reward[s], recommended[s] = _run(
            state,
            instance.means,
            noise.code,
            noise.sigma,
            noise_table,
            reward_key(seed),
            horizon,
            policy_rng(seed),
            out,
        )
        if progress is not None:
            progress(s + 1, n_seeds)
    oracle = instance.oracle
    traced = None
    if trace:
        rounds = np.arange(1, horizon + 1, trace_every)
        traced = Trace(rounds, t_index, t_terms, type(policy).trace_terms, t_arms)
    return SimulationResult(
        instance=instance.name,
        policy=policy.to_dict(),
        horizon=int(horizon),
        noise=str(noise),
        seeds=tuple(seed_list),
        pulls=pulls,
        reward=reward,
        regret=oracle.regret(pulls),
        optimal_value=oracle.value(horizon),
        best_arm=oracle.best_arm(horizon),
        recommended=recommended,
        final_gap=oracle.final_gap(pulls, recommended),
        arms=arms if record_arms else None,
        trace=traced,
        checkpoint_horizons=tuple(cps),
        checkpoint_pulls=cp_pulls if cps else None,
        checkpoint_reward=cp_reward if cps else None,
        checkpoint_recommended=cp_rec if cps else None,
        oracle=oracle,
    )


def check_trace_every(every: Any) -> None:
    """``trace_every`` is an integer >= 1 (one clear line otherwise)."""
    if isinstance(every, bool) or not isinstance(every, int | np.integer) or every < 1:
        raise ValueError(f"trace_every={every!r} is not allowed: use an integer >= 1")


def _trace_size(
    policy: Policy, trace: bool, every: int, horizon: int, n_seeds: int, n_arms: int
) -> tuple[int, int]:
    """(terms, recorded rounds) of the trace asked for: (0, 0) without one."""
    check_trace_every(every)
    if not trace:
        return 0, 0
    names = type(policy).trace_terms
    if not names:
        raise ValueError(f"trace=True is not allowed for {policy.name}: it exposes no index")
    rounds = -(-horizon // every)
    size = n_seeds * rounds * n_arms * (1 + len(names))
    if size > TRACE_LIMIT:
        need = -(-size // TRACE_LIMIT) * every
        raise ValueError(
            f"trace of {size:,} numbers ({size * 8 / 2**30:.1f} GiB) is not allowed: the limit "
            f"is {TRACE_LIMIT:,}; use trace_every >= {need} or fewer seeds"
        )
    return len(names), rounds


def simulate_horizons(
    instance: RisingInstance,
    policy: Policy | str,
    horizons: Sequence[int],
    seeds: int | Sequence[SeedLike] = 1,
    *,
    progress: ProgressCallback | None = None,
) -> dict[int, SimulationResult]:
    """Results at several horizons: one run per T for policies that use the horizon, else one
    run to the largest T read at every checkpoint. ``policy`` as in :func:`simulate`;
    ``progress(done, total)`` counts seed runs."""
    check_instance(instance)
    policy = as_policy(policy)
    hs = _sorted_integers("horizons", horizons)
    if not hs:
        raise ValueError("horizons=[] is not allowed: give at least one horizon")
    for h in (hs[0], hs[-1]):  # (every run is checked before the first starts)
        _check_horizon(instance, h)
    n_seeds = len(_seed_list(seeds))
    _check_progress(progress)
    if not policy.uses_horizon:
        res = simulate(instance, policy, hs[-1], seeds, checkpoints=hs, progress=progress)
        return {h: res.at(h) for h in hs}
    out = {}
    for k, h in enumerate(hs):
        inner = None
        if progress is not None:
            inner = lambda d, n, k=k: progress(k * n_seeds + d, len(hs) * n_seeds)  # noqa: E731
        out[h] = simulate(instance, policy, h, seeds, progress=inner)
    return out
