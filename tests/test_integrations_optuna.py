"""The Optuna integration against the real Optuna, with an SQLite storage."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

optuna = pytest.importorskip("optuna")

from risingbandits.integrations.optuna import (  # noqa: E402
    CANDIDATE_ATTR,
    FAILURE_ATTR,
    SELECTION_ATTR,
    OptunaSelection,
)
from risingbandits.modelselect import costs  # noqa: E402

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


def failing(candidate: int, at_step: int, outcome: Any) -> Callable[[int, Any], Any]:
    """A train_step on :func:`curve` whose ``candidate`` raises ``outcome`` (an exception) or
    returns it at its step ``at_step``, and from then on (a broken model stays broken)."""
    steps = [0] * len(CANDIDATES)

    def train_step(i: int, trial: optuna.Trial) -> Any:
        steps[i] += 1
        if i == candidate and steps[i] >= at_step:
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome
        return curve(trial.params, steps[i])

    return train_step


def sqlite_study(tmp_path: Path, name: str = "s") -> optuna.Study:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    return optuna.create_study(
        study_name=name, storage=storage, direction="maximize", load_if_exists=True
    )


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
    assert selection.summary_key == f"risingbandits:{trials[0].number}"
    assert all(t.user_attrs[SELECTION_ATTR] == selection.summary_key for t in trials)
    summary = stored.user_attrs[selection.summary_key]
    assert summary["recommended"] == "candidate1" and summary["params"][1] == CANDIDATES[1]
    assert summary["failed"] == {}
    assert sum(summary["pulls"].values()) == 40
    with pytest.raises(RuntimeError, match="finished"):
        selection.select()


SPACE = {
    "alpha": optuna.distributions.FloatDistribution(1e-4, 1e-1, log=True),
    "layers": optuna.distributions.IntDistribution(1, 3),
}


def test_a_search_space_is_sampled_once_by_the_study_sampler() -> None:
    space = SPACE
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
        ({"search_space": {}, "n_candidates": 2}, "search_space={} is not allowed: use a non"),
        ({"search_space": {"x": 3}, "n_candidates": 2}, r"search_space=\{'x': 3\} is not allowed"),
        ({"search_space": [1], "n_candidates": 2}, r"search_space=\[1\] is not allowed"),
        ({"search_space": SPACE, "n_candidates": -1}, "^n_candidates=-1 is not allowed: give"),
        ({"candidates": CANDIDATES, "budget": None, "timeout": 10**400}, "^timeout=1000.* is not"),
        ({"candidates": CANDIDATES, "budget": 2}, "budget=2"),
        ({"candidates": CANDIDATES, "timeout": 60}, "budget .* or timeout .* one of the two"),
        ({"candidates": CANDIDATES, "budget": None}, "budget .* or timeout .* one of the two"),
        ({"candidates": CANDIDATES, "budget": None, "timeout": 0}, "timeout=0 is not allowed"),
        ({"candidates": CANDIDATES, "budget": None, "timeout": "60"}, "timeout='60' is not"),
        ({"candidates": CANDIDATES, "cost": "given"}, "cost='given' is not allowed"),
    ],
)
def test_bad_input_is_refused_before_any_trial_is_created(kwargs: dict, message: str) -> None:
    study = optuna.create_study(direction="maximize")
    with pytest.raises(ValueError, match=message):
        OptunaSelection(study, **{"budget": 10, **kwargs})
    assert study.trials == []


def test_run_refuses_a_train_step_that_is_not_a_function() -> None:
    study = optuna.create_study(direction="maximize")
    selection = OptunaSelection(study, CANDIDATES, budget=10)
    with pytest.raises(ValueError, match=r"^train_step=3 is not allowed: use a function"):
        selection.run(3)  # type: ignore[arg-type]
    assert {t.state for t in study.trials} == {optuna.trial.TrialState.RUNNING}
    assert selection.selector.t == 0


def test_a_minimising_study_is_refused() -> None:
    with pytest.raises(ValueError, match="direction='maximize'"):
        OptunaSelection(optuna.create_study(), CANDIDATES, budget=10)


INVALID = "train_step returned an invalid score:"


@pytest.mark.parametrize(
    ("outcome", "reason"),
    [
        (ZeroDivisionError("division by zero"), "ZeroDivisionError: division by zero"),
        (float("nan"), f"{INVALID} score=nan of 'candidate1' is not allowed"),
        (float("inf"), f"{INVALID} score=inf of 'candidate1' is not allowed"),
        (None, f"{INVALID} score=None of 'candidate1' is not allowed"),
    ],
    ids=["raises", "nan", "inf", "none"],
)
def test_a_failed_step_fails_its_trial_and_the_others_go_on(
    tmp_path: Path, outcome: Any, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    study = sqlite_study(tmp_path)
    selection = OptunaSelection(study, CANDIDATES, budget=40, seed=0)
    with caplog.at_level(logging.WARNING):
        best = selection.run(failing(1, 2, outcome))  # the best candidate breaks
    assert best.params == CANDIDATES[2]  # the best of the others
    failed = study.trials[selection.trials[1].number]
    assert failed.state == optuna.trial.TrialState.FAIL
    assert failed.user_attrs[FAILURE_ATTR].startswith(reason)
    assert failed.intermediate_values == {1: pytest.approx(curve(CANDIDATES[1], 1))}
    assert [t.state for t in study.trials].count(optuna.trial.TrialState.PRUNED) == 1
    summary = study.user_attrs[selection.summary_key]
    assert summary["failed"] == {"candidate1": failed.user_attrs[FAILURE_ATTR]}
    assert summary["retired"] == ["candidate1"]
    assert summary["pulls"]["candidate1"] == 1 and sum(summary["pulls"].values()) == 40
    assert f"trial {failed.number} failed" in caplog.text and reason in caplog.text


def test_with_two_trials_left_a_failed_one_is_never_picked_again(tmp_path: Path) -> None:
    study = sqlite_study(tmp_path)
    selection = OptunaSelection(study, CANDIDATES[:2], budget=20, seed=0)
    best = selection.run(failing(1, 4, RuntimeError("out of memory")))
    assert selection.selector.active == ("candidate0", "candidate1")  # two always stay
    assert best.params == CANDIDATES[0] and best.state == optuna.trial.TrialState.COMPLETE
    assert study.trials[1].state == optuna.trial.TrialState.FAIL
    summary = study.user_attrs[selection.summary_key]
    assert summary["recommended"] == "candidate0" and summary["pulls"] == {
        "candidate0": 17,
        "candidate1": 3,
    }


def test_a_failed_trial_is_never_recommended() -> None:
    study = optuna.create_study(direction="maximize")
    selection = OptunaSelection(study, CANDIDATES[:2], budget=20, seed=0)
    for _ in range(6):
        candidate = selection.select()
        selection.update(candidate, [0.3, 0.9][candidate])
    selection.fail(1, "diverged")  # stays active: two candidates always do
    assert selection.selector.recommend() == 1  # the policy still ranks it first
    best = selection.finish()
    assert best.number == 0 and best.value == 0.3
    assert study.user_attrs[selection.summary_key]["recommended"] == "candidate0"


def test_when_every_trial_fails_the_run_ends_with_one_error(tmp_path: Path) -> None:
    study = sqlite_study(tmp_path)
    selection = OptunaSelection(study, CANDIDATES, budget=40, seed=0)

    def train_step(i: int, trial: optuna.Trial) -> float:
        raise KeyError("features")

    with pytest.raises(RuntimeError, match=r"all 3 trials failed.*trial \d: KeyError: 'features'"):
        selection.run(train_step)
    assert all(t.state == optuna.trial.TrialState.FAIL for t in study.trials)
    summary = study.user_attrs[selection.summary_key]
    assert summary["recommended"] is None and len(summary["failed"]) == 3
    assert summary["steps"] == 0


def test_an_interrupt_propagates_with_its_step_given_back(tmp_path: Path) -> None:
    study = sqlite_study(tmp_path)
    selection = OptunaSelection(study, CANDIDATES, budget=40, seed=0)
    with pytest.raises(KeyboardInterrupt):
        selection.run(failing(1, 3, KeyboardInterrupt()))
    assert selection.selector.in_flight == () and selection.selector.remaining > 0
    assert all(t.state == optuna.trial.TrialState.RUNNING for t in study.trials)
    assert selection.finish().state == optuna.trial.TrialState.COMPLETE


def test_a_worker_failure_is_told_with_fail() -> None:
    study = optuna.create_study(direction="maximize")
    selection = OptunaSelection(study, CANDIDATES, budget=6, seed=1)
    first, second = selection.select(), selection.select()
    selection.fail(first, "worker lost")
    with pytest.raises(ValueError, match=f"candidate={first} is not allowed"):
        selection.fail(first, "again")
    with pytest.raises(ValueError, match=r"candidate=3 is not allowed: use an index in 0\.\.2"):
        selection.fail(3, "no such trial")
    selection.update(second, 0.4)
    assert selection.selector.in_flight == () and selection.selector.remaining == 5
    assert study.trials[first].user_attrs[FAILURE_ATTR] == "worker lost"
    assert selection.finish().number != first


def test_selections_sharing_a_storage_keep_one_summary_each(tmp_path: Path) -> None:
    # two handles on one SQLite study, as two processes would have, finishing in turn
    selections = [
        OptunaSelection(sqlite_study(tmp_path), CANDIDATES, budget=budget, seed=0)
        for budget in (9, 12)
    ]
    for selection in selections:
        selection.run(lambda i, trial: curve(trial.params, 1))
    study = optuna.load_study(study_name="s", storage=f"sqlite:///{tmp_path / 'study.db'}")
    for selection in selections:
        summary = study.user_attrs[selection.summary_key]
        assert summary["budget"] == selection.selector.budget  # not the other one's
        assert summary["trial_numbers"] == [t.number for t in selection.trials]
        for number in summary["trial_numbers"]:
            assert study.trials[number].user_attrs[SELECTION_ATTR] == selection.summary_key
    assert [s.summary_key for s in selections] == ["risingbandits:0", "risingbandits:3"]


def test_the_given_candidates_are_not_swapped_with_a_trial_the_user_enqueued() -> None:
    # study.ask takes the oldest WAITING trial: the user's own queued one, or one another
    # process's selection enqueued, took a candidate's place and left a candidate waiting
    study = optuna.create_study(direction="maximize")
    study.enqueue_trial({"model": "mlp", "alpha": 0.1})  # for the user's study.optimize later
    selection = OptunaSelection(study, CANDIDATES, budget=6, seed=0)
    assert selection.params == CANDIDATES
    best = selection.run(lambda i, trial: 0.1 * (i + 1))
    assert best.params == CANDIDATES[best.user_attrs[CANDIDATE_ATTR]]
    states = [t.state for t in study.trials]
    assert states[0] == optuna.trial.TrialState.WAITING  # still the user's
    assert optuna.trial.TrialState.WAITING not in states[1:]
    study.enqueue_trial({"model": "linear"})  # a value the candidates do not give
    assert OptunaSelection(study, CANDIDATES, budget=6).params == CANDIDATES


def test_a_timeout_is_seconds_of_training_failed_steps_included(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [0.0]  # the selector's clock, moved by the training steps only (no sleeping)
    monkeypatch.setattr(costs, "monotonic", lambda: clock[0])
    seconds = {"linear": 0.5, "mlp": 2.0}
    steps = [0] * len(CANDIDATES)

    def train_step(i: int, trial: optuna.Trial) -> float:
        steps[i] += 1
        clock[0] += seconds[trial.params["model"]]
        if i == 2 and steps[i] == 2:
            raise RuntimeError("out of memory")  # its time is spent all the same
        return curve(trial.params, steps[i])

    study = optuna.create_study(direction="maximize")
    selection = OptunaSelection(study, CANDIDATES, timeout=60, seed=0)
    selection.run(train_step)
    summary = study.user_attrs[selection.summary_key]
    assert summary["cost"] == "seconds" and summary["budget"] == 60
    assert summary["spent"] == clock[0] and 60 <= clock[0] < 62  # the last step may overrun
    assert list(summary["failed"].values()) == ["RuntimeError: out of memory"]
    assert summary["steps"] == sum(steps) - 1
