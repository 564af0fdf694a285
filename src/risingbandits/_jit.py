"""Numba compilation with an on-disk cache that can never go stale.

Numba's own cache only notices edits to the file that holds a cached function, but our compiled
entry points inline policy kernels from other modules. So every cached function of this package
goes to a directory named after a hash of the package's whole source: any edit gives a new,
empty cache. Set ``RISINGBANDITS_CACHE_DIR`` to choose the parent directory, or
``RISINGBANDITS_NO_JIT_CACHE=1`` to compile in memory only. Caches of other sources that no
process has used for a week are removed. Only a folder this user owns and nobody else can write
is used (:mod:`risingbandits.user_cache`): Numba loads its index files with pickle.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast

import numba
from numba.core import cgutils, types
from numba.core import config as numba_config
from numba.core.caching import IndexDataCacheFile
from numba.extending import intrinsic

from risingbandits.user_cache import (
    NotPrivate,
    notice_once,
    private_dir,
    temp_cache_root,
    user_cache_root,
)

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

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
    """Directory of compiled kernels for this exact source, or None when caching is off.

    The user cache (:func:`~risingbandits.user_cache.user_cache_root`), else this user's own
    folder in ``$TMPDIR``; either is used only if every folder from its root down is this
    user's and nobody else can write it (Numba unpickles its index files: a folder another user
    can write would run their code here). When neither can be used, kernels are compiled in
    memory and one line on standard error says why.
    """
    if os.environ.get("RISINGBANDITS_NO_JIT_CACHE") == "1":
        return None
    refused = []
    for root in (user_cache_root(), temp_cache_root()):
        fresh = not (root / "numba" / source_hash()).exists()
        try:
            path = private_dir(root, "numba", source_hash())
            # One probe per process: workers starting together each remove their own (with one
            # shared name, one could remove the other's and fall back to another directory).
            probe = path / f".write-probe-{os.getpid()}"
            probe.write_text("ok")
            probe.unlink()  # also marks the cache as recently used (its mtime)
        except OSError as exc:
            why = str(exc) if isinstance(exc, NotPrivate) else f"{root}: {exc.strerror or exc}"
            refused.append(why)
            continue
        if fresh:
            _prune_stale(path.parent, keep=path)
        return path
    notice_once(
        "no-kernel-cache",
        f"compiled kernels will not be cached ({'; '.join(refused)}); set "
        "RISINGBANDITS_CACHE_DIR to a folder of yours",
    )
    return None


def kernels_cached() -> bool:
    """Whether compiled kernels of this source are on disk (so no long compilation is due).
    Numba writes each module's index files in a folder of their own below the cache."""
    path = cache_dir()
    return path is not None and any(path.rglob("*.nbi"))


def will_compile(dispatcher: Any, signature: tuple[Any, ...]) -> bool:
    """Whether ``dispatcher.compile(signature)`` will compile (seconds), not take the kernel from
    this process or from the disk cache. Reads Numba's cache index the way Numba does (its
    key and index file); if that ever fails, says True."""
    if signature in dispatcher.overloads:
        return False
    try:
        cache = dispatcher._cache
        key = cache._index_key(signature, dispatcher.targetctx.codegen())
        return key not in cache._cache_file._load_index()
    except Exception:  # Numba internals changed, or no disk cache: assume a compilation
        return True


COMPILING = "compiling kernels (first run only)"
"""What the CLI's progress bars and the online entry points say while Numba compiles."""


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


