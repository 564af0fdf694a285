"""Live online model selection on IMDB: a policy spends a budget of pulls on real learners.

Each pull, the policy (through :class:`~risingbandits.modelselect.selector.ModelSelector`)
names a learner; that learner predicts its next review, earns 1 when right, and trains on it
(rising-baselines.md section 7). Choices where the experiment leaves one open:

* a held-out set of ``holdout`` reviews (default 5,000) is drawn first; the learners never train
  on it and are scored on it at the end;
* each learner reads its own random order of the other reviews, without replacement, and starts
  a fresh random order if it ever exhausts them (as Metelli's code does);
* randomness: the policy gets the run seed; the split and each learner's order and initial
  weights come from ``SeedSequence(seed)`` children with spawn keys (2,) and (3, i), disjoint
  from the policy's (0,) and (1,) (:mod:`risingbandits.seeding`).

Regret is taken against the best fixed learner of the average learning curves (the
``imdb-v1`` instance of :mod:`risingbandits.instances.families`): the expected reward of the
pulls made, V*(T) - sum_i sum_{n <= N_i} curve_i(n) (DECISIONS.md rows 2 and 15).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.instances import Noise, from_means
from risingbandits.instances.families import read_curves
from risingbandits.instances.files import read_npz
from risingbandits.modelselect.features import BagOfWords
from risingbandits.modelselect.learners import LearnerSpec, accuracy, new_state, pull_one
from risingbandits.modelselect.selector import ModelSelector

DEFAULT_HOLDOUT = 5_000
BERNOULLI_PROXY = 0.5


def _generator(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


@dataclass(frozen=True)
class LiveResult:
    """One live run: pulls, realised rewards and held-out accuracy per learner."""

    learners: tuple[str, ...]
    policy: dict[str, Any]
    budget: int
    seed: int
    holdout: int
    pulls: np.ndarray
    rewards: np.ndarray
    holdout_accuracy: np.ndarray
    arms: np.ndarray
    recommended: int  # the learner the policy would deploy at the end

    @property
    def cumulative_reward(self) -> float:
        return float(self.rewards.sum())


@dataclass(frozen=True)
class CurveRegret:
    """Regret of a run's pulls against the best fixed learner of the learning curves."""

    optimal_value: float
    best_learner: str
    collected: float
    regret: float


def run_live(
    bow: BagOfWords,
    learners: Sequence[LearnerSpec],
    policy: str = "cure-ucb",
    budget: int = 50_000,
    seed: int = 0,
    *,
    preset: str | None = "imdb",
    params: dict[str, Any] | None = None,
    holdout: int = DEFAULT_HOLDOUT,
    progress: Callable[[int, int], None] | None = None,
) -> LiveResult:
    """Train ``learners`` live under ``policy`` for ``budget`` pulls; score them on held-out data.

    Rewards are 0/1, so the selector's noise proxy is the Bernoulli one (0.5).
    ``progress(done, budget)`` is called every 1,000 pulls and at the end.
    """
    if not 1 <= holdout < bow.n_docs:
        raise ValueError(f"holdout={holdout} is not allowed: use 1..{bow.n_docs - 1} reviews")
    selector = ModelSelector(
        [s.name for s in learners],
        budget,
        policy,
        preset=preset,
        params=params,
        noise_proxy=BERNOULLI_PROXY,
        seed=seed,
    )
    indptr, ind, val, labels = bow.arrays()
    split = _generator(seed, 2).permutation(bow.n_docs)
    test_rows, pool = split[:holdout], split[holdout:]
    rngs = [_generator(seed, 3, i) for i in range(len(learners))]
    states = [new_state(spec, bow.n_features, rngs[i]) for i, spec in enumerate(learners)]
    orders = [rng.permutation(pool) for rng in rngs]
    pulls = np.zeros(len(learners), np.int64)
    rewards = np.zeros(len(learners))
    arms = array("i")  # 4 bytes a pull made: grows with the pulls, not with the budget
    for t in range(budget):
        arm = selector.select()
        n = pulls[arm] % pool.shape[0]
        if n == 0 and pulls[arm] > 0:
            orders[arm] = rngs[arm].permutation(pool)
        reward = pull_one(states[arm], indptr, ind, val, labels, orders[arm][n])
        selector.update(arm, reward)
        pulls[arm] += 1
        rewards[arm] += reward
        arms.append(arm)
        if progress is not None and ((t + 1) % 1000 == 0 or t + 1 == budget):
            progress(t + 1, budget)
    held_out = np.array([accuracy(s, indptr, ind, val, labels, test_rows) for s in states])
    return LiveResult(
        tuple(s.name for s in learners),
        selector.policy,
        budget,
        seed,
        holdout,
        pulls,
        rewards,
        held_out,
        np.asarray(arms, np.int32),
        selector.recommend(),
    )


def load_curve_table(path: str | Path | None, names: Sequence[str]) -> np.ndarray:
    """The learning curves of ``names``: from an ``.npz`` file (as written by
    ``risingbandits data curves imdb``) or a folder holding ``curves.npz`` (default: the shared
    IMDB learning curves, see :func:`risingbandits.instances.families.read_curves`)."""
    if path is not None and Path(path).is_file():
        data = read_npz(path, "curves", keys=names)
        missing = [n for n in names if n not in data]
        if missing:
            raise ValueError(f"curves {path}: learner(s) {missing} not found")
        return np.vstack([data[n] for n in names])
    table, _ = read_curves(path, tuple(names))
    return np.asarray(table)


def curve_regret(result: LiveResult, table: np.ndarray) -> CurveRegret:
    """Expected regret of the run's pull counts on the curves ``table`` (one row per learner)."""
    if table.shape[1] < result.budget:
        raise ValueError(
            f"budget={result.budget} is longer than the curves ({table.shape[1]} pulls)"
        )
    instance = from_means(
        table[:, : result.budget],
        Noise("bernoulli"),
        arm_names=result.learners,
        require_rising=False,
    )
    oracle = instance.oracle
    return CurveRegret(
        optimal_value=oracle.value(result.budget),
        best_learner=result.learners[oracle.best_arm(result.budget)],
        collected=float(oracle.collected(result.pulls)),
        regret=float(oracle.regret(result.pulls)),
    )
