"""The memory a mean table needs, checked before it is allocated.

A K x T table of float64 takes 8 K T bytes; a constructor holds about :data:`PEAK_COPIES`
tables' worth at once (the pull numbers, the raw table, the validated read-only copy). A table
whose peak would exceed the memory available (``MemAvailable`` of ``/proc/meminfo``, else the
physical memory; less under a cgroup's memory limit or a ``ulimit -v``) is refused with one
line that says how much it would take, instead of a ``MemoryError`` or the kernel's
out-of-memory killer.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")
"""Where a cgroup v2 memory limit (``memory.max``) and use (``memory.stat``) are read."""

BYTES_PER_MEAN = 8
PEAK_COPIES = 3


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (None when the system does not say): the
    system's, or less where this process is limited (:func:`limits_left`)."""
    known = [n for n in (_system_memory(), *limits_left()) if n is not None]
    return min(known) if known else None


def _system_memory() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def limits_left() -> tuple[int | None, int | None]:
    """What is left under this process's cgroup memory limit (``memory.max`` minus the anonymous
    memory of ``memory.stat``: a container's ``MemAvailable`` is the host's, and its page cache,
    counted in ``memory.current``, can be reclaimed) and under its address-space limit
    (``ulimit -v`` minus ``VmSize``); None where there is no limit or it cannot be read."""
    cgroup = None
    try:
        limit = (CGROUP / "memory.max").read_text().strip()
        if limit != "max":
            stat = (CGROUP / "memory.stat").read_text().splitlines()
            anon = next(int(line.split()[1]) for line in stat if line.startswith("anon "))
            cgroup = max(0, int(limit) - anon)
    except (OSError, ValueError, IndexError, StopIteration):
        pass
    address = None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        try:
            status = Path("/proc/self/status").read_text().splitlines()
            vm = next(line for line in status if line.startswith("VmSize:"))
            size = int(vm.split()[1]) * 1024
            address = max(0, soft - size)
        except (OSError, ValueError, IndexError, StopIteration):
            address = soft
    return cgroup, address


def bytes_text(n: float) -> str:
    """``16.0 TB`` (decimal units)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def short_of(need: int) -> int | None:
    """The memory available when ``need`` bytes exceed it (the callers' refusals say both);
    None when they fit or the system does not say."""
    available = available_memory()
    return available if available is not None and need > available else None


def check_table_size(n_arms: int, horizon: int, what: str = "horizon T") -> None:
    """Refuse a ``n_arms`` x ``horizon`` mean table that does not fit in memory."""
    table = int(n_arms) * int(horizon) * BYTES_PER_MEAN
    available = short_of(table * PEAK_COPIES)
    if available is not None:
        raise ValueError(
            f"{what}={int(horizon):,} is not allowed: a {n_arms} x {int(horizon):,} mean table "
            f"takes {bytes_text(table)} (about {bytes_text(table * PEAK_COPIES)} while it is "
            f"built) and {bytes_text(available)} of memory is available"
        )
