"""Rising instances from LCDB learning curves: :func:`from_lcdb` and the versioned family lcdb-v1.

The curves come from the Learning Curve Database (Mohr et al. 2022; table read by
:mod:`risingbandits.instances.lcdb_table`; ``pip install "risingbandits[lcdb]"``). Choices made
here (also in ``docs/lcdb.md``):

* **A pull** gives a learner ``pull_size`` more training samples: its n-th pull has the mean
  score of the learner trained on ``n x pull_size`` samples.
* **Interpolation**: linear in log(training-set size) between LCDB's anchors, which are
  geometric (16 x sqrt(2)^k), so each anchor-to-anchor segment gets the same weight, the way
  learning curves are usually drawn and fitted (power laws); flat before the first anchor
  (sizes below 16 take the 16-sample value) and after a curve's last anchor.
* **Metric**: ``accuracy`` is LCDB's validation accuracy (``score_valid``: what a model-selection
  loop observes); ``test-accuracy`` its test accuracy. LCDB's log-loss is unbounded, and its AUC
  and F1 tables cover 166 of the 248 data sets with missing values: not offered. Instances carry
  the test accuracy as ``test_means`` whatever the metric: the final-model gap is judged on data
  no policy saw (issue 20), the rewards follow the metric.
* **Noise** (default ``curve-std``): Gaussian around the mean curve, with the standard deviation
  of the score across LCDB's splits at that size (interpolated like the mean). Rewards stay
  independent from pull to pull, as every policy's confidence bound assumes, and the draw is the
  compiled counter-based one of every other instance; resampling one split's curve per run
  would make the noise a persistent offset along the whole run instead. Rewards are not clipped
  to [0, 1]. Any other noise model (``Noise("gaussian", 0.05)``, ...) can replace it.
* **Cost** of a pull (``costs``, in seconds): the n-th pull costs LCDB's mean ``traintime``
  (over its splits) at ``n x pull_size`` samples, interpolated like the scores, floored at
  :data:`MIN_PULL_SECONDS`. Each LCDB row is one fit from scratch on ``size_train`` samples,
  and most of its 20 learners (SVMs, trees, forests, boosting, discriminant analysis, ...)
  cannot grow a fitted model by more samples, so the score the n-th pull reports is had only
  by fitting on all ``n x pull_size`` samples: that fit is the pull's cost, and reaching pull n
  costs the sum of the fits on the way, as in a loop that retrains at every step. Charging
  only the difference to the previous pull's time would assume warm starts LCDB never made
  (and half of its anchors train in under 10 ms, so such differences are partly timing noise:
  8% of its anchor-to-anchor steps do not increase). Times LCDB left missing, zero or negative
  are left out of an anchor's mean; an anchor with no time left is interpolated across from
  its neighbours, and a curve with none costs the floor at every pull.
* **Too short**: a horizon for which ``horizon x pull_size`` exceeds the last anchor of every
  chosen curve is refused; a chosen curve that ends earlier (LCDB stopped that learner) is held
  flat after its last anchor (``meta["last_anchor"]`` says where).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from risingbandits.extras import MissingExtra
from risingbandits.instances.base import RisingInstance
from risingbandits.instances.lcdb_table import Curve, CurveTable, lcdb_source, load_table
from risingbandits.instances.noise import Noise

METRICS = {"accuracy": "valid", "test-accuracy": "test"}
"""Metric name -> LCDB score column (``score_valid`` / ``score_test`` of the accuracy table)."""


def short_name(learner: str) -> str:
    """``sklearn.linear_model.Perceptron`` -> ``Perceptron``; ``SVC_rbf`` stays."""
    return learner.rsplit(".", 1)[-1]


MIN_PULL_SECONDS = 1e-4
"""Floor of a pull's cost in seconds: LCDB's clock resolution (its times are recorded to 0.1 ms;
the smallest in lcdb 0.1.0 is 0.3 ms), so that every cost is positive."""


def _log_interp(anchors: np.ndarray, values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """``values`` (one per anchor size) at ``sizes``: linear in log(size) between anchors, flat
    before the first anchor and after the last."""
    at = np.log(np.asarray(sizes, dtype=np.float64))
    return np.interp(at, np.log(anchors.astype(np.float64)), values)


def interpolate(curve: Curve, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of ``curve`` at training-set ``sizes`` (:func:`_log_interp`)."""
    return _log_interp(curve.sizes, curve.mean, sizes), _log_interp(curve.sizes, curve.std, sizes)


