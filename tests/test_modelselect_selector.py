"""The model-selection API: select/update, score checks, JSON checkpoints that resume exactly."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from risingbandits.modelselect import ModelSelector
from risingbandits.policies import POLICIES, make_policy

K, BUDGET = 3, 120


def score_table(seed: int = 4) -> np.ndarray:
    """Rising, noisy validation scores: score[arm, n - 1] after the n-th training step."""
    rng = np.random.default_rng(seed)
    n = np.arange(1, BUDGET + 1)
    base = np.vstack([0.3 + 0.001 * n, 0.8 * n / (n + 20.0), np.minimum(0.9, 0.006 * n)])
    return np.clip(base + rng.normal(0, 0.05, base.shape), 0.0, 1.0)


def drive(selector: ModelSelector, scores: np.ndarray, steps: int, arms: list[int]) -> None:
    for _ in range(steps):
        arm = selector.select()
        selector.update(arm, float(scores[arm, selector.pulls[arm]]))
        arms.append(arm)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_resumed_run_makes_the_same_selections(name: str, tmp_path: Path) -> None:
    scores = score_table()
    straight: list[int] = []
    drive(ModelSelector(K, BUDGET, name, seed=3), scores, BUDGET, straight)

    resumed: list[int] = []
    first = ModelSelector(K, BUDGET, name, seed=3)
    drive(first, scores, 47, resumed)
    pending = first.select()  # saved with a pull in flight
    first.save(tmp_path / "sel.json")
    again = ModelSelector.load(tmp_path / "sel.json")
    assert again.t == 47 and again.in_flight == (pending,)
    np.testing.assert_array_equal(again.last_scores, first.last_scores)
    again.update(pending, float(scores[pending, again.pulls[pending]]))
    resumed.append(pending)
    drive(again, scores, BUDGET - 48, resumed)
    assert resumed == straight
    assert again.done and again.remaining == 0


def test_checkpoint_is_plain_json_and_restores_counts(tmp_path: Path) -> None:
    sel = ModelSelector(["a", "b", "c"], 30, "cure-ucb", score_range=(0, 100), seed=1)
    drive_scores = score_table() * 100
    drive(sel, drive_scores, 10, [])
    data = json.loads(json.dumps(sel.state_dict()))
    back = ModelSelector.from_state_dict(data)
    assert back.names == ("a", "b", "c")
    assert back.budget == 30 and back.t == 10
    np.testing.assert_array_equal(back.pulls, sel.pulls)
    assert back.policy == sel.policy


def test_score_range_rescales_to_unit_interval() -> None:
    scores = score_table()
    plain: list[int] = []
    drive(ModelSelector(K, BUDGET, "cure-ucb", seed=2), scores, BUDGET, plain)
    scaled: list[int] = []
    sel = ModelSelector(K, BUDGET, "cure-ucb", score_range=(-1.0, 3.0), seed=2)
    drive(sel, scores * 4.0 - 1.0, BUDGET, scaled)
    assert scaled == plain
    assert np.nanmax(sel.last_scores) > 1.0  # raw scores are kept as given


def test_scores_outside_unit_interval_refused() -> None:
    sel = ModelSelector(K, BUDGET)
    arm = sel.select()
    for bad in (1.2, -0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"score=.* is not allowed: use a number in \[0, 1\]"):
            sel.update(arm, bad)
    with pytest.raises(ValueError, match="score_range"):
        sel.update(arm, 42.0)
    with pytest.raises(ValueError, match="use a number"):
        sel.update(arm, True)
    ranged = ModelSelector(K, BUDGET, score_range=(0, 100))
    arm = ranged.select()
    with pytest.raises(ValueError, match=r"in \[0, 100\]"):
        ranged.update(arm, 100.5)
    ranged.update(arm, 100.0)
    assert ranged.t == 1


def test_update_must_match_selection() -> None:
    sel = ModelSelector(K, BUDGET, "ucb1")
    arm = sel.select()
    with pytest.raises(ValueError, match="no pull of it is in flight"):
        sel.update((arm + 1) % K, 0.5)


def test_budget_is_enforced() -> None:
    sel = ModelSelector(2, 3)
    drive(sel, np.full((2, 3), 0.5), 3, [])
    with pytest.raises(RuntimeError, match="budget of 3 training steps is used up"):
        sel.select()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"candidates": 4, "budget": 3}, r"budget=3 is not allowed: .*number of candidates, 4,"),
        ({"candidates": 1, "budget": 10}, r"candidates=1 is not allowed"),
        ({"candidates": ["a", "a"], "budget": 10}, r"two or more different names"),
        ({"candidates": 3, "budget": 10, "policy": "nope"}, r"policy='nope' is not allowed"),
        ({"candidates": 3, "budget": 10, "score_range": (1, 1)}, r"score_range=.* low < high"),
        ({"candidates": 3, "budget": 10, "noise_proxy": -1.0}, r"noise_proxy=-1.0"),
        ({"candidates": 3, "budget": 10, "seed": -2}, r"seed=-2"),
        ({"candidates": 3, "budget": 10, "params": {"eps": 2}}, r"eps=2.0 is not allowed"),
    ],
)
def test_bad_arguments_one_clear_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        ModelSelector(**kwargs)
    assert "\n" not in str(info.value)


def test_sigma_auto_uses_the_bounded_score_proxy() -> None:
    """sigma="auto" reads the selector's noise proxy: 0.5 unless told otherwise."""
    scores = score_table(9)
    runs = {}
    for label, params, proxy in [
        ("auto", {"sigma": "auto"}, 0.5),
        ("fixed", {"sigma": 0.5}, 0.5),
        ("small", {"sigma": "auto"}, 0.05),
        ("fixed-small", {"sigma": 0.05}, 0.5),
    ]:
        arms: list[int] = []
        sel = ModelSelector(K, BUDGET, "cure-ucb", params=params, noise_proxy=proxy, seed=5)
        drive(sel, scores, BUDGET, arms)
        runs[label] = arms
    assert runs["auto"] == runs["fixed"]
    assert runs["small"] == runs["fixed-small"]
    assert runs["auto"] != runs["small"]


