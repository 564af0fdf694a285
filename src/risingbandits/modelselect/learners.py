"""The online learners of Metelli et al.'s IMDB experiment, compiled with Numba.

One pull of a learner (rising-baselines.md section 7): predict the label of its next review,
reward 1 when the predicted class ``p > 0.5`` equals the label, then train on that review.
Reviews are sparse bag-of-words rows (:class:`risingbandits.modelselect.features.BagOfWords`).

Learners, named as the shared learning curves are (``lr_0.003``, ``ogd_0.1``, ``nn_2-2``):

* ``lr_<alpha>``: online logistic regression, ``w <- w - alpha (p - y) x``, ``w0 = 1/d``;
* ``ogd_<beta>``: online gradient descent on the logistic loss, step ``beta / sqrt(t)`` (t = 1 on
  the first update), projection onto the box ``[-2, 2]^d``, ``w0 = 1/d``;
* ``nn_<h1>-<h2>-...``: a scikit-learn-like ``MLPClassifier`` trained by ``partial_fit`` on one
  sample: ReLU hidden layers, logistic output, binary log loss, L2 penalty ``alpha = 1e-4``
  (scikit-learn's default), Adam with learning rate 0.001, beta1 = 0.9, beta2 = 0.999,
  eps = 1e-8. Initialisation as scikit-learn's: every weight and bias ~ U(-b, b) with
  ``b = sqrt(6 / (fan_in + fan_out))`` (Glorot uniform for ReLU), drawn layer by layer.
  Before its first update the network predicts 0.5 (scikit-learn's "not fitted", class 0).

As in Metelli's code, every prediction is clipped to ``[1e-4, 1 - 1e-4]`` and the linear
learners update with the clipped value; the MLP's gradient uses its unclipped output, as
scikit-learn's ``partial_fit`` does. Given the same initial weights, the MLP gives the same
probabilities as ``MLPClassifier.partial_fit`` to about 1e-16 (see the tests).

Speed: a review is a sparse row, so LR and OGD touch only its words; the MLP's backward pass is
sparse in its first layer but its Adam step is dense (the L2 penalty makes every gradient
non-zero), about 2,000 parameters for ``nn_2``.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from risingbandits._jit import jit, vectorising_helper
from risingbandits.instances.memory import bytes_text, short_of

KIND_LR = 0
KIND_OGD = 1
KIND_MLP = 2
CLIP = 1e-4
OGD_BOX = 2.0
MLP_L2 = 1e-4
ADAM_LR = 1e-3
ADAM_BETA1 = 0.9
ADAM_BETA2 = 0.999
ADAM_EPS = 1e-8

_NAME = re.compile(r"^(lr|ogd)_([0-9.eE+-]+)$|^nn_([0-9]+(?:-[0-9]+)*)$")
NAME_RULE = "lr_<alpha>, ogd_<beta> or nn_<h1>-<h2>-..., e.g. lr_0.003, ogd_0.1, nn_2-2"
MLP_ARRAYS = 4
"""Arrays of a network's parameter count an MLP learner holds: weights, Adam's two moments and
the gradient (8 bytes a number)."""


class LearnerState(NamedTuple):
    """Run state of one learner (one type for every kind, so one compiled step serves all).

    ``sizes``: layer widths ``[d, h1, ..., 1]`` (``[d, 1]`` for the linear learners).
    ``params``: weights, layer by layer (row-major ``fan_in x fan_out`` matrix, then biases).
    ``adam_m``, ``adam_v``, ``grad``: Adam moments and gradient (empty for linear learners).
    ``act``, ``delta``: activations and back-propagated errors of the non-input units.
    ``counter[0]``: training steps so far.
    """

    kind: int
    rate: float
    sizes: np.ndarray
    params: np.ndarray
    adam_m: np.ndarray
    adam_v: np.ndarray
    grad: np.ndarray
    act: np.ndarray
    delta: np.ndarray
    counter: np.ndarray


@dataclass(frozen=True)
class LearnerSpec:
    """A learner by name: kind, rate (alpha, beta or Adam's learning rate), hidden layers."""

    name: str
    kind: int
    rate: float
    hidden: tuple[int, ...] = ()

    def describe(self) -> str:
        if self.kind == KIND_LR:
            return f"online logistic regression, alpha = {self.rate:g}"
        if self.kind == KIND_OGD:
            return f"OGD on the logistic loss, beta = {self.rate:g}, box [-2, 2]"
        return f"MLP hidden {self.hidden}, Adam lr = {self.rate:g}"

    def layer_sizes(self, n_features: int) -> tuple[int, ...]:
        return (n_features, *self.hidden, 1)


def parse_learner(name: str) -> LearnerSpec:
    """The learner called ``name`` (one clear ValueError for an unknown name)."""
    match = _NAME.match(name.strip())
    error = ValueError(f"learner={name!r} is not allowed: use {NAME_RULE}")
    if match is None:
        raise error
    family, rate_text, hidden_text = match.groups()
    if hidden_text is not None:
        hidden = tuple(int(h) for h in hidden_text.split("-"))
        if min(hidden) < 1:
            raise error
        return LearnerSpec(f"nn_{hidden_text}", KIND_MLP, ADAM_LR, hidden)
    try:
        rate = float(rate_text)
    except ValueError:
        raise error from None
    if not (rate > 0.0 and math.isfinite(rate)):
        raise error
    kind = KIND_LR if family == "lr" else KIND_OGD
    return LearnerSpec(f"{family}_{rate:g}", kind, rate)


def parse_learners(text: str | list[str] | tuple[str, ...]) -> list[LearnerSpec]:
    """A comma-separated list (or a sequence) of learner names; at least two, no repeats."""
    names = [n for n in (text.split(",") if isinstance(text, str) else text) if n.strip()]
    specs = [parse_learner(n) for n in names]
    keys = [s.name for s in specs]
    if len(specs) < 2 or len(set(keys)) != len(keys):
        raise ValueError(
            f"learners={','.join(keys)!r} is not allowed: use two or more different learners"
        )
    return specs


def mlp_views(sizes: tuple[int, ...], flat: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(weights ``fan_in x fan_out``, biases) views of each layer inside a flat parameter array."""
    views, off = [], 0
    for fan_in, fan_out in itertools.pairwise(sizes):
        weights = flat[off : off + fan_in * fan_out].reshape(fan_in, fan_out)
        off += fan_in * fan_out
        views.append((weights, flat[off : off + fan_out]))
        off += fan_out
    return views


def new_state(spec: LearnerSpec, n_features: int, rng: np.random.Generator) -> LearnerState:
    """A fresh learner; the MLP's initial weights are drawn from ``rng``."""
    sizes = spec.layer_sizes(n_features)
    if spec.kind != KIND_MLP:
        params = np.full(n_features, 1.0 / n_features)
        empty = np.zeros(0)
        return LearnerState(
            spec.kind,
            spec.rate,
            np.asarray(sizes, np.int64),
            params,
            empty,
            empty,
            empty,
            np.zeros(1),
            np.zeros(1),
            np.zeros(1, np.int64),
        )
    n_params = sum(a * b + b for a, b in itertools.pairwise(sizes))
    _check_network_memory(spec, n_params)
    params = np.zeros(n_params)
    for weights, biases in mlp_views(sizes, params):
        bound = math.sqrt(6.0 / (weights.shape[0] + weights.shape[1]))
        weights[:] = rng.uniform(-bound, bound, weights.shape)
        biases[:] = rng.uniform(-bound, bound, biases.shape)
    n_units = sum(sizes[1:])
    return LearnerState(
        KIND_MLP,
        spec.rate,
        np.asarray(sizes, np.int64),
        params,
        np.zeros(n_params),
        np.zeros(n_params),
        np.zeros(n_params),
        np.zeros(n_units),
        np.zeros(n_units),
        np.zeros(1, np.int64),
    )


def _check_network_memory(spec: LearnerSpec, n_params: int) -> None:
    """Refuse a network whose arrays do not fit in the memory available (one line, instead of
    a ``MemoryError`` or numpy's "Maximum allowed dimension exceeded")."""
    need = MLP_ARRAYS * 8 * n_params
    available = short_of(need)
    if available is not None:
        raise ValueError(
            f"learner={spec.name!r} is not allowed: its {n_params:,} parameters take "
            f"{bytes_text(need)} (weights, Adam's moments and gradient) and "
            f"{bytes_text(available)} of memory is available: use smaller hidden layers"
        )


@vectorising_helper
def _sigmoid(z: float) -> float:
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@vectorising_helper
def _clip(p: float) -> float:
    return min(max(p, CLIP), 1.0 - CLIP)


@vectorising_helper
def _linear_prob(
    state: LearnerState, indptr: np.ndarray, ind: np.ndarray, val: np.ndarray, row: int
) -> float:
    s = 0.0
    for k in range(indptr[row], indptr[row + 1]):
        s += state.params[ind[k]] * val[k]
    return _clip(_sigmoid(s))


@vectorising_helper
def _linear_train(
    state: LearnerState,
    indptr: np.ndarray,
    ind: np.ndarray,
    val: np.ndarray,
    row: int,
    p: float,
    y: float,
) -> None:
    state.counter[0] += 1
    w = state.params
    if state.kind == KIND_LR:
        step = state.rate * (p - y)
        for k in range(indptr[row], indptr[row + 1]):
            w[ind[k]] -= step * val[k]
    else:
        step = state.rate * (p - y) / math.sqrt(float(state.counter[0]))
        for k in range(indptr[row], indptr[row + 1]):
            w[ind[k]] = min(max(w[ind[k]] - step * val[k], -OGD_BOX), OGD_BOX)


@vectorising_helper
def _mlp_forward(
    state: LearnerState, indptr: np.ndarray, ind: np.ndarray, val: np.ndarray, row: int
) -> float:
    """Forward pass; fills ``act`` and returns the network's (unclipped) output probability."""
    sizes, w, act = state.sizes, state.params, state.act
    n_layers = sizes.shape[0] - 1
    off, a_in, a_out = 0, 0, 0
    for layer in range(n_layers):
        fan_in, fan_out = sizes[layer], sizes[layer + 1]
        bias = off + fan_in * fan_out
        for u in range(fan_out):
            act[a_out + u] = w[bias + u]
        if layer == 0:
            for k in range(indptr[row], indptr[row + 1]):
                base = off + ind[k] * fan_out
                for u in range(fan_out):
                    act[a_out + u] += val[k] * w[base + u]
        else:
            for i in range(fan_in):
                a = act[a_in + i]
                if a != 0.0:
                    for u in range(fan_out):
                        act[a_out + u] += a * w[off + i * fan_out + u]
        if layer < n_layers - 1:
            for u in range(fan_out):
                act[a_out + u] = max(act[a_out + u], 0.0)
        a_in = a_out
        a_out += fan_out
        off = bias + fan_out
    z = act[a_out - 1]
    p = _sigmoid(z)
    act[a_out - 1] = p
    return p


@vectorising_helper
def _mlp_train(
    state: LearnerState,
    indptr: np.ndarray,
    ind: np.ndarray,
    val: np.ndarray,
    row: int,
    p: float,
    y: float,
) -> None:
    """Back-propagation of the log loss + L2 penalty, then one Adam step (scikit-learn's)."""
    sizes, w, g, act, delta = state.sizes, state.params, state.grad, state.act, state.delta
    n_layers = sizes.shape[0] - 1
    n_units = act.shape[0]
    delta[n_units - 1] = p - y
    off = w.shape[0]
    a_out = n_units
    for layer in range(n_layers - 1, -1, -1):
        fan_in, fan_out = sizes[layer], sizes[layer + 1]
        off -= fan_in * fan_out + fan_out
        bias = off + fan_in * fan_out
        a_out -= fan_out
        a_in = a_out - fan_in
        for u in range(fan_out):
            g[bias + u] = delta[a_out + u]
        for q in range(off, bias):
            g[q] = MLP_L2 * w[q]
        if layer == 0:
            for k in range(indptr[row], indptr[row + 1]):
                base = off + ind[k] * fan_out
                for u in range(fan_out):
                    g[base + u] += val[k] * delta[a_out + u]
        else:
            for i in range(fan_in):
                a = act[a_in + i]
                back = 0.0
                for u in range(fan_out):
                    q = off + i * fan_out + u
                    g[q] += a * delta[a_out + u]
                    back += w[q] * delta[a_out + u]
                delta[a_in + i] = back if a > 0.0 else 0.0
    state.counter[0] += 1
    t = float(state.counter[0])
    lr = state.rate * math.sqrt(1.0 - ADAM_BETA2**t) / (1.0 - ADAM_BETA1**t)
    m, v = state.adam_m, state.adam_v
    for q in range(w.shape[0]):
        m[q] = ADAM_BETA1 * m[q] + (1.0 - ADAM_BETA1) * g[q]
        v[q] = ADAM_BETA2 * v[q] + (1.0 - ADAM_BETA2) * g[q] * g[q]
        w[q] -= lr * m[q] / (math.sqrt(v[q]) + ADAM_EPS)


@vectorising_helper
def _predict(
    state: LearnerState, indptr: np.ndarray, ind: np.ndarray, val: np.ndarray, row: int
) -> tuple[float, float]:
    """(clipped prediction, raw output used by training) for review ``row``."""
    if state.kind != KIND_MLP:
        p = _linear_prob(state, indptr, ind, val, row)
        return p, p
    raw = _mlp_forward(state, indptr, ind, val, row)
    if state.counter[0] == 0:
        return 0.5, raw
    return _clip(raw), raw


@vectorising_helper
def pull(
    state: LearnerState,
    indptr: np.ndarray,
    ind: np.ndarray,
    val: np.ndarray,
    labels: np.ndarray,
    row: int,
) -> float:
    """One pull: predict review ``row``, reward 1.0 if right else 0.0, then train on it."""
    shown, raw = _predict(state, indptr, ind, val, row)
    y = float(labels[row])
    reward = 1.0 if (shown > 0.5) == (labels[row] == 1) else 0.0
    if state.kind == KIND_MLP:
        _mlp_train(state, indptr, ind, val, row, raw, y)
    else:
        _linear_train(state, indptr, ind, val, row, shown, y)
    return reward


@jit
def pull_one(
    state: LearnerState,
    indptr: np.ndarray,
    ind: np.ndarray,
    val: np.ndarray,
    labels: np.ndarray,
    row: int,
) -> float:
    """:func:`pull` as a compiled entry point (one call from Python per pull)."""
    return pull(state, indptr, ind, val, labels, row)


@jit
def run_stream(
    state: LearnerState,
    indptr: np.ndarray,
    ind: np.ndarray,
    val: np.ndarray,
    labels: np.ndarray,
    order: np.ndarray,
    out: np.ndarray,
) -> None:
    """Pull the learner on reviews ``order[0], order[1], ...``; add each reward to ``out[n]``."""
    for n in range(order.shape[0]):
        out[n] += pull(state, indptr, ind, val, labels, order[n])


@jit
def accuracy(
    state: LearnerState,
    indptr: np.ndarray,
    ind: np.ndarray,
    val: np.ndarray,
    labels: np.ndarray,
    rows: np.ndarray,
) -> float:
    """Fraction of reviews ``rows`` whose class the learner predicts right (no training)."""
    right = 0
    for r in rows:
        shown, _ = _predict(state, indptr, ind, val, r)
        if (shown > 0.5) == (labels[r] == 1):
            right += 1
    return right / max(rows.shape[0], 1)


@jit
def probability(
    state: LearnerState, indptr: np.ndarray, ind: np.ndarray, val: np.ndarray, row: int
) -> float:
    """The learner's clipped probability that review ``row`` is positive (no training)."""
    shown, _ = _predict(state, indptr, ind, val, row)
    return shown