def pull_seconds(curve: Curve, sizes: np.ndarray) -> np.ndarray:
    """The cost in seconds of pulls that fit ``curve``'s learner on ``sizes`` samples: LCDB's mean
    training time there, interpolated over the anchors with a recorded time, at least
    :data:`MIN_PULL_SECONDS` (module docstring: a pull is a fit from scratch)."""
    known = np.isfinite(curve.seconds)
    if not known.any():
        return np.full(np.shape(sizes), MIN_PULL_SECONDS)
    seconds = _log_interp(curve.sizes[known], curve.seconds[known], sizes)
    return np.maximum(seconds, MIN_PULL_SECONDS)


def _known_id(table: CurveTable, openml_id: Any) -> int:
    ids = table.openml_ids
    integer = isinstance(openml_id, (int, np.integer)) and not isinstance(openml_id, bool)
    if integer and int(openml_id) in ids:
        return int(openml_id)
    examples = ", ".join(str(i) for i in ids[:5])
    raise ValueError(
        f"openml_id={openml_id!r} is not allowed: {table.source.label} has curves for "
        f"{len(ids)} OpenML data sets ({examples}, ...; see lcdb_datasets())"
    )


def _resolve_learners(
    table: CurveTable, openml_id: int, learners: str | Sequence[str] | None
) -> tuple[str, ...]:
    """LCDB's names of ``learners`` (given by LCDB's or short names; None: every learner)."""
    available = table.learners(openml_id)
    if learners is None:
        return available
    by_name = {name: name for name in available} | {short_name(n): n for n in available}
    wanted = [learners] if isinstance(learners, str) else list(learners)
    chosen: list[str] = []
    for learner in wanted:
        if learner not in by_name:
            allowed = ", ".join(short_name(n) for n in available)
            raise ValueError(
                f"learner={learner!r} is not allowed for OpenML data set {openml_id}: use "
                f"{allowed} (short or full scikit-learn names)"
            )
        if by_name[learner] in chosen:
            raise ValueError(f"learner={learner!r} is given twice: each arm is one learner")
        chosen.append(by_name[learner])
    return tuple(chosen)


def _positive_int(name: str, value: Any, meaning: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}={value!r} is not allowed: use an integer >= 1 ({meaning})")
    return int(value)


