"""The memory a mean table needs, checked before it is allocated.

A K x T table of float64 takes 8 K T bytes; a constructor holds about :data:`PEAK_COPIES`
tables' worth at once (the pull numbers, the raw table, the validated read-only copy). A table
whose peak would exceed the memory available (``MemAvailable`` of ``/proc/meminfo``, else the
physical memory) is refused with one line that says how much it would take, instead of a
``MemoryError`` or the kernel's out-of-memory killer.
"""

from __future__ import annotations

import os
from pathlib import Path

BYTES_PER_MEAN = 8
PEAK_COPIES = 3


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (None when the system does not say)."""
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


def bytes_text(n: float) -> str:
    """``16.0 TB`` (decimal units)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def check_table_size(n_arms: int, horizon: int, what: str = "horizon T") -> None:
    """Refuse a ``n_arms`` x ``horizon`` mean table that does not fit in memory."""
    table = int(n_arms) * int(horizon) * BYTES_PER_MEAN
    available = available_memory()
    if available is not None and table * PEAK_COPIES > available:
        raise ValueError(
            f"{what}={int(horizon):,} is not allowed: a {n_arms} x {int(horizon):,} mean table "
            f"takes {bytes_text(table)} (about {bytes_text(table * PEAK_COPIES)} while it is "
            f"built) and {bytes_text(available)} of memory is available"
        )
