"""A Ray Tune ``TrialScheduler`` in which a rising-bandit policy decides which trial trains next.

Each training iteration a trial reports is one pull of its arm; ``budget`` iterations are spent
in all. Like Ray's ``HyperBandScheduler``, the scheduler answers each result with CONTINUE, PAUSE
or STOP and names the paused trial to resume in ``choose_trial_to_run``: when a trial reports,
the policy (a :class:`~risingbandits.modelselect.ModelSelector` with one candidate per trial)
picks, among that trial and the waiting ones (paused, or new and not started yet), the trial
to train next; the reporting trial continues if it is picked, otherwise it is paused and the
picked one takes its place. Every
running trial is a pull in flight (``max_pending``), so the trials run in parallel on as many
workers as the cluster gives them.

Choices (the Ray integration is ours; nothing in the CURE-UCB paper covers it):

* Ray starts every new trial as soon as it has resources; that first iteration is a forced
  pull (every rising-bandit policy pulls each arm at the start anyway), recorded with
  ``select(available=[that trial])`` when its result arrives. Trials added after the first
  result join with ``add_candidate``.
* A paused trial resumes from its latest checkpoint: the trainable must report one with each
  result (``tune.report(metrics, checkpoint=...)``) and load ``tune.get_checkpoint()`` when it
  starts, as for Ray's PBT. A trial whose ``training_iteration`` does not follow its previous
  one (restarted without its checkpoint) is refused with a message saying so.
* A trial that ends, fails or is removed is retired (its pulls in flight are dropped); once the
  budget is started, the trials still paused are stopped and each running one stops after its
  result. Results that arrive after the budget is spent are not recorded.
* ``mode="min"`` records ``-value``; a ``score_range`` (of the reported metric) is then needed
  unless values lie in [-1, 0].

After ``Tuner.fit()``, :meth:`RisingBanditScheduler.summary` gives the pulls per trial, the
recommended trial (its id) and its last score. Needs
``pip install "risingbandits[ray]"``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from risingbandits.extras import require

ray = require("ray", "ray", "the Ray Tune integration")
require("ray.tune", "ray", "the Ray Tune integration")

from ray.tune.experiment import Trial  # noqa: E402
from ray.tune.schedulers import TrialScheduler  # noqa: E402

from risingbandits.integrations.lifetime import ProcessGuard  # noqa: E402
from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector  # noqa: E402

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

ITERATION = "training_iteration"


class RisingBanditScheduler(TrialScheduler):
    """Spend ``budget`` training iterations over the trials of a Tune run with ``policy``.

    ``metric``/``mode`` may instead come from ``tune.TuneConfig``; other keywords (``seed``,
    ``preset``, ``params``, ``max_pending``, ...) go to the
    :class:`~risingbandits.modelselect.ModelSelector`.
    """

    def __init__(
        self,
        budget: int,
        *,
        policy: str = DEFAULT_POLICY,
        metric: str | None = None,
        mode: str | None = None,
        score_range: Sequence[float] | None = None,
        **selector_options: Any,
    ) -> None:
        super().__init__()
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 2:
            raise ValueError(f"budget={budget!r} is not allowed: use an integer >= 2")
        if mode not in (None, "min", "max"):
            raise ValueError(f"mode={mode!r} is not allowed: use 'min' or 'max'")
        self._budget = budget
        self._policy = policy
        self._metric = metric
        self._mode = mode
        self._range = None if score_range is None else tuple(float(x) for x in score_range)
        self._options = selector_options
        self._selector: ModelSelector | None = None
        self._trials: list[Trial] = []  # candidate i is self._trials[i]
        self._index: dict[str, int] = {}  # trial id -> candidate
        self._iteration: dict[str, int] = {}  # trial id -> last iteration recorded
        self._to_run: list[Trial] = []  # picked while paused, not started yet

    # -- Tune's interface --------------------------------------------------------------------

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: Any) -> bool:
        if (self._metric and metric) or (self._mode and mode):
            return False
        self._metric = self._metric or metric
        self._mode = self._mode or mode
        return True

    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        self._index[trial.trial_id] = len(self._trials)
        self._trials.append(trial)
        if self._selector is not None:
            self._selector.add_candidate(trial.trial_id)

    def on_trial_result(
        self, tune_controller: TuneController, trial: Trial, result: dict[str, Any]
    ) -> str:
        selector = self._started()
        index = self._index[trial.trial_id]
        if index not in selector.in_flight:
            if selector.remaining == 0:
                return TrialScheduler.STOP  # past the budget: not recorded
            selector.select(available=[index])  # Ray started it on its own: a forced pull
        self._record(selector, trial, index, result)
        if selector.remaining == 0:
            self._stop_paused(tune_controller)
            return TrialScheduler.STOP
        chosen = selector.select(available=[index, *self._idle(selector)])
        if chosen == index:
            return TrialScheduler.CONTINUE
        self._to_run.append(self._trials[chosen])
        return TrialScheduler.PAUSE

    def on_trial_complete(
        self, tune_controller: TuneController, trial: Trial, result: dict[str, Any]
    ) -> None:
        self._leave(tune_controller, trial)

    def on_trial_error(self, tune_controller: TuneController, trial: Trial) -> None:
        self._leave(tune_controller, trial)

    def on_trial_remove(self, tune_controller: TuneController, trial: Trial) -> None:
        self._leave(tune_controller, trial)

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        """The paused trial the policy picked last, until it runs (idempotent)."""
        self._to_run = [t for t in self._to_run if t.status in (Trial.PAUSED, Trial.PENDING)]
        if self._to_run:
            return self._to_run[0]
        for trial in self._trials:
            if trial.status == Trial.PENDING:  # new trials: their first iteration is forced
                return trial
        return None

    def debug_string(self) -> str:
        if self._selector is None:
            return f"Using rising bandits ({self._policy}): waiting for the first result"
        s = self._selector
        return (
            f"Using rising bandits ({self._policy}): {s.t}/{self._budget} iterations, "
            f"pulls per trial {dict(zip(s.names, s.pulls.tolist(), strict=True))}"
        )

    # -- results ------------------------------------------------------------------------------

    @property
    def selector(self) -> ModelSelector | None:
        """The model selector behind the scheduler (None before the first result)."""
        return self._selector

    def summary(self) -> dict[str, Any]:
        """Pulls per trial, the recommended trial and its last score: the selector's summary,
        with trial ids as candidate names."""
        if self._selector is None:
            raise RuntimeError("no trial has reported a result yet")
        return self._selector.summary()

    # -- inside --------------------------------------------------------------------------------

    def _started(self) -> ModelSelector:
        """The selector, created at the first result over the trials added so far."""
        if self._selector is None:
            if self._metric is None:
                raise ValueError(
                    "RisingBanditScheduler needs metric (and mode): pass them to the "
                    "scheduler or to tune.TuneConfig"
                )
            score_range = self._range
            if self._mode == "min":
                low, high = score_range if score_range else (0.0, 1.0)
                score_range = (-high, -low)
            self._selector = ModelSelector(
                [t.trial_id for t in self._trials],
                self._budget,
                self._policy,
                score_range=score_range,
                **self._options,
            )
        return self._selector

    def _idle(self, selector: ModelSelector) -> list[int]:
        """Active trials waiting without a pull in flight: paused ones, and new ones Ray has
        not started yet (picking one pauses the reporting trial to free its resources)."""
        active = set(selector.active)
        return [
            i
            for i, t in enumerate(self._trials)
            if t.status in (Trial.PAUSED, Trial.PENDING)
            and i not in selector.in_flight
            and t.trial_id in active
        ]

    def _record(
        self, selector: ModelSelector, trial: Trial, index: int, result: dict[str, Any]
    ) -> None:
        if self._metric not in result:
            raise ValueError(
                f"trial {trial.trial_id} reported no {self._metric!r}: report it with every result"
            )
        iteration = int(result[ITERATION])
        previous = self._iteration.get(trial.trial_id, 0)
        if iteration != previous + 1:
            raise ValueError(
                f"trial {trial.trial_id} reported training_iteration {iteration} after "
                f"{previous}: it resumed without its checkpoint; report one with each result "
                "(tune.report(metrics, checkpoint=...)) and load tune.get_checkpoint() at start"
            )
        self._iteration[trial.trial_id] = iteration
        value = float(result[self._metric])
        selector.update(
            index, -value if self._mode == "min" else value, metrics={ITERATION: iteration}
        )

    def _stop_paused(self, tune_controller: TuneController) -> None:
        """Stop the paused trials that will not train again (not those picked to run)."""
        for trial in self._trials:
            if trial.status == Trial.PAUSED and trial not in self._to_run:
                tune_controller.stop_trial(trial)

    def _leave(self, tune_controller: TuneController, trial: Trial) -> None:
        """A trial ended: its pulls in flight go back to the budget, and its candidate is
        retired while the selection goes on (two candidates always stay: a last ended one is
        never offered again, as only paused trials are)."""
        selector = self._selector
        if selector is None:
            return
        index = self._index[trial.trial_id]
        while index in selector.in_flight:
            selector.cancel(index)
        active = selector.active
        if selector.remaining > 0 and selector.names[index] in active and len(active) > 2:
            selector.retire(index)


@contextmanager
def local_ray(num_cpus: int | None = None, **init_options: Any) -> Iterator[None]:
    """A local Ray instance for the scope (``ray.init(num_cpus=...)``, no dashboard), shut
    down at the end; its processes end with the scope also if this process is killed
    (:class:`~risingbandits.integrations.lifetime.ProcessGuard`)."""
    with ProcessGuard() as guard:
        ray.init(num_cpus=num_cpus, include_dashboard=False, **init_options)
        guard.scan()  # Ray's processes are known to the guardian before anything else runs
        try:
            yield
        finally:
            ray.shutdown()
