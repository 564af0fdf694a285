"""Optuna's own pruners on a rising instance: the candidates' curves replayed through a real
Optuna study, so the library's policies are compared with what practitioners run today by that
tool's own code, not with a reimplementation (issue 20).

How a replay runs (the way a practitioner uses a pruner, with Optuna's defaults):

* each of the K candidates (arms) is one trial, enqueued with its arm as a fixed parameter in an
  order shuffled by the run's seed (:func:`trial_order`); trials run one after another (one
  worker), asked and told with Optuna's ask-and-tell interface;
* a trial trains up to ``max_pulls`` steps: step n reports the arm's n-th reward with
  ``trial.report(reward, n)`` and then asks ``trial.should_prune()`` (after the last step too, as
  a training loop does); a pruned trial stops (told PRUNED), a trial that is never pruned is
  told COMPLETE with its last reported value;
* the rewards are the simulator's for the run's seed (:meth:`RisingInstance.reward`: counter
  based, so a library policy run with the same seed sees the very same values, a paired
  comparison); on live-v1 they are the recorded validation scores;
* the deployed model is the completed trial with the best last reported value (ties: the first
  trial); :class:`PrunerRun` records the pulls each arm got, hence the budget it consumed.

The per-trial maximum ``max_pulls`` is the budget per candidate m of the evaluation's grid: a
pruner then spends at most K x m steps, the budget the library's policies get at that m, and
usually less (what it prunes early); the library's policies are compared at exactly the steps
each replay consumed. Pruners, with their Optuna defaults: ``optuna-sh``
(``SuccessiveHalvingPruner``: min_resource "auto", reduction factor 4), ``optuna-hyperband``
(``HyperbandPruner``: min_resource 1, max_resource "auto", reduction factor 3; its brackets are
drawn from a hash of the study name and trial number, so the study name is fixed) and
``optuna-median`` (``MedianPruner``: 5 startup trials, no warm-up). Needs
``pip install "risingbandits[optuna]"``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np

from risingbandits.extras import require
from risingbandits.instances.base import RisingInstance
from risingbandits.seeding import SeedLike, as_seed_sequence, reward_key

STUDY_NAME = "risingbandits-replay"
"""Every replay's study name (Hyperband's brackets hash it with the trial number)."""
ORDER_TAG = 0x0A7A
"""Spawn index of the trial order's generator under the run's seed (no other stream uses it)."""


def _optuna() -> Any:
    optuna = require("optuna", "optuna", "the Optuna pruner replay")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def _pruners() -> dict[str, Callable[[], Any]]:
    pruners = _optuna().pruners
    return {
        "optuna-sh": pruners.SuccessiveHalvingPruner,
        "optuna-hyperband": pruners.HyperbandPruner,
        "optuna-median": pruners.MedianPruner,
    }


PRUNERS = ("optuna-sh", "optuna-hyperband", "optuna-median")
"""The pruners a replay can run (Optuna's defaults; module docstring)."""


def optuna_version() -> str:
    """The installed Optuna's version (its code decides the replays), or ``"not installed"``."""
    try:
        return metadata.version("optuna")
    except metadata.PackageNotFoundError:
        return "not installed"


def make_pruner(name: str) -> Any:
    """A fresh Optuna pruner named ``name`` (one of :data:`PRUNERS`), with Optuna's defaults."""
    if name not in PRUNERS:
        raise ValueError(f"pruner={name!r} is not allowed: use one of {', '.join(PRUNERS)}")
    return _pruners()[name]()


def trial_order(n_arms: int, seed: SeedLike) -> tuple[int, ...]:
    """The arms in the order their trials run: a permutation drawn from the run's seed."""
    ss = as_seed_sequence(seed)
    child = np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, ORDER_TAG))
    return tuple(int(a) for a in np.random.default_rng(child).permutation(n_arms))


@dataclass(frozen=True)
class PrunerRun:
    """One replay: per arm the pulls it got, the deployed arm, and what it cost."""

    pruner: str
    max_pulls: int
    order: tuple[int, ...]
    """The arm of trial 0, 1, ..."""
    pulls: np.ndarray
    completed: tuple[bool, ...]
    """Per arm: its trial reached ``max_pulls`` (told COMPLETE), else it was pruned."""
    recommended: int
    seconds: float

    @property
    def used(self) -> int:
        """Steps consumed: the budget a library policy gets in the paired comparison."""
        return int(self.pulls.sum())


def replay(instance: RisingInstance, pruner: str, max_pulls: int, seed: SeedLike) -> PrunerRun:
    """Run Optuna's ``pruner`` over the instance's K candidates, each trial up to ``max_pulls``
    steps, with the rewards of the run ``seed`` (module docstring)."""
    if isinstance(max_pulls, bool) or not isinstance(max_pulls, int) or max_pulls < 1:
        raise ValueError(f"max_pulls={max_pulls!r} is not allowed: use an integer >= 1")
    if max_pulls > instance.max_horizon:
        raise ValueError(
            f"max_pulls={max_pulls} is not allowed: instance {instance.name!r} has means for "
            f"{instance.max_horizon} pulls per arm"
        )
    optuna = _optuna()
    start = time.perf_counter()
    k = instance.n_arms
    order = trial_order(k, seed)
    key = reward_key(seed)
    study = optuna.create_study(
        study_name=STUDY_NAME,
        direction="maximize",
        pruner=make_pruner(pruner),
        sampler=optuna.samplers.RandomSampler(seed=0),  # the enqueued arm is always taken
    )
    arms = list(range(k))
    pulls = np.zeros(k, np.int64)
    last = np.full(k, -np.inf)
    completed = [False] * k
    for arm in order:
        study.enqueue_trial({"arm": arm})
        trial = study.ask()
        chosen = trial.suggest_categorical("arm", arms)
        assert chosen == arm  # an enqueued trial keeps its parameters
        for step in range(1, max_pulls + 1):
            value = instance.reward(key, arm, step)
            pulls[arm], last[arm] = step, value
            trial.report(value, step)
            if trial.should_prune():
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                break
        else:
            completed[arm] = True
            study.tell(trial, value)
    done = [a for a in order if completed[a]] or list(order)
    recommended = max(done, key=lambda a: (last[a], -order.index(a)))
    return PrunerRun(
        pruner,
        max_pulls,
        order,
        pulls,
        tuple(completed),
        int(recommended),
        time.perf_counter() - start,
    )