def lcdb_tables(
    openml_id: int,
    learners: str | Sequence[str] | None = None,
    pull_size: int = 16,
    metric: str = "accuracy",
    horizon: int | None = None,
) -> tuple[np.ndarray, tuple[str, ...], dict[str, Any], dict[str, np.ndarray]]:
    """Mean table (arms x pulls), arm names, meta and the other tables of :func:`from_lcdb`, by
    their :class:`RisingInstance` field names (``noise_std``, ``costs``); every argument checked,
    one line per mistake."""
    if metric not in METRICS:
        raise ValueError(
            f"metric={metric!r} is not allowed: use accuracy (LCDB's validation accuracy) or "
            "test-accuracy"
        )
    pull_size = _positive_int("pull_size", pull_size, "training samples per pull")
    table = load_table()
    openml_id = _known_id(table, openml_id)
    chosen = _resolve_learners(table, openml_id, learners)
    curves = [table.curve(openml_id, learner, METRICS[metric]) for learner in chosen]
    longest = max(c.last_size for c in curves)
    label = f"OpenML data set {openml_id} ({table.dataset_name(openml_id) or 'unnamed'})"
    if longest < pull_size:
        raise ValueError(
            f"pull_size={pull_size} is not allowed for {label}: its longest chosen curve ends "
            f"at {longest} training samples, use pull_size <= {longest}"
        )
    full = longest // pull_size
    if horizon is None:
        horizon = full
    horizon = _positive_int("horizon", horizon, "pulls")
    if horizon > full:
        raise ValueError(
            f"horizon={horizon} is not allowed for {label} with pull_size={pull_size}: its "
            f"longest chosen curve ends at {longest} training samples, use horizon <= {full}"
        )
    sizes = pull_size * np.arange(1, horizon + 1, dtype=np.float64)
    pairs = [interpolate(c, sizes) for c in curves]
    meta = {
        "openml_id": openml_id,
        "dataset": table.dataset_name(openml_id),
        "learners": list(chosen),
        "pull_size": pull_size,
        "metric": metric,
        "source": table.source.label,
        "full_horizon": full,
        "last_anchor": [c.last_size for c in curves],
        "min_splits": int(min(c.splits.min() for c in curves)),
    }
    names = tuple(short_name(n) for n in chosen)
    tables = {
        "noise_std": np.vstack([s for _, s in pairs]),
        "costs": np.vstack([pull_seconds(c, sizes) for c in curves]),
    }
    return np.vstack([m for m, _ in pairs]), names, meta, tables


def from_lcdb(
    openml_id: int,
    learners: str | Sequence[str] | None = None,
    pull_size: int = 16,
    metric: str = "accuracy",
    horizon: int | None = None,
    noise: Noise | None = None,
) -> RisingInstance:
    """An instance whose arms are LCDB learners on one OpenML data set (module docstring).

    ``learners``: LCDB's names or short ones (``SVC_rbf``, ``RandomForestClassifier``; None:
    every learner of the data set). One pull = ``pull_size`` more training samples. ``horizon``
    (default ``meta["full_horizon"]``, where the longest chosen curve ends) sets the table
    length. ``noise`` defaults to ``curve-std``: Gaussian with the spread across LCDB's splits,
    not clipped to [0, 1]. The instance carries the test accuracies too (``test_means``), on
    which the final-model gap is judged, and each pull's training time in seconds (``costs``:
    the fit on ``n x pull_size`` samples). Needs ``pip install "risingbandits[lcdb]"``.
    """
    means, names, meta, tables = lcdb_tables(openml_id, learners, pull_size, metric, horizon)
    test = lcdb_tables(openml_id, learners, pull_size, "test-accuracy", horizon)[0]
    return RisingInstance(
        means,
        noise or Noise("curve-std"),
        name=f"lcdb:{meta['openml_id']}:{meta['dataset']}",
        arm_names=names,
        meta={"family": "lcdb", **meta},
        require_rising=False,
        test_means=test,
        **tables,
    )


def lcdb_datasets() -> dict[int, str]:
    """OpenML id -> name of every data set in the LCDB table (ascending ids)."""
    table = load_table()
    return {i: table.dataset_name(i) for i in table.openml_ids}


# -- lcdb-v1 ------------------------------------------------------------------------------------

V1_ARMS = 5
V1_MIN_SIZE = 2048
V1_PULL_SIZE = 1
V1_MAX_HORIZON = 50_000
V1_LCDB_VERSION = "0.1.0"
SPLITS = ("all", "dev", "test")


def _id_hash(openml_id: int) -> bytes:
    return hashlib.sha256(f"lcdb-v1:{openml_id}".encode()).digest()


def _v1_table() -> CurveTable:
    source = lcdb_source()
    if source.version is not None and source.version != V1_LCDB_VERSION:
        raise MissingExtra(
            f"lcdb-v1 is defined on the curves of lcdb {V1_LCDB_VERSION}, but lcdb "
            f"{source.version} is installed: pip install lcdb=={V1_LCDB_VERSION}"
        )
    return load_table(source)


