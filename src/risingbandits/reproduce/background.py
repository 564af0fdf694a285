"""Work handed to the reproduction's worker pool while the report is being built.

Once the sweeps are done the pool's workers are idle and the report, which is single-threaded,
runs in the main process. Two jobs go to the workers meanwhile: the theory checks (when they are
not kept) and reading every store's rows (each part read and checked once,
:func:`risingbandits.reproduce.data.read_rows`), in the order the report needs them. A thread
of the main process waits on the pool; it ends when the pool is closed, so nothing outlives the
reproduction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from functools import partial
from typing import Generic, TypeVar

from risingbandits.experiments.executors import Executor

T = TypeVar("T", bound=Hashable)
R = TypeVar("R")


class InBackground(Generic[T, R]):
    """``fn(x)`` for every ``x`` of ``items`` on the workers of ``pool`` (in that order, as
    workers free up) while the caller goes on; :meth:`get` waits for one result and raises what
    its call raised (or what stopped the pool)."""

    def __init__(self, pool: Executor, fn: Callable[[T], R], items: Iterable[T]) -> None:
        self._items = list(items)
        self._ready = {x: threading.Event() for x in self._items}
        self._out: dict[T, tuple[R | None, BaseException | None]] = {}
        self._thread = threading.Thread(
            target=self._run, args=(pool, fn), name="risingbandits-background", daemon=True
        )
        self._thread.start()

    def _run(self, pool: Executor, fn: Callable[[T], R]) -> None:
        try:
            for x, value, error in pool.imap_unordered(partial(_keyed, fn), self._items):
                self._settle(x, value, error)
        except BaseException as exc:  # the pool failed or was closed: every waiter hears it
            for x in self._items:
                if x not in self._out:
                    self._settle(x, None, exc)

    def _settle(self, x: T, value: R | None, error: BaseException | None) -> None:
        self._out[x] = (value, error)
        self._ready[x].set()

    def __contains__(self, x: object) -> bool:
        return x in self._ready

    def get(self, x: T) -> R:
        """The result of ``fn(x)`` (waits for it)."""
        self._ready[x].wait()
        value, error = self._out[x]
        if error is not None:
            raise error
        return value  # type: ignore[return-value]  # None only with an error


def _keyed(fn: Callable[[T], R], x: T) -> tuple[T, R | None, Exception | None]:  # runs on a worker
    try:
        return x, fn(x), None
    except Exception as exc:  # sent back to the one that asks for x
        return x, None, exc
