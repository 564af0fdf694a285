"""The LCDB curve table: where it is, how it is read, and its parsed form cached on disk.

LCDB (Mohr, Viering, Loog, van Rijn: "LCDB 1.0: An Extensive Learning Curves Database for
Classification Tasks", ECML PKDD 2022; PyPI ``lcdb==0.1.0``) ships its curves as CSV files inside
its package folder. We read ``lcdb/database-accuracy.csv`` (150 MB, 1,953,371 rows), one row per
(data set, learner, training-set size, split), with the columns

    openmlid, learner, size_train, size_test, outer_seed, inner_seed, traintime,
    score_train, score_valid, score_test

(``score_*``: accuracy on the training, validation and test parts of split (outer_seed,
inner_seed); 248 OpenML data sets, 20 scikit-learn learners, anchors ``size_train`` =
round(16 x sqrt(2)^k) plus the data set's whole training part, 1 to 125 splits per anchor, 25 for
most), and the ``openmlid`` and ``Name`` columns of ``lcdb/datasets.csv``. We never import the
``lcdb`` module (it imports ``openml`` and ``func_timeout`` without declaring them): its files
are found through the installed package's metadata and read with pyarrow.

Parsed form: one row per (openmlid, learner, size_train), sorted, with the number of splits, the
mean and sample standard deviation (ddof = 1; 0 for a single split) of ``score_valid`` and
``score_test`` over the splits (rows with a missing score are left out), and the mean
``traintime`` in seconds over the same splits (a split's time that is missing, zero or negative
is left out of the mean; NaN when none is left). It is cached as Parquet
in ``<cache root>/lcdb/<lcdb version>/accuracy.parquet`` (cache root as for compiled kernels:
``$RISINGBANDITS_CACHE_DIR`` or ``${XDG_CACHE_HOME:-~/.cache}/risingbandits``), written
atomically, tagged with the CSV's size and modification time, and rebuilt when it is damaged or
stale; a cache folder another user could write is not used (:mod:`risingbandits.user_cache`).
``$RISINGBANDITS_LCDB_DIR`` points at another folder with LCDB's files (tests, a newer LCDB); its
cache goes to ``lcdb/dir-<hash of the folder>``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass
from functools import cached_property, lru_cache, partial
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.extras import MissingExtra
from risingbandits.outputs import atomic_write
from risingbandits.user_cache import private_dir, user_cache_root

INSTALL = 'pip install "risingbandits[lcdb]"'
CURVES_FILE = "database-accuracy.csv"
NAMES_FILE = "datasets.csv"
COLUMNS = ("openmlid", "learner", "size_train", "score_valid", "score_test", "traintime")
CACHE_FORMAT = b"2"
"""Version of the parsed form: a cache written in another one is rebuilt (2: ``seconds``)."""
SCORES = ("valid", "test")
CACHE_TYPES = {"openmlid": "int64", "learner": "string", "size_train": "int64", "splits": "int64"}
CACHE_TYPES |= {f"{s}_{k}": "double" for s in SCORES for k in ("mean", "std")}
CACHE_TYPES |= {"seconds": "double"}
"""The parsed form's columns and their Arrow types."""


@dataclass(frozen=True)
class LcdbSource:
    """A folder holding LCDB's CSV files, how to name it, and its cache sub-folder."""

    folder: Path
    label: str
    cache_key: str
    version: str | None = None
    """The installed ``lcdb`` package's version; None for a folder given by the user."""

    @property
    def curves_csv(self) -> Path:
        return self.folder / CURVES_FILE


def lcdb_source() -> LcdbSource:
    """``$RISINGBANDITS_LCDB_DIR``, else the installed ``lcdb`` package (MissingExtra if absent)."""
    env = os.environ.get("RISINGBANDITS_LCDB_DIR")
    if env:
        folder = Path(env).expanduser().resolve()
        if not (folder / CURVES_FILE).is_file():
            raise ValueError(
                f"RISINGBANDITS_LCDB_DIR={env!r} is not allowed: {folder} holds no {CURVES_FILE}"
            )
        key = "dir-" + hashlib.sha256(str(folder).encode()).hexdigest()[:16]
        return LcdbSource(folder, f"LCDB files in {folder}", key)
    try:
        dist = distribution("lcdb")
    except PackageNotFoundError:
        raise MissingExtra(
            f"LCDB learning curves need the lcdb package, which is not installed: {INSTALL}"
        ) from None
    folder = Path(str(dist.locate_file("lcdb")))
    if not (folder / CURVES_FILE).is_file():
        raise MissingExtra(
            f"the installed lcdb {dist.version} has no {folder / CURVES_FILE}: reinstall it with "
            f"pip install --force-reinstall lcdb==0.1.0"
        )
    return LcdbSource(folder, f"lcdb {dist.version}", dist.version, dist.version)


