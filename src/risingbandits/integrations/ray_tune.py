"""A Ray Tune ``TrialScheduler`` in which a rising-bandit policy decides which trial trains next.

Each training iteration a trial reports is one pull of its arm; ``budget`` iterations are spent
in all, or, with ``time_budget_s``, seconds of training: each iteration costs the
``time_this_iter_s`` Tune reports with it (a selector with ``cost="given"``), and the run stops
once the trials' training time summed (their ``time_total_s``, as recorded) reaches the budget;
the last iterations may overrun it. An iteration that fails costs the wall time from when the
scheduler let it start (``choose_trial_to_run``, or CONTINUE after the trial's last result) to
the error: Tune reports no time for it, and without this a run whose trials keep failing would
never spend its budget.

Like Ray's ``HyperBandScheduler``, the scheduler answers each result with CONTINUE, PAUSE
or STOP and names the paused trial to resume in ``choose_trial_to_run``: when a trial reports,
the policy (a :class:`~risingbandits.modelselect.ModelSelector` with one candidate per trial)
picks, among that trial and the waiting ones (paused, or new and not started yet), the trial
to train next; the reporting trial continues if it is picked, otherwise it is paused and the
picked one takes its place. Every
running trial is a pull in flight, so the trials run in parallel on as many workers as the
cluster gives them (the selector's ``max_pending`` is refused: Tune starts a new trial whenever
resources are free, and a smaller cap failed inside Ray at the first result past it).

Choices (the Ray integration is ours; nothing in the CURE-UCB paper covers it):

* Ray starts every new trial as soon as it has resources; that first iteration is a forced
  pull (every rising-bandit policy pulls each arm at the start anyway), recorded with
  ``select(available=[that trial])`` when its result arrives. Trials added after the first
  result join with ``add_candidate``.
* A paused trial resumes from its latest checkpoint: the trainable must report one with each
  result (``tune.report(metrics, checkpoint=...)``) and load ``tune.get_checkpoint()`` when it
  starts, as for Ray's PBT. A trial whose ``training_iteration`` does not follow its previous
  one (restarted without its checkpoint) is refused with a message saying so.
* A trial that fails or is removed is retired (its pulls in flight go back to the budget; a
  budget in time is charged the wall time of the iteration that failed); one
  that completes on its own (its trainable returned) stays a candidate for the recommendation
  but is never offered again. Either way, if it held a worker, the policy picks a waiting trial
  to take it (else a run whose other trials are all paused would wait forever). ModelSelector
  keeps two candidates active: when one of the last two ends, it stays but is never offered
  again, so the other trains to the end of the budget. :meth:`~RisingBanditScheduler.summary`
  lists the trials that errored (``"errored"``); an errored trial is never recommended.
* A trial Tune retries (``tune.RunConfig(failure_config=tune.FailureConfig(max_failures=N))``)
  stays the same candidate: Tune calls ``on_trial_error`` (the trial already ERROR, Ray 2.60's
  ``TuneController._requeue_trial``), then ``on_trial_add`` again with the same trial, which
  restarts from its latest checkpoint and reports the next ``training_iteration`` (a restart
  that reports an iteration again is refused, as for a pause: report a checkpoint with each
  result). Under a budget in iterations the failed attempt's pull stays in flight until the
  retry reports it (nothing is given back, no other trial takes the worker), also when the
  other trials spent the rest of the budget meanwhile (stopping the retry then lost that step:
  the run ended one iteration short). Under
  ``time_budget_s`` the failed attempt is charged its wall time as a failed iteration is, and
  the retry starts a new pull; once the budget is spent the retry is stopped before it starts
  (and the paused trials with it), so a trial that fails on every attempt
  (``max_failures=-1``) still ends the run. Before the
  first result of the run nothing can be charged. Only the last failure, with no retry left,
  retires the trial and lists it in ``"errored"``.
* Once the budget is spent (every step of it started), the trials still paused or not started
  yet are stopped and each running one stops after its result. A trial a search algorithm adds
  later trains one iteration, then stops (stopped before it starts, Ray 2.60's ``Tuner.fit``
  fails building its result: the trial has no folder). Results that arrive after the
  budget is spent are not recorded. A step a failing trial gives back after that point stays
  unspent (the other trials were stopped).
* Before a paused trial resumes, its result logs (``result.json``, ``progress.csv``) are copied
  from the driver to the run's storage. Ray's JSON and CSV logger callbacks copy them back from
  storage whenever a trial with a checkpoint starts (meant for restoring an experiment), while
  the driver syncs them to storage only every 10 s or so: a missing copy gave a "Remote file not
  found" warning per resume, and a stale one replaced the driver's, losing the rows reported
  since (Ray 2.60). The copy waits for a sync still in flight (its snapshot may be older).
* ``mode="min"`` records ``-value``; a ``score_range`` (of the reported metric) is then needed
  unless values lie in [-1, 0].

After ``Tuner.fit()``, :meth:`RisingBanditScheduler.summary` gives the pulls per trial, the
recommended trial (its id) and its last score. Needs
``pip install "risingbandits[ray]"``.
"""

