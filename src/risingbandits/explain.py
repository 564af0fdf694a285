"""Why a policy chose an arm: traced runs read at chosen rounds (the CURE-UCB paper's Figure 3).

:func:`explain` runs each policy once on an instance with the same seed (so the same rewards:
the n-th pull of an arm gives the same reward under every policy), with the index trace on
(:func:`risingbandits.simulate` with ``trace=True``), and reads at each asked round t, per arm:
the pulls N before round t, the value the policy ranked the arm by and its named terms, the
policy's target point on the arm's curve (:meth:`~risingbandits.policies.Policy.target_point`)
and the horizon limit N + (T - t), the furthest pull the arm can reach with the T - t pulls
left after the current one (the paper's convention; counting round t's own pull it is N + T - t
+ 1). Round t is read at its ``select``: before the arm of round t is pulled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from risingbandits.instances.base import RisingInstance
from risingbandits.policies.base import Policy, check_run_size
from risingbandits.policies.machinery.trace import Trace
from risingbandits.policies.registry import as_policy
from risingbandits.rewards import draw_run_rewards
from risingbandits.seeding import SeedLike, reward_key
from risingbandits.simulate import check_trace_every, simulate


def json_number(x: float) -> float | str:
    """``x`` for strict JSON: ``"inf"``/``"-inf"`` for the infinite index of a forced round."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


@dataclass(frozen=True)
class ArmAtRound:
    """One arm as a policy saw it at the ``select`` of a round."""

    arm: int
    pulls: int
    index: float
    terms: tuple[float, ...]
    target: tuple[float, float] | None
    horizon_limit: int


@dataclass(frozen=True)
class PolicyAtRound:
    """A policy's view of every arm at one round and the arm it chose."""

    label: str
    round: int
    chosen: int
    arms: tuple[ArmAtRound, ...]


