"""Numba compilation with an on-disk cache that can never go stale.

Numba's own cache only notices edits to the file that holds a cached function, but our compiled
entry points inline policy kernels from other modules. So every cached function of this package
goes to a directory named after a hash of the package's whole source: any edit gives a new,
empty cache. Set ``RISINGBANDITS_CACHE_DIR`` to choose the parent directory, or
``RISINGBANDITS_NO_JIT_CACHE=1`` to compile in memory only. Caches of other sources that no
process has used for a week are removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

import numba
from numba.core import config as numba_config

from risingbandits.user_cache import user_cache_root

F = TypeVar("F", bound=Callable[..., Any])

_PACKAGE_DIR = Path(__file__).resolve().parent


@cache
def source_hash() -> str:
    """Hash of every Python source file of the package (16 hex digits)."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@cache
def cache_dir() -> Path | None:
    """Directory of compiled kernels for this exact source, or None when caching is off."""
    if os.environ.get("RISINGBANDITS_NO_JIT_CACHE") == "1":
        return None
    candidates = [user_cache_root(), Path(tempfile.gettempdir()) / "risingbandits-cache"]
    for parent in candidates:
        path = parent / "numba" / source_hash()
        try:
            fresh = not path.exists()
            path.mkdir(parents=True, exist_ok=True)
            probe = path / ".write-probe"
            probe.write_text("ok")
            probe.unlink()  # also marks the cache as recently used (its mtime)
        except OSError:
            continue
        if fresh:
            _prune_stale(path.parent, keep=path)
        return path
    return None


def kernels_cached() -> bool:
    """Whether compiled kernels of this source are on disk (so no long compilation is due)."""
    path = cache_dir()
    return path is not None and any(path.glob("*.nbi"))


def _prune_stale(parent: Path, keep: Path, max_age_days: float = 7.0) -> None:
    """Remove caches of other sources not touched for ``max_age_days`` (best effort)."""
    cutoff = time.time() - max_age_days * 86_400
    for old in parent.iterdir():
        try:
            if old != keep and old.is_dir() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue


@contextmanager
def _numba_cache_dir(path: Path) -> Any:
    saved = getattr(numba_config, "CACHE_DIR")  # noqa: B009 (not in numba's stubs)
    setattr(numba_config, "CACHE_DIR", str(path))  # noqa: B010
    try:
        yield
    finally:
        setattr(numba_config, "CACHE_DIR", saved)  # noqa: B010


def jit(fn: F) -> F:
    """``numba.njit`` (nogil) with the package's source-keyed disk cache."""
    path = cache_dir()
    if path is None:
        return cast(F, numba.njit(nogil=True)(fn))
    with _numba_cache_dir(path):
        return cast(F, numba.njit(nogil=True, cache=True)(fn))


def helper(fn: F) -> F:
    """``numba.njit`` for helpers of kernels, inlined into their callers at Numba-IR level.

    Inlining lets Numba drop the reference counting of the state's arrays around every call,
    which otherwise dominates a step.
    """
    return cast(F, numba.njit(nogil=True, inline="always")(fn))


def called_helper(fn: F) -> F:
    """``numba.njit`` for helpers called rarely from a hot loop (e.g. a recommendation at a
    checkpoint): compiled into their callers as a call, not inlined, which keeps the caller's
    loop simple."""
    return cast(F, numba.njit(nogil=True)(fn))


def vectorising_helper(fn: F) -> F:
    """``numba.njit`` with NumPy's error model, not inlined: no zero-division checks in its
    loops, so LLVM can vectorise them (same IEEE results). For numeric inner loops (the IMDB
    learners); inlining would compile it with its caller's error model instead."""
    return cast(F, numba.njit(nogil=True, error_model="numpy")(fn))
