"""Work handed to the reproduction's worker pool while the report is being built.

The report is single-threaded and runs in the main process once the sweeps are done, when the
pool's workers are idle. Three kinds of work go to them meanwhile: the theory checks (when they
are not kept), reading every store's rows (each part read and checked once,
:func:`risingbandits.reproduce.data.read_rows`) in the order the report needs them, and
drawing the figures (:func:`figures_on`: 10-12 s of the report's 35-40 s at full size). A
thread of the main process waits on the pool for each job; it ends when the pool is closed, so
nothing outlives the reproduction.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from operator import methodcaller
from pathlib import Path
from typing import Generic, TypeVar

from matplotlib.figure import Figure

from risingbandits.experiments.executors import Executor
from risingbandits.outputs import atomic_write
from risingbandits.plots.common import drawn_elsewhere, png_bytes

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


@contextmanager
def figures_on(pool: Executor) -> Iterator[None]:
    """In this block, every figure :func:`risingbandits.plots.common.save` is given is pickled
    and drawn on a worker of ``pool``; the PNGs come back and are written here when the block
    ends (so a remote worker needs no access to the output folder). A PNG drawn there is the
    same file, byte for byte, as one drawn here."""
    drawing: dict[Path, InBackground[Path, bytes]] = {}

    def hand_over(fig: Figure, path: Path, dpi: int) -> None:
        drawing[path] = InBackground(pool, partial(_draw, pickle.dumps(fig), dpi), [path])

    with drawn_elsewhere(hand_over):
        yield
    for path, job in drawing.items():
        png = job.get(path)
        atomic_write(path, methodcaller("write", png))


def _draw(blob: bytes, dpi: int, path: Path) -> bytes:  # runs on a worker
    return png_bytes(pickle.loads(blob), dpi)
