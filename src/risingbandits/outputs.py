"""Output directories, made and tried for writing before any work is spent on them, and the one
way files are written into them (:func:`atomic_write`).

An output folder is used only if no other local user could write it or replace it
(:func:`check_ours`): its name is often guessable (``risingbandits-demo`` in the current
folder), and in a folder of theirs they could plant a symbolic link where a file is about to be
written, or files that are read back as results. The folder's group may write it (a group of
one's own is the default of many systems, umask 002; a shared one is the user's choice).
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from risingbandits.user_cache import NotPrivate, check_fixed, check_private

OTHERS = stat.S_IWOTH
"""The write bit an output folder, and every folder above it unless sticky, must not have."""

TMP = ".tmp"


def check_ours(path: str | Path, what: str = "--out") -> None:
    """Refuse an existing folder another user could write or replace, in one ``ValueError``
    line naming ``what``, the path and why (nothing to check where there is no folder: the
    caller makes it, or refuses a file in the way).

    The folder (by its real path) must be this user's and not writable by others
    (:func:`~risingbandits.user_cache.check_private`, sticky or not); each folder holding a
    name on the way to it, as given and as resolved, must belong to this user or root and not
    be writable by others unless sticky (:func:`~risingbandits.user_cache.check_fixed`); and
    each symbolic link on the way must belong to this user or root (its owner could re-point
    it)."""
    folder = Path(path)
    if not folder.is_dir():
        return
    given = folder.absolute()
    try:
        for step in (given, *given.parents):
            info = step.lstat()
            if stat.S_ISLNK(info.st_mode) and info.st_uid not in (0, os.getuid()):
                raise NotPrivate(
                    f"{step} is a symbolic link of another user (uid {info.st_uid}), "
                    "who could re-point it"
                )
        real = folder.resolve()
        check_fixed(given, OTHERS)
        check_fixed(real, OTHERS)
        check_private(real, OTHERS)
    except NotPrivate as exc:
        raise ValueError(f"{what}={str(folder)!r} is not allowed: {exc}") from None


def writable_dir(path: str | Path, what: str = "--out") -> Path:
    """Make ``path`` (with its parents) and check that it is ours (:func:`check_ours`) and that
    a file can be created in it.

    Raises one ``ValueError`` line naming ``what``, the path and the reason (a file in the way, no
    permission, a read-only file system, a path through a file, another user's folder).
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{what}={str(folder)!r} is not allowed: it is a file, not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        check_ours(folder, what)
        # an unnamed file where the system has them (O_TMPFILE): a kill leaves nothing behind
        with tempfile.TemporaryFile(prefix=".write-probe-", dir=folder):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(
            f"{what}={str(folder)!r} cannot be written ({reason}): choose a writable directory"
        ) from None
    return folder


def new_file(path: Path, suffixes: tuple[str, ...], overwrite: bool, what: str = "--out") -> Path:
    """Check ``path`` before any work is spent on it: a file name ending in one of ``suffixes``
    (written as given, nothing added), not a directory, not an existing file unless
    ``overwrite``, in a folder of ours a file can be created in (made with its parents:
    :func:`writable_dir`).

    Raises one ``ValueError`` line naming ``what`` and the path.
    """
    given = f"{what}={str(path)!r}"
    if path.suffix.lower() not in suffixes:
        raise ValueError(
            f"{given} is not allowed: use a file name ending in {' or '.join(suffixes)}"
        )
    if path.is_dir():
        raise ValueError(f"{given} is not allowed: it is a directory, not a file")
    if path.exists() and not overwrite:
        raise ValueError(
            f"{path} already exists: pass --overwrite to replace it or choose another {what}"
        )
    writable_dir(path.parent, f"{what} folder")
    return path


def temporary_pattern(name: str = "*") -> str:
    """The glob of the temporary files :func:`atomic_write` makes for a file ``name`` (``*``:
    for any file), which a killed run may leave behind."""
    return f".{name}.*{TMP}"


def fsync_dir(path: Path) -> None:
    """Flush the folder ``path`` to disk (its entries: a rename survives a power cut)."""
    if os.name != "posix":  # pragma: no cover
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _naming(exc: OSError, path: Path) -> OSError:
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def atomic_write(path: Path, write: Callable[[IO[bytes]], Any]) -> None:
    """Write ``path`` through ``write(file)`` under a temporary name, fsync, then rename.

    The temporary file (``.NAME.<random>.tmp`` beside ``path``) is created exclusively under a
    name nobody can guess: never through a symbolic link or into a file someone put there. It
    gets the permissions of any new file (the umask applies), so ``path`` does too. On failure
    (a full disk) the temporary file is removed and the ``OSError`` names ``path``; on an
    interrupt it is removed too.
    """
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}{TMP}")
    try:  # O_EXCL: fails on any entry of that name, a symbolic link too (never followed)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:  # nothing of ours to remove
        raise _naming(exc, path) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _naming(exc, path) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
