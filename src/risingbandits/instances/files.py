"""Reading a mean table from a file: ``.npy``, ``.npz`` or ``.csv`` (K rows x T columns)."""

from __future__ import annotations

import warnings
import zipfile
from collections.abc import Collection
from pathlib import Path

import numpy as np

NPY_MAGIC = b"\x93NUMPY"


def read_npz(
    path: str | Path, what: str, keys: Collection[str] | None = None
) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` archive ``path`` (or only those of ``keys`` it has), by key;
    anything else (not a zip, a damaged or pickled member) is one ``ValueError`` line naming
    ``what`` file and the path."""
    p = Path(path)
    try:
        if not zipfile.is_zipfile(p):
            raise ValueError(
                f"{what} file {str(p)!r} is not a NumPy .npz archive (not a zip file): write it "
                "with numpy.savez"
            )
        with np.load(p, allow_pickle=False) as data:
            wanted = data.files if keys is None else [k for k in data.files if k in keys]
            arrays = {key: data[key] for key in wanted}
        bad = next(
            (key for key, value in arrays.items() if not isinstance(value, np.ndarray)), None
        )
        if bad is not None:
            raise ValueError(f"{what} file {str(p)!r}: its member {bad!r} is not a NumPy array")
        return arrays
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        if str(exc).startswith(f"{what} file"):
            raise
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{what} file {str(p)!r} cannot be read: {reason}") from None


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
    table, names = _read_table(p, what)
    if table.size == 0:
        raise ValueError(
            f"{what} file {str(p)!r} holds no numbers (shape {table.shape}): give a table of "
            "one row per arm and one column per pull"
        )
    return table, names


def _read_table(p: Path, what: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """The table in file ``p`` as its suffix says, and its arm names (see
    :func:`read_means_file`)."""
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
            by_key = read_npz(p, what)
            if what in by_key:
                return by_key[what], ()
            keys, arrays = list(by_key), list(by_key.values())
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
            with warnings.catch_warnings():  # "input contained no data": refused as empty
                warnings.simplefilter("ignore", UserWarning)
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
