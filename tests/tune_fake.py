"""Ray Tune's controller as a ``TrialScheduler`` meets it, without Ray: trials on W workers whose
iterations end in an order drawn at random, so that the scheduler goes through orders a real
cluster produces only now and then (a CI run hung on one). The calls and status changes follow
Ray 2.60's ``TuneController``: ``choose_trial_to_run`` then the PENDING trials start as workers
free up; a result's decision CONTINUE / PAUSE / STOP (``stop_trial``: ``on_trial_complete`` for
a running trial, ``on_trial_remove`` for a paused or pending one); a failure that Tune retries
is stopped (ERROR), ``on_trial_error``, requeued (PENDING) and ``on_trial_add`` again; one with
no retry left gets ``on_trial_error`` while RUNNING, then ERROR; a trainable that returns gets
``on_trial_complete``. A trial resumes from its last reported iteration (its checkpoint)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler


def fake_trial(trial_id: str, retried: bool = True) -> SimpleNamespace:
    """A trial as the scheduler reads it; ``should_recover()`` is ``retried``."""
    return SimpleNamespace(
        trial_id=trial_id,
        status=Trial.PENDING,
        checkpoint=None,
        storage=None,
        local_path=None,
        should_recover=lambda: retried,
    )


@dataclass(frozen=True)
class Behaviour:
    """What a trial's iterations do: ``fails_at`` raises (on every attempt, or only the first
    when ``once``), Tune retrying it ``retries`` times (-1: forever); its trainable returns at
    iteration ``returns``."""

    fails_at: int | None = None
    retries: int = 0
    once: bool = False
    returns: int | None = None

    @property
    def ends_for_good(self) -> bool:
        """The trial leaves the run before the budget is spent (so may a step with it)."""
        return self.returns is not None or (
            self.fails_at is not None and not self.once and self.retries >= 0
        )


@dataclass
class FakeTune:
    scheduler: TrialScheduler
    behaviours: list[Behaviour]
    workers: int
    rng: random.Random
    clock: list[float]
    """The scheduler's ``time.monotonic`` reads ``clock[0]``; each iteration moves it on."""
    trials: list[SimpleNamespace] = field(init=False)
    log: list[str] = field(default_factory=list)
    _running: list[SimpleNamespace] = field(default_factory=list)
    _queue: list[SimpleNamespace] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.trials = [fake_trial(f"t{i}") for i in range(len(self.behaviours))]
        for trial, behaviour in zip(self.trials, self.behaviours, strict=True):
            trial.iteration, trial.failures = 0, 0
            trial.should_recover = lambda b=behaviour, t=trial: (
                b.retries < 0 or t.failures <= b.retries
            )

    def stop_trial(self, trial: SimpleNamespace) -> None:
        if trial.status in (Trial.ERROR, Trial.TERMINATED):
            return
        if trial.status in (Trial.PENDING, Trial.PAUSED):
            self.scheduler.on_trial_remove(self, trial)
        else:
            self.scheduler.on_trial_complete(self, trial, {})
        self._end(trial, Trial.TERMINATED)

    def run(self, max_events: int = 2000) -> bool:
        """Run until no trial runs or can start (True), or ``max_events`` iterations (False)."""
        for trial in self.trials:
            self.scheduler.on_trial_add(self, trial)
        for _ in range(max_events):
            self._start()
            if not self._running:
                return True
            self._iterate(self.rng.choice(self._running))
        return False

    def _end(self, trial: SimpleNamespace, status: str) -> None:
        trial.status = status
        if trial in self._running:
            self._running.remove(trial)

    def _start(self) -> None:
        """The scheduler's pick is staged first, then the PENDING trials, while workers are free."""
        chosen = self.scheduler.choose_trial_to_run(self)
        if chosen is not None and chosen.status in (Trial.PAUSED, Trial.PENDING):
            chosen.status = Trial.PENDING
            self._queue = [chosen, *(t for t in self._queue if t is not chosen)]
        waiting = [t for t in self.trials if t.status == Trial.PENDING and t not in self._queue]
        self._queue += waiting
        self._queue = [t for t in self._queue if t.status == Trial.PENDING]
        while self._queue and len(self._running) < self.workers:
            trial = self._queue.pop(0)
            trial.status = Trial.RUNNING
            self._running.append(trial)

    def _iterate(self, trial: SimpleNamespace) -> None:
        """``trial``'s next iteration ends: it fails, returns or reports."""
        behaviour = self.behaviours[self.trials.index(trial)]
        self.clock[0] += self.rng.uniform(0.01, 0.3)
        n = trial.iteration + 1
        if n == behaviour.fails_at and not (behaviour.once and trial.failures):
            trial.failures += 1
            self.log.append(f"{trial.trial_id} fails at {n}")
            if trial.should_recover():
                self._end(trial, Trial.ERROR)
                self.scheduler.on_trial_error(self, trial)
                trial.status = Trial.PENDING
                self.scheduler.on_trial_add(self, trial)
            else:
                self.scheduler.on_trial_error(self, trial)
                self._end(trial, Trial.ERROR)
            return
        if n == behaviour.returns:
            self.log.append(f"{trial.trial_id} returns at {n}")
            self.scheduler.on_trial_complete(self, trial, {})
            self._end(trial, Trial.TERMINATED)
            return
        trial.iteration = n
        result: dict[str, Any] = {
            "score": (0.5 + 0.1 * self.trials.index(trial)) * n / (n + 1),
            "training_iteration": n,
            "time_this_iter_s": self.rng.uniform(0.05, 0.4),
        }
        decision = self.scheduler.on_trial_result(self, trial, result)
        self.log.append(f"{trial.trial_id} reports {n}: {decision}")
        if decision == TrialScheduler.PAUSE:
            self._end(trial, Trial.PAUSED)
        elif decision == TrialScheduler.STOP:
            self.stop_trial(trial)
