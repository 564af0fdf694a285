"""Incremental training recorded unit by unit: what one pull of a live model-selection loop is.

One unit = one ``partial_fit`` on a mini-batch of training samples. After each unit the model
is scored on a validation part (the reward a policy observes) and on a test part (how good the
deployed model really is), and the unit's wall time is measured: the ``partial_fit`` plus the
validation score, what a pull costs a live loop (the test score is bookkeeping, not timed).
Any learner with scikit-learn's ``partial_fit(X, y, classes=...)`` and ``predict(X)`` fits.

The pieces, each a rule of :mod:`risingbandits.instances.live` (``docs/live.md``):

* :func:`split_parts`: a stratified random order of the rows; the first quarter (at most
  ``caps[0]``) is the test part, the next quarter (at most ``caps[1]``) the validation part,
  the rows after them (at most ``caps[2]``) the training part;
* :func:`standardise`: features centred and scaled with the training part's mean and standard
  deviation (a constant column is only centred);
* :func:`batch_order`: the training rows in a fresh random order per epoch, cut into
  consecutive mini-batches (a batch may span two epochs).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

ESTIMATORS = {
    "SGDClassifier": "sklearn.linear_model",
    "Perceptron": "sklearn.linear_model",
    "MLPClassifier": "sklearn.neural_network",
    "GaussianNB": "sklearn.naive_bayes",
    "MultinomialNB": "sklearn.naive_bayes",
}
"""The scikit-learn classes a candidate may name, and their modules."""


@dataclass(frozen=True, eq=False)
class Parts:
    """Row indices of the test, validation and training parts of a data set."""

    test: np.ndarray
    validation: np.ndarray
    train: np.ndarray

    def sizes(self) -> dict[str, int]:
        return {
            "train": int(self.train.size),
            "validation": int(self.validation.size),
            "test": int(self.test.size),
        }


def stratified_order(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every row once, in a random order along which each class is spread evenly: a class's
    rows, shuffled, sit at the quantiles (j + 1/2) / n_class; ties go in a random order."""
    labels = np.asarray(labels)
    keys = np.empty(labels.shape[0])
    for label in np.unique(labels):
        rows = rng.permutation(np.flatnonzero(labels == label))
        keys[rows] = (np.arange(rows.size) + 0.5) / rows.size
    return np.lexsort((rng.permutation(labels.shape[0]), keys))


def split_parts(labels: np.ndarray, rng: np.random.Generator, caps: tuple[int, int, int]) -> Parts:
    """Stratified test, validation and training parts (module docstring); ``caps`` = the
    largest test, validation and training parts."""
    order = stratified_order(labels, rng)
    quarter = order.size // 4
    n_test, n_val = min(quarter, caps[0]), min(quarter, caps[1])
    train = order[n_test + n_val :][: caps[2]]
    return Parts(order[:n_test], order[n_test : n_test + n_val], train)


def standardise(x: np.ndarray, train: np.ndarray) -> np.ndarray:
    """``(x - mean) / std`` with the training rows' mean and standard deviation (std 0 -> 1)."""
    mean = x[train].mean(axis=0)
    std = x[train].std(axis=0)
    return (x - mean) / np.where(std > 0, std, 1.0)


def batch_order(train: np.ndarray, units: int, batch: int, rng: np.random.Generator) -> np.ndarray:
    """Rows of each unit's mini-batch (units x batch): epochs of shuffled training rows."""
    epochs = -(-units * batch // train.size)
    stream = np.concatenate([rng.permutation(train) for _ in range(epochs)])
    return stream[: units * batch].reshape(units, batch)


def make_learner(estimator: str, params: Mapping[str, Any], random_state: int) -> Any:
    """A fresh scikit-learn ``estimator`` with ``params``, seeded with ``random_state`` when it
    draws random numbers (SGD's in-batch shuffle, an MLP's initial weights)."""
    import importlib

    cls = getattr(importlib.import_module(ESTIMATORS[estimator]), estimator)
    learner = cls(**params)
    if "random_state" in learner.get_params():
        learner.set_params(random_state=random_state)
    return learner


@dataclass(frozen=True, eq=False)
class Curves:
    """Per unit: validation accuracy, test accuracy and wall time in seconds."""

    validation: np.ndarray
    test: np.ndarray
    seconds: np.ndarray


def dense_rows(x: np.ndarray | sparse.csr_matrix, rows: np.ndarray) -> np.ndarray:
    """The given rows as a dense float64 array (a CSR matrix is densified)."""
    part = x[rows]
    return np.asarray(part.toarray() if sparse.issparse(part) else part, np.float64)


def _accuracy(learner: Any, x: np.ndarray, y: np.ndarray) -> float:
    return float(np.count_nonzero(learner.predict(x) == y)) / y.size


def record(
    learner: Any,
    x: np.ndarray,
    y: np.ndarray,
    parts: Parts,
    batches: np.ndarray,
    classes: np.ndarray,
) -> Curves:
    """Train ``learner`` one unit (row of ``batches``) at a time on rows of ``x``, ``y``, and
    score it after each unit on the validation and test parts. ``classes`` go to the first
    ``partial_fit`` only (scikit-learn checks them again on every call that gets them)."""
    x_val, y_val = x[parts.validation], y[parts.validation]
    x_test, y_test = x[parts.test], y[parts.test]
    units = batches.shape[0]
    val, test, seconds = np.empty(units), np.empty(units), np.empty(units)
    for unit, rows in enumerate(batches):
        start = time.perf_counter()
        learner.partial_fit(x[rows], y[rows], **({"classes": classes} if unit == 0 else {}))
        val[unit] = _accuracy(learner, x_val, y_val)
        seconds[unit] = time.perf_counter() - start
        test[unit] = _accuracy(learner, x_test, y_test)
    return Curves(val, test, seconds)