@dataclass(frozen=True)
class Curve:
    """One learner's learning curve on one data set: per anchor (training-set size, increasing)
    the number of splits, the mean and standard deviation of the score over the splits, and the
    mean training time in seconds (NaN where LCDB recorded no positive time)."""

    learner: str
    sizes: np.ndarray
    splits: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    seconds: np.ndarray

    @property
    def last_size(self) -> int:
        return int(self.sizes[-1])


class CurveTable:
    """The parsed curves of one LCDB source, indexed by (OpenML id, learner)."""

    def __init__(self, source: LcdbSource, columns: dict[str, np.ndarray], names: dict[int, str]):
        self.source = source
        self._cols = columns
        self._names = names
        ids, learners = columns["openmlid"], columns["learner"]
        starts = np.flatnonzero(
            np.r_[True, (ids[1:] != ids[:-1]) | (learners[1:] != learners[:-1])]
        )
        ends = np.r_[starts[1:], len(ids)]
        self._slices: dict[int, dict[str, slice]] = {}
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            self._slices.setdefault(int(ids[a]), {})[str(learners[a])] = slice(a, b)

    @cached_property
    def openml_ids(self) -> tuple[int, ...]:
        """Every data set of the table, ascending."""
        return tuple(sorted(self._slices))

    def learners(self, openml_id: int) -> tuple[str, ...]:
        """LCDB's names of the learners with a curve on ``openml_id``, sorted."""
        return tuple(sorted(self._slices[openml_id]))

    def dataset_name(self, openml_id: int) -> str:
        """The data set's OpenML name ('' when ``datasets.csv`` does not list it)."""
        return self._names.get(openml_id, "")

    def curve(self, openml_id: int, learner: str, score: str = "valid") -> Curve:
        """The curve of ``learner`` on ``openml_id`` for ``score`` (``valid`` or ``test``)."""
        rows = self._slices[openml_id][learner]
        c = self._cols
        return Curve(
            learner,
            c["size_train"][rows],
            c["splits"][rows],
            c[f"{score}_mean"][rows],
            c[f"{score}_std"][rows],
            c["seconds"][rows],
        )


def load_table(source: LcdbSource | None = None) -> CurveTable:
    """The parsed curve table of ``source`` (default :func:`lcdb_source`), from this process's
    memory, else from the disk cache, else parsed from the CSV (and cached)."""
    src = source or lcdb_source()
    stat = src.curves_csv.stat()
    return _load(src, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=4)
def _load(source: LcdbSource, size: int, mtime_ns: int) -> CurveTable:
    stamp = f"{size}:{mtime_ns}".encode()
    try:  # only a cache folder nobody else can write (risingbandits.user_cache)
        path: Path | None = private_dir(user_cache_root(), "lcdb", source.cache_key)
    except OSError:
        path = None
    columns = None if path is None else _read_cache(path / "accuracy.parquet", stamp)
    if columns is None:
        table = _parse_csv(source.curves_csv)
        columns = _numpy_columns(table)
        problem = _problem(columns)
        if problem:  # checked like the cache, which would otherwise be rebuilt at every load
            raise ValueError(f"LCDB table {source.curves_csv}: {problem}")
        if path is not None:
            _write_cache(table, path / "accuracy.parquet", stamp)
    return CurveTable(source, columns, _read_names(source.folder / NAMES_FILE))


