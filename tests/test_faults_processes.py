"""Issue 14, item 1: no worker outlives a killed or stopped ``risingbandits sweep run``.

A real CLI process runs a sweep on a pool of 2 workers; once the pool is computing, it gets
SIGKILL (it can clean nothing up: the workers' watchdog must end them) or SIGTERM (it must stop
like Ctrl-C: one line, parts kept, exit code 143). Then no process of the pool (workers,
forkserver, resource tracker, Dask workers) may survive a few seconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from risingbandits.experiments import Store
from risingbandits.experiments.watchdog import ProcessIdentity

SPEC = """
sweep_seed = 0
seeds = 400
horizons = [50000]

[[instances]]
family = "ltf-v1"
count = 6
generator_seed = 0

[[policies]]
name = "cure-ucb"
"""
CLI = "from risingbandits.cli import main; main()"
GRACE = 5.0  # seconds the pool has to disappear


def start_sweep(
    tmp_path: Path, *options: str, cli: str = CLI
) -> tuple[subprocess.Popen[str], Path]:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    # a killed Dask cluster's scratch folder goes with the test's (not the forkserver's socket:
    # a path that long would not fit)
    scratch = {"TMPDIR": str(tmp_path)} if "dask" in options else {}
    proc = subprocess.Popen(
        [sys.executable, "-c", cli, "sweep", "run", str(spec), "--out", str(out), *options],
        env={**os.environ, **scratch},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    return proc, out


def pool_of(proc: subprocess.Popen[str], workers: int) -> list[psutil.Process]:
    """Every descendant of ``proc`` once ``workers`` worker processes compute (their CPU time
    grows), so the kill lands mid-sweep."""
    deadline = time.monotonic() + 60
    parent = psutil.Process(proc.pid)
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        family = parent.children(recursive=True)
        busy = [p for p in family if _cpu(p) > 1.0]
        if len(busy) >= workers:
            return family
        time.sleep(0.1)
    pytest.fail("the sweep's workers did not start computing in time")


def _cpu(p: psutil.Process) -> float:
    try:
        times = p.cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)


def survivors(pool: list[psutil.Process]) -> list[str]:
    """The processes of ``pool`` still running after :data:`GRACE` seconds (zombies are gone:
    they hold no memory and compute nothing)."""
    deadline = time.monotonic() + GRACE
    while True:
        alive = []
        for p in pool:
            with contextlib.suppress(psutil.Error):
                if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                    alive.append(f"{p.pid} {' '.join(p.cmdline())[:80]}")
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


@contextlib.contextmanager
def cleanup(pool_ref: list[psutil.Process], proc: subprocess.Popen[str]):  # type: ignore[no-untyped-def]
    """Whatever the test finds, leave no process behind: the pool, and the CLI itself (a
    stop that hangs must not outlive the test)."""
    try:
        yield
    finally:
        for p in pool_ref:
            with contextlib.suppress(psutil.Error):
                p.kill()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize(
    "executor, least",
    [("processes", 4), ("dask", 2)],  # 2 workers + the forkserver and resource tracker
)
def test_sigkill_of_the_cli_ends_every_pool_process(
    tmp_path: Path, executor: str, least: int
) -> None:
    """(Dask's local workers already watched their parent: that case guards it.)"""
    proc, _ = start_sweep(tmp_path, "--executor", executor, "--workers", "2")
    pool: list[psutil.Process] = []
    with cleanup(pool, proc):
        pool += pool_of(proc, workers=2)
        assert len(pool) >= least
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert survivors(pool) == []


def stopped_mid_sweep(
    proc: subprocess.Popen[str], stop: signal.Signals, *, group: bool = False
) -> list[str]:
    """Send ``stop`` to the CLI (or its whole process group, as a terminal's Ctrl-C does) once
    two workers compute; assert its exit code and that its pool is gone; its stderr's lines."""
    pool: list[psutil.Process] = []
    with cleanup(pool, proc):
        pool += pool_of(proc, workers=2)
        (os.killpg if group else os.kill)(proc.pid, stop)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + stop, err
        assert survivors(pool) == []
    return [ln for ln in err.splitlines() if ln.strip()]


@pytest.mark.slow
def test_sigterm_stops_like_ctrl_c_keeps_parts_and_ends_the_pool(tmp_path: Path) -> None:
    proc, out = start_sweep(tmp_path, "--workers", "2")
    lines = stopped_mid_sweep(proc, signal.SIGTERM)
    assert len(lines) == 1, lines
    status = Store(out).status()
    assert lines[0] == (
        f"stopped by SIGTERM: {status.cells_done} of {status.cells_total} cells done; "
        f"resume with `risingbandits sweep resume {out}`"
    )
    assert status.problems == () and not status.complete
    assert not list(out.rglob("*.tmp"))


@pytest.mark.slow
def test_ctrl_c_to_a_dask_sweeps_process_group_says_one_line(tmp_path: Path) -> None:
    """A Ctrl-C reaches the terminal's whole process group: Dask's nannies and workers each
    printed a KeyboardInterrupt traceback under the sweep's one line. (The CLI is started with
    Python's own SIGINT handler: a test runner's worker may ignore SIGINT, and its children
    would inherit that.)"""
    ctrl_c = f"import signal; signal.signal(signal.SIGINT, signal.default_int_handler); {CLI}"
    proc, out = start_sweep(tmp_path, "--executor", "dask", "--workers", "2", cli=ctrl_c)
    lines = stopped_mid_sweep(proc, signal.SIGINT, group=True)
    assert len(lines) == 1, lines
    assert lines[0].startswith("interrupted: ") and lines[0].endswith(
        f"resume with `risingbandits sweep resume {out}`"
    )


@pytest.mark.slow
def test_sigterm_while_the_dask_cluster_starts_says_one_line(tmp_path: Path) -> None:
    """A SIGTERM while the local cluster was being built left it half made: Dask's exit hook
    then failed to close it with a traceback under the sweep's one line."""
    proc, out = start_sweep(tmp_path, "--executor", "dask", "--workers", "2")
    with cleanup([], proc):
        parent = psutil.Process(proc.pid)
        deadline = time.monotonic() + 60
        while not parent.children():  # the cluster's first process: it is being built
            assert time.monotonic() < deadline and proc.poll() is None, "no cluster started"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert lines == [  # nothing computed: the new sweep's folder is given back
        "stopped by SIGTERM: run the same `risingbandits sweep run` again (nothing was kept)"
    ], err
    assert not (out / "manifest.json").exists()


def test_the_watchdog_sees_a_gone_a_zombie_and_a_reused_pid_as_gone() -> None:
    me = ProcessIdentity.current()
    assert me.alive()
    assert not ProcessIdentity(me.pid, "0").alive()  # same pid, another start: reused
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    identity = ProcessIdentity.of(child.pid)
    deadline = time.monotonic() + 10
    while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not identity.alive()  # exited, not yet reaped
    child.wait()
    assert not identity.alive()  # reaped: no such pid