from __future__ import annotations

import inspect
import os
import stat
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.fs

from risingbandits.extras import require

ray = require("ray", "ray", "the Ray Tune integration")
require("ray.tune", "ray", "the Ray Tune integration")

from ray.air.constants import EXPR_PROGRESS_FILE, EXPR_RESULT_FILE  # noqa: E402
from ray.tune.experiment import Trial  # noqa: E402
from ray.tune.schedulers import TrialScheduler  # noqa: E402

from risingbandits.integrations.checks import check_seconds  # noqa: E402
from risingbandits.integrations.handlers import TAKEN_BY_TUNE, handlers_given_back  # noqa: E402
from risingbandits.integrations.lifetime import ProcessGuard  # noqa: E402
from risingbandits.modelselect import DEFAULT_POLICY, ModelSelector  # noqa: E402
from risingbandits.modelselect.costs import least_cost  # noqa: E402
from risingbandits.modelselect.scores import parse_score_range  # noqa: E402
from risingbandits.policies.machinery.checkpoint import integer, number  # noqa: E402
from risingbandits.user_cache import notice_once  # noqa: E402

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

ITERATION = "training_iteration"
ITERATION_TIME = "time_this_iter_s"
SELECTOR_OPTIONS = tuple(
    name
    for name, p in inspect.signature(ModelSelector).parameters.items()
    if p.kind is p.KEYWORD_ONLY and name not in ("score_range", "cost", "max_pending")
)
"""The ModelSelector keywords the scheduler passes on (``score_range`` and ``cost`` are its
own; ``max_pending`` is refused, see the module's docstring)."""
LOG_FILES = (EXPR_RESULT_FILE, EXPR_PROGRESS_FILE)
"""The files Ray's JSON and CSV logger callbacks copy back from storage when a trial starts."""


