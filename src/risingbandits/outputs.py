"""Output directories, made and tried for writing before any work is spent on them."""

from __future__ import annotations

import tempfile
from pathlib import Path


def writable_dir(path: str | Path, what: str = "--out") -> Path:
    """Make ``path`` (with its parents) and check that a file can be created in it.

    Raises one ``ValueError`` line naming ``what``, the path and the reason (a file in the way,
    no permission, a read-only file system, a path through a file).
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{what}={str(folder)!r} is not allowed: it is a file, not a directory")
    try:
        folder.mkdir(parents=True, exist_ok=True)
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
    ``overwrite``, in a folder a file can be created in (made with its parents).

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
