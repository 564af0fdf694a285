"""The compiled online learners: formulas of Metelli et al.'s learners, scikit-learn's MLP."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.neural_network import MLPClassifier

from risingbandits.modelselect.features import BagOfWords
from risingbandits.modelselect.learners import (
    accuracy,
    mlp_views,
    new_state,
    parse_learner,
    parse_learners,
    probability,
    pull_one,
    run_stream,
)


def toy_corpus(n: int = 300, d: int = 40, seed: int = 0) -> tuple[BagOfWords, np.ndarray]:
    """A small sparse count corpus whose label depends on a few columns."""
    rng = np.random.default_rng(seed)
    dense = rng.poisson(0.4, (n, d)).astype(float)
    labels = (dense[:, :4].sum(1) > dense[:, 4:8].sum(1)).astype(np.int8)
    indptr = np.zeros(n + 1, np.int64)
    cols: list[int] = []
    for i in range(n):
        cols.extend(np.flatnonzero(dense[i]))
        indptr[i + 1] = len(cols)
    indices = np.asarray(cols, np.int32)
    counts = dense[np.repeat(np.arange(n), np.diff(indptr)), indices]
    vocab = tuple(f"w{j}" for j in range(d))
    return BagOfWords(indptr, indices, counts, labels, vocab, "toy"), dense


def reference_linear(dense: np.ndarray, y: np.ndarray, kind: str, rate: float) -> list[float]:
    """Metelli et al.'s LR / OGD strategies, transcribed from rising-baselines.md section 7."""
    d = dense.shape[1]
    w = np.full(d, 1.0 / d)
    rewards = []
    for t, (x, target) in enumerate(zip(dense, y, strict=True), start=1):
        p = min(max(1.0 / (1.0 + math.exp(-float(w @ x))), 1e-4), 1 - 1e-4)
        rewards.append(float((p > 0.5) == target))
        if kind == "lr":
            w = w - rate * (p - target) * x
        else:
            w = np.clip(w - rate / math.sqrt(t) * (p - target) * x, -2.0, 2.0)
    return rewards


@pytest.mark.parametrize("name", ["lr_0.003", "lr_0.5", "ogd_0.1", "ogd_5"])
def test_linear_learners_follow_the_formulas(name: str) -> None:
    bow, dense = toy_corpus()
    spec = parse_learner(name)
    state = new_state(spec, bow.n_features, np.random.default_rng(0))
    got = [pull_one(state, *bow.arrays(), j) for j in range(bow.n_docs)]
    kind = name.split("_")[0]
    assert got == reference_linear(dense, bow.labels, kind, spec.rate)
    if kind == "ogd":
        assert np.abs(state.params).max() <= 2.0


@pytest.mark.parametrize("hidden", [(1,), (2, 2), (1, 1, 2), (5, 3)])
def test_mlp_matches_scikit_learn_partial_fit(hidden: tuple[int, ...]) -> None:
    """Same initial weights -> the same probabilities as MLPClassifier.partial_fit, sample by
    sample (ReLU, logistic output, L2 1e-4, Adam 0.001)."""
    bow, dense = toy_corpus(n=250)
    spec = parse_learner("nn_" + "-".join(map(str, hidden)))
    state = new_state(spec, bow.n_features, np.random.default_rng(1))
    init = iter([(w.copy(), b.copy()) for w, b in mlp_views(spec.layer_sizes(40), state.params)])
    clf = MLPClassifier(hidden_layer_sizes=hidden, learning_rate="constant")
    clf._init_coef = lambda fan_in, fan_out, dtype: next(init)  # our initial weights
    y = bow.labels
    for j in range(bow.n_docs):
        ours = probability(state, *bow.arrays()[:3], j)
        if j == 0:
            assert ours == 0.5  # not fitted yet: scikit-learn raises, Metelli's code says 0.5
        else:
            theirs = min(max(clf.predict_proba(dense[j : j + 1])[0, 1], 1e-4), 1 - 1e-4)
            assert ours == pytest.approx(theirs, abs=1e-12)
        reward = pull_one(state, *bow.arrays(), j)
        assert reward == float((ours > 0.5) == y[j])
        clf.partial_fit(dense[j : j + 1], y[j : j + 1], classes=[0, 1])


def test_mlp_initialisation_is_glorot_uniform() -> None:
    spec = parse_learner("nn_2-2")
    state = new_state(spec, 1000, np.random.default_rng(3))
    layers = mlp_views(spec.layer_sizes(1000), state.params)
    assert [w.shape for w, _ in layers] == [(1000, 2), (2, 2), (2, 1)]
    for weights, biases in layers:
        bound = math.sqrt(6.0 / sum(weights.shape))
        assert np.abs(weights).max() <= bound and np.abs(biases).max() <= bound
        assert np.abs(weights).max() > 0.5 * bound  # drawn, not zero
    again = new_state(spec, 1000, np.random.default_rng(3))
    np.testing.assert_array_equal(again.params, state.params)


def test_stream_and_accuracy() -> None:
    bow, _ = toy_corpus(n=400)
    spec = parse_learner("lr_0.1")
    state = new_state(spec, bow.n_features, np.random.default_rng(0))
    order = np.arange(300)
    out = np.zeros(300)
    run_stream(state, *bow.arrays(), order, out)
    assert set(np.unique(out)) <= {0.0, 1.0}
    assert out[150:].mean() > out[:50].mean()  # it learns
    before = state.params.copy()
    acc = accuracy(state, *bow.arrays(), np.arange(300, 400))
    np.testing.assert_array_equal(state.params, before)  # scoring does not train
    manual = np.mean(
        [(probability(state, *bow.arrays()[:3], j) > 0.5) == bow.labels[j] for j in range(300, 400)]
    )
    assert acc == pytest.approx(manual)
    assert acc > 0.7


def test_learner_names() -> None:
    assert parse_learner("lr_0.0030").name == "lr_0.003"
    assert parse_learner("ogd_1e-1").name == "ogd_0.1"
    assert parse_learner("nn_1-1-2").hidden == (1, 1, 2)
    assert [s.name for s in parse_learners("lr_0.003, nn_2")] == ["lr_0.003", "nn_2"]
    for bad in ("svm_1", "lr_abc", "lr_-1", "lr_0", "nn_0", "nn_", "nn_2--2", "ogd_inf"):
        with pytest.raises(ValueError, match=rf"learner='{bad}' is not allowed: use lr_<alpha>"):
            parse_learner(bad)
    with pytest.raises(ValueError, match="two or more different learners"):
        parse_learners("lr_0.003,lr_0.0030")


@pytest.mark.parametrize("hidden", ["99999999999999999999", "1000000-1000000"])
def test_a_network_too_large_for_memory_is_one_line_naming_it(hidden: str) -> None:
    """It was numpy's "Maximum allowed dimension exceeded", or a MemoryError traceback
    ("Unable to allocate 7.28 TiB") from ``modelselect imdb``."""
    spec = parse_learner(f"nn_{hidden}")
    with pytest.raises(ValueError, match=rf"learner='nn_{hidden}' is not allowed: its [0-9,]+ par"):
        new_state(spec, 1000, np.random.default_rng(0))
