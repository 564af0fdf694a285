"""Looking at processes through Linux ``/proc`` in the lifetime tests: a process is its pid and
start time, so that a reused pid never counts as the same process."""

from __future__ import annotations

import os
import time
from pathlib import Path

Process = tuple[int, str]


def _stat(pid: int) -> list[str] | None:
    """Fields 3.. of ``/proc/<pid>/stat`` (state, ppid, ..., start time at index 19)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def identity(pid: int) -> Process:
    fields = _stat(pid)
    return pid, fields[19] if fields else ""


def running(process: Process) -> bool:
    """The same process is still there and not a zombie."""
    fields = _stat(process[0])
    return fields is not None and fields[19] == process[1] and fields[0] not in ("Z", "X")


def descendants(pid: int) -> set[Process]:
    """Every descendant of ``pid`` now."""
    children: dict[int, list[Process]] = {}
    for name in os.listdir("/proc"):
        fields = _stat(int(name)) if name.isdigit() else None
        if fields:
            children.setdefault(int(fields[1]), []).append((int(name), fields[19]))
    found: set[Process] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child[0])
    return found


def all_gone(processes: set[Process], seconds: float) -> bool:
    """Whether every process in ``processes`` ends within ``seconds``."""
    deadline = time.monotonic() + seconds
    while any(running(p) for p in processes):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill_left(processes: set[Process]) -> None:
    """Clean up after a failed test: SIGKILL whatever is still running."""
    for process in processes:
        if running(process):
            os.kill(process[0], 9)
