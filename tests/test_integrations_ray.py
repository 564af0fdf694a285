"""The Ray Tune scheduler on a real local Ray instance (2 CPUs), and Ray's processes ending
with the driver, also when it is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray.tune")

from ray import cloudpickle, tune

from process_checks import Process, all_gone, descendants, kill_left, running
from risingbandits.integrations.ray_tune import RisingBanditScheduler, local_ray

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/

CAPS = [0.2, 0.9, 0.4]


def rising(config: dict) -> None:
    """Trains forever (the scheduler stops it); state in a checkpoint each iteration."""
    n = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            n = int(Path(folder, "n").read_text())
    while True:
        n += 1
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "n").write_text(str(n))
            tune.report(
                {"score": config["cap"] * n / (n + 1), "n": n},
                checkpoint=tune.Checkpoint.from_directory(folder),
            )


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    with local_ray(num_cpus=2):
        yield


def fit(scheduler: RisingBanditScheduler, storage: Path, trainable=rising) -> tune.ResultGrid:
    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": 1}),
        param_space={"cap": tune.grid_search(CAPS)},
        tune_config=tune.TuneConfig(
            metric="score", mode="max", scheduler=scheduler, reuse_actors=True
        ),
        run_config=tune.RunConfig(storage_path=str(storage), verbose=0),
    )
    return tuner.fit()


def test_the_policy_spends_the_budget_over_paused_trials(cluster: None, tmp_path: Path) -> None:
    scheduler = RisingBanditScheduler(budget=10, seed=0)
    results = fit(scheduler, tmp_path)
    summary = scheduler.summary()
    assert summary["steps"] == 10 and sum(summary["pulls"].values()) == 10
    by_trial = {r.metrics["trial_id"]: r for r in results}
    assert set(by_trial) == set(summary["pulls"])
    for trial_id, pulls in summary["pulls"].items():
        assert by_trial[trial_id].metrics["n"] == pulls  # resumed from each checkpoint
    iterations: dict[str, list[int]] = {}
    for row in scheduler.selector.history:
        iterations.setdefault(row["candidate"], []).append(row["metrics"]["training_iteration"])
    assert all(i == list(range(1, len(i) + 1)) for i in iterations.values())
    assert max(summary["pulls"].values()) >= 2  # 3 trials on 2 CPUs: one at least resumed
    best = max(by_trial, key=lambda t: by_trial[t].config["cap"])
    assert summary["recommended"] == best
    assert summary["recommended_score"] == by_trial[best].metrics["score"]


def forgetful(config: dict) -> None:
    """Ignores its checkpoint: restarts from the first iteration after a pause."""
    for n in range(1, 100):
        tune.report({"score": config["cap"] * n / (n + 3)})


def test_a_trial_that_resumes_without_its_checkpoint_is_refused(
    cluster: None, tmp_path: Path
) -> None:
    # successive halving pulls every trial twice, then two survivors three more times: a
    # paused trial resumes whatever order Ray runs them in
    scheduler = RisingBanditScheduler(budget=12, policy="successive-halving", seed=0)
    with pytest.raises(Exception, match="resumed without its checkpoint"):
        results = fit(scheduler, tmp_path, forgetful)
        raise RuntimeError(str([r.error for r in results]))


def test_bad_settings_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="budget=1 is not allowed"):
        RisingBanditScheduler(budget=1)
    with pytest.raises(ValueError, match="mode='best' is not allowed"):
        RisingBanditScheduler(budget=10, mode="best")


DRIVER = """
import sys, tempfile, time
from pathlib import Path
from ray import tune
from risingbandits.integrations.ray_tune import RisingBanditScheduler, local_ray
def slow(config):
    n = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            n = int(Path(folder, "n").read_text())
    while True:
        time.sleep(0.2)
        n += 1
        with tempfile.TemporaryDirectory() as folder:  # a paused trial resumes where it was
            Path(folder, "n").write_text(str(n))
            tune.report({"score": 0.5}, checkpoint=tune.Checkpoint.from_directory(folder))
with local_ray(num_cpus=2):
    print("ready", flush=True)
    tune.Tuner(slow, param_space={"x": tune.grid_search([1, 2])},
               tune_config=tune.TuneConfig(metric="score", mode="max",
                                           scheduler=RisingBanditScheduler(budget=10**6)),
               run_config=tune.RunConfig(storage_path=sys.argv[1], verbose=0)).fit()
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")
def test_killing_the_driver_leaves_no_ray_process(tmp_path: Path) -> None:
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    processes: set[Process] = set()
    try:
        assert driver.stdout is not None and driver.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 120
        while not any(tmp_path.glob("*/*/result.json")):  # trials are training
            assert driver.poll() is None and time.monotonic() < deadline
            time.sleep(0.2)
        processes = descendants(driver.pid)
        names = {Path(f"/proc/{pid}/comm").read_text().strip() for pid, _ in processes}
        assert {"raylet", "gcs_server"} <= names, names
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        assert all_gone(processes, 15.0), [p for p in processes if running(p)]
    finally:
        driver.kill()
        driver.wait()
        kill_left(processes)
