"""The Ray Tune scheduler with one trial at a time (each needs the cluster's 2 CPUs), on a local
Ray instance of this module's own: on this 2-core VM, after some runs in which a trial failed,
Ray 2.60 kept one CPU held for the rest of its session with ``reuse_actors=True`` (no actor or
placement group left alive; not seen with ``reuse_actors=False``), and a trial needing both CPUs
then waited until Tune's time budget ended the run (3 of 5 runs of the test file failed so,
2026-11-29). Seen with this scheduler's runs, not with Ray's FIFO or HyperBand schedulers; its
cause is not found yet."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray.tune")

from risingbandits.integrations.ray_tune import RisingBanditScheduler, local_ray
from test_integrations_ray import TIMEOUT, fit


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    with local_ray(num_cpus=2):
        yield


def test_trials_not_started_when_the_budget_is_spent_never_start(
    cluster: None, tmp_path: Path, tune_errors: list[str]
) -> None:
    # one trial at a time, its first iteration longer than the budget: the two others were
    # still PENDING, and each was started for an iteration the budget no longer had (any
    # number of them, each an iteration long, in a run with many trials)
    scheduler = RisingBanditScheduler(time_budget_s=1.0, seed=0)
    start = time.monotonic()
    results = fit(scheduler, tmp_path, cpus=2, seconds=2.0)
    assert time.monotonic() - start < TIMEOUT / 2
    summary = scheduler.summary()
    assert summary["steps"] == 1 and summary["in_flight"] == [] and summary["spent"] >= 2.0
    assert sorted(bool(r.metrics.get("n")) for r in results) == [False, False, True]
    assert all(r.error is None for r in results)
    assert not [m for m in tune_errors if "Error stopping trial" in m]


def test_a_failure_that_spends_the_budget_stops_the_paused_trials(
    cluster: None, tmp_path: Path, tune_errors: list[str]
) -> None:
    # one trial at a time: the others are paused when the 0.9 trial's failing iteration, longer
    # than the whole budget, is charged. Its error spent the budget, so they never train again;
    # they waited paused until Tune's own time_budget_s (TIMEOUT) ended the run.
    scheduler = RisingBanditScheduler(time_budget_s=1.0, seed=0)
    start = time.monotonic()
    results = fit(scheduler, tmp_path, cpus=2, seconds=0.05, fail=[0.9], fail_seconds=1.5)
    assert time.monotonic() - start < TIMEOUT / 2
    summary = scheduler.summary()
    failed = next(r.metrics["trial_id"] for r in results if r.config["cap"] == 0.9)
    assert summary["errored"] == [failed] and summary["spent"] >= 1.5
    assert [r.error is None for r in results] == [r.metrics["trial_id"] != failed for r in results]
    # stopping a paused trial comes back to the scheduler (on_trial_remove): it stopped the
    # paused trials again, recursing until Python's limit, and Tune logged the RecursionError
    assert not [m for m in tune_errors if "Error stopping trial" in m]
