"""Recording the live-training curves: one task per (data set, data-order seed), cached one by one.

A task trains every candidate of its data set's pool for ``units`` units on the same split and
the same mini-batches (:mod:`risingbandits.modelselect.live_training`), single-threaded (BLAS
limited to one thread, so the curves are the same on every run) and writes one file
(:mod:`risingbandits.instances.live_cache`). Tasks already recorded are kept; a damaged or
foreign file is named and recorded again. Tasks run in worker processes that end with the
command that started them (:class:`~risingbandits.experiments.executors.ProcessExecutor`),
longest first (IMDB), or in this process when ``workers`` is 1.
"""

from __future__ import annotations

import platform
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import numpy as np

from risingbandits.experiments.executors import Executor, ProcessExecutor, SerialExecutor
from risingbandits.extras import require
from risingbandits.instances.live import (
    BATCH,
    DATA_SHA256,
    DATASETS,
    PART_CAPS,
    SEEDS_PER_SPLIT,
    V1_UNITS,
    check_dataset,
    pool,
    pool_names,
    task_seed,
)
from risingbandits.instances.live_cache import (
    CacheFileError,
    Task,
    cache_folder,
    read_task,
    task_path,
    write_task,
)
from risingbandits.instances.memory import check_table_size
from risingbandits.modelselect.live_data import load_dataset
from risingbandits.modelselect.live_training import (
    Curves,
    Parts,
    batch_order,
    dense_rows,
    make_learner,
    record,
    split_parts,
    standardise,
)
from risingbandits.user_cache import NotPrivate

Progress = Callable[[int, int], None]
_SLOW_FIRST = ("imdb",)


@dataclass
class BuildReport:
    """What a build did: the folder, the tasks recorded now, those kept, and the time taken."""

    folder: Path
    recorded: list[tuple[str, int]] = field(default_factory=list)
    kept: list[tuple[str, int]] = field(default_factory=list)
    seconds: float = 0.0


def _generator(root: np.random.SeedSequence, *key: int) -> np.random.Generator:
    child = np.random.SeedSequence(root.entropy, spawn_key=key)
    return np.random.default_rng(child)


def _state(root: np.random.SeedSequence, *key: int) -> int:
    return int(np.random.SeedSequence(root.entropy, spawn_key=key).generate_state(1)[0])


@dataclass(frozen=True, eq=False)
class _Prepared:
    """What every candidate of a task trains on: features by kind, labels, parts, batches."""

    features: dict[str, np.ndarray]
    y: np.ndarray
    parts: Parts
    batches: np.ndarray
    classes: np.ndarray


def _prepare(dataset: str, seed: int, units: int, imdb_cache: str | Path | None) -> _Prepared:
    """The split (spawn key (0,) of the task's seed) and mini-batches (key (1,)), with the rows
    of the three parts renumbered 0.. (test, then validation, then training)."""
    data = load_dataset(dataset, imdb_cache)
    root = task_seed(dataset, seed)
    parts = split_parts(data.y, _generator(root, 0), PART_CAPS)
    used = np.concatenate([parts.test, parts.validation, parts.train])
    cuts = np.cumsum([parts.test.size, parts.validation.size])
    local = Parts(*np.split(np.arange(used.size), cuts))
    counts = dense_rows(data.x, used)
    return _Prepared(
        {"counts": counts, "scaled": standardise(counts, local.train)},
        data.y[used],
        local,
        batch_order(local.train, units, BATCH, _generator(root, 1)),
        np.unique(data.y),
    )


