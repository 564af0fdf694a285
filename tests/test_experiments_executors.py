"""Executors: serial, local processes and a Dask LocalCluster give the same rows."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from risingbandits.experiments import (
    DaskExecutor,
    MissingExtra,
    ProcessExecutor,
    SerialExecutor,
    Store,
    make_executor,
    parse_spec,
    run_sweep,
)
from test_experiments_spec import TINY

SPEC = TINY.replace("seeds = 2", "seeds = 3")
LONG_SPEC = """
sweep_seed = 0
seeds = 4000
horizons = [50000]

[[instances]]
family = "ltf-v1"
count = 6
generator_seed = 0

[[policies]]
name = "ucb1"
"""


def rows_without_wall_time(path: Path) -> list[dict]:
    rows = [r for p in Store(path).part_files() for r in pq.read_table(p).to_pylist()]
    for r in rows:
        assert r.pop("wall_time") > 0
    return sorted(rows, key=lambda r: (r["instance"], r["policy"], r["horizon"], r["seed"]))


@pytest.mark.slow
def test_serial_processes_and_dask_give_identical_rows(tmp_path: Path) -> None:
    spec = parse_spec(SPEC)
    run_sweep(spec, tmp_path / "serial", executor="serial", target_steps=800)
    run_sweep(spec, tmp_path / "processes", executor="processes", workers=2, target_steps=800)
    dask = DaskExecutor(workers=2)
    seen: list[tuple[str, str | None]] = []

    def watch(done: int, total: int) -> None:
        if done:  # called inside the executor's block
            seen.append((dask.scheduler_address, dask.dashboard_link))

    result = run_sweep(spec, tmp_path / "dask", executor=dask, progress=watch, target_steps=800)
    # scheduler and dashboard bind to localhost only
    assert seen and all(a.startswith("tls://127.0.0.1:") for a, _ in seen)
    assert all(link is None or "127.0.0.1" in link for _, link in seen)
    assert result.tasks_run == result.tasks_total > 3
    serial = rows_without_wall_time(tmp_path / "serial")
    assert len(serial) == result.cells_total
    assert rows_without_wall_time(tmp_path / "processes") == serial
    assert rows_without_wall_time(tmp_path / "dask") == serial
    names = {p.name for p in Store(tmp_path / "serial").part_files()}
    assert names == {p.name for p in Store(tmp_path / "dask").part_files()}


def test_make_executor_names_and_defaults() -> None:
    assert isinstance(make_executor("serial"), SerialExecutor)
    default = make_executor()
    assert isinstance(default, ProcessExecutor) and default.workers >= 1
    assert make_executor("processes", workers=3).workers == 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"executor='threads' is not allowed: use one of serial"):
        make_executor("threads")
    with pytest.raises(ValueError, match=r"a scheduler address needs the dask executor"):
        make_executor("serial", scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match=r"workers=0 is not allowed"):
        make_executor("processes", workers=0)


def test_a_scheduler_address_means_dask() -> None:
    ex = make_executor(scheduler="tcp://127.0.0.1:1")
    assert isinstance(ex, DaskExecutor) and ex.address == "tcp://127.0.0.1:1"


def test_missing_dask_gives_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(MissingExtra, match=r"pip install risingbandits\[dask\]"):
        make_executor("dask")


def test_missing_cryptography_gives_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local cluster's TLS credentials need cryptography; a scheduler of one's own does not."""
    monkeypatch.setitem(sys.modules, "cryptography", None)
    with pytest.raises(
        MissingExtra, match=r"needs cryptography: pip install \"risingbandits\[dask\]"
    ):
        make_executor("dask")
    assert isinstance(make_executor(scheduler="tcp://127.0.0.1:1"), DaskExecutor)


async def _identity(address: str, security: Any) -> str:
    """What the server at ``address`` says it is to a client with ``security``'s credentials (the
    first request any client makes; a sync ``distributed.Client`` that failed to connect can
    deadlock the next one when the garbage collector closes it)."""
    from distributed.core import rpc

    args = security.get_connection_args("client") if security is not None else {}
    async with rpc(address, connection_args=args, timeout=3) as server:
        reply = await asyncio.wait_for(server.identity(), 3)
    return str(reply["type"])


