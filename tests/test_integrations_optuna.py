"""The Optuna integration against the real Optuna, with an SQLite storage."""

from __future__ import annotations

from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")

from risingbandits.integrations.optuna import (  # noqa: E402
    CANDIDATE_ATTR,
    SUMMARY_ATTR,
    OptunaSelection,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)
CANDIDATES = [
    {"model": "linear", "alpha": 0.1},
    {"model": "mlp", "alpha": 0.01},
    {"model": "mlp", "alpha": 0.1},
]


def curve(params: dict, n: int) -> float:
    """A rising score: the MLP with the small alpha ends best."""
    cap = {"linear": 0.6, "mlp": 0.95}[params["model"]] - params["alpha"]
    return cap * n / (n + 4)


def test_trials_report_each_step_and_end_complete_or_pruned(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(study_name="s", storage=storage, direction="maximize")
    selection = OptunaSelection(study, CANDIDATES, budget=40, seed=0)
    steps = [0, 0, 0]

    def train_step(i: int, trial: optuna.Trial) -> float:
        steps[i] += 1
        return curve(trial.params, steps[i])

    best = selection.run(train_step)
    stored = optuna.load_study(study_name="s", storage=storage)  # what a dashboard sees
    trials = sorted(stored.trials, key=lambda t: t.user_attrs[CANDIDATE_ATTR])
    assert [t.params for t in trials] == CANDIDATES
    assert all(
        isinstance(d, optuna.distributions.CategoricalDistribution)
        for t in trials
        for d in t.distributions.values()
    )
    assert sum(len(t.intermediate_values) for t in trials) == 40
    for t, n in zip(trials, steps, strict=True):
        assert sorted(t.intermediate_values) == list(range(1, n + 1))
        assert t.intermediate_values[n] == pytest.approx(curve(t.params, n))
    states = [t.state for t in trials]
    assert states.count(optuna.trial.TrialState.COMPLETE) == 1
    assert states.count(optuna.trial.TrialState.PRUNED) == 2
    assert best.state == optuna.trial.TrialState.COMPLETE and best.params == CANDIDATES[1]
    assert best.value == best.intermediate_values[max(best.intermediate_values)]
    summary = stored.user_attrs[SUMMARY_ATTR]
    assert summary["recommended"] == "candidate1" and summary["params"][1] == CANDIDATES[1]
    assert sum(summary["pulls"].values()) == 40
    with pytest.raises(RuntimeError, match="finished"):
        selection.select()


def test_a_search_space_is_sampled_once_by_the_study_sampler() -> None:
    space = {
        "alpha": optuna.distributions.FloatDistribution(1e-4, 1e-1, log=True),
        "layers": optuna.distributions.IntDistribution(1, 3),
    }
    drawn = []
    for _ in range(2):
        study = optuna.create_study(
            direction="maximize", sampler=optuna.samplers.RandomSampler(seed=3)
        )
        selection = OptunaSelection(study, search_space=space, n_candidates=4, budget=8)
        drawn.append(selection.params)
        assert len(study.trials) == 4
        assert all(1e-4 <= p["alpha"] <= 1e-1 and p["layers"] in (1, 2, 3) for p in drawn[-1])
    assert drawn[0] == drawn[1]


def test_parallel_steps_report_in_any_order_and_finish_waits_for_them() -> None:
    study = optuna.create_study(direction="maximize")
    selection = OptunaSelection(study, CANDIDATES, budget=6, seed=1)
    first, second = selection.select(), selection.select()
    assert first != second  # a trial trains one step at a time
    with pytest.raises(ValueError, match="2 training steps are in flight"):
        selection.finish()
    selection.update(second, 0.4)
    selection.update(first, 0.3, metrics={"loss": 1.2})
    assert selection.selector.history[-1]["metrics"] == {"loss": 1.2}
    assert study.trials[second].intermediate_values == {1: 0.4}
    assert selection.finish().state == optuna.trial.TrialState.COMPLETE


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"candidates": [{"a": 1}, {"layers": (64, 32)}]},
            r"candidates\[1\]\['layers'\]=\(64, 32\)",
        ),
        ({"candidates": CANDIDATES, "search_space": {}}, "either candidates"),
        ({"search_space": {}}, "n_candidates=None"),
        ({"candidates": CANDIDATES, "budget": 2}, "budget=2"),
    ],
)
def test_bad_input_is_refused_before_any_trial_is_created(kwargs: dict, message: str) -> None:
    study = optuna.create_study(direction="maximize")
    with pytest.raises(ValueError, match=message):
        OptunaSelection(study, **{"budget": 10, **kwargs})
    assert study.trials == []


def test_a_minimising_study_is_refused() -> None:
    with pytest.raises(ValueError, match="direction='maximize'"):
        OptunaSelection(optuna.create_study(), CANDIDATES, budget=10)
