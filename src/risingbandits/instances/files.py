"""Reading a mean table from a file: ``.npy``, ``.npz`` or ``.csv`` (K rows x T columns)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

NPY_MAGIC = b"\x93NUMPY"


def read_means_file(path: str | Path, what: str = "means") -> tuple[np.ndarray, tuple[str, ...]]:
    """Return ``(table, arm_names)`` from a file; arm names come from ``.npz`` keys. ``what``
    names the file in messages (``"costs"`` for a table of costs per pull).

    An ``.npz`` holds either one 2-D array (any key, or the key ``what``) or one 1-D array per
    arm, all of the same length (keys become arm names, in the file's order). A file whose
    contents do not match its suffix (a text file named ``.npy``) is refused as such.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(
            f"{what} file {str(p)!r} is a directory: give a .npy, .npz or .csv file in it"
        )
    if not p.is_file():
        raise ValueError(f"{what} file {str(p)!r} does not exist")
    suffix = p.suffix.lower()
    try:
        if suffix == ".npy":
            with p.open("rb") as f:
                if f.read(len(NPY_MAGIC)) != NPY_MAGIC:
                    raise ValueError(
                        f"{what} file {str(p)!r} is not a NumPy .npy file (no .npy header): "
                        "write it with numpy.save, or use .csv for text"
                    )
            return np.load(p, allow_pickle=False), ()
        if suffix == ".npz":
            if not zipfile.is_zipfile(p):
                raise ValueError(
                    f"{what} file {str(p)!r} is not a NumPy .npz archive (not a zip file): "
                    "write it with numpy.savez, or use .csv for text"
                )
            with np.load(p, allow_pickle=False) as data:
                keys = list(data.files)
                if what in keys:
                    return data[what], ()
                arrays = [data[k] for k in keys]
            if len(arrays) == 1 and arrays[0].ndim == 2:
                return arrays[0], ()
            if arrays and all(a.ndim == 1 for a in arrays):
                lengths = {a.shape[0] for a in arrays}
                if len(lengths) != 1:
                    raise ValueError(
                        f"{what} file {str(p)!r}: the 1-D arrays have different lengths "
                        f"{sorted(lengths)}"
                    )
                return np.vstack(arrays), tuple(keys)
            raise ValueError(
                f"{what} file {str(p)!r}: expected one 2-D array or one 1-D array per arm"
            )
        if suffix == ".csv":
            return np.loadtxt(p, delimiter=",", ndmin=2, dtype=np.float64), ()
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"{what} file {str(p)!r} cannot be read: {exc}") from None
    except ValueError as exc:
        if str(exc).startswith(f"{what} file"):
            raise
        raise ValueError(f"{what} file {str(p)!r} cannot be read: {exc}") from None
    raise ValueError(
        f"{what} file {str(p)!r}: suffix {suffix!r} is not allowed: use .npy, .npz or .csv"
    )