def test_the_local_cluster_answers_only_its_own_credentials() -> None:
    """Any local user can find the scheduler's port on 127.0.0.1 (/proc/net/tcp): without the
    cluster's own TLS credentials a client cannot even connect (it used to run tasks as us)."""
    from distributed.security import Security

    with DaskExecutor(workers=1) as ex:
        address = ex.scheduler_address
        own = ex._cluster.security
        assert asyncio.run(_identity(address, own)) == "Scheduler"
        for where, security in [
            (address.replace("tls://", "tcp://"), None),  # plain TCP
            (address.replace("tcp://", "tls://"), None),  # TLS without credentials
            (address.replace("tcp://", "tls://"), Security.temporary()),  # credentials of one's own
        ]:
            with pytest.raises((OSError, TypeError)):
                asyncio.run(_identity(where, security))
        assert address.startswith("tls://127.0.0.1:")
        assert sorted(ex.imap_unordered(abs, [-1, -2])) == [1, 2]


def test_the_local_clusters_scratch_folder_is_private_and_removed() -> None:
    """The workers spill pickles to their folders; the scheduler and the nannies put theirs first
    on this process's sys.path. All are in a new folder of mode 0700 (Dask's default,
    $TMPDIR/dask-scratch-space, may be another user's), removed at the end."""
    with DaskExecutor(workers=1) as ex:
        client = ex._client
        used = [Path(w["local_directory"]) for w in client.scheduler_info()["workers"].values()]
        used.append(Path(client.cluster.scheduler.local_directory))
        (top,) = {folder.parents[1] for folder in used}  # top/dask-scratch-space/worker-xyz
        info = top.stat()
        assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
        assert top.name.startswith("risingbandits-dask-")
    assert not top.exists()
    assert not [entry for entry in sys.path if entry.startswith(str(top))]


def test_no_scratch_folder_where_others_could_replace_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temporary folder others may write (not sticky) is refused in one line, before any
    process starts, and the folder made in it is removed."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # writable by all, not sticky: anyone may rename what is in it
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    with pytest.raises(ValueError, match=r"can be written by group or others .*set TMPDIR"):
        DaskExecutor(workers=1).__enter__()
    assert not list(shared.iterdir())


def test_a_failing_task_stops_the_sweep_and_keeps_finished_parts(tmp_path: Path) -> None:
    calls = []

    class Flaky(SerialExecutor):
        def imap_unordered(self, fn, items):  # type: ignore[no-untyped-def]
            for k, item in enumerate(items):
                calls.append(item.id)
                if k == 2:
                    raise RuntimeError("worker lost")
                yield fn(item)

    spec = parse_spec(SPEC)
    with pytest.raises(RuntimeError, match="worker lost"):
        run_sweep(spec, tmp_path / "s", executor=Flaky(), target_steps=800)
    assert Store(tmp_path / "s").done_ids() == set(calls[:2])
    result = run_sweep(spec, tmp_path / "s", executor="serial")
    assert result.resumed and result.tasks_run == result.tasks_total - 2


def test_a_new_sweep_whose_executor_cannot_start_leaves_its_folder_free(tmp_path: Path) -> None:
    """An unreachable Dask scheduler left a manifest: the same --out then refused another spec
    ("holds a sweep of another spec") though nothing had been computed."""

    class Unreachable(SerialExecutor):
        def __enter__(self) -> SerialExecutor:
            raise ValueError("scheduler='tcp://127.0.0.1:1' cannot be reached")

    out = tmp_path / "s"
    with pytest.raises(ValueError, match="cannot be reached"):
        run_sweep(parse_spec(SPEC), out, executor=Unreachable(), target_steps=800)
    assert not [p for p in out.iterdir() if p.name != ".lock"]
    other = run_sweep(parse_spec(TINY), out, executor="serial")
    assert not other.resumed and other.tasks_run == other.tasks_total


def _opt_level(_: object) -> int:  # runs on a worker
    from numba.core import config

    return int(config.OPT)