@contextmanager
def _exclusive(lock_path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path`` (created if missing) across processes."""
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        yield


def _save_under_lock(save: Callable[..., None]) -> Callable[..., None]:
    """Numba's cache entry save (read the index, add the entry, write index and data) made
    exclusive across processes with a lock file beside the index."""

    def locked(self: Any, key: Any, data: Any) -> None:
        with _exclusive(f"{self._index_path}.lock"):
            save(self, key, data)

    locked.__wrapped__ = save  # type: ignore[attr-defined]
    return locked


if not hasattr(IndexDataCacheFile.save, "__wrapped__"):
    # Numba saves an entry by reading the function's index, adding the entry and writing the
    # index back, with no lock: two workers that finish compiling two kernels of one function
    # (``simulate._run`` of two policies) at the same time each drop the other's entry, so a
    # later process compiles that kernel again (a warm ``reproduce all`` took 316 s instead of
    # 247 s), and both may pick the same data file name, so an index entry can point at the
    # other kernel's code. The lock makes the save a transaction.
    IndexDataCacheFile.save = _save_under_lock(IndexDataCacheFile.save)  # type: ignore[method-assign]


WORKER_OPT_LEVEL = "2"
"""LLVM optimisation level of the kernels a sweep's worker processes compile."""


def use_worker_opt_level() -> None:
    """Compile at LLVM -O2 in this process (a sweep's worker, not the user's process) unless
    ``NUMBA_OPT`` says otherwise. Numba's -O3 default bought no speed here: at -O2 the
    kernels run at the same rate within noise (CURE-UCB 10.9 M steps/s either way; 13
    policies at K = 5) with the same arms (every policy, bit for bit), and compile 22% faster
    (72 -> 56 s for 13 policies in one process, 2-core VM). Numba reads the variable again
    before each compilation; the user's own process keeps its settings."""
    os.environ.setdefault("NUMBA_OPT", WORKER_OPT_LEVEL)
    numba_config.reload_config()


def jit(fn: F) -> F:
    """``numba.njit`` (nogil) with the package's source-keyed disk cache (its entries saved
    under a lock, so worker processes compiling at the same time lose none), each signature
    compiled by one process at a time (:func:`_one_at_a_time`)."""
    path = cache_dir()
    if path is None:
        return cast(F, numba.njit(nogil=True)(fn))
    with _numba_cache_dir(path):
        dispatcher = numba.njit(nogil=True, cache=True)(fn)
    dispatcher.compile = _one_at_a_time(dispatcher.compile, fn, path)  # type: ignore[method-assign]
    return cast(F, dispatcher)


def _one_at_a_time(compile: Callable[[Any], Any], fn: Callable[..., Any], path: Path) -> Any:
    """``compile(signature)`` of ``fn``'s dispatcher under a lock file per signature: a process
    that finds another compiling the same kernel waits, then loads it from the disk cache.
    Numba calls it only for a signature this process does not have yet, so a compiled kernel's
    calls cost nothing more. Without it, two sweeps running side by side
    (:mod:`risingbandits.reproduce.relay`) had both workers compile the same policy's kernel
    on a cold cache (LTF's first tasks took 60 s of work instead of 31)."""

    def locked(signature: Any) -> Any:
        key = f"{fn.__module__}.{fn.__qualname__}{signature}"
        name = hashlib.sha256(key.encode()).hexdigest()[:16]
        with _exclusive(path / f"{name}.compiling"):
            return compile(signature)  # from the disk cache when another process saved it

    return locked


def helper(fn: F) -> F:
    """``numba.njit`` for helpers of kernels, inlined into their callers at Numba-IR level
    (LLVM then optimises a step as one function: about twice the step rate of plain calls)."""
    return cast(F, numba.njit(nogil=True, inline="always")(fn))


def called_helper(fn: F) -> F:
    """``numba.njit`` for helpers compiled into their callers as a call, not inlined: those
    called rarely (a recommendation at a checkpoint), those with loops of their own (argmax
    with ties, a root finder) and the random draws. IR inlining copies and retypes a helper at
    every call site: with these as calls a policy's kernel compiles in 3-9 s instead of 6-12 s
    in a process that has compiled them once (a sweep's worker), at the same step rate within
    about 5%.

    Always compiled with Numba's runtime, also when first called from a :func:`runtime_free`
    loop: Numba would otherwise compile it with its first caller's flags and keep that one
    compilation for every caller (a helper that allocates would then fail to compile, or not,
    by the order of the calls). None returns an array: a runtime-free caller would never
    release it."""
    return cast(F, numba.njit(nogil=True, **_runtime(True))(fn))


def runtime_free(fn: F) -> F:
    """``numba.njit`` without Numba's runtime, for the simulators' loops (``simulate._steps``,
    ``simulate_budget._events``) called on borrowed arrays (:func:`borrow`), and for kernel
    pieces they call (``simulate_budget._select_call``; HACE-UCB's ``select_in_cost``, also
    called by the online object, whose caller holds every array): the policy kernels inlined
    into them count no references at all. With borrowed arrays each count is still a call
    into the runtime, once per array of the state wherever an inlined helper uses the state:
    HACE-UCB's state has 16 arrays (ACE-UCB's 7), and its loop ran at 4.3 M steps/s with the
    counts, 6.1 M without (``benchmarks/RESULTS.md``). Nothing in it may allocate (a compile
    error, not a wrong result); its :func:`called_helper` calls keep the runtime."""
    return cast(F, numba.njit(nogil=True, **_runtime(False))(fn))


def _runtime(on: bool) -> dict[str, Any]:
    """Numba's option for its runtime (``_nrt``, absent from its type stubs)."""
    return {"_nrt": on}


def vectorising_helper(fn: F) -> F:
    """``numba.njit`` with NumPy's error model, not inlined: no zero-division checks in its
    loops, so LLVM can vectorise them (same IEEE results). For numeric inner loops (the IMDB
    learners); inlining would compile it with its caller's error model instead."""
    return cast(F, numba.njit(nogil=True, error_model="numpy")(fn))


def _borrowed(context: Any, builder: Any, ty: types.Type, value: Any) -> Any:
    """``value`` of type ``ty`` with the meminfo of every array in it (nested tuples included)
    set to NULL."""
    if isinstance(ty, types.Array):
        array = context.make_array(ty)(context, builder, value=value)
        array.meminfo = cgutils.get_null_value(array.meminfo.type)
        return array._getvalue()
    if isinstance(ty, types.BaseTuple):
        for i, member in enumerate(cast(Iterable[types.Type], ty)):
            item = _borrowed(context, builder, member, builder.extract_value(value, i))
            value = builder.insert_value(value, item, i)
    return value


@intrinsic
def _borrow(typingctx: Any, value: types.Type) -> Any:
    """``value`` (an array, or a tuple of arrays, scalars and such tuples) whose arrays are not
    reference counted: the same data, shapes and strides, with no owner (a NULL meminfo), so
    Numba's reference counting of them is a no-op.

    Why: Numba keeps an atomic reference count of every array a kernel touches across a branch
    or a loop (an inlined helper with a loop counts its array arguments on each call, a branch
    in a kernel counts every array of the state); measured with ``perf``, that was 60-85% of a
    step of SW-TS, ET-SWGTS and Ser4. A compiled entry point borrows what its caller owns
    (the caller's references keep the arrays alive for the whole call) and passes the borrowed
    values **as arguments to a non-inlined function** that does the work. Never bind a borrowed
    value to a variable of the function that borrowed it: Numba's dead-code elimination only
    keeps the writes into arrays that alias a function argument, and would drop writes through
    the borrowed copy.
    """

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        return _borrowed(context, builder, sig.args[0], args[0])

    return value(value), codegen


borrow = cast(Callable[[T], T], _borrow)
"""The intrinsic above, typed for its callers (compiled code only)."""