def test_policy_object_is_copied_not_mutated() -> None:
    policy = make_policy("cure-ucb", eps=0.125)
    sel = ModelSelector(K, BUDGET, policy)
    drive(sel, score_table(), 5, [])
    assert sel.policy == policy.to_dict()
    with pytest.raises(RuntimeError, match="call reset"):
        policy.select()


def test_foreign_or_tampered_checkpoint_refused(tmp_path: Path) -> None:
    sel = ModelSelector(K, BUDGET, "cure-ucb")
    drive(sel, score_table(), 8, [])
    with pytest.raises(ValueError, match="not a model-selection checkpoint"):
        ModelSelector.from_state_dict({"format": "other"})
    data = sel.state_dict()
    data["policy"]["state"][1] = data["policy"]["state"][1] | {"shape": [99]}
    with pytest.raises(ValueError, match="does not fit this run"):
        ModelSelector.from_state_dict(data)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="cannot be read"):
        ModelSelector.load(broken)


def test_sklearn_example_tunes_partial_fit_models() -> None:
    path = Path(__file__).resolve().parents[1] / "examples" / "tune_sklearn_partial_fit.py"
    spec = importlib.util.spec_from_file_location("tune_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.tune(budget=30, seed=1)
    assert result["pulls"].sum() == 30 and (result["pulls"] >= 1).all()
    assert ((result["scores"] > 0) & (result["scores"] <= 1)).all()
    assert result["names"][result["chosen"]] in module.CANDIDATES


def test_policy_state_of_another_policy_refused() -> None:
    sel = ModelSelector(K, BUDGET, "cure-ucb")
    drive(sel, score_table(), 6, [])
    saved = sel.state_dict()["policy"]
    with pytest.raises(ValueError, match="the saved run is of another policy"):
        make_policy("cure-ucb", eps=0.125).load_state_dict(saved)