def test_workers_compile_at_o2_and_the_callers_process_keeps_its_level() -> None:
    from numba.core import config

    before = int(config.OPT)
    with ProcessExecutor(1) as pool:
        assert list(pool.imap_unordered(_opt_level, [0])) == [2]
    assert int(config.OPT) == before


def test_the_workers_level_yields_to_numba_opt(monkeypatch: pytest.MonkeyPatch) -> None:
    from numba.core import config

    from risingbandits._jit import use_worker_opt_level

    monkeypatch.setenv("NUMBA_OPT", "1")
    use_worker_opt_level()
    assert int(config.OPT) == 1
    monkeypatch.undo()
    config.reload_config()  # back to this process's own level


def _cache_variable(_: object) -> str | None:  # runs on a worker
    return os.environ.get("RISINGBANDITS_CACHE_DIR")


def test_workers_see_the_environment_of_when_their_pool_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A variable set, then unset, after the forkserver started (a first pool) reaches the
    workers of every later pool as it is then (the forkserver kept the old environment: a
    report's workers read the cache folder an earlier test had set)."""
    monkeypatch.delenv("RISINGBANDITS_CACHE_DIR", raising=False)
    with ProcessExecutor(1) as pool:  # the forkserver runs from here on
        assert list(pool.imap_unordered(_cache_variable, [0])) == [None]
    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(tmp_path))
    with ProcessExecutor(1) as pool:
        assert list(pool.imap_unordered(_cache_variable, [0])) == [str(tmp_path)]
    monkeypatch.delenv("RISINGBANDITS_CACHE_DIR")
    with ProcessExecutor(1) as pool:
        assert list(pool.imap_unordered(_cache_variable, [0])) == [None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_a_lost_scheduler_is_named_as_such_in_one_line(tmp_path: Path) -> None:
    """Killing the external Dask scheduler mid-sweep ends the sweep with one line saying the
    scheduler was lost (it used to print two tracebacks, or "cannot write in <TCP (closed)
    ...>: make room", as if the disk were full); the parts written stay."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    scheduler = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            address.rsplit(":", 1)[1],
            "--no-dashboard",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            address,
            "--nthreads",
            "1",
            "--no-dashboard",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    spec = tmp_path / "spec.toml"
    spec.write_text(LONG_SPEC)
    out = tmp_path / "out"
    try:
        sweep = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from risingbandits.cli import main; main()",
                "sweep",
                "run",
                str(spec),
                "--out",
                str(out),
                "--scheduler",
                address,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while not list(out.glob("parts/*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert list(out.glob("parts/*.parquet")), "no part was written"
        scheduler.kill()
        _, err = sweep.communicate(timeout=120)
    finally:
        for proc in (scheduler, worker):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert sweep.returncode == 1
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()[-1:]
    assert line.startswith(f"error: the Dask scheduler {address} was lost (")
    assert "cells done; resume with `risingbandits sweep resume" in line
    assert "make room" not in err
    assert Store(out).status().cells_done > 0


HALF_SENT = """
import struct, time
from risingbandits.experiments.executors import ProcessExecutor

def wait_forever(_: int) -> None:
    time.sleep(600)

if __name__ == "__main__":
    try:
        with ProcessExecutor(1) as ex:
            ex._pool.submit(wait_forever, 0)  # a worker and the pool's manager thread start
            time.sleep(1.0)
            # what a worker ended in the middle of sending a result leaves: a header
            # announcing 1 MB and the first bytes of it
            ex._pool._result_queue._writer._send(struct.pack("!i", 1_000_000) + b"x" * 10)
            time.sleep(1.0)  # the pool's manager thread now waits for the rest
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        print("stopped")
"""


def test_a_result_cut_short_by_a_stopped_worker_does_not_hang_the_stop(tmp_path: Path) -> None:
    """A worker ended while sending a result leaves part of a message in the result pipe; the
    pool's manager thread waits for the rest. Leaving the executor on an exception (SIGTERM,
    Ctrl-C) must still end in seconds: it hung for good before (one CI run in many)."""
    script = tmp_path / "half_sent.py"
    script.write_text(HALF_SENT)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0 and done.stdout.strip() == "stopped", done.stderr