def _parse_csv(path: Path) -> Any:
    """Aggregate LCDB's per-split rows into one row per (data set, learner, anchor)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    try:
        header = pcsv.open_csv(path).schema.names
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"LCDB table {path} cannot be read: {exc}") from None
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ValueError(
            f"LCDB table {path} lacks the column(s) {', '.join(missing)}: it needs "
            f"{', '.join(COLUMNS)}"
        )
    types = {"openmlid": pa.int64(), "learner": pa.string(), "size_train": pa.int64()}
    types |= {"score_valid": pa.float64(), "score_test": pa.float64(), "traintime": pa.float64()}
    options = pcsv.ConvertOptions(include_columns=list(COLUMNS), column_types=types)
    try:
        raw = pcsv.read_csv(path, convert_options=options)
    except pa.ArrowInvalid as exc:
        raise ValueError(f"LCDB table {path} cannot be read: {exc}") from None
    raw = raw.filter(pc.and_(pc.is_valid(raw["score_valid"]), pc.is_valid(raw["score_test"])))
    time = raw["traintime"]
    raw = raw.set_column(
        raw.column_names.index("traintime"),
        "traintime",
        pc.if_else(pc.greater(time, 0.0), time, pa.scalar(None, pa.float64())),
    )
    ddof1 = pc.VarianceOptions(ddof=1)
    aggregates: list[tuple[Any, ...]] = [("score_valid", "count"), ("traintime", "mean")]
    for score in SCORES:
        aggregates += [(f"score_{score}", "mean"), (f"score_{score}", "stddev", ddof1)]
    keys = ["openmlid", "learner", "size_train"]
    # one thread: the sums run in one fixed order, so the means are the same on every machine
    grouped = raw.group_by(keys, use_threads=False).aggregate(aggregates)
    grouped = grouped.sort_by([(k, "ascending") for k in keys])
    out = {k: grouped[k] for k in keys} | {"splits": grouped["score_valid_count"]}
    for score in SCORES:
        out[f"{score}_mean"] = grouped[f"score_{score}_mean"]
        out[f"{score}_std"] = pc.fill_null(grouped[f"score_{score}_stddev"], 0.0)
    out["seconds"] = pc.fill_null(grouped["traintime_mean"], np.nan)
    return pa.table(out)


def _numpy_columns(table: Any) -> dict[str, np.ndarray]:
    return {name: table[name].to_numpy() for name in table.column_names}


def _problem(c: dict[str, np.ndarray]) -> str | None:
    """What is wrong with parsed columns (None: nothing), as the curves rely on them: one row
    per (data set, learner, anchor) in ascending order, so that a curve is one run of rows with
    increasing sizes; sizes and split counts >= 1; score means within [0, 1], their standard
    deviations finite and >= 0; mean times positive or NaN."""
    ids, learners, sizes = c["openmlid"], c["learner"], c["size_train"]
    same_id = ids[1:] == ids[:-1]
    same_curve = same_id & (learners[1:] == learners[:-1])
    order = ids[1:] > ids[:-1]
    order |= same_id & (learners[1:] > learners[:-1]) | same_curve & (sizes[1:] > sizes[:-1])
    if not order.all():
        j = int(np.flatnonzero(~order)[0]) + 1
        return (
            f"row {j} (openmlid {ids[j]}, {learners[j]}, size_train {sizes[j]}) is not after the "
            "row before it in (openmlid, learner, size_train) order"
        )
    seconds = c["seconds"]
    checks = {
        "size_train": (sizes >= 1, ">= 1"),
        "splits": (c["splits"] >= 1, ">= 1"),
        "seconds": (np.isnan(seconds) | (np.isfinite(seconds) & (seconds > 0)), "> 0 or NaN"),
    }
    for score in SCORES:
        mean, std = c[f"{score}_mean"], c[f"{score}_std"]
        checks[f"{score}_mean"] = ((mean >= 0) & (mean <= 1), "within [0, 1]")
        checks[f"{score}_std"] = (np.isfinite(std) & (std >= 0), "finite and >= 0")
    for name, (ok, allowed) in checks.items():
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            return (
                f"{name} is {c[name][j]} for openmlid {ids[j]}, {learners[j]}, size_train "
                f"{sizes[j]}: not {allowed}"
            )
    return None


def _read_cache(path: Path, stamp: bytes) -> dict[str, np.ndarray] | None:
    """The cached columns, or None when the file is absent, stale or damaged (a column of
    another type, a missing value, or a value :func:`_problem` refuses)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError):
        return None
    meta = table.schema.metadata or {}
    if (
        meta.get(b"source") != stamp
        or meta.get(b"format") != CACHE_FORMAT
        or {f.name: str(f.type) for f in table.schema} != CACHE_TYPES
        or any(column.null_count for column in table.columns)
    ):
        return None
    columns = _numpy_columns(table)
    return None if _problem(columns) else columns


def _write_cache(table: Any, path: Path, stamp: bytes) -> None:
    """Write ``table`` to ``path`` atomically (:func:`~risingbandits.outputs.atomic_write`); a
    cache that cannot be written is skipped (the curves are then parsed again next time)."""
    import pyarrow.parquet as pq

    tagged = table.replace_schema_metadata({b"source": stamp, b"format": CACHE_FORMAT})
    with contextlib.suppress(OSError):
        atomic_write(path, partial(pq.write_table, tagged))


def _read_names(path: Path) -> dict[int, str]:
    """OpenML id -> data set name from ``datasets.csv`` (empty when the file is absent)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if not path.is_file():
        return {}
    options = pcsv.ConvertOptions(
        include_columns=["openmlid", "Name"],
        column_types={"openmlid": pa.int64(), "Name": pa.string()},
    )
    try:
        table = pcsv.read_csv(path, convert_options=options)
    except (pa.ArrowInvalid, OSError):
        return {}
    return dict(zip(table["openmlid"].to_pylist(), table["Name"].to_pylist(), strict=True))
