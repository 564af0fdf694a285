"""``_jit``: ``borrow`` (arrays without an owner, so the step loop does no reference counting)
and the disk cache's entries saved under a lock.

That the simulator, which borrows its state, makes the online object's choices for every policy
is ``test_conformance.test_online_equals_compiled``."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path
from typing import Any, NamedTuple

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.caching import IndexDataCacheFile
from numba.extending import intrinsic

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