def lcdb_v1_members(seed: int, params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The instances of lcdb-v1 for a generator seed and ``split`` (``all``, ``dev``, ``test``).

    Rule fixed in advance (it reads which sizes each curve reaches, never a score):

    * a data set is in the family when at least 5 learners have a curve reaching 2,048
      training samples (their last anchor >= 2,048);
    * its 5 arms are drawn uniformly without replacement from those learners, with a generator
      seeded by (family, generator seed, OpenML id): seed 0 is the canonical draw, and a data
      set gets the same arms whichever split lists it;
    * one pull = 1 training sample (pull_size 1); the full horizon is the smallest last anchor
      of the 5 curves (no arm is held flat within it), at most 50,000 pulls;
    * the split: the family's data sets sorted by SHA-256 of ``"lcdb-v1:<OpenML id>"``; the
      first half (rounded up) is ``dev``, the rest ``test``; instance j of a split is its j-th
      data set in ascending OpenML id. Each member's ``index`` is its place in the whole family
      (``split = "all"``), which names it: ``lcdb-v1/<seed>/<index>`` is the same data set
      whichever split lists it.
    """
    split = params.get("split", "all")
    if split not in SPLITS:
        raise ValueError(f"split={split!r} is not allowed for lcdb-v1: use all, dev or test")
    members = _v1_members(_v1_table(), int(seed))
    return [m for m in members if split in ("all", m["split"])]


@lru_cache(maxsize=16)
def _v1_members(table: CurveTable, seed: int) -> tuple[dict[str, Any], ...]:
    tag = int.from_bytes(b"lcdb-v1", "little")
    members: list[dict[str, Any]] = []
    for openml_id in table.openml_ids:
        curves = {n: table.curve(openml_id, n) for n in table.learners(openml_id)}
        reaching = [n for n, c in curves.items() if c.last_size >= V1_MIN_SIZE]
        if len(reaching) < V1_ARMS:
            continue
        rng = np.random.default_rng(np.random.SeedSequence([tag, seed, openml_id]))
        chosen = [reaching[k] for k in rng.choice(len(reaching), V1_ARMS, replace=False)]
        common = min(curves[n].last_size for n in chosen)
        full = min(common // V1_PULL_SIZE, V1_MAX_HORIZON)
        members.append({"openml_id": openml_id, "learners": chosen, "full_horizon": full})
    by_hash = sorted(members, key=lambda m: _id_hash(m["openml_id"]))
    dev = {m["openml_id"] for m in by_hash[: (len(members) + 1) // 2]}
    return tuple(
        {**m, "split": "dev" if m["openml_id"] in dev else "test", "index": j}
        for j, m in enumerate(members)
    )


def build_lcdb_v1(rng: np.random.Generator, horizon: int, params: Mapping[str, Any]) -> tuple:
    """Family builder of lcdb-v1 (``params`` holds one entry of :func:`lcdb_v1_members`):
    (means, arm names, meta, {standard deviations, costs, test curves}). The policy observes
    LCDB's validation accuracy; the final-model gap is judged on its test accuracy
    (``score_test``), on data no policy sees; a pull costs LCDB's training time (module
    docstring)."""
    full = params["full_horizon"]
    if horizon > full:
        raise ValueError(
            f"horizon={horizon} is not allowed for lcdb-v1 on OpenML data set "
            f"{params['openml_id']}: its full horizon is {full} pulls (every lcdb-v1 instance "
            f"allows horizons up to {V1_MIN_SIZE // V1_PULL_SIZE})"
        )
    means, names, meta, tables = lcdb_tables(
        params["openml_id"], params["learners"], V1_PULL_SIZE, "accuracy", horizon
    )
    test = lcdb_tables(
        params["openml_id"], params["learners"], V1_PULL_SIZE, "test-accuracy", horizon
    )[0]
    meta |= {"split": params["split"], "full_horizon": full}
    return means, names, meta, tables | {"test_means": test}
