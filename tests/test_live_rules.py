"""The rules of the live-training family live-v1, fixed in advance: members, splits, ids, pools,
K and horizons (nothing here reads a recorded curve)."""

from __future__ import annotations

import pytest

from risingbandits.instances import live
from risingbandits.instances.families import (
    FAMILIES,
    family_instance,
    family_size,
    full_horizons,
    generate,
    instance_ids,
)
from risingbandits.instances.live import live_v1_members, pool, pool_names


def _tasks(split: str, seed: int = 0) -> list[tuple[str, int]]:
    return [(m["dataset"], m["order_seed"]) for m in live_v1_members(seed, {"split": split})]


def test_the_family_is_registered_with_the_documented_rules() -> None:
    fam = FAMILIES["live-v1"]
    assert fam.noise.kind == "none" and not fam.rising and not fam.random
    assert fam.params == ("split",)
    assert family_size("live-v1") == 40
    assert family_size("live-v1", split="dev") == family_size("live-v1", split="test") == 20


def test_dev_and_test_are_fixed_disjoint_halves_of_every_data_set() -> None:
    dev, test = _tasks("dev"), _tasks("test")
    assert set(dev).isdisjoint(test) and sorted(dev + test) == sorted(_tasks("all"))
    for dataset in live.DATASETS:
        assert {s for d, s in dev if d == dataset} == {0, 1, 2, 3}
        assert {s for d, s in test if d == dataset} == {4, 5, 6, 7}
    assert _tasks("dev", seed=3) == dev  # the generator seed draws arms, never the split


def test_ids_name_the_place_in_the_whole_family() -> None:
    every = live_v1_members(0, {})
    assert [m["index"] for m in every] == list(range(40))
    assert [(m["dataset"], m["order_seed"]) for m in every[:9]] == [
        *(("breast_cancer", s) for s in range(8)),
        ("wine", 0),
    ]
    test = live_v1_members(0, {"split": "test"})
    assert instance_ids("live-v1", 2, split="test") == [f"live-v1/0/{m['index']}" for m in test[:2]]
    for m in test:
        assert m == every[m["index"]]  # the same task and arms whichever split lists it


def test_every_instance_draws_k_distinct_arms_of_its_pool_with_the_full_horizon() -> None:
    for m in live_v1_members(0, {}):
        names = pool_names(m["dataset"])
        assert len(names) == 16 and len(set(names)) == 16
        assert len(m["arms"]) == live.ARMS == 8 and len(set(m["arms"])) == 8
        assert set(m["arms"]) <= set(names)
        assert m["full_horizon"] == 1024 == 128 * live.ARMS
    assert full_horizons("live-v1", 40) == [1024] * 40
    draws = {tuple(live_v1_members(seed, {})[0]["arms"]) for seed in range(6)}
    assert len(draws) == 6  # another generator seed, another draw
    assert live_v1_members(0, {}) == live_v1_members(0, {})


def test_the_pools_hold_the_learners_the_issue_names() -> None:
    for dataset in live.DATASETS:
        estimators = {c.estimator for c in pool(dataset)}
        assert {"SGDClassifier", "MLPClassifier", "Perceptron"} <= estimators
        losses = {c.params.get("loss") for c in pool(dataset) if c.estimator == "SGDClassifier"}
        assert {"hinge", "log_loss", "modified_huber", "squared_hinge"} <= losses
        rates = {c.params["learning_rate"] for c in pool(dataset) if "learning_rate" in c.params}
        assert {"optimal", "invscaling", "constant", "pa1", "pa2"} <= rates
    assert pool("imdb")[-1].estimator == "MultinomialNB" and pool("imdb")[-1].features == "counts"
    assert pool("wine")[-1].estimator == "GaussianNB" and pool("wine")[-1].features == "scaled"


def test_digits_is_kept_out_of_the_family() -> None:
    assert "digits" not in live.DATASETS and "digits" in live.OUTSIDE_CHECK
    assert all(m["dataset"] != "digits" for m in live_v1_members(0, {}))
    assert pool_names("digits") == pool_names("wine")  # recordable with the same rules


def test_the_rules_digest_changes_with_any_rule() -> None:
    assert live.rules_digest("wine") == live.rules_digest("breast_cancer")
    assert live.rules_digest("wine") != live.rules_digest("imdb")  # multinomial naive Bayes


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: generate("live-v1", 1, horizon=10, split="train"),
            "split='train' is not allowed for live-v1: use all, dev or test",
        ),
        (
            lambda: family_instance("live-v1", 20, horizon=10, split="dev"),
            "index=20 is not allowed for live-v1 (split=dev): it has 20 instances, use 0..19",
        ),
        (
            lambda: generate("live-v1", 1, horizon=1025),
            "horizon=1025 is not allowed for the first 1 instances of live-v1: the shortest full "
            "horizon among them is 1024 pulls",
        ),
        (
            lambda: live.check_dataset("digit"),
            "dataset='digit' is not allowed: use breast_cancer, wine, phishing, segment, imdb "
            "(the family) or digits (kept out of live-v1 as an outside check)",
        ),
    ],
)
def test_bad_requests_get_one_clear_line(call: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        call()  # type: ignore[operator]
    assert str(info.value) == message
