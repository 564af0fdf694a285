"""Where the package keeps its on-disk caches (compiled kernels, parsed LCDB tables)."""

from __future__ import annotations

import os
from pathlib import Path


def user_cache_root() -> Path:
    """``$RISINGBANDITS_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/risingbandits``.

    Read at every call, so a process (or a test) may change the variables at any time.
    """
    base = os.environ.get("RISINGBANDITS_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "risingbandits"