class RisingBanditScheduler(TrialScheduler):
    """Spend ``budget`` training iterations, or ``time_budget_s`` seconds of training, over the
    trials of a Tune run with ``policy``.

    ``metric``/``mode`` may instead come from ``tune.TuneConfig``; other keywords (``seed``,
    ``preset``, ``params``, ...) go to the
    :class:`~risingbandits.modelselect.ModelSelector`. Every setting is checked here, by the
    selector's own checks, rather than at the first result inside Ray.
    """

    def __init__(
        self,
        budget: int | None = None,
        *,
        time_budget_s: float | None = None,
        policy: str = DEFAULT_POLICY,
        metric: str | None = None,
        mode: str | None = None,
        score_range: Sequence[float] | None = None,
        **selector_options: Any,
    ) -> None:
        super().__init__()
        self._budget, self._timed = _checked_budget(budget, time_budget_s)
        if metric is not None and not (isinstance(metric, str) and metric):
            raise ValueError(f"metric={metric!r} is not allowed: use the name of a reported metric")
        if mode not in (None, "min", "max"):
            raise ValueError(f"mode={mode!r} is not allowed: use 'min' or 'max'")
        for name, value in selector_options.items():
            if name == "max_pending":
                raise ValueError(
                    f"max_pending={value!r} is not allowed: Tune runs as many trials at once as "
                    "the cluster has resources for; give each trial more "
                    "(tune.with_resources) to run fewer at once"
                )
            if name not in SELECTOR_OPTIONS:
                raise ValueError(
                    f"{name}={value!r} is not allowed: the scheduler takes budget, "
                    f"time_budget_s, policy, metric, mode, score_range, "
                    f"{', '.join(SELECTOR_OPTIONS)}"
                )
        self._policy = policy
        self._metric = metric
        self._mode = mode
        self._range = parse_score_range(score_range)
        self._options = selector_options
        self._selector: ModelSelector | None = None
        self._new_selector(["a", "b"])  # checks every other setting as the selector does
        self._trials: list[Trial] = []  # candidate i is self._trials[i]
        self._index: dict[str, int] = {}  # trial id -> candidate
        self._iteration: dict[str, int] = {}  # trial id -> last iteration recorded
        self._to_run: list[Trial] = []  # picked while paused, not started yet
        self._errored: list[str] = []  # trial ids, in the order they failed
        self._began: dict[str, float] = {}  # trial id -> when its current iteration could start

    # -- Tune's interface --------------------------------------------------------------------

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: Any) -> bool:
        if (self._metric and metric) or (self._mode and mode):
            return False
        self._metric = self._metric or metric
        self._mode = self._mode or mode
        return True

    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        if trial.trial_id in self._index:  # Tune retries it after a failure: same candidate
            selector = self._selector
            held = selector is not None and self._index[trial.trial_id] in selector.in_flight
            if selector is not None and selector.remaining == 0 and not held:
                tune_controller.stop_trial(trial)  # the budget is spent: no attempt more
            return
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
            self._began[trial.trial_id] = time.monotonic()
            return TrialScheduler.CONTINUE
        self._queue(tune_controller, self._trials[chosen])
        return TrialScheduler.PAUSE

    def on_trial_complete(
        self, tune_controller: TuneController, trial: Trial, result: dict[str, Any]
    ) -> None:
        self._leave(tune_controller, trial, retire=False)  # it may still be the one to deploy

    def on_trial_error(self, tune_controller: TuneController, trial: Trial) -> None:
        began = self._began.pop(trial.trial_id, None)
        lost = None  # a clock that reads 0 must not make the failed iteration free
        if self._timed and began is not None:
            lost = max(time.monotonic() - began, least_cost(self._budget))
        if _retried(trial):
            self._retry(tune_controller, trial, lost)
            return
        self._errored.append(trial.trial_id)
        self._leave(tune_controller, trial, lost=lost)

    def on_trial_remove(self, tune_controller: TuneController, trial: Trial) -> None:
        self._leave(tune_controller, trial)

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        """The paused trial the policy picked last, until it runs (idempotent)."""
        self._to_run = [t for t in self._to_run if t.status in (Trial.PAUSED, Trial.PENDING)]
        chosen = self._to_run[0] if self._to_run else None
        for trial in self._trials:
            if chosen is None and trial.status == Trial.PENDING:  # new: a forced first pull
                chosen = trial
        if chosen is not None:  # asked until it starts: the last answer is when it could
            self._began[chosen.trial_id] = time.monotonic()
        return chosen

    def debug_string(self) -> str:
        if self._selector is None:
            return f"Using rising bandits ({self._policy}): waiting for the first result"
        s = self._selector
        spent = (
            f"{s.t}/{s.budget} iterations"
            if not self._timed
            else f"{s.spent:.1f}/{s.budget:g} s of training ({s.t} iterations)"
        )
        return (
            f"Using rising bandits ({self._policy}): {spent}, "
            f"pulls per trial {dict(zip(s.names, s.pulls, strict=True))}"
        )

    # -- results ------------------------------------------------------------------------------

    @property
    def selector(self) -> ModelSelector | None:
        """The model selector behind the scheduler (None before the first result)."""
        return self._selector

    def summary(self) -> dict[str, Any]:
        """Pulls per trial, the recommended trial and its last score: the selector's summary,
        with trial ids as candidate names, and the trials that errored (``"errored"``).

        An errored trial is retired, except when it was one of the last two active
        candidates: the recommendation is then the other one, whatever the policy ranks, or
        None (and its score None) when both errored."""
        if self._selector is None:
            raise RuntimeError("no trial has reported a result yet")
        summary = {**self._selector.summary(), "errored": list(self._errored)}
        if summary["recommended"] in self._errored:
            survivors = [n for n in self._selector.active if n not in self._errored]
            # at most one: errored trials are retired down to two candidates
            best = survivors[0] if survivors else None
            summary["recommended"] = best
            summary["recommended_score"] = None if best is None else summary["last_scores"][best]
        return summary

    # -- inside --------------------------------------------------------------------------------

    def _new_selector(self, names: list[str]) -> ModelSelector:
        score_range = self._range
        if self._mode == "min":
            low, high = score_range if score_range else (0.0, 1.0)
            score_range = (-high, -low)
        return ModelSelector(
            names,
            self._budget,
            self._policy,
            score_range=score_range,
            cost="given" if self._timed else "pulls",
            **self._options,
        )

    def _started(self) -> ModelSelector:
        """The selector, created at the first result over the trials added so far (those
        that already failed are retired at once)."""
        if self._selector is None:
            if self._metric is None:
                raise ValueError(
                    "RisingBanditScheduler needs metric (and mode): pass them to the "
                    "scheduler or to tune.TuneConfig"
                )
            if len(self._trials) < 2:
                raise ValueError(
                    f"RisingBanditScheduler needs two or more trials at the first result, got "
                    f"{len(self._trials)}: let Tune run two or more at once (a search algorithm "
                    "with max_concurrent=1 adds a trial only when the one before has ended)"
                )
            self._selector = self._new_selector([t.trial_id for t in self._trials])
            for i, trial in enumerate(self._trials):
                if trial.status in (Trial.ERROR, Trial.TERMINATED):
                    self._retire(self._selector, i)
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
        cost = self._seconds(trial, result) if self._timed else None
        self._iteration[trial.trial_id] = iteration
        value = float(result[self._metric])
        selector.update(
            index,
            -value if self._mode == "min" else value,
            metrics={ITERATION: iteration},
            cost=cost,
        )

    @staticmethod
    def _seconds(trial: Trial, result: dict[str, Any]) -> float:
        """The training time of the iteration ``result`` reports (Tune's own measure)."""
        seconds: Any = result.get(ITERATION_TIME)
        if not number(seconds) or seconds <= 0:
            raise ValueError(
                f"trial {trial.trial_id} reported {ITERATION_TIME}={seconds!r}: a time budget "
                "needs Tune's time of each iteration, a finite number of seconds > 0"
            )
        return float(seconds)

    def _queue(self, tune_controller: TuneController, trial: Trial) -> None:
        """Run ``trial`` next (picked with a pull in flight), its logs stored first."""
        _store_logs(tune_controller, trial)
        self._to_run.append(trial)

    def _stop_paused(self, tune_controller: TuneController) -> None:
        """Stop the paused trials that will not train again (not those picked to run, nor a
        retried one whose pull is in flight), and the new ones not started yet: Ray would start
        each for an iteration past the budget."""
        in_flight = self._selector.in_flight if self._selector is not None else []
        for i, trial in enumerate(self._trials):
            if (
                trial.status in (Trial.PAUSED, Trial.PENDING)
                and trial not in self._to_run
                and i not in in_flight
            ):
                tune_controller.stop_trial(trial)

    def _retry(self, tune_controller: TuneController, trial: Trial, lost: float | None) -> None:
        """``trial`` failed and Tune retries it (``on_trial_add`` comes next). Its pull in
        flight stays for the retry; under a time budget the failed attempt is charged ``lost``
        seconds (a new pull starts for the retry while the budget lasts)."""
        selector = self._selector
        if selector is None or lost is None:
            return
        index = self._index[trial.trial_id]
        held = index in selector.in_flight
        if not held:  # it failed before its first result was recorded
            if selector.remaining == 0 or len(selector.in_flight) >= selector.max_pending:
                return
            selector.select(available=[index])  # its forced first pull, charged below
        self._charge(tune_controller, index, lost)
        if held and selector.remaining > 0:
            selector.select(available=[index])

    def _charge(self, tune_controller: TuneController, index: int, lost: float) -> None:
        """Cancel trial ``index``'s pull in flight, charged ``lost`` seconds (a failed
        iteration); if the budget is spent then, stop the paused trials (they waited, paused,
        until Tune's own time limit). Also when it was spent before the failure: the failed
        pull's estimated cost had spent it when the pull started, and no result came to stop
        them (a run waited until Tune's own limit when its last pull failed so). Only here, not
        in :meth:`_leave`: stopping a trial comes back through ``on_trial_remove``, which
        charges nothing, and stopping the paused ones again from there recursed until
        Python's limit."""
        selector = self._started()
        selector.cancel(index, cost=lost)
        if selector.remaining == 0:
            self._stop_paused(tune_controller)

    def _leave(
        self,
        tune_controller: TuneController,
        trial: Trial,
        retire: bool = True,
        lost: float | None = None,
    ) -> None:
        """A trial ended: its pulls in flight go back to the budget (a budget in time is
        charged ``lost`` seconds for the one that failed), it is retired (unless ``retire`` is
        false: a trial that completed on its own stays a candidate to deploy, never offered
        again) and, if it held a worker (running, or picked to run), the policy picks a waiting
        trial to take it; without that, a run whose other trials are all paused would wait
        forever (:meth:`_charge`: if ``lost`` spent the budget, the paused trials stop)."""
        selector = self._selector
        if selector is None:
            return
        index = self._index[trial.trial_id]
        held = index in selector.in_flight or trial.status == Trial.RUNNING
        if lost is not None and index in selector.in_flight:
            self._charge(tune_controller, index, lost)
        if retire:
            self._retire(selector, index)
        else:
            while index in selector.in_flight:
                selector.cancel(index)
        if held and selector.remaining > 0 and len(selector.in_flight) < selector.max_pending:
            idle = self._idle(selector)
            if idle:
                self._queue(tune_controller, self._trials[selector.select(available=idle)])

    @staticmethod
    def _retire(selector: ModelSelector, index: int) -> None:
        """Give candidate ``index``'s pulls in flight back to the budget and retire it while
        the selection goes on. Of the last two active candidates (ModelSelector's floor) an
        ended one stays, but is never offered again (only paused and new trials are)."""
        while index in selector.in_flight:
            selector.cancel(index)
        active = selector.active
        if selector.remaining > 0 and selector.names[index] in active and len(active) > 2:
            selector.retire(index)


