"""Rising-bandit model selection over Optuna trials, with Optuna's ask-and-tell interface.

K trials are created up front (``study.ask``), their parameters taken from a list given by the
user (each enqueued with ``study.enqueue_trial`` and recorded with a categorical distribution
of the values given for it) or sampled once from an Optuna search space by the study's sampler.
A :class:`~risingbandits.modelselect.ModelSelector` then chooses which trial trains next; each
score is reported as ``trial.report(score, step)`` with ``step`` the trial's own number of
training steps, so the study's storage (and ``optuna-dashboard``) shows every learning curve
while the run goes on. At the end :meth:`OptunaSelection.finish` tells the recommended trial
COMPLETE with its last score and every other trial PRUNED (Optuna then records its last
reported score as its value), and stores the selection's summary in the study's user
attributes (key ``"risingbandits"``).

Optuna's own pruners are not consulted: the rising-bandit policy decides which trial trains,
under a budget of training steps known in advance (CURE-UCB, Song et al. 2026). The study must
maximise one objective, the score the selector maximises (report an accuracy, or a loss
rescaled with ``score_range``). Needs ``pip install "risingbandits[optuna]"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from risingbandits.extras import require
from risingbandits.modelselect import ModelSelector

if TYPE_CHECKING:
    import optuna

SUMMARY_ATTR = "risingbandits"
"""Key of the selection's summary in the study's user attributes."""
CANDIDATE_ATTR = "risingbandits.candidate"
"""Key of a trial's candidate index in its user attributes."""
STORABLE = (type(None), bool, int, float, str)


def _optuna() -> Any:
    return require("optuna", "optuna", "the Optuna integration")


def _categorical(candidates: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One categorical distribution per parameter, over the values the candidates give it."""
    distributions = _optuna().distributions
    values: dict[str, list[Any]] = {}
    for i, params in enumerate(candidates):
        if not isinstance(params, Mapping) or not params:
            raise ValueError(
                f"candidates[{i}]={params!r} is not allowed: use a non-empty dict of parameters"
            )
        for name, value in params.items():
            if not isinstance(value, STORABLE):
                raise ValueError(
                    f"candidates[{i}][{name!r}]={value!r} is not allowed: use None, a bool, "
                    "an int, a float or a str (the values Optuna stores)"
                )
            seen = values.setdefault(str(name), [])
            if value not in seen:
                seen.append(value)
    return {name: distributions.CategoricalDistribution(v) for name, v in values.items()}


def _check_study(study: Any) -> None:
    optuna = _optuna()
    if not isinstance(study, optuna.Study):
        raise ValueError(f"study={study!r} is not allowed: use an optuna.Study")
    if study._is_multi_objective() or study.direction != optuna.study.StudyDirection.MAXIMIZE:
        raise ValueError(
            f"study direction={[d.name for d in study.directions]} is not allowed: use "
            "optuna.create_study(direction='maximize') (the selector maximises one score)"
        )


class OptunaSelection:
    """K Optuna trials trained step by step; a rising-bandit policy picks the next one.

    Give the candidates as ``candidates`` (a list of parameter dicts) or as ``search_space``
    (Optuna distributions) with ``n_candidates``; every other keyword (``budget``, ``policy``,
    ``seed``, ``score_range``, ...) goes to :class:`~risingbandits.modelselect.ModelSelector`.
    Candidate ``i`` is ``trials[i]``; its parameters are ``params[i]``.
    """

    def __init__(
        self,
        study: optuna.Study,
        candidates: Sequence[Mapping[str, Any]] | None = None,
        *,
        search_space: Mapping[str, Any] | None = None,
        n_candidates: int | None = None,
        budget: int,
        **selector_options: Any,
    ) -> None:
        _check_study(study)
        if (candidates is None) == (search_space is None):
            raise ValueError("give either candidates (a list of dicts) or search_space, not both")
        # everything is checked before the first trial is created
        if search_space is not None:
            if isinstance(n_candidates, bool) or not isinstance(n_candidates, int):
                raise ValueError(
                    f"n_candidates={n_candidates!r} is not allowed: give the number of trials "
                    "to sample from search_space (an integer >= 2)"
                )
            fixed = [dict(search_space)] * n_candidates
            enqueued: list[dict[str, Any] | None] = [None] * n_candidates
        else:
            if isinstance(candidates, Mapping | str) or not isinstance(candidates, Sequence):
                raise ValueError(
                    f"candidates={candidates!r} is not allowed: use a list of parameter dicts"
                )
            distributions = _categorical(candidates)
            fixed = [{name: distributions[name] for name in params} for params in candidates]
            enqueued = [dict(params) for params in candidates]
        self.selector = ModelSelector(len(fixed), budget, **selector_options)  # "candidate{i}"
        self.study = study
        self.trials: list[optuna.Trial] = []
        for params, distributions_of_trial in zip(enqueued, fixed, strict=True):
            if params is not None:
                study.enqueue_trial(params, skip_if_exists=False)
            self.trials.append(study.ask(fixed_distributions=distributions_of_trial))
        for i, trial in enumerate(self.trials):
            trial.set_user_attr(CANDIDATE_ATTR, i)
        self._steps = [0] * len(self.trials)
        self._finished = False

    @property
    def params(self) -> list[dict[str, Any]]:
        """Each candidate's parameters (as Optuna recorded them)."""
        return [dict(t.params) for t in self.trials]

    def select(self) -> int:
        """Index of the candidate (trial) to train next. With several workers, a trial with a
        step in flight is not picked again before that step is reported (a model trains one
        step at a time)."""
        self._check_open()
        busy = set(self.selector.in_flight)
        names = self.selector.names
        return self.selector.select(
            available=[name for name in self.selector.active if names.index(name) not in busy]
        )

    def update(
        self, candidate: int, score: float, metrics: Mapping[str, Any] | None = None
    ) -> None:
        """Record the score of ``candidate`` after one training step; ``trial.report(score,
        step)`` with ``step`` its number of steps so far."""
        self._check_open()
        self.selector.update(candidate, score, metrics=metrics)
        self._steps[candidate] += 1
        self.trials[candidate].report(float(score), self._steps[candidate])

    def run(self, train_step: Callable[[int, optuna.Trial], float]) -> optuna.trial.FrozenTrial:
        """Spend the whole budget one step at a time (``train_step(i, trial)`` trains candidate
        ``i`` one step and returns its score), then :meth:`finish`."""
        while not self.selector.done:
            candidate = self.select()
            self.update(candidate, train_step(candidate, self.trials[candidate]))
        return self.finish()

    def finish(self) -> optuna.trial.FrozenTrial:
        """Tell the recommended trial COMPLETE with its last score and the others PRUNED;
        returns the recommended trial as stored. Refused while pulls are in flight."""
        self._check_open()
        optuna = _optuna()
        if self.selector.in_flight:
            raise ValueError(
                f"finish() is not allowed while {len(self.selector.in_flight)} training steps "
                "are in flight: update() them first"
            )
        summary = self.summary()
        best = self.selector.recommend()
        for i, trial in enumerate(self.trials):
            if i == best:
                self.study.tell(trial, summary["recommended_score"])
            else:
                self.study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        self.study.set_user_attr(SUMMARY_ATTR, summary)
        self._finished = True
        return self.study.trials[self.trials[best].number]

    def summary(self) -> dict[str, Any]:
        """The selector's summary plus each candidate's trial number and parameters."""
        return {
            **self.selector.summary(),
            "trial_numbers": [t.number for t in self.trials],
            "params": self.params,
        }

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("this selection is finished: its trials are told")
