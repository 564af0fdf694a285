"""Worker processes that end when the process that started them is gone.

The process pool starts its workers through a forkserver, so a worker's parent is the
forkserver, not the sweep's process, and a parent-death signal (``prctl(PR_SET_PDEATHSIG)``) on
the worker would wait for the forkserver, which in turn lives as long as any worker holds its
pipe. So each worker runs a daemon thread (:func:`watch_owner`, the pool's initializer) that
looks every :data:`POLL_SECONDS` at the process that started the pool and ends the worker with
``os._exit`` once that process is gone: no such pid, a zombie, or (Linux) a pid reused by a
process with another start time (``/proc/<pid>/stat``, field 22). The compiled loops release
the GIL, so the thread runs while a task computes. With the workers gone, the forkserver and
multiprocessing's resource tracker see their pipes close and exit on their own.

Dask's ``LocalCluster`` needs none of this: its worker processes already exit when the pipe to
their parent closes (``distributed.process.AsyncProcess``).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

POLL_SECONDS = 0.25
EXIT_CODE = 70
"""Exit code of a worker whose owner is gone (EX_SOFTWARE; nobody reads it)."""


def _stat_fields(pid: int) -> list[str] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (after the command name), or None without /proc."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


@dataclass(frozen=True)
class ProcessIdentity:
    """A process as its pid plus its start time (None where /proc is missing)."""

    pid: int
    start: str | None

    @classmethod
    def of(cls, pid: int) -> ProcessIdentity:
        fields = _stat_fields(pid)
        return cls(pid, fields[19] if fields else None)

    @classmethod
    def current(cls) -> ProcessIdentity:
        return cls.of(os.getpid())

    def alive(self) -> bool:
        """The same process still runs (a zombie or a reused pid does not count)."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # it exists, owned by someone else
        if self.start is None:
            return True
        fields = _stat_fields(self.pid)
        return fields is not None and fields[0] not in ("Z", "X") and fields[19] == self.start


def _watch(owner: ProcessIdentity, interval: float) -> None:
    while owner.alive():
        time.sleep(interval)
    os._exit(EXIT_CODE)


def watch_owner(owner: ProcessIdentity, interval: float = POLL_SECONDS) -> None:
    """Pool initializer: end this worker once ``owner`` is gone; ignore Ctrl-C (the owner
    stops its workers itself, so a terminal's SIGINT to the whole group prints no traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_watch, args=(owner, interval), name="risingbandits-watchdog", daemon=True
    ).start()