def _retried(trial: Trial) -> bool:
    """Whether Tune retries ``trial``, in ``on_trial_error``: Ray 2.60's
    ``TuneController._process_trial_failure`` stops a trial it retries (status ERROR) before
    ``on_trial_error``, and calls it for a trial with no retry left while still RUNNING."""
    return trial.status == Trial.ERROR and trial.should_recover()


def _checked_budget(budget: Any, time_budget_s: Any) -> tuple[float, bool]:
    """The budget and whether it is in seconds of training (each iteration's cost given)."""
    if (budget is None) == (time_budget_s is None):
        raise ValueError(
            "give budget (training iterations) or time_budget_s (seconds of training), one of "
            "the two"
        )
    if time_budget_s is None:
        if not integer(budget) or budget < 2:
            raise ValueError(f"budget={budget!r} is not allowed: use an integer >= 2")
        return int(budget), False
    return check_seconds("time_budget_s", time_budget_s), True


def _store_logs(tune_controller: TuneController, trial: Trial) -> None:
    """Copy ``trial``'s result logs from the driver's staging folder to its storage folder,
    so that the copy Ray's logger callbacks take back when the trial starts is the driver's
    own (see the module's docstring). Ray takes them back only for a trial with a checkpoint.
    A sync of the run's folder still in flight is waited for first: it uploads a snapshot
    taken when it began, and landing after this copy it lost the rows reported since (Ray
    2.60 keeps that syncer in the controller's private ``_storage``; without it, no wait)."""
    storage, folder = trial.storage, trial.local_path
    if not trial.checkpoint or storage is None or folder is None:
        return
    syncer = getattr(getattr(tune_controller, "_storage", None), "syncer", None)
    if syncer is not None:
        syncer.wait()
    for name in LOG_FILES:
        if Path(folder, name).is_file():  # its checkpoint is stored, so is its folder
            pyarrow.fs.copy_files(
                str(Path(folder, name)),
                f"{storage.trial_fs_path}/{name}",
                source_filesystem=pyarrow.fs.LocalFileSystem(),
                destination_filesystem=storage.storage_filesystem,
            )