def record_task(
    dataset: str, seed: int, units: int = V1_UNITS, imdb_cache: str | Path | None = None
) -> Task:
    """Train the pool of ``dataset`` on data-order seed ``seed`` and return the curves
    (candidate i's ``random_state`` from spawn key (2, i) of the task's seed)."""
    from sklearn import config_context
    from threadpoolctl import threadpool_limits

    task = _prepare(dataset, seed, units, imdb_cache)
    root = task_seed(dataset, seed)
    rows: list[Curves] = []
    # one BLAS thread: the same sums in the same order on every run; the data were checked
    # against their digest, so scikit-learn's finiteness checks can be skipped; a learner's
    # numerical warnings (log of the zero prior of a class not yet seen) change no score
    with threadpool_limits(1), config_context(assume_finite=True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, candidate in enumerate(pool(dataset)):
            learner = make_learner(candidate.estimator, candidate.params, _state(root, 2, i))
            x = task.features[candidate.features]
            rows.append(record(learner, x, task.y, task.parts, task.batches, task.classes))
    return Task(
        dataset,
        seed,
        units,
        BATCH,
        pool_names(dataset),
        np.vstack([c.validation for c in rows]),
        np.vstack([c.test for c in rows]),
        np.vstack([c.seconds for c in rows]),
        task.parts.sizes(),
        DATA_SHA256[dataset],
        _versions(),
    )


def _versions() -> dict[str, str]:
    names = ("scikit-learn", "numpy", "scipy")
    return {"python": platform.python_version(), **{n: version(n) for n in names}}


def _record_and_write(job: tuple[Path, str, int, int, str | None]) -> tuple[str, int]:
    """Worker entry: record one task and write its file."""
    folder, dataset, seed, units, imdb_cache = job
    write_task(folder, record_task(dataset, seed, units, imdb_cache))
    return dataset, seed


def _checked_seeds(seeds: Iterable[int]) -> list[int]:
    out = list(seeds)
    bad = [s for s in out if isinstance(s, bool) or not isinstance(s, int) or s < 0]
    if bad or not out:
        raise ValueError(f"seeds={out!r} is not allowed: give one or more integers >= 0")
    return sorted(set(out))


def build_live(
    datasets: Sequence[str] = DATASETS,
    seeds: Iterable[int] = range(2 * SEEDS_PER_SPLIT),
    units: int = V1_UNITS,
    workers: int = 1,
    imdb_cache: str | Path | None = None,
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
) -> BuildReport:
    """Record every (data set, seed) task not yet in the cache; ``progress(done, total)`` after
    each task, ``notify(message)`` for each damaged or foreign file recorded again. The
    defaults build the whole family live-v1."""
    for module in ("sklearn", "threadpoolctl"):
        require(module, "live", "recording the live-training curves")
    chosen = list(dict.fromkeys(check_dataset(d) for d in datasets))
    if not chosen:
        raise ValueError("datasets=[] is not allowed: give one or more data sets")
    order = _checked_seeds(seeds)
    _check_count("units", units)
    _check_count("workers", workers)
    # a task's curves (and its mini-batches) are made for every unit at once
    check_table_size(max(len(pool_names(d)) for d in chosen), units, "units")
    try:
        folder = cache_folder(units)
    except NotPrivate as exc:
        raise ValueError(f"the live-training cache is not used: {exc}") from None
    report = BuildReport(folder)
    todo: list[tuple[str, int]] = []
    for dataset in sorted(chosen, key=lambda d: d not in _SLOW_FIRST):
        for seed in order:
            try:
                read_task(task_path(folder, dataset, seed), dataset, seed, units)
                report.kept.append((dataset, seed))
            except FileNotFoundError:
                todo.append((dataset, seed))
            except CacheFileError as exc:
                if notify is not None:
                    notify(f"{exc}: recording it again")
                todo.append((dataset, seed))
    total = len(report.kept) + len(todo)
    tell = progress or (lambda done, total: None)
    tell(len(report.kept), total)
    start = time.perf_counter()
    cache = None if imdb_cache is None else str(imdb_cache)
    jobs = [(folder, d, s, units, cache) for d, s in todo]
    with _executor(workers, len(jobs)) as executor:
        for done in executor.imap_unordered(_record_and_write, jobs):
            report.recorded.append(done)
            tell(len(report.kept) + len(report.recorded), total)
    report.seconds = time.perf_counter() - start
    return report


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}={value!r} is not allowed: use an integer >= 1")


def _executor(workers: int, jobs: int) -> Executor:
    if min(workers, jobs) <= 1:
        return SerialExecutor()
    return ProcessExecutor(min(workers, jobs))
