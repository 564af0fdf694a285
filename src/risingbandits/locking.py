"""One writer at a time: an exclusive lock file that names the process holding it.

:func:`exclusive` takes ``flock`` on a lock file without waiting. The kernel releases the lock
when its holder exits in any way (SIGKILL included), so no stale lock outlives a run. The holder
writes its pid, host and start time into the file, so that a process refused can say which run
is in the way. The file is removed when the holder is done; a process that opened it just
before is not fooled: it only counts a lock on the file that is still at the path. A file at
the path that no holder wrote (neither empty nor naming one) is the user's: it is refused, never
replaced or removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover (not POSIX: no lock)
    fcntl = None  # type: ignore[assignment]

HOLDER_BYTES = 1024
"""At most this much of a lock file is read to name its holder (anyone may have written it)."""
ATTEMPTS = 10
"""Tries when the lock file is replaced between opening and locking it (its holder finished)."""


class Busy(ValueError):
    """Another process holds the lock (the message names it: pid, host, start)."""


def _holder(fd: int) -> str | None:
    """``pid 123 on host 'box', started ...`` from the lock file, checked field by field;
    None when it says nothing usable (anyone may have written it)."""
    try:
        data = json.loads(os.pread(fd, HOLDER_BYTES, 0))
        pid, host, started = data["pid"], data["host"], data["started"]
        if not (type(pid) is int and pid > 0 and isinstance(host, str) and len(host) <= 255):
            raise ValueError("not a holder")
        when = datetime.fromisoformat(started).strftime("%Y-%m-%d %H:%M:%S %Z")
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return None
    return f"pid {pid} on host {host!r}, started {when}"


def _holder_text(fd: int) -> str:
    """The holder named by the lock file (only read for this message), or ``another
    process``."""
    return _holder(fd) or "another process"


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (its holder may have removed it)."""
    try:
        there = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    here = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _lock_or_busy(path: Path, what: str, advice: str) -> int | None:
    """A descriptor of ``path`` holding its lock, or None when the file was removed while it
    was being locked (try again); :class:`Busy` when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder_text(fd)
        os.close(fd)
        raise Busy(f"{what} is in use by {holder}: {advice}") from None
    if _same_file(fd, path):
        return fd
    os.close(fd)
    return None


@contextlib.contextmanager
def exclusive(path: str | Path, what: str, advice: str) -> Iterator[None]:
    """Hold the lock file ``path`` for the scope, or raise :class:`Busy` at once: ``{what} is
    in use by pid 123 on host 'box', started ...: {advice}``."""
    lock_path = Path(path)
    if fcntl is None:  # pragma: no cover
        yield
        return
    for _ in range(ATTEMPTS):
        fd = _lock_or_busy(lock_path, what, advice)
        if fd is not None:
            break
    else:
        raise Busy(f"{what} is in use: its lock file {str(lock_path)!r} keeps being replaced")
    if os.fstat(fd).st_size and _holder(fd) is None:  # a file of the user's, not a lock file
        os.close(fd)
        raise ValueError(
            f"{what} cannot be used: {str(lock_path)!r}, where its lock file goes, is a file "
            "that no run wrote: move it away, or give another file"
        )
    try:
        started = datetime.now(UTC).isoformat(timespec="seconds")
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": started}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode(), 0)
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock_path)  # still holding the lock: nobody counts this file any more
        os.close(fd)
