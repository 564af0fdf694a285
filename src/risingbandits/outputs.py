"""Output directories, made and tried for writing before any work is spent on them."""

from __future__ import annotations

import os
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
        fd, probe = tempfile.mkstemp(prefix=".write-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(
            f"{what}={str(folder)!r} cannot be written ({reason}): choose a writable directory"
        ) from None
    return folder
