"""live-v1 end to end: tiny real builds (deterministic, in worker processes or not), the family
loaded through ``families.generate`` with its test curves, the final-model gap judged on them,
and ``risingbandits data live``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import risingbandits.cli.data as data_cli
from live_fixture import task_file, write_made_up
from process_checks import Process, all_gone, descendants, kill_left
from risingbandits.cli import app
from risingbandits.instances.families import generate
from risingbandits.instances.live import BUILD_MINUTES, live_instance, live_v1_members, pool_names
from risingbandits.instances.live_build import build_live
from risingbandits.instances.live_cache import read_task
from risingbandits.simulate import simulate

runner = CliRunner()


def _curves(root: Path, dataset: str, seed: int, units: int) -> tuple[np.ndarray, np.ndarray]:
    task = read_task(task_file(root, dataset, seed, units), dataset, seed, units)
    return task.validation, task.test


def test_two_builds_give_the_same_curves_in_processes_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = [("wine", 0), ("wine", 1), ("breast_cancer", 0)]
    curves = {}
    for run, workers in (("serial", 1), ("processes", 2)):
        root = tmp_path / run
        monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(root))
        report = build_live(["wine", "breast_cancer"], [0, 1], units=6, workers=workers)
        assert sorted(report.recorded) == sorted([*tasks, ("breast_cancer", 1)])
        curves[run] = {t: _curves(root, *t, 6) for t in tasks}
    for t in tasks:
        for serial, parallel in zip(curves["serial"][t], curves["processes"][t], strict=True):
            np.testing.assert_array_equal(serial, parallel)
    val_wine0 = curves["serial"][("wine", 0)][0]
    assert not np.array_equal(val_wine0, curves["serial"][("wine", 1)][0])  # another order


def _pool_of(proc: subprocess.Popen[str], until: float) -> set[Process]:
    """Every descendant of ``proc`` seen while it runs, until it ends or ``until`` passes."""
    seen: set[Process] = set()
    while proc.poll() is None and time.monotonic() < until:
        seen |= descendants(proc.pid)
        time.sleep(0.05)
    return seen


@pytest.mark.parametrize("kill", [False, True])
def test_no_build_worker_outlives_the_command(root: Path, kill: bool) -> None:
    """Ended normally, or killed mid-build (the workers' watchdog ends them), the command
    leaves no process behind: workers, forkserver, resource tracker."""
    args = ["data", "live", "--datasets", "wine", "--seeds", "0-3", "--units", "100"]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from risingbandits.cli import main; main()", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen: set[Process] = set()
    try:
        if kill:
            while len(seen) < 4 and proc.poll() is None:  # 2 workers, forkserver, tracker
                seen |= _pool_of(proc, time.monotonic() + 0.2)
            os.kill(proc.pid, signal.SIGKILL)
        seen |= _pool_of(proc, time.monotonic() + 120)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == (-signal.SIGKILL if kill else 0), err
        assert len(seen) >= 3 and all_gone(seen, 10.0), "a build process outlived the command"
    finally:
        kill_left(seen)
        if proc.poll() is None:
            proc.kill()


def test_a_small_build_loads_as_an_instance_but_is_not_live_v1(root: Path) -> None:
    build_live(["digits"], [2], units=5)
    inst = live_instance("digits", 2, units=5)
    val, test = _curves(root, "digits", 2, 5)
    np.testing.assert_array_equal(inst.means, val)
    np.testing.assert_array_equal(inst.test_means, test)  # type: ignore[arg-type]
    assert inst.arm_names == pool_names("digits") and inst.noise.kind == "none"
    assert inst.meta["sizes"] == {"train": 899, "validation": 449, "test": 449}
    assert not task_file(root, "digits", 2).exists()  # live-v1's folder holds nothing
    with pytest.raises(ValueError) as info:
        live_instance("digits", 2)  # the outside check with the family's units: its own build
    assert str(info.value).endswith(
        "digits-2.npz is not built: run `risingbandits data live --datasets digits --seeds 2 "
        "--units 1024`"
    )


def test_generate_gives_the_recorded_validation_and_test_curves(root: Path) -> None:
    rng = np.random.default_rng(0)
    tasks = {s: write_made_up("breast_cancer", s, 1024, rng) for s in (0, 1)}
    instances = generate("live-v1", 2, horizon=300, split="dev")
    for inst, member in zip(instances, live_v1_members(0, {"split": "dev"}), strict=False):
        task = tasks[member["order_seed"]]
        rows = [task.candidates.index(a) for a in member["arms"]]
        assert inst.name == f"live-v1/0/{member['index']}" and inst.noise.kind == "none"
        assert inst.arm_names == tuple(member["arms"])
        np.testing.assert_array_equal(inst.means, task.validation[rows, :300])
        np.testing.assert_array_equal(inst.test_means, task.test[rows, :300])  # type: ignore[arg-type]
        assert np.array_equal(inst.meta["unit_seconds"], task.seconds[rows, :300])
        assert inst.meta["split"] == "dev" and inst.meta["full_horizon"] == 1024


@pytest.mark.parametrize("policy", ["ucb1", "successive-halving", "ace-ucb"])
def test_the_final_gap_is_judged_on_the_test_curves(root: Path, policy: str) -> None:
    write_made_up("breast_cancer", 0, 1024, np.random.default_rng(1))
    (inst,) = generate("live-v1", 1, horizon=256, split="dev")
    result = simulate(inst, policy, 256, seeds=4)
    assert inst.test_means is not None
    test, val = inst.test_means, inst.means
    for pulls, rec, gap in zip(result.pulls, result.recommended, result.final_gap, strict=True):
        by_hand = test[:, 255].max() - test[rec, pulls[rec] - 1]
        assert gap == pytest.approx(by_hand, abs=1e-12)
        assert gap != pytest.approx(val[:, 255].max() - val[rec, pulls[rec] - 1])


def test_the_cli_records_resumes_and_reports(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[tuple[int, int]] = []
    real = data_cli.bar_task

    def watched(bar: object, label: str, *args: object) -> object:
        update = real(bar, label, *args)  # type: ignore[arg-type]

        def both(done: int, total: int) -> None:
            steps.append((done, total))
            update(done, total)

        return both

    monkeypatch.setattr(data_cli, "bar_task", watched)
    args = ["data", "live", "--datasets", "wine", "--seeds", "0,1", "--units", "3"]
    first = runner.invoke(app, [*args, "--workers", "1"])
    assert first.exit_code == 0, first.output
    assert steps == [(0, 2), (1, 2), (2, 2)]
    folder = root / "live" / "live-v1-units3"
    assert first.stdout.strip() == (
        f"live-v1-units3 (not live-v1: 3 units): 2 task(s) recorded in "
        f"{first.stdout.split(' recorded in ')[1].split(' s,')[0]} s, 0 already there, in {folder}"
    )
    again = runner.invoke(app, [*args, "--seeds", "0-2", "--workers", "1"])
    assert again.exit_code == 0 and "1 task(s) recorded" in again.stdout
    assert "2 already there" in again.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--datasets", "wine,digit"],
            "--datasets='digit' is not allowed: use breast_cancer, wine, phishing, segment, "
            "imdb (the family) or digits (kept out of live-v1 as an outside check)",
        ),
        (["--datasets", " , "], "--datasets=' , ' is not allowed: name one or more data sets"),
        (
            ["--seeds", "2-x"],
            "--seeds='2-x' is not allowed: use integers >= 0, comma-separated (0,3,5) or a "
            "range (0-7)",
        ),
        (["--seeds", "-1"], "--seeds='-1' is not allowed"),
        (
            ["--seeds", "0-10000000000"],  # a MemoryError while the seeds were listed
            "--seeds='0-10000000000' is not allowed: 10,000,000,001 seeds; use at most 10,000",
        ),
        (["--units", "0"], "--units=0 is not allowed: use an integer >= 1"),
        (["--workers", "-2"], "--workers=-2 is not allowed: use an integer >= 0"),
    ],
)
def test_the_cli_refuses_bad_input_in_one_line(root: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["data", "live", *args])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {message}")
    assert not (root / "live").exists() or not any((root / "live").rglob("*.npz"))


def test_an_unbuilt_family_is_one_line_in_the_cli(root: Path) -> None:
    result = runner.invoke(app, ["run", "--instance", "live-v1/0/3", "--horizon", "100"])
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == (
        f"error: live-v1 is not built: run `risingbandits data live` (about {BUILD_MINUTES} "
        "minutes on 2 "
        f"cores; {task_file(root, 'breast_cancer', 3)} is missing)"
    )


def test_missing_optional_packages_are_one_line(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib.metadata import PackageNotFoundError

    import risingbandits.modelselect.live_data as live_data

    def absent(name: str) -> None:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(live_data, "distribution", absent)
    args = ["data", "live", "--datasets", "segment", "--seeds", "0", "--units", "2"]
    river = runner.invoke(app, [*args, "--workers", "1"])
    assert river.exit_code == 2
    assert river.stderr.strip() == (
        "error: the live-training data sets phishing and segment are read from the river "
        'package, which is not installed: pip install "risingbandits[live]"'
    )
    monkeypatch.setitem(sys.modules, "sklearn", None)
    sklearn = runner.invoke(app, [*args, "--workers", "1"])
    assert sklearn.exit_code == 2
    assert sklearn.stderr.strip() == (
        'error: recording the live-training curves needs sklearn: pip install "risingbandits[live]"'
    )
