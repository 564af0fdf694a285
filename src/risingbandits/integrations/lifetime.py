"""Processes started inside a scope never outlive it, also when its owner is killed with SIGKILL.

:class:`ProcessGuard` starts a guardian: this file run as a script (standard library only, so
it starts in milliseconds without importing the package), in a session of its own so that a
terminal's Ctrl-C or a kill of the owner's process group does not reach it. The owner keeps the
write end of a pipe to the guardian's standard input; the pipe closes when the scope ends or
when the owner dies in any way, SIGKILL included, and the guardian then ends everything the
scope started:

* the process groups registered with :meth:`ProcessGuard.add_group` (commands started in a
  session of their own, with everything they started in turn);
* on Linux, every descendant of the owner seen while the scope was open (``/proc`` read every
  ``poll_seconds``, and at once on :meth:`ProcessGuard.scan`) and every descendant of those
  still alive at the end, each identified by its pid and start time so that a reused pid is
  never hit. Children that existed before the scope opened are left alone;
* on Linux, every process whose environment carries the scope's random token: the owner puts
  it in ``os.environ`` (variable ``RISINGBANDITS_SCOPES``) for the scope, so whatever starts
  inside inherits it. This finds a process that lost its parent before the guardian saw it (a
  Ray worker started in the last poll interval whose raylet dies with the driver; a CI run
  saw one outlive the driver by 15 s). A process that clears its environment is still found
  through the tree.

Each gets SIGTERM, and SIGKILL if it is still there ``grace_seconds`` later; then the guardian
removes the folders given to :meth:`ProcessGuard.remove_at_end` (a Ray instance's files). Why a
guardian: Ray's own fate sharing (``prctl(PR_SET_PDEATHSIG)`` on the processes ``ray.init()``
starts) leaves its dashboard and runtime-env agents running for a minute or more after the
driver is killed (Ray 2.60 on Linux, measured here), and a shell command's grandchildren never
get a parent-death signal.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import time
from types import TracebackType

POLL_SECONDS = 0.2
GRACE_SECONDS = 3.0
WAIT_MARGIN_SECONDS = 5.0
TOKENS = "RISINGBANDITS_SCOPES"  # comma-separated tokens of the open scopes


class ProcessGuard:
    """Context manager: what starts inside ends with the scope or with its owner's death."""

    def __init__(self, poll_seconds: float = POLL_SECONDS, grace_seconds: float = GRACE_SECONDS):
        self.poll_seconds = poll_seconds
        self.grace_seconds = grace_seconds
        self._guardian: subprocess.Popen[bytes] | None = None
        self._tokens_before: str | None = None

    def __enter__(self) -> ProcessGuard:
        token = secrets.token_hex(16)
        argv = [sys.executable, "-I", os.path.abspath(__file__), str(os.getpid()), token]
        self._guardian = subprocess.Popen(
            [*argv, str(self.poll_seconds), str(self.grace_seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert self._guardian.stdout is not None
        self._guardian.stdout.readline()  # the guardian has recorded the children left alone
        self._tokens_before = os.environ.get(TOKENS)
        os.environ[TOKENS] = ",".join(filter(None, [self._tokens_before, token]))
        return self

    def add_group(self, pgid: int) -> None:
        """End process group ``pgid`` with the scope (call right after starting its leader)."""
        self._send(f"+{pgid}")

    def scan(self) -> None:
        """Make the guardian record the owner's descendants now (returns once it has): what
        was started before this call ends with the scope even if the owner is killed at once."""
        self._send("?")
        assert self._guardian is not None and self._guardian.stdout is not None
        self._guardian.stdout.readline()

    def remove_at_end(self, folder: str | os.PathLike[str]) -> None:
        """Remove ``folder`` (a private one of the scope's, without newlines in its path) once
        everything the scope started has ended: also when the owner is killed."""
        path = os.path.abspath(folder)
        if "\n" in path:
            raise ValueError(f"folder={path!r} is not allowed: a path without newlines")
        self._send(f"r{path}")

    def remove_group(self, pgid: int) -> None:
        """Forget group ``pgid`` (its processes have ended), so a reused id is never hit."""
        self._send(f"-{pgid}")

    def _send(self, line: str) -> None:
        if self._guardian is None or self._guardian.stdin is None:
            raise RuntimeError("ProcessGuard is not open: use it as a context manager")
        self._guardian.stdin.write(f"{line}\n".encode())
        self._guardian.stdin.flush()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        guardian, self._guardian = self._guardian, None
        if guardian is None:
            return
        if self._tokens_before is None:
            os.environ.pop(TOKENS, None)
        else:
            os.environ[TOKENS] = self._tokens_before
        assert guardian.stdin is not None and guardian.stdout is not None
        guardian.stdin.close()  # the guardian ends what is left, then exits
        guardian.wait(timeout=self.grace_seconds + WAIT_MARGIN_SECONDS)
        guardian.stdout.close()


# -- the guardian (runs as a script) ---------------------------------------------------------

Identity = tuple[int, str]  # pid and start time (clock ticks after boot)


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) for every process in ``/proc`` (empty without it)."""
    found: dict[int, tuple[int, str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rfind(")") + 2 :].split()
        found[int(name)] = (int(fields[1]), fields[19])
    return found


def _descendants(roots: set[int], table: dict[int, tuple[int, str]]) -> set[Identity]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[Identity] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            identity = (child, table[child][1])
            if identity not in found:
                found.add(identity)
                todo.append(child)
    return found


def _marked(token: str, table: dict[int, tuple[int, str]]) -> set[Identity]:
    """The processes in ``table`` whose environment lists ``token`` in ``RISINGBANDITS_SCOPES``
    (another user's processes cannot be read, and are skipped)."""
    prefix = f"{TOKENS}=".encode()
    found: set[Identity] = set()
    for pid, (_, start) in table.items():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                entries = f.read().split(b"\0")
        except OSError:
            continue
        for entry in entries:
            if entry.startswith(prefix) and token.encode() in entry[len(prefix) :].split(b","):
                found.add((pid, start))
    return found


def _alive(identities: set[Identity], table: dict[int, tuple[int, str]]) -> set[Identity]:
    return {(pid, start) for pid, start in identities if table.get(pid, (0, ""))[1] == start}


def _signal(identities: set[Identity], groups: set[int], signum: int) -> None:
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)
    for pid, _ in identities:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _end_all(
    tracked: set[Identity], groups: set[int], token: str, exempt: set[int], grace: float
) -> None:
    """SIGTERM to the tracked processes, their descendants, the processes marked with
    ``token`` (but not the pids in ``exempt``) and the groups, SIGKILL to what is left after
    ``grace``. All are looked up again while waiting: a process that starts a child as it is
    told to stop (Ray's raylet starting a worker) would otherwise leave that child, orphaned,
    to outlive the scope."""
    deadline = time.monotonic() + grace
    live: set[Identity] = set()
    told: set[Identity] = set()
    while True:
        table = _processes()
        live = _alive(tracked | live, table) | _marked(token, table)
        live |= _descendants({pid for pid, _ in live}, table)
        live = {(pid, start) for pid, start in live if pid not in exempt}
        groups = {g for g in groups if _group_alive(g)}
        if not live and not groups:
            return
        if time.monotonic() >= deadline:
            break
        _signal(live - told, groups if not told else set(), signal.SIGTERM)
        told |= live
        time.sleep(0.05)
    _signal(live, groups, signal.SIGKILL)


def _owned(owner: Identity, table: dict[int, tuple[int, str]]) -> set[Identity]:
    """The owner's descendants, none if the owner is gone (its pid may have been reused)."""
    pid, start = owner
    return _descendants({pid}, table) if table.get(pid, (0, ""))[1] == start else set()


def _apply(buffer: bytes, groups: set[int], folders: list[bytes]) -> tuple[bytes, bool]:
    """Apply the complete ``+pgid`` / ``-pgid`` / ``rFOLDER`` lines in ``buffer``; returns the
    rest and whether a ``?`` line asked for a scan."""
    *lines, rest = buffer.split(b"\n")
    scan = False
    for line in lines:
        if line == b"?":
            scan = True
        elif line.startswith(b"r"):
            folders.append(line[1:])
        elif line.startswith(b"+"):
            groups.add(int(line[1:]))
        else:
            groups.discard(int(line[1:]))
    return rest, scan


def guard(owner_pid: int, token: str, poll: float, grace: float) -> None:
    """Watch the owner's new descendants until standard input closes, then end them and every
    process marked with ``token``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    me = os.getpid()
    table = _processes()
    owner = (owner_pid, table.get(owner_pid, (0, ""))[1])
    spared = _owned(owner, table)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    tracked: set[Identity] = set()
    groups: set[int] = set()
    folders: list[bytes] = []
    fd = sys.stdin.fileno()
    pending = b""
    next_scan = time.monotonic()
    scan_now = False
    while True:
        if scan_now or time.monotonic() >= next_scan:  # the dead are dropped: pids get reused
            table = _processes()
            tracked = _alive(tracked, table) | (_owned(owner, table) - spared)
            next_scan = time.monotonic() + poll
            if scan_now:
                sys.stdout.write("scanned\n")
                sys.stdout.flush()
        scan_now = False
        ready, _, _ = select.select([fd], [], [], max(0.0, next_scan - time.monotonic()))
        if ready:
            data = os.read(fd, 4096)
            if not data:
                break
            pending, scan_now = _apply(pending + data, groups, folders)
    tracked |= _owned(owner, _processes()) - spared
    _end_all(tracked, groups, token, {me, owner_pid}, grace)
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    guard(int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
