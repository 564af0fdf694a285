"""Sweeps in relay: job k + 1 starts once job k has handed every task to the pool, results come
back in order, and a failure stops the jobs that have not started."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from risingbandits.experiments.executors import Executor, ProcessExecutor, SerialExecutor
from risingbandits.reproduce.relay import relay


class Log:
    def __init__(self) -> None:
        self.events: list[str] = []
        self.lock = threading.Lock()

    def add(self, event: str) -> None:
        with self.lock:
            self.events.append(event)


def job(log: Log, name: str, tasks: list[float]) -> Callable[[Executor], str]:
    def run(pool: Executor) -> str:
        log.add(f"{name} starts")
        done = list(pool.imap_unordered(time.sleep, tasks))
        log.add(f"{name} ends")
        return f"{name}: {len(done)} tasks"

    return run


def test_the_next_job_starts_while_the_last_tasks_of_the_one_before_run() -> None:
    log = Log()
    with ProcessExecutor(2) as pool:
        # a: two short tasks, then one long one that keeps a worker busy alone
        results = relay([job(log, "a", [0.0, 0.0, 1.5]), job(log, "b", [0.0])], pool)
    assert results == ["a: 3 tasks", "b: 1 tasks"]
    assert log.events.index("b starts") < log.events.index("a ends")  # b filled the idle worker
    assert log.events.index("b ends") < log.events.index("a ends")


def test_with_the_serial_executor_jobs_run_one_after_another() -> None:
    log = Log()
    with SerialExecutor() as pool:
        relay([job(log, "a", [0.0, 0.0]), job(log, "b", [0.0]), job(log, "c", [])], pool)
    assert log.events == ["a starts", "a ends", "b starts", "b ends", "c starts", "c ends"]


def test_a_failed_job_raises_in_order_and_later_jobs_never_start() -> None:
    log = Log()

    def broken(pool: Executor) -> Any:
        log.add("broken starts")
        raise OSError("disk full")

    with SerialExecutor() as pool, pytest.raises(OSError, match="disk full"):
        relay([job(log, "a", [0.0]), broken, job(log, "c", [0.0])], pool)
    assert log.events == ["a starts", "a ends", "broken starts"]


def test_a_job_without_tasks_lets_the_next_one_start() -> None:
    log = Log()
    with ProcessExecutor(1) as pool:
        results = relay([job(log, "empty", []), job(log, "b", [0.0])], pool)
    assert results == ["empty: 0 tasks", "b: 1 tasks"]