@dataclass(frozen=True, eq=False)
class TracedRun:
    """One policy's run: the arm and reward of every round, its trace (one seed) and regret."""

    policy: Policy
    arms: np.ndarray
    rewards: np.ndarray
    trace: Trace
    trace_every: int
    regret: float

    @property
    def label(self) -> str:
        return self.policy.name

    @property
    def horizon(self) -> int:
        return int(self.arms.size)

    def pulls_before(self, t: int) -> np.ndarray:
        """Pulls of each arm in rounds 1..t-1."""
        return np.bincount(self.arms[: t - 1], minlength=self.trace.index.shape[-1])

    def arm_rewards(self, arm: int, t: int) -> np.ndarray:
        """The rewards arm ``arm`` gave in rounds 1..t-1, in the order of its pulls."""
        return self.rewards[: t - 1][self.arms[: t - 1] == arm]

    def series(self, arm_names: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """The whole trace as a table: one row per recorded round with the round, the arm
        played and, per arm, the index and each term (header, rows)."""
        trace = self.trace
        names = ("index", *trace.term_names)
        header = ["round", "chosen", *(f"{arm} {n}" for arm in arm_names for n in names)]
        values = np.concatenate([trace.index[0][..., None], trace.terms[0]], axis=-1)
        rows = np.column_stack([trace.rounds, trace.arms[0], values.reshape(values.shape[0], -1)])
        return header, rows

    def at(self, t: int) -> PolicyAtRound:
        """Every arm as the policy saw it at the ``select`` of round ``t`` (a recorded round)."""
        (t,) = check_rounds([t], self.horizon, self.trace_every)
        horizon, r = self.horizon, (t - 1) // self.trace_every
        index, terms = self.trace.index[0, r], self.trace.terms[0, r]
        pulls = self.pulls_before(t)
        arms = tuple(
            ArmAtRound(
                i,
                int(pulls[i]),
                float(index[i]),
                tuple(float(x) for x in terms[i]),
                self.policy.target_point(int(pulls[i]), t, horizon, terms[i]),
                int(pulls[i]) + horizon - t,
            )
            for i in range(index.shape[0])
        )
        return PolicyAtRound(self.label, t, int(self.trace.arms[0, r]), arms)


@dataclass(frozen=True, eq=False)
class Explanation:
    """Traced runs of one or more policies on one instance, horizon and seed, and the rounds
    asked for."""

    instance: RisingInstance
    horizon: int
    seed: SeedLike
    rounds: tuple[int, ...]
    runs: tuple[TracedRun, ...]

    def at(self, t: int) -> tuple[PolicyAtRound, ...]:
        """Every policy's view of the arms at round ``t``."""
        return tuple(run.at(t) for run in self.runs)

    def to_dict(self) -> dict[str, Any]:
        """The numbers behind the Figure 3 view as JSON-able data (infinite indices of forced
        rounds as ``"inf"``/``"-inf"``; target null where a policy defines none)."""
        inst = self.instance
        return {
            "instance": inst.name,
            "arm_names": list(inst.arm_names),
            "noise": str(inst.noise),
            "horizon": self.horizon,
            "seed": seed_text(self.seed),
            "policies": [
                {
                    "label": run.label,
                    "params": run.policy.params,
                    "term_names": list(run.trace.term_names),
                    "regret": run.regret,
                }
                for run in self.runs
            ],
            "rounds": [
                {
                    "round": t,
                    "remaining": self.horizon - t,
                    "policies": {view.label: _view_dict(view, inst) for view in self.at(t)},
                }
                for t in self.rounds
            ],
        }

    def table(self) -> tuple[list[str], list[list[Any]]]:
        """The same numbers as one row per (round, policy, arm): header and rows."""
        names: list[str] = []
        for run in self.runs:
            names += [n for n in run.trace.term_names if n not in names]
        header = [
            "round",
            "policy",
            "arm",
            "arm_name",
            "pulls",
            "mean_at_pulls",
            "chosen",
            "index",
            *names,
            "target_pull",
            "target_value",
            "horizon_limit",
        ]
        rows = []
        for t in self.rounds:
            for run, view in zip(self.runs, self.at(t), strict=True):
                column = {n: j for j, n in enumerate(run.trace.term_names)}
                for a in view.arms:
                    target = a.target or ("", "")
                    rows.append(
                        [
                            t,
                            view.label,
                            a.arm,
                            self.instance.arm_names[a.arm],
                            a.pulls,
                            mean_at(self.instance, a.arm, a.pulls),
                            int(a.arm == view.chosen),
                            a.index,
                            *(a.terms[column[n]] if n in column else "" for n in names),
                            *target,
                            a.horizon_limit,
                        ]
                    )
        return header, rows


def mean_at(instance: RisingInstance, arm: int, pulls: int) -> float:
    """mu_arm(pulls), the expected reward of the arm's last pull (0 before its first)."""
    return float(instance.means[arm, pulls - 1]) if pulls > 0 else 0.0


def _view_dict(view: PolicyAtRound, inst: RisingInstance) -> dict[str, Any]:
    return {
        "chosen": view.chosen,
        "arms": [
            {
                "arm": a.arm,
                "name": inst.arm_names[a.arm],
                "pulls": a.pulls,
                "mean_at_pulls": mean_at(inst, a.arm, a.pulls),
                "index": json_number(a.index),
                "terms": [json_number(x) for x in a.terms],
                "target": None if a.target is None else {"pull": a.target[0], "value": a.target[1]},
                "horizon_limit": a.horizon_limit,
            }
            for a in view.arms
        ],
    }


def seed_text(seed: SeedLike) -> int | str:
    """A seed for a report: the integer, or the entropy and spawn key of a SeedSequence."""
    if isinstance(seed, np.random.SeedSequence):
        return f"SeedSequence(entropy={seed.entropy}, spawn_key={tuple(seed.spawn_key)})"
    return int(seed)


def check_rounds(rounds: Sequence[int], horizon: int, every: int) -> tuple[int, ...]:
    """The asked rounds, sorted: each in [1, T] and recorded by a trace of every ``every``-th
    round (one clear line otherwise)."""
    out = []
    for t in rounds:
        if isinstance(t, bool) or not isinstance(t, int | np.integer) or not 1 <= t <= horizon:
            raise ValueError(f"round={t!r} is not allowed: use a round in [1, {horizon}]")
        if (t - 1) % every:
            raise ValueError(
                f"round={t} is not allowed with trace_every={every}: use a recorded round "
                f"1 + {every} k (e.g. {1 + (t - 1) // every * every})"
            )
        out.append(int(t))
    return tuple(sorted(set(out)))


def traced_run(
    instance: RisingInstance, policy: Policy, horizon: int, seed: SeedLike, trace_every: int = 1
) -> TracedRun:
    """One run of ``policy`` with its trace, arms and rewards (one seed)."""
    res = simulate(
        instance, policy, horizon, [seed], trace=True, trace_every=trace_every, record_arms=True
    )
    assert res.arms is not None and res.trace is not None
    arms = res.arms[0].astype(np.int64)
    noise = instance.noise
    rewards = draw_run_rewards(
        instance.means, noise.code, noise.sigma, instance.noise_table, reward_key(seed), arms
    )
    return TracedRun(policy, arms, rewards, res.trace, trace_every, float(res.regret[0]))


def explain(
    instance: RisingInstance,
    policies: Sequence[Policy | str],
    horizon: int,
    seed: SeedLike = 0,
    rounds: Sequence[int] = (),
    *,
    trace_every: int = 1,
) -> Explanation:
    """Run each policy once (``seed``) with its trace and read it at ``rounds`` (each in
    [1, T]; with ``trace_every`` = k, rounds 1 + k j only). Policies (objects, or registered
    names with their defaults) must have distinct names."""
    if not policies:
        raise ValueError("policies=[] is not allowed: give at least one policy")
    resolved = [as_policy(p) for p in policies]
    names = [p.name for p in resolved]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"policy={name!r} is given twice: give distinct policies")
    check_run_size(instance.n_arms, horizon)
    check_trace_every(trace_every)
    asked = check_rounds(rounds, horizon, trace_every)
    runs = tuple(traced_run(instance, p, horizon, seed, trace_every) for p in resolved)
    return Explanation(instance, int(horizon), seed, asked, runs)
