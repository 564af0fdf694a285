"""SIGKILL a real ``risingbandits sweep run`` at several moments, then resume: no cell lost,
none doubled, every visible file readable."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from risingbandits.experiments import Store, make_plan, parse_spec, run_sweep

SPEC = """
sweep_seed = 5
seeds = 2
horizons = [2000, 6000]

[[instances]]
family = "ltf-v1"
count = 30
generator_seed = 1
params = { t_sat_scale = 6000 }

[[policies]]
name = "cure-ucb"

[[policies]]
name = "ucb1"
"""
CLI = "from risingbandits.cli import main; main()"
TIMEOUT = 120.0


def start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "sweep", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: worker processes can be cleaned up
    )


def parts(out: Path) -> list[str]:
    try:
        return os.listdir(out / "parts")
    except FileNotFoundError:
        return []


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> bool:
    """SIGKILL ``proc`` as soon as ``ready()``; False when it finished first."""
    deadline = time.monotonic() + TIMEOUT
    while proc.poll() is None:
        if ready():
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            # the workers of a process pool lose their parent: end them too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            return True
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the sweep did not reach the kill point in time")
        time.sleep(0.0005)
    return False


def check_readable_and_unique(out: Path) -> set[tuple]:
    """Every visible file is whole; no cell appears twice. Returns the cells present."""
    if (out / "manifest.json").exists():
        json.loads((out / "manifest.json").read_text())
    seen: set[tuple] = set()
    for path in Store(out).part_files():
        for r in pq.read_table(path).to_pylist():
            key = (r["instance"], r["policy"], r["horizon"], r["seed"])
            assert key not in seen, f"duplicate cell {key}"
            seen.add(key)
    return seen


@pytest.mark.slow
def test_sigkill_at_several_moments_then_resume(tmp_path: Path) -> None:
    spec_file = tmp_path / "spec.toml"
    spec_file.write_text(SPEC)
    out = tmp_path / "out"
    run = ("run", str(spec_file), "--out", str(out))
    rng = np.random.default_rng(20260101)
    t0 = [0.0]

    def after(seconds: float) -> Callable[[], bool]:
        return lambda: time.monotonic() - t0[0] >= seconds

    def finished() -> int:
        return len([p for p in parts(out) if p.endswith(".parquet")])

    def writing() -> bool:
        """A part is being written by this run (past its start-up clean-up of leftovers)."""
        return finished() > n0[0] and any(p.endswith(".tmp") for p in parts(out))

    n0 = [0]
    kill_points: list[tuple[tuple[str, ...], Callable[[], bool]]] = [
        (("--executor", "serial"), after(0.5)),  # during start-up
        (("--executor", "serial"), lambda: len(parts(out)) >= 5),  # after k parts exist
        (("--executor", "serial"), writing),  # while a part is being written
        (("--executor", "serial"), after(float(rng.uniform(1.0, 3.0)))),  # a random moment
        (("--workers", "2"), lambda: finished() >= 40),
    ]
    killed = 0
    for options, ready in kill_points:
        t0[0], n0[0] = time.monotonic(), finished()
        killed += kill_when(start(*run, *options), ready)
        check_readable_and_unique(out)
    assert killed >= 3  # most kill points hit a running sweep

    done = subprocess.run(
        [sys.executable, "-c", CLI, "sweep", "resume", str(out), "--executor", "serial"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr

    spec = parse_spec(SPEC)
    plan = make_plan(spec)
    cells = check_readable_and_unique(out)
    expected = {
        (t.instance.id, t.policy.label, h, s)
        for t in plan.tasks
        for h in t.horizons
        for s in t.seeds
    }
    assert cells == expected
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    assert Store(out).status().complete

    # the interrupted sweep holds the same numbers as one that ran straight through
    clean = tmp_path / "clean"
    run_sweep(spec, clean, executor="serial")

    def rows(path: Path) -> list[dict]:
        got = [r for p in Store(path).part_files() for r in pq.read_table(p).to_pylist()]
        for r in got:
            r.pop("wall_time")
        return sorted(got, key=lambda r: (r["instance"], r["policy"], r["horizon"], r["seed"]))

    assert rows(out) == rows(clean)
