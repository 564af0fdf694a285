"""Rising-bandit model selection over Optuna trials, with Optuna's ask-and-tell interface.

K trials are created up front, their parameters taken from a list given by the user (each a
new trial of its own, not one waiting in the study's queue, recorded with a categorical
distribution of the values given for it) or sampled once from an Optuna search space by the
study's sampler (``study.ask``).
A :class:`~risingbandits.modelselect.ModelSelector` then chooses which trial trains next; each
score is reported as ``trial.report(score, step)`` with ``step`` the trial's own number of
training steps, so the study's storage (and ``optuna-dashboard``) shows every learning curve
while the run goes on. At the end :meth:`OptunaSelection.finish` tells the recommended trial
COMPLETE with its last score and every other trial PRUNED (Optuna then records its last
reported score as its value), and stores the selection's summary in the study's user
attributes under ``"risingbandits:<number of its first trial>"``
(:attr:`OptunaSelection.summary_key`, also in each trial's user attributes under
:data:`SELECTION_ATTR`): selections sharing one study, even from several processes, keep one
summary each.

A training step that fails (``train_step`` raises, or returns None, NaN, an infinity or a score
out of range) fails its trial, like Optuna's ``study.optimize`` does, but the run goes on: the
trial is told FAIL with the one-line reason in its user attributes (:data:`FAILURE_ATTR`) and in
the summary (``"failed"``), its step goes back to the budget and it is retired from the
selection (the selector keeps two candidates active: the last failed one then stays active but
is never picked again, so the other trains). Only when every trial failed does the run end
with an error. An interrupt (``KeyboardInterrupt``) propagates with its step given back, so
:meth:`~OptunaSelection.finish` (or ``run`` again) still works.

Optuna's own pruners are not consulted: the rising-bandit policy decides which trial trains,
under a budget known in advance (CURE-UCB, Song et al. 2026): ``budget`` training steps, or
``timeout`` seconds of training (a selector with ``cost="seconds"``: each step is timed from
its ``select`` to its ``update``, a failed step's time is spent too, and the last step may
overrun; with one worker this is the run's wall time less the selection's own overhead). The
study must maximise one objective, the score the selector maximises (report an accuracy, or a
loss rescaled with ``score_range``). Needs ``pip install "risingbandits[optuna]"``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from risingbandits.extras import require
from risingbandits.integrations.checks import check_seconds
from risingbandits.modelselect import ModelSelector

if TYPE_CHECKING:
    import optuna

SUMMARY_PREFIX = "risingbandits:"
"""A selection's summary is stored in the study's user attributes under this prefix and the
number of its first trial (:attr:`OptunaSelection.summary_key`)."""
CANDIDATE_ATTR = "risingbandits.candidate"
"""Key of a trial's candidate index in its user attributes."""
SELECTION_ATTR = "risingbandits.selection"
"""Key, in a trial's user attributes, of its selection's summary key in the study's."""
FAILURE_ATTR = "risingbandits.failure"
"""Key, in a failed trial's user attributes, of the one line saying why it failed."""
STORABLE = (type(None), bool, int, float, str)
_LOG = logging.getLogger(__name__)


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


def _one_line(reason: object) -> str:
    """An exception as ``"Type: message"``, anything else as its text, on one line."""
    text = str(reason)
    if isinstance(reason, BaseException):
        text = f"{type(reason).__name__}: {text}" if text else type(reason).__name__
    return " ".join(text.split())


def _check_study(study: Any) -> None:
    optuna = _optuna()
    if not isinstance(study, optuna.Study):
        raise ValueError(f"study={study!r} is not allowed: use an optuna.Study")
    if study._is_multi_objective() or study.direction != optuna.study.StudyDirection.MAXIMIZE:
        raise ValueError(
            f"study direction={[d.name for d in study.directions]} is not allowed: use "
            "optuna.create_study(direction='maximize') (the selector maximises one score)"
        )


def _budget_and_cost(budget: Any, timeout: Any, options: Mapping[str, Any]) -> tuple[float, str]:
    """The selector's budget and what it counts: ``budget`` steps or ``timeout`` seconds."""
    if "cost" in options:
        raise ValueError(
            f"cost={options['cost']!r} is not allowed: give budget (training steps) or timeout "
            "(seconds of training)"
        )
    if (budget is None) == (timeout is None):
        raise ValueError(
            "give budget (training steps) or timeout (seconds of training), one of the two"
        )
    if timeout is None:
        return budget, "pulls"
    return check_seconds("timeout", timeout), "seconds"


def _sampled(space: Any, n_candidates: Any) -> list[dict[str, Any]]:
    """The distributions of ``n_candidates`` trials sampled from ``space`` (a dict of Optuna
    distributions; one line otherwise)."""
    if isinstance(n_candidates, bool) or not isinstance(n_candidates, int) or n_candidates < 2:
        raise ValueError(
            f"n_candidates={n_candidates!r} is not allowed: give the number of trials "
            "to sample from search_space (an integer >= 2)"
        )
    distributions = _optuna().distributions
    if (
        not isinstance(space, Mapping)
        or not space
        or not all(isinstance(d, distributions.BaseDistribution) for d in space.values())
    ):
        raise ValueError(
            f"search_space={space!r} is not allowed: use a non-empty dict of Optuna "
            "distributions (optuna.distributions.FloatDistribution(...), ...)"
        )
    return [dict(space)] * n_candidates


