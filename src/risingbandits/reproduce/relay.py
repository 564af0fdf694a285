"""Jobs on one worker pool without a gap between them: the reproduction's sweeps.

A sweep ends with its last, often longest, tasks while the other workers have nothing left to
do (the IMDB model selection's slowest policy ran 10 s alone on a 2-core machine). So each job
runs in a thread of its own and job k + 1 starts as soon as job k has handed its last task to
the pool: the workers that job k leaves idle take job k + 1's first tasks. Tasks are
deterministic, so the overlap changes when they run, not what they give; with the ``serial``
executor a task runs when it is handed over, so nothing overlaps but the writing of the last
part.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from risingbandits.experiments.executors import Executor

T = TypeVar("T")
R = TypeVar("R")


class _Handing:
    """``pool`` as one job sees it: ``handed`` is set once the job's last task went to it."""

    def __init__(self, pool: Executor, handed: threading.Event) -> None:
        self._pool, self._handed = pool, handed

    def __enter__(self) -> _Handing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        return self._pool.imap_unordered(fn, _then(items, self._handed.set))


def _then(items: Iterable[T], done: Callable[[], None]) -> Iterator[T]:
    yield from items
    done()


def relay(jobs: Sequence[Callable[[Executor], T]], pool: Executor) -> list[T]:
    """``job(pool)`` for every job, in order, job k + 1 starting once job k has handed all its
    tasks to ``pool`` (or returned); the results in order. A failed job's error is raised when
    the jobs before it are done; no job starts after a failure (jobs already started stop
    when the caller closes the pool)."""
    handed = [threading.Event() for _ in jobs]
    failed = threading.Event()
    out: list[tuple[T | None, BaseException | None]] = [(None, None)] * len(jobs)

    def run(k: int) -> None:
        try:
            if k > 0:
                handed[k - 1].wait()
            if not failed.is_set():
                out[k] = (jobs[k](_Handing(pool, handed[k])), None)
        except BaseException as exc:  # raised in the caller's thread, in order
            failed.set()
            out[k] = (None, exc)
        finally:
            handed[k].set()

    threads = [
        threading.Thread(target=run, args=(k,), name=f"risingbandits-job-{k}", daemon=True)
        for k in range(len(jobs))
    ]
    for thread in threads:
        thread.start()
    results: list[T] = []
    for k, thread in enumerate(threads):
        thread.join()
        value, error = out[k]
        if error is not None:
            raise error  # a job that did not start comes after the one that failed
        results.append(value)  # type: ignore[arg-type]  # set: the job ran
    return results
