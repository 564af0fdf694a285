"""``_jit``: ``borrow`` (arrays without an owner, so the step loop does no reference counting),
loops compiled without Numba's runtime beside helpers that keep it,
the disk cache's entries saved under a lock, and a kernel compiled by one process at a time.

That the simulator, which borrows its state, makes the online object's choices for every policy
is ``test_conformance.test_online_equals_compiled``."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import numba
import numpy as np
import pytest
from numba import types
from numba.core import cgutils
from numba.core.caching import IndexDataCacheFile
from numba.extending import intrinsic

from risingbandits import _jit
from risingbandits._jit import borrow


class Inner(NamedTuple):
    counts: np.ndarray
    scale: float


class State(NamedTuple):
    inner: Inner
    sums: np.ndarray
    flag: bool


@intrinsic
def _meminfo_is_null(typingctx: Any, array: types.Type) -> Any:
    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        meminfo = context.make_array(sig.args[0])(context, builder, value=args[0]).meminfo
        return cgutils.is_null(builder, meminfo)

    return types.boolean(array), codegen


@numba.njit
def _owners(state: State) -> tuple[bool, bool, bool, bool]:
    return (
        _meminfo_is_null(state.inner.counts),
        _meminfo_is_null(state.sums),
        _meminfo_is_null(borrow(state).inner.counts),
        _meminfo_is_null(borrow(state).sums),
    )


@numba.njit
def _work(state: State, n: int) -> float:
    for t in range(n):
        state.inner.counts[t % 3] += 1
        state.sums[t % 3] += state.inner.scale
    return state.sums.sum() if state.flag else -1.0


@numba.njit
def _borrowing_entry(state: State, n: int) -> float:
    return _work(borrow(state), n)


def _state() -> State:
    return State(Inner(np.zeros(3, np.int64), 0.5), np.zeros(3), True)


def test_borrowed_arrays_have_no_owner_and_owned_ones_do() -> None:
    assert _owners(_state()) == (False, False, True, True)


def test_writes_through_borrowed_arrays_reach_the_callers_arrays() -> None:
    state = _state()
    assert _borrowing_entry(state, 7) == 3.5
    np.testing.assert_array_equal(state.inner.counts, [3, 2, 2])
    np.testing.assert_array_equal(state.sums, [1.5, 1.0, 1.0])


def _save_entries(args: tuple[str, int, float]) -> None:
    folder, worker, start = args  # (this module imports risingbandits._jit: the lock is on)
    cache = IndexDataCacheFile(folder, "kernel", source_stamp="stamp")
    while time.time() < start:  # both workers save at the same time
        pass
    for k in range(ENTRIES):
        cache.save(f"w{worker}-k{k}", b"x" * 1000)


ENTRIES = 200  # without the lock, about 45% of the 400 entries were lost (2-core VM)


def test_workers_saving_cache_entries_at_once_lose_none(tmp_path: Path) -> None:
    """Numba's index update (read, add, write) runs under a lock: 2 processes saving 200
    entries each at the same time leave all 400 in the index, each with its own data file."""
    start = time.time() + 1.5  # after both workers have started
    with multiprocessing.get_context("forkserver").Pool(2) as pool:
        pool.map(_save_entries, [(str(tmp_path), w, start) for w in (0, 1)], chunksize=1)
    index = IndexDataCacheFile(str(tmp_path), "kernel", source_stamp="stamp")._load_index()
    assert sorted(index) == sorted(f"w{w}-k{k}" for w in (0, 1) for k in range(ENTRIES))
    assert len(set(index.values())) == 2 * ENTRIES


KERNEL_MODULE = """
from risingbandits._jit import jit


@jit
def kernel(x):
    total = 0.0
    for i in range(100):
        total += x * i
    return total
