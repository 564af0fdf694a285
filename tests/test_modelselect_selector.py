"""The model-selection API: select/update, score checks, JSON checkpoints that resume exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import load_script
from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector
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
    assert again.last_scores == first.last_scores
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
    assert max(x for x in sel.last_scores if x is not None) > 1.0  # raw scores kept as given


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
    other = sel.names[(arm + 1) % K]
    with pytest.raises(ValueError, match=rf"^update\('{other}'\) .* no pull of it is in flight"):
        sel.update((arm + 1) % K, 0.5)
    with pytest.raises(ValueError, match=rf"^cancel\('{other}'\) .* no pull of it is in flight"):
        sel.cancel((arm + 1) % K)


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
        ({"candidates": 3, "budget": 10, "params": "eps"}, r"params='eps' is not allowed: use a"),
        ({"candidates": ["", "a"], "budget": 10}, r"candidates=\['', 'a'\] .*\(non-blank"),
        ({"candidates": [" ", "  "], "budget": 10}, r"candidates=\[' ', '  '\] .*\(non-blank"),
        ({"candidates": ["a", None], "budget": 10}, r"candidates=\['a', None\] is not allowed"),
        ({"candidates": [1, 2], "budget": 10}, r"candidates=\[1, 2\] is not allowed"),
        ({"candidates": 2, "budget": 10, "score_range": (True, 2)}, r"score_range=\(True, 2\)"),
        ({"candidates": 2, "budget": 10, "score_range": (-1e308, 1e308)}, r"a finite width"),
        ({"candidates": 3, "budget": 10, "noise_proxy": True}, r"noise_proxy=True is not"),
        ({"candidates": 3, "budget": 10, "noise_proxy": 10**400}, r"noise_proxy=1000.*\.\.\. is"),
        ({"candidates": 3, "budget": 10, "trace": "yes"}, r"trace='yes' is not allowed: use True"),
    ],
)
def test_bad_arguments_one_clear_line(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        ModelSelector(**kwargs)
    assert "\n" not in str(info.value)


def test_an_integer_too_large_for_a_float_is_one_line() -> None:
    """10**400 gave an OverflowError from deep inside (int too large to convert to float)."""
    sel = ModelSelector(K, BUDGET)
    arm = sel.select()
    for score in (10**400, -(10**400)):
        with pytest.raises(
            ValueError, match=r"score=-?1000.*\.\.\. of .* use a number in \[0, 1\]"
        ):
            sel.update(arm, score)
    ranged = ModelSelector(K, BUDGET, score_range=(0, 100))
    with pytest.raises(ValueError, match=r"score=1000.*\.\.\. of .* in \[0, 100\]"):
        ranged.update(ranged.select(), 10**400)
    assert sel.t == 0 and sel.in_flight == (arm,)


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
    other = tmp_path / "data.json"  # JSON of something else: the refusal named no file
    other.write_text('{"rows": [1, 2]}')
    with pytest.raises(ValueError, match=r"^checkpoint '.*data\.json': not a model-selection"):
        ModelSelector.load(other)


def load_example() -> Any:
    return load_script("examples/tune_sklearn_partial_fit.py", "tune_example")


@pytest.mark.parametrize("workers", [1, 3])
def test_sklearn_example_tunes_partial_fit_models(workers: int) -> None:
    module = load_example()
    result = module.tune(budget=30, seed=1, workers=workers)
    pulls = np.array(list(result["pulls"].values()))
    assert (
        pulls.sum() == 30
        and (pulls >= 1).all()
        and list(result["pulls"]) == list(module.CANDIDATES)
    )
    assert all(0 < x <= 1 for x in result["last_scores"].values())
    assert result["recommended"] in module.CANDIDATES
    assert result["recommended_score"] == result["last_scores"][result["recommended"]]
    assert result["best_last_score"] == max(result["last_scores"].values())


def test_sklearn_example_prints_a_json_summary(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = load_example()
    # a parameter that keeps the default's compiled kernels (sigma=auto would compile HACE-UCB's
    # online call again for a given noise level: about 60 s of the suite)
    argv = ["tune", "--budget", "24", "--param", "commit=0.5", "--json"]
    monkeypatch.setattr("sys.argv", argv)
    module.main()
    summary = json.loads(capsys.readouterr().out)
    assert summary["policy"]["params"]["commit"] == 0.5 and sum(summary["pulls"].values()) == 24
    assert {"recommended", "recommended_score", "best_last_score"} <= set(summary)


def test_policy_state_of_another_policy_refused() -> None:
    sel = ModelSelector(K, BUDGET, "cure-ucb")
    drive(sel, score_table(), 6, [])
    saved = sel.state_dict()["policy"]
    with pytest.raises(ValueError, match="the saved run is of another policy"):
        make_policy("cure-ucb", eps=0.125).load_state_dict(saved)


def test_sigma_estimate_is_the_default_unless_chosen() -> None:
    def sigma(**kwargs: object) -> object:
        return ModelSelector(K, BUDGET, **kwargs).policy["params"].get("sigma")  # type: ignore[arg-type]

    assert sigma() == "estimate"
    assert sigma(policy="red-ucb") == "estimate"
    assert sigma(policy="cure-ucb", preset="imdb") == 0.1
    assert sigma(params={"sigma": "auto"}) == "auto"
    assert sigma(policy=make_policy("cure-ucb")) == 0.1  # a configured policy is used as given
    assert sigma(policy="ucb1") is None


def test_metrics_are_kept_in_history_and_checkpoint() -> None:
    sel = ModelSelector(["a", "b"], 10)
    arm = sel.select()
    sel.update(arm, 0.25, metrics={"loss": np.float32(1.5), "epoch": 1, "tag": "x"})
    arm = sel.select()
    sel.update(sel.names[arm], 0.5)
    expected = [
        {"step": 1, "arm": 0, "candidate": "a", "score": 0.25,
         "metrics": {"loss": 1.5, "epoch": 1, "tag": "x"}},
        {"step": 2, "arm": 1, "candidate": "b", "score": 0.5, "metrics": {}},
    ]  # fmt: skip
    assert sel.history == expected
    back = ModelSelector.from_state_dict(json.loads(json.dumps(sel.state_dict())))
    assert back.history == expected


def test_refused_score_or_metrics_lose_nothing() -> None:
    scores = score_table()
    clean: list[int] = []
    drive(ModelSelector(K, BUDGET, seed=8), scores, BUDGET, clean)

    sel = ModelSelector(K, BUDGET, seed=8)
    arms: list[int] = []
    drive(sel, scores, 20, arms)
    arm = sel.select()
    before = (sel.t, sel.in_flight, sel.history, sel.summary())
    for bad, kwargs, message in [
        (float("nan"), {}, rf"score=nan of 'candidate{arm}' is not allowed"),
        (1.5, {}, r"score=1.5 of .* use a number in \[0, 1\]"),
        (0.5, {"metrics": {"loss": float("inf")}}, r"metrics=.* is not allowed: use JSON values"),
        (0.5, {"metrics": {1: 2}}, r"metrics=.* use a mapping of names"),
        (0.5, {"metrics": ["loss"]}, r"metrics=.* use a mapping of names"),
    ]:
        with pytest.raises(ValueError, match=message) as info:
            sel.update(arm, bad, **kwargs)
        assert "\n" not in str(info.value)
        assert (sel.t, sel.in_flight, sel.history, sel.summary()) == before
    sel.update(arm, float(scores[arm, sel.pulls[arm]]))
    arms.append(arm)
    drive(sel, scores, BUDGET - 21, arms)
    assert arms == clean


def test_recommend_and_summary() -> None:
    sel = ModelSelector(["a", "b", "c"], 60, "cure-ucb", seed=1)
    empty = sel.summary()
    assert empty["recommended_score"] is None and empty["best_last_score"] is None
    drive(sel, score_table(), 60, [])
    summary = sel.summary()
    json.dumps(summary, allow_nan=False)
    chosen = sel.recommend()
    last = sel.last_scores
    assert summary["recommended"] == sel.names[chosen]
    assert summary["recommended_score"] == last[chosen]
    assert summary["best_last_score"] == max(last)
    assert summary["best_candidate"] == sel.names[int(np.argmax(last))]
    assert summary["pulls"] == dict(zip(sel.names, sel.pulls, strict=True))
    assert chosen == int(np.argmax(sel.pulls))  # CURE-UCB recommends the most trained


def test_trace_shows_what_each_select_ranked_by() -> None:
    scores = score_table()
    sel = ModelSelector(K, BUDGET, seed=2, trace=True)
    policy = make_policy(DEFAULT_POLICY, sigma="estimate")
    policy.reset(K, BUDGET, seed=2, trace=True)
    for _ in range(40):
        arm = sel.select()
        assert policy.select() == arm
        x = float(scores[arm, sel.pulls[arm]])
        sel.update(arm, x)
        policy.update(arm, x)
    sel.add_candidate("new")
    sel.select()
    trace, direct = sel.trace(), policy.trace()
    assert trace.index.shape == (1, 41, K + 1) and trace.term_names == direct.term_names
    np.testing.assert_array_equal(trace.index[:, :40, :K], direct.index)
    np.testing.assert_array_equal(trace.terms[:, :40, :K], direct.terms)
    assert np.isnan(trace.index[0, :40, K]).all()
    assert trace.index[0, 40].tolist() == [-np.inf] * K + [np.inf] and trace.arms[0, 40] == K
    restored = ModelSelector.from_state_dict(sel.state_dict()).trace()
    np.testing.assert_array_equal(restored.index, trace.index)
    with pytest.raises(ValueError, match="trace=True"):
        ModelSelector(K, BUDGET).trace()


@pytest.mark.parametrize("version", ["risingbandits.modelselect/2", "risingbandits.modelselect/5"])
def test_checkpoints_of_other_versions_refused(version: str) -> None:
    data = ModelSelector(K, BUDGET).state_dict() | {"format": version}
    with pytest.raises(ValueError, match=f"checkpoint format '{version}' is not supported") as info:
        ModelSelector.from_state_dict(data)
    assert "\n" not in str(info.value)


def test_a_checkpoint_of_the_same_policy_names_the_parameters_that_differ() -> None:
    """A checkpoint whose policy has other parameters (or was saved by a version without a
    parameter this one has) is refused with the parameters named, in one line."""
    sel = ModelSelector(K, BUDGET, "cure-ucb")
    drive(sel, score_table(), 6, [])
    saved = sel.state_dict()["policy"]
    with pytest.raises(ValueError) as caught:
        make_policy("cure-ucb", eps=0.125).load_state_dict(saved)
    line = str(caught.value)
    assert f"eps={saved['policy']['params']['eps']!r} saved, 0.125 here" in line
    older = json.loads(json.dumps(saved))
    del older["policy"]["params"]["sigma"]
    older["policy"]["params"]["gone"] = 1
    with pytest.raises(ValueError) as caught:
        make_policy("cure-ucb").load_state_dict(older)
    line = str(caught.value)
    assert "gone saved, no such parameter here" in line
    assert "sigma not in the saved run (0.1 here: added by a later version?)" in line
    assert "\n" not in line and line.startswith("cure-ucb: the saved run is of another policy")
    older["policy"]["params"]["eps"] = "x" * 100_000  # a checkpoint is user input
    with pytest.raises(ValueError) as caught:
        make_policy("cure-ucb").load_state_dict(older)
    assert len(str(caught.value)) < 400 and "eps='xxx" in str(caught.value)