def keep_ray_token_private(token: Path | None = None) -> None:
    """Ray (2.59 on) starts a local instance with token authentication, the token it generates
    kept in ``~/.ray/auth_token`` with the umask's mode (0644 by default): in a home folder other
    users can enter, they could read it and run code on the instance, which listens on every
    interface. A token file of this user's that group or others can read is made 0600, and one
    line says so."""
    token = token or Path.home() / ".ray" / "auth_token"
    try:
        info = token.lstat()
    except OSError:  # no token: authentication is off (RAY_AUTH_MODE=disabled)
        return
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077:
        token.chmod(0o600)
        notice_once(
            "ray-token",
            f"{token} could be read by group or others (mode {stat.S_IMODE(info.st_mode):o}), "
            "who could run code on the Ray instance with it: its mode is now 600",
        )


@contextmanager
def local_ray(num_cpus: int | None = None, **init_options: Any) -> Iterator[None]:
    """A local Ray instance for the scope (``ray.init(num_cpus=...)``, no dashboard), shut
    down at the end; its processes end with the scope also if this process is killed
    (:class:`~risingbandits.integrations.lifetime.ProcessGuard`). The SIGINT and SIGUSR1
    handlers the scope found are put back at its end (``Tuner.fit`` takes them and leaves its
    own, which turned a later Ctrl-C into a warning:
    :func:`~risingbandits.integrations.handlers.handlers_given_back`).

    Ray's files (``_temp_dir``, unless given) go to a folder of this scope's only (mode 700,
    :func:`private_ray_root`), removed with Ray's processes at its end, also when this process
    is killed: Ray's default, ``/tmp/ray``, is shared by every local user and Ray makes it and
    each session folder in it writable by all (mode 777, no sticky bit), so another user could
    replace the files Ray's processes read there (the ports of its services, its runtime
    environments); and the sessions piled up there."""
    with ProcessGuard() as guard, handlers_given_back(TAKEN_BY_TUNE):
        if "_temp_dir" not in init_options:
            root = private_ray_root()
            guard.remove_at_end(root)
            init_options = {**init_options, "_temp_dir": str(root / "ray")}
        ray.init(num_cpus=num_cpus, include_dashboard=False, **init_options)
        guard.scan()  # Ray's processes are known to the guardian before anything else runs
        keep_ray_token_private()
        try:
            yield
        finally:
            ray.shutdown()


def private_ray_root() -> Path:
    """A new folder only this user can enter (``mkdtemp``: mode 700) for a Ray instance's
    files, in ``/tmp`` as Ray's own default is (a Unix socket's path is at most 107 bytes; Ray's
    sockets come to about 90 here, and a long ``TMPDIR`` would pass it). Ray makes the folder it
    is given writable by all, so it gets ``ROOT/ray``, behind this one."""
    parent = "/tmp" if os.path.isdir("/tmp") else None
    return Path(tempfile.mkdtemp(prefix="rb-ray-", dir=parent))
