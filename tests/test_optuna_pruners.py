"""The Optuna pruner replay (issue 20): the decisions of a real Optuna study, as a practitioner's
training loop would get them; the deployed trial; the budget consumed."""

from __future__ import annotations

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.integrations.optuna_pruners import (
    PRUNERS,
    STUDY_NAME,
    make_pruner,
    replay,
    trial_order,
)
from risingbandits.seeding import reward_key

optuna = pytest.importorskip("optuna", reason="the optuna extra is part of the dev install")

N = np.arange(1, 41)
# eight candidates: fast and slow risers, a plateau, one that dips
TABLE = np.vstack(
    [
        0.5 + 0.4 * (1 - np.exp(-N / 4)),
        0.3 + 0.6 * (1 - np.exp(-N / 30)),
        np.full(40, 0.7),
        0.2 + 0.7 * N / 40,
        0.6 + 0.1 * np.sin(N / 3),
        0.4 + 0.2 * (1 - np.exp(-N / 10)),
        0.1 + 0.8 * (1 - np.exp(-N / 60)),
        0.55 + 0.3 * (1 - np.exp(-N / 15)),
    ]
)
INSTANCE = rb.RisingInstance(TABLE, rb.Noise("gaussian", 0.05), require_rising=False)


def live_study(instance: rb.RisingInstance, pruner: str, max_pulls: int, seed: int) -> object:
    """What a practitioner writes: an objective that trains, reports and checks after every
    step, run by ``study.optimize`` over the candidates enqueued in the replay's order."""
    key = reward_key(seed)
    study = optuna.create_study(
        study_name=STUDY_NAME, direction="maximize", pruner=make_pruner(pruner)
    )
    for arm in trial_order(instance.n_arms, seed):
        study.enqueue_trial({"arm": arm})

    def objective(trial: optuna.Trial) -> float:
        arm = trial.suggest_categorical("arm", list(range(instance.n_arms)))
        value = 0.0
        for step in range(1, max_pulls + 1):
            value = instance.reward(key, arm, step)  # one training step, then validation
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return value

    study.optimize(objective, n_trials=instance.n_arms)
    return study


@pytest.mark.parametrize("pruner", PRUNERS)
@pytest.mark.parametrize(("max_pulls", "seed"), [(8, 0), (16, 1), (40, 2)])
def test_the_replay_makes_a_live_studys_decisions(pruner: str, max_pulls: int, seed: int) -> None:
    run = replay(INSTANCE, pruner, max_pulls, seed)
    study = live_study(INSTANCE, pruner, max_pulls, seed)
    trials = {t.params["arm"]: t for t in study.trials}
    for arm, trial in trials.items():
        assert run.pulls[arm] == max(trial.intermediate_values)
        assert run.completed[arm] == (trial.state == optuna.trial.TrialState.COMPLETE)
    assert run.recommended == study.best_trial.params["arm"]
    assert run.order == tuple(t.params["arm"] for t in study.trials)
    assert run.used == run.pulls.sum() <= max_pulls * INSTANCE.n_arms


def test_the_pruners_prune_and_consume_less_than_the_full_budget() -> None:
    """Not a vacuous comparison: on this table every pruner stops some trial early."""
    for pruner in PRUNERS:
        runs = [replay(INSTANCE, pruner, 40, seed) for seed in range(3)]
        assert any(not all(r.completed) for r in runs), pruner
        assert all(r.used < 40 * INSTANCE.n_arms for r in runs if not all(r.completed))


def test_the_order_depends_on_the_seed_only() -> None:
    assert trial_order(8, 3) == trial_order(8, 3)
    assert len({trial_order(8, s) for s in range(6)}) > 1
    assert sorted(trial_order(8, 5)) == list(range(8))


def test_bad_requests_give_one_line() -> None:
    with pytest.raises(ValueError, match="pruner='asha' is not allowed: use one of optuna-sh"):
        replay(INSTANCE, "asha", 8, 0)
    with pytest.raises(ValueError, match="max_pulls=41 is not allowed: instance"):
        replay(INSTANCE, "optuna-sh", 41, 0)
    with pytest.raises(ValueError, match="max_pulls=0 is not allowed"):
        replay(INSTANCE, "optuna-sh", 0, 0)