"""

COMPILE_AT = """
import sys, time
sys.path.insert(0, sys.argv[1])
import kernel_module
time.sleep(max(0.0, float(sys.argv[2]) - time.time()))
kernel_module.kernel(1.0)
stats = kernel_module.kernel.stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
"""


def test_a_kernel_is_compiled_by_one_process_and_loaded_by_the_other(tmp_path: Path) -> None:
    """Two processes asking for the same kernel at the same moment: one compiles it, the other
    waits and loads it from the disk cache (without the lock both compiled it)."""
    (tmp_path / "kernel_module.py").write_text(KERNEL_MODULE)
    env = {**os.environ, "RISINGBANDITS_CACHE_DIR": str(tmp_path / "cache")}
    start = time.time() + 4.0  # after both have imported numba
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COMPILE_AT, str(tmp_path), str(start)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert outputs == ["0 1", "1 0"]  # (hits, misses): one compiled, one loaded


def test_another_processes_probe_does_not_send_a_worker_to_another_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each process probes the cache directory with a file of its own: a probe of another
    process there (workers start together) leaves this one in the same directory. With one
    shared probe name a worker could delete the other's probe, fall back to the temporary
    directory and compile every kernel again (seen in 1 of 3 runs of three sweeps)."""
    monkeypatch.setenv("RISINGBANDITS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RISINGBANDITS_NO_JIT_CACHE", raising=False)
    expected = tmp_path / "numba" / _jit.source_hash()
    expected.mkdir(parents=True)
    (expected / ".write-probe").mkdir()  # another process's probe, under the old shared name
    (expected / f".write-probe-{os.getpid() + 1}").write_text("ok")
    _jit.cache_dir.cache_clear()
    try:
        assert _jit.cache_dir() == expected
    finally:
        _jit.cache_dir.cache_clear()
    assert sorted(p.name for p in expected.iterdir()) == [
        ".write-probe",
        f".write-probe-{os.getpid() + 1}",
    ]  # its own probe removed, the others' left alone


def test_a_selectors_first_compilation_is_announced_once(tmp_path: Path) -> None:
    """An online run that compiles says so in one line (a first ``ModelSelector`` run used to
    pause for seconds without a word), at its first select, not when it is built (a selector
    built only to read its settings compiles nothing); a later process that loads the kernels
    says nothing."""
    code = (
        "import sys\n"
        "from risingbandits.modelselect import ModelSelector\n"
        "for seed in (0, 1):\n"
        "    sel = ModelSelector(3, budget=10, policy='ucb1', seed=seed)\n"
        "    print('built', file=sys.stderr, flush=True)\n"
        "    while not sel.done:\n"
        "        arm = sel.select(); sel.update(arm, 0.5)\n"
    )
    env = {**os.environ, "RISINGBANDITS_CACHE_DIR": str(tmp_path)}
    env.pop("RISINGBANDITS_NOTICES_SHOWN", None)
    env.pop("RISINGBANDITS_NO_JIT_CACHE", None)
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    assert runs[0].stderr == f"built\nrisingbandits: {_jit.COMPILING}\nbuilt\n"
    assert runs[1].stderr == "built\nbuilt\n"


def _allocating_total(n: int) -> float:
    return float(np.ones(n).sum())


def _no_runtime_loop(n: int) -> float:
    total = 0.0
    for k in range(1, n + 1):
        total += ALLOCATING(k)
    return total


ALLOCATING = _jit.called_helper(_allocating_total)
NO_RUNTIME = _jit.runtime_free(_no_runtime_loop)


def test_a_called_helper_keeps_numbas_runtime_when_first_called_from_a_runtime_free_loop() -> None:
    # Numba compiles a callee with its first caller's flags unless the callee sets them: a
    # called helper that allocates would then fail to compile inside a runtime-free loop
    # ("NRT required but not enabled"), or compile, by the order of the calls.
    assert NO_RUNTIME(4) == 1.0 + 2.0 + 3.0 + 4.0
    assert ALLOCATING(3) == 3.0


def test_a_runtime_free_loop_refuses_to_allocate() -> None:
    def allocates(n: int) -> float:
        return float(np.zeros(n).sum())

    with pytest.raises(numba.core.errors.TypingError, match="zeros"):
        _jit.runtime_free(allocates)(3)
