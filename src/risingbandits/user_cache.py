"""Where the package keeps its on-disk caches (compiled kernels, parsed LCDB tables), and the
rule for using them: only a folder this user owns that nobody else can write.

A cache is read back without being recomputed (Numba even unpickles its kernel index), so a
folder another local user could write is a way to run code as whoever reads it next. Every
folder of a cache, from the cache root down, is checked each time it is used: it must be a
directory owned by this user and not writable by group or others (:func:`private_dir`). Folders
the package creates are created with mode 0700. The cache is used by its real path (symbolic
links followed once, when it is checked), and only where nobody else can replace it: every
folder above it belongs to this user or root, and is not writable by group or others unless it
is sticky like ``/tmp`` (a link another user owns, or a folder they may rename, would let them
swap in a folder of theirs after the check). A folder that fails the check is not used; the
caller says so in one line and works without that cache.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path


class NotPrivate(OSError):
    """A cache folder another user could write (or that is not a folder): one line saying why."""


def user_cache_root() -> Path:
    """``$RISINGBANDITS_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/risingbandits``.

    Read at every call, so a process (or a test) may change the variables at any time.
    """
    base = os.environ.get("RISINGBANDITS_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "risingbandits"


def temp_cache_root() -> Path:
    """This user's own cache root in the temporary folder, ``$TMPDIR/risingbandits-cache-<uid>``
    (used only when the user cache cannot be written, and only if it passes the same check)."""
    return Path(tempfile.gettempdir()) / f"risingbandits-cache-{os.getuid()}"


GROUP_OR_OTHERS = stat.S_IWGRP | stat.S_IWOTH
"""The write bits a cache folder must not have (:func:`check_private`, :func:`check_fixed`);
output folders allow the group's (:mod:`risingbandits.outputs`)."""


def _writers(writers: int) -> tuple[str, str]:
    """Who ``writers`` (write bits) names, and the chmod that removes them."""
    return ("group or others", "go-w") if writers & stat.S_IWGRP else ("others", "o-w")


def check_private(path: Path, writers: int = GROUP_OR_OTHERS) -> None:
    """Raise :class:`NotPrivate` unless ``path`` is a directory (not a symbolic link: its owner
    could re-point it) owned by this user without the write bits ``writers`` (group and
    others)."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        raise NotPrivate(f"{path} is a symbolic link (use the folder it points to)")
    if not stat.S_ISDIR(info.st_mode):
        raise NotPrivate(f"{path} is not a folder")
    if info.st_uid != os.getuid():
        raise NotPrivate(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & writers:
        who, chmod = _writers(writers)
        raise NotPrivate(
            f"{path} can be written by {who} (mode {stat.S_IMODE(info.st_mode):o}; "
            f"chmod {chmod} {path} if it is yours)"
        )


def check_fixed(path: Path, writers: int = GROUP_OR_OTHERS) -> None:
    """Raise :class:`NotPrivate` if another user could replace ``path`` (a real path) by moving
    an entry of a folder above it: each belongs to this user or root, without the write bits
    ``writers`` (group and others) unless it is sticky (there only an entry's owner may move
    it)."""
    for folder in path.parents:
        info = folder.stat()
        if info.st_uid not in (0, os.getuid()):
            raise NotPrivate(
                f"{folder} belongs to another user (uid {info.st_uid}), who could replace {path}"
            )
        if info.st_mode & writers and not info.st_mode & stat.S_ISVTX:
            raise NotPrivate(
                f"{folder} can be written by {_writers(writers)[0]} (mode "
                f"{stat.S_IMODE(info.st_mode):o}), who could replace {path}"
            )


def check_fixed_file(path: Path) -> None:
    """Raise :class:`NotPrivate` unless ``path`` (a real path) is a regular file that only this
    user or root could have written or replaced: one of them owns it, group and others cannot
    write it, and the folders above it pass :func:`check_fixed`. For data the package finds by
    itself in a shared place (not one the user named), so nobody else can plant it there."""
    info = path.lstat()
    if not stat.S_ISREG(info.st_mode):
        raise NotPrivate(f"{path} is not a regular file")
    if info.st_uid not in (0, os.getuid()):
        raise NotPrivate(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & GROUP_OR_OTHERS:
        raise NotPrivate(
            f"{path} can be written by group or others (mode {stat.S_IMODE(info.st_mode):o})"
        )
    check_fixed(path)


def private_dir(root: Path, *parts: str) -> Path:
    """``root/parts...`` by its real path, each folder from ``root`` down created (mode 0700)
    if missing and checked with :func:`check_private`, the folders above ``root`` with
    :func:`check_fixed`. Raises :class:`NotPrivate` (or another ``OSError``, e.g. a read-only
    file system)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    path = root.resolve()
    check_fixed(path)
    for part in ("", *parts):
        path = path / part if part else path
        path.mkdir(mode=0o700, exist_ok=True)
        check_private(path)
    return path


_NOTICE_VARIABLE = "RISINGBANDITS_NOTICES_SHOWN"


def notice_once(key: str, message: str) -> None:
    """Write ``risingbandits: message`` as one line on standard error, once per key for this
    process and the processes it starts (a sweep's workers inherit the list of keys shown)."""
    shown = os.environ.get(_NOTICE_VARIABLE, "").split(",")
    if key in shown:
        return
    os.environ[_NOTICE_VARIABLE] = ",".join([*filter(None, shown), key])
    print(f"risingbandits: {message}", file=sys.stderr, flush=True)
