"""Executors: where tasks run. Each yields results as tasks finish, in any order.

* ``serial``: in this process, one task after another;
* ``processes`` (the default): a ``concurrent.futures.ProcessPoolExecutor`` started with
  ``forkserver`` (``spawn`` where that is missing), since Numba and ``fork`` do not mix well;
  all cores by default. Its workers see the environment of the process as it is when the pool
  starts (not as it was when the forkserver started), compile kernels at LLVM -O2
  (:func:`~risingbandits._jit.use_worker_opt_level`) and end when the process that started
  them is gone (:mod:`.watchdog`); leaving the ``with`` block on an exception (Ctrl-C,
  SIGTERM, a full disk) terminates them instead of waiting for their tasks;
* ``dask``: Dask distributed, either an in-process ``LocalCluster`` whose scheduler, workers and
  dashboard bind to 127.0.0.1 only, or an existing scheduler (``address="tcp://host:8786"``).
  The local cluster speaks TLS with temporary credentials only this process holds (any local
  user can find and reach a port on 127.0.0.1: a plain one would let them run tasks as us) and
  keeps its scratch data in a private temporary folder. Dask (and ``cryptography``, for the
  TLS credentials) is optional: ``pip install risingbandits[dask]``.

At most a few tasks per worker are in flight at once, so results never pile up in memory and an
interrupted sweep loses at most the tasks that were running.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

from risingbandits._jit import use_worker_opt_level
from risingbandits.experiments.watchdog import ProcessIdentity, watch_owner
from risingbandits.extras import MissingExtra, require
from risingbandits.integrations.handlers import ignored_by_children, signals_deferred
from risingbandits.policies.machinery.checkpoint import shown
from risingbandits.user_cache import NotPrivate, check_fixed

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS = ("serial", "processes", "dask")
IN_FLIGHT_PER_WORKER = 2


class Executor(Protocol):
    """Runs ``fn`` over items; a context manager that owns its workers."""

    def __enter__(self) -> Executor: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def imap_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]: ...


def default_workers() -> int:
    """All cores."""
    return os.cpu_count() or 1


MAX_WORKERS = 1024
"""Most local worker processes (each holds its own interpreter and compiled kernels); a pool
of 10**30 failed with an OverflowError after the results directory was made."""


def _check_workers(workers: int | None) -> int:
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(
            f"workers={shown(workers)} is not allowed: use an integer from 1 to {MAX_WORKERS:,}"
        )
    return workers


class SerialExecutor:
    """Every task in this process, in order."""

    def __enter__(self) -> SerialExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        for item in items:
            yield fn(item)


def use_environment(environment: dict[str, str]) -> None:
    """Make this process's environment exactly ``environment``. A forkserver worker is forked
    from the forkserver, which keeps the environment of the moment it started (the first pool
    of the process): without this, a variable set or unset since then (the cache folder,
    ``RISINGBANDITS_CACHE_DIR``) would not reach the workers, and they would read another
    folder's cache than the process that started them (seen in the suite: a report's workers
    read a folder an earlier test had set and then unset)."""
    for name in set(os.environ) - set(environment):
        del os.environ[name]
    os.environ.update(environment)


def _start_worker(owner: ProcessIdentity, environment: dict[str, str]) -> None:
    """Initializer of a pool worker: the environment of the process that started the pool (as
    it was then), ends with ``owner``, compiles at -O2."""
    use_environment(environment)
    watch_owner(owner)
    use_worker_opt_level()


STOP_SECONDS = 5.0
"""How long a terminated worker has to end before it is killed."""


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """End ``pool``'s workers now (SIGTERM, then SIGKILL after :data:`STOP_SECONDS`) and close
    this process's write end of the pipe they send results on. A worker ended in the middle of
    sending a result (a part's rows are larger than a pipe's buffer) leaves part of a message in
    that pipe, and the pool's manager thread waits for the rest: forever while this process
    holds a write end, and ``shutdown`` waits for that thread (a sweep stopped by SIGTERM hung,
    once in 125 stops of a local loop). With the end closed and the workers gone, the read gives
    end-of-file: the pool finds itself broken and ends."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.terminate()
    for process in processes:
        process.join(STOP_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    if writer is not None:
        writer.close()


class ProcessExecutor:
    """A pool of ``workers`` local processes (forkserver or spawn start method)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = _check_workers(workers)
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> ProcessExecutor:
        methods = multiprocessing.get_all_start_methods()
        method = "forkserver" if "forkserver" in methods else "spawn"
        self._pool = ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context(method),
            initializer=_start_worker,
            initargs=(ProcessIdentity.current(), dict(os.environ)),
        )
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kind is not None:  # stop now: the running tasks' results are not wanted
            stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)

    def imap_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        pool = self._pool
        if pool is None:
            raise RuntimeError("use the executor in a `with` block")
        todo = iter(items)
        pending: set[Future[R]] = {
            pool.submit(fn, x) for x in islice(todo, self.workers * IN_FLIGHT_PER_WORKER)
        }
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                for x in islice(todo, 1):
                    pending.add(pool.submit(fn, x))
                yield future.result()


_CLIENT_LOG = logging.getLogger("distributed.client")


class SchedulerLost(RuntimeError):
    """The Dask scheduler went away during a sweep (not a problem of the results directory)."""


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise MissingExtra(
            "the dask executor needs Dask distributed: pip install risingbandits[dask]"
        ) from None
    return distributed


def _scratch_dir() -> Path:
    """A new private folder for a local cluster's scratch data: the workers spill pickles there,
    and the scheduler and the nannies (in this process) put their folders first on its
    ``sys.path``. Dask's default, ``$TMPDIR/dask-scratch-space``, has a fixed name another user
    may create first. ``tempfile.mkdtemp`` makes a folder of mode 0700 under an unpredictable
    name, so it needs no cleanup of earlier runs' folders nor a lock between concurrent sweeps,
    and lies on local disk (a home folder, where the user cache usually is, may be on NFS).
    Raises ``ValueError`` if another user could replace the folder (a temporary folder others
    may write that is not sticky)."""
    folder = Path(tempfile.mkdtemp(prefix="risingbandits-dask-")).resolve()
    try:
        check_fixed(folder)
    except NotPrivate as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ValueError(
            f"the dask executor cannot keep its scratch data in the temporary folder: {exc} "
            "(set TMPDIR to a folder of yours)"
        ) from None
    return folder


class DaskExecutor:
    """Dask distributed: a local cluster on 127.0.0.1 (TLS, private scratch folder), or the
    scheduler at ``address``."""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        self.workers = _check_workers(workers)
        self.address = address
        self._distributed = _distributed()
        if address is None:  # Security.temporary() makes its credentials with cryptography
            require("cryptography", "dask", "the dask executor's local cluster")
        self._cluster: Any = None
        self._client: Any = None
        self._quieted: int | None = None
        self._scratch: Path | None = None

    def __enter__(self) -> DaskExecutor:
        dd = self._distributed
        if self.address is None:
            self._scratch = _scratch_dir()
            # SIGTERM and SIGHUP in these seconds come once both are built (__exit__ closes
            # them); a Ctrl-C reaches the whole process group, so the cluster's processes ignore
            # it and the sweep alone stops (closing them), not each with a traceback of its own
            # (the process pool's workers ignore it too: watchdog.watch_owner). A Ctrl-C while
            # it starts is lost.
            try:
                with signals_deferred(), ignored_by_children(signal.SIGINT):
                    self._cluster = dd.LocalCluster(
                        n_workers=self.workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address="127.0.0.1:0",
                        # not ERROR: on a stop under load the workers' heartbeats to the
                        # closed scheduler logged a traceback each (29-91 lines); a task's
                        # own error reaches the sweep through its future
                        silence_logs=logging.CRITICAL,
                        security=True,
                        local_directory=str(self._scratch),  # the workers' folder
                        scheduler_kwargs={"local_directory": str(self._scratch)},
                    )
                    self._client = dd.Client(self._cluster)
            except BaseException:
                self.__exit__(None, None, None)
                raise
        else:
            try:
                self._client = dd.Client(self.address, timeout="20s")
            except OSError as exc:
                raise ValueError(
                    f"scheduler={self.address!r} cannot be reached: {exc}".splitlines()[0]
                ) from None
            except (ValueError, TypeError) as exc:  # Dask's parse of the address
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ValueError(
                    f"scheduler={self.address!r} is not allowed: {reason}; use an address such "
                    "as tcp://host:8786"
                ) from None
            # A lost scheduler is reported as SchedulerLost; the client's own log of its
            # failed reconnection (an ERROR with a traceback) would only repeat it.
            self._quieted = _CLIENT_LOG.level
            _CLIENT_LOG.setLevel(logging.CRITICAL)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._client is not None:
                self._client.close()
            if self._cluster is not None:
                self._cluster.close()
        finally:
            self._client = self._cluster = None
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None
            if self._quieted is not None:
                _CLIENT_LOG.setLevel(self._quieted)
                self._quieted = None

    @property
    def scheduler_address(self) -> str:
        """Address of the scheduler in use."""
        return str(self._client.scheduler.address)

    @property
    def dashboard_link(self) -> str | None:
        return self._client.dashboard_link if self._client is not None else None

    def imap_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        client = self._client
        if client is None:
            raise RuntimeError("use the executor in a `with` block")
        n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        todo = iter(items)
        first = [
            client.submit(fn, x, pure=False) for x in islice(todo, n_workers * IN_FLIGHT_PER_WORKER)
        ]
        finished = self._distributed.as_completed(first)
        for future in finished:
            try:
                for x in islice(todo, 1):
                    finished.add(client.submit(fn, x, pure=False))
                result = future.result()
            except Exception as exc:
                if client.status == "running" and not isinstance(exc, _lost_errors()):
                    raise
                raise SchedulerLost(
                    f"the Dask scheduler {self.address or 'of the local cluster'} was lost "
                    f"({type(exc).__name__})"
                ) from None
            future.release()
            yield result


def _lost_errors() -> tuple[type[BaseException], ...]:
    """What Dask raises for a future when its scheduler is gone."""
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    return (FutureCancelledError, CommClosedError)


def make_executor(
    kind: str | None = None, workers: int | None = None, scheduler: str | None = None
) -> Executor:
    """The executor named ``kind`` (default ``processes``, or ``dask`` when a ``scheduler``
    address is given)."""
    if kind is None:
        kind = "processes" if scheduler is None else "dask"
    if kind not in EXECUTORS:
        raise ValueError(f"executor={kind!r} is not allowed: use one of {', '.join(EXECUTORS)}")
    if scheduler is not None and kind != "dask":
        raise ValueError(
            f"executor={kind!r} with scheduler={scheduler!r} is not allowed: a scheduler "
            "address needs the dask executor"
        )
    if kind == "serial":
        return SerialExecutor()
    if kind == "processes":
        return ProcessExecutor(workers)
    return DaskExecutor(workers, scheduler)
