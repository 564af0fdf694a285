"""Reading a mean table from a file: ``.npy``, ``.npz`` or ``.csv`` (K rows x T columns)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np


def read_means_file(path: str | Path) -> tuple[np.ndarray, tuple[str, ...]]:
    """Return ``(table, arm_names)`` from a file; arm names come from ``.npz`` keys.

    An ``.npz`` holds either one 2-D array (any key, or the key ``means``) or one 1-D array per
    arm, all of the same length (keys become arm names, in the file's order).
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"means file {str(p)!r} does not exist")
    suffix = p.suffix.lower()
    try:
        if suffix == ".npy":
            return np.load(p, allow_pickle=False), ()
        if suffix == ".npz":
            with np.load(p, allow_pickle=False) as data:
                keys = list(data.files)
                if "means" in keys:
                    return data["means"], ()
                arrays = [data[k] for k in keys]
            if len(arrays) == 1 and arrays[0].ndim == 2:
                return arrays[0], ()
            if arrays and all(a.ndim == 1 for a in arrays):
                lengths = {a.shape[0] for a in arrays}
                if len(lengths) != 1:
                    raise ValueError(
                        f"means file {str(p)!r}: the 1-D arrays have different lengths "
                        f"{sorted(lengths)}"
                    )
                return np.vstack(arrays), tuple(keys)
            raise ValueError(
                f"means file {str(p)!r}: expected one 2-D array or one 1-D array per arm"
            )
        if suffix == ".csv":
            return np.loadtxt(p, delimiter=",", ndmin=2, dtype=np.float64), ()
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"means file {str(p)!r} cannot be read: {exc}") from None
    except ValueError as exc:
        if str(exc).startswith("means file"):
            raise
        raise ValueError(f"means file {str(p)!r} cannot be read: {exc}") from None
    raise ValueError(
        f"means file {str(p)!r}: suffix {suffix!r} is not allowed: use .npy, .npz or .csv"
    )