def _given_trial(
    study: optuna.Study, params: dict[str, Any], distributions: dict[str, Any]
) -> optuna.Trial:
    """A new RUNNING trial of ``study`` with ``params``, made directly (as ``study.add_trial``
    does): ``study.ask`` would take the oldest WAITING trial instead, one the user or another
    process's selection enqueued, and leave this candidate's waiting."""
    optuna = _optuna()
    template = optuna.trial.create_trial(
        state=optuna.trial.TrialState.RUNNING, params=params, distributions=distributions
    )
    return optuna.Trial(study, study._storage.create_new_trial(study._study_id, template))


class OptunaSelection:
    """K Optuna trials trained step by step; a rising-bandit policy picks the next one.

    Give the candidates as ``candidates`` (a list of parameter dicts) or as ``search_space``
    (Optuna distributions) with ``n_candidates``, and the budget as ``budget`` (training steps)
    or ``timeout`` (seconds of training); every other keyword (``policy``, ``seed``,
    ``score_range``, ...) goes to :class:`~risingbandits.modelselect.ModelSelector`.
    Candidate ``i`` is ``trials[i]``; its parameters are ``params[i]``. The summary is stored
    at :meth:`finish` as ``study.user_attrs[selection.summary_key]``.
    """

    def __init__(
        self,
        study: optuna.Study,
        candidates: Sequence[Mapping[str, Any]] | None = None,
        *,
        search_space: Mapping[str, Any] | None = None,
        n_candidates: int | None = None,
        budget: int | None = None,
        timeout: float | None = None,
        **selector_options: Any,
    ) -> None:
        _check_study(study)
        if (candidates is None) == (search_space is None):
            raise ValueError("give either candidates (a list of dicts) or search_space, not both")
        amount, cost = _budget_and_cost(budget, timeout, selector_options)
        # everything is checked before the first trial is created
        if search_space is not None:
            fixed = _sampled(search_space, n_candidates)
            given: list[dict[str, Any] | None] = [None] * len(fixed)
        else:
            if isinstance(candidates, Mapping | str) or not isinstance(candidates, Sequence):
                raise ValueError(
                    f"candidates={candidates!r} is not allowed: use a list of parameter dicts"
                )
            distributions = _categorical(candidates)
            fixed = [{name: distributions[name] for name in params} for params in candidates]
            given = [dict(params) for params in candidates]
        self.selector = ModelSelector(  # candidates named "candidate{i}"
            len(fixed), amount, cost=cost, **selector_options
        )
        self.study = study
        self.trials: list[optuna.Trial] = []
        for params, distributions_of_trial in zip(given, fixed, strict=True):
            if params is None:
                self.trials.append(study.ask(fixed_distributions=distributions_of_trial))
            else:
                self.trials.append(_given_trial(study, params, distributions_of_trial))
        # a trial belongs to one selection, so its first trial's number names the selection
        self.summary_key = f"{SUMMARY_PREFIX}{self.trials[0].number}"
        """Key of this selection's summary in the study's user attributes."""
        for i, trial in enumerate(self.trials):
            trial.set_user_attr(CANDIDATE_ATTR, i)
            trial.set_user_attr(SELECTION_ATTR, self.summary_key)
        self._steps = [0] * len(self.trials)
        self._failed: dict[int, str] = {}
        self._finished = False

    @property
    def params(self) -> list[dict[str, Any]]:
        """Each candidate's parameters (as Optuna recorded them)."""
        return [dict(t.params) for t in self.trials]

    def select(self) -> int:
        """Index of the candidate (trial) to train next. With several workers, a trial with a
        step in flight is not picked again before that step is reported (a model trains one
        step at a time); a failed trial is never picked."""
        self._check_open()
        trainable = self._trainable()
        if not trainable:
            raise RuntimeError(self._all_failed())
        busy = set(self.selector.in_flight)
        free = [i for i in trainable if i not in busy]
        if not free:
            raise RuntimeError(
                f"select() is not allowed while every trial still training ({len(trainable)}) "
                "has a step in flight: update() one first"
            )
        return self.selector.select(available=free)

    def update(
        self, candidate: int, score: float, metrics: Mapping[str, Any] | None = None
    ) -> None:
        """Record the score of ``candidate`` after one training step; ``trial.report(score,
        step)`` with ``step`` its number of steps so far. A step that failed is reported with
        :meth:`fail` instead."""
        self._check_open()
        self.selector.update(candidate, score, metrics=metrics)
        self._report(candidate, score)

    def fail(self, candidate: int, reason: object) -> None:
        """Tell ``candidate``'s trial FAIL because of ``reason`` (an exception or a message, kept
        on one line in the trial's user attributes and the summary); its steps in flight go back
        to the budget and it is retired (with two candidates active it stays active, since the
        selector keeps two, but it is never picked again)."""
        self._check_open()
        if isinstance(candidate, bool) or not isinstance(candidate, int):
            raise ValueError(f"candidate={candidate!r} is not allowed: use an index from select()")
        if not 0 <= candidate < len(self.trials) or candidate in self._failed:
            raise ValueError(
                f"candidate={candidate!r} is not allowed: use an index in "
                f"0..{len(self.trials) - 1} of a trial that has not failed"
            )
        selector, trial = self.selector, self.trials[candidate]
        while candidate in selector.in_flight:
            selector.cancel(candidate)
        text = self._failed[candidate] = _one_line(reason)
        trial.set_user_attr(FAILURE_ATTR, text)
        self.study.tell(trial, state=_optuna().trial.TrialState.FAIL)
        active = selector.active
        if selector.names[candidate] in active and len(active) > 2:
            selector.retire(candidate)
        _LOG.warning(
            "trial %d failed and trains no more: %s",
            trial.number,
            text,
            exc_info=reason if isinstance(reason, BaseException) else None,
        )

    def run(self, train_step: Callable[[int, optuna.Trial], float]) -> optuna.trial.FrozenTrial:
        """Spend the whole budget one step at a time (``train_step(i, trial)`` trains candidate
        ``i`` one step and returns its score), then :meth:`finish`. A step that raises or
        returns no valid score fails its trial (:meth:`fail`) and the others go on."""
        if not callable(train_step):
            raise ValueError(
                f"train_step={train_step!r} is not allowed: use a function train_step(i, trial) "
                "that returns the score"
            )
        while not self.selector.done and self._trainable():
            candidate = self.select()
            failure = self._step(train_step, candidate)
            if failure is not None:
                self.fail(candidate, failure)
        return self.finish()

    def finish(self) -> optuna.trial.FrozenTrial:
        """Tell the recommended trial COMPLETE with its last score and the others PRUNED (the
        failed ones are FAIL already), and store the summary under :attr:`summary_key`;
        returns the recommended trial as stored. Refused while pulls are in flight; raises
        (after storing the summary) when every trial failed."""
        self._check_open()
        optuna = _optuna()
        if self.selector.in_flight:
            raise ValueError(
                f"finish() is not allowed while {len(self.selector.in_flight)} training steps "
                "are in flight: update() them first"
            )
        summary = self.summary()
        best = self._recommended()
        for i, trial in enumerate(self.trials):
            if i == best:
                self.study.tell(trial, summary["recommended_score"])
            elif i not in self._failed:
                self.study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        self.study.set_user_attr(self.summary_key, summary)
        self._finished = True
        if best is None:
            raise RuntimeError(self._all_failed())
        return self.study.trials[self.trials[best].number]

    def summary(self) -> dict[str, Any]:
        """The selector's summary plus each candidate's trial number and parameters, and the
        reason each failed trial failed (``"failed"``); a failed trial is never recommended."""
        names = self.selector.names
        summary = {
            **self.selector.summary(),
            "trial_numbers": [t.number for t in self.trials],
            "params": self.params,
            "failed": {names[i]: reason for i, reason in self._failed.items()},
        }
        best = self._recommended()
        summary["recommended"] = None if best is None else names[best]
        summary["recommended_score"] = None if best is None else summary["last_scores"][names[best]]
        return summary

    def _step(
        self, train_step: Callable[[int, optuna.Trial], float], candidate: int
    ) -> Exception | str | None:
        """Train ``candidate`` one step and record its score; why the step failed, or None."""
        try:
            score = train_step(candidate, self.trials[candidate])
        except Exception as exc:  # the user's failure: this trial fails, the others go on
            return exc
        except BaseException:  # an interrupt: its step goes back, the selection stays usable
            self.selector.cancel(candidate)
            raise
        try:
            self.selector.update(candidate, score)
        except ValueError as exc:  # None, NaN, inf, out of range: refused before it counts
            return f"train_step returned an invalid score: {exc}"
        self._report(candidate, score)
        return None

    def _report(self, candidate: int, score: float) -> None:
        self._steps[candidate] += 1
        self.trials[candidate].report(float(score), self._steps[candidate])

    def _trainable(self) -> list[int]:
        """The active candidates whose trials have not failed."""
        index = {name: i for i, name in enumerate(self.selector.names)}
        return [index[n] for n in self.selector.active if index[n] not in self._failed]

    def _recommended(self) -> int | None:
        """The policy's recommendation, or, when its trial failed (it could not be retired,
        two candidates being active), the other active one; None when every trial failed."""
        trainable = self._trainable()
        if not trainable:
            return None
        best = self.selector.recommend()
        return best if best in trainable else trainable[0]

    def _all_failed(self) -> str:
        first, reason = next(iter(self._failed.items()))
        return (
            f"all {len(self.trials)} trials failed, none is left to train or recommend (trial "
            f"{self.trials[first].number}: {reason}; every reason is in the summary's 'failed')"
        )

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("this selection is finished: its trials are told")
