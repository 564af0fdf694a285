"""The recorded live-training curves on disk: one file per task, written atomically and checked
field by field before use.

Folder ``<cache root>/live/<key>`` (cache root: ``$RISINGBANDITS_CACHE_DIR`` or
``${XDG_CACHE_HOME:-~/.cache}/risingbandits``), key ``live-v1`` for the family's 1,024 units and
``live-v1-units<U>`` for a build with other units, so a small build never passes for the
family. Every folder is checked by :func:`risingbandits.user_cache.private_dir`: one another
user could write is never read. A task is ``<data set>-<seed>.npz`` (read with
``allow_pickle=False``) holding ``validation``, ``test`` and ``seconds`` (float64, candidates x
units), ``candidates`` (their names) and ``info``, a JSON object: the rules version, data set,
seed, units, batch, the sizes of the three parts, the digest of the data and the library
versions that recorded it. A file whose fields do not match what the rules expect (damaged,
truncated, recorded under other rules or on other data) is refused with its name, and
``risingbandits data live`` records it again.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.instances.live import (
    BATCH,
    BUILD_MINUTES,
    DATA_SHA256,
    DATASETS,
    FAMILY,
    V1_UNITS,
    pool_names,
    rules_digest,
)
from risingbandits.outputs import atomic_write
from risingbandits.user_cache import NotPrivate, private_dir, user_cache_root

RULES = "live-v1"
"""Version of the recording rules (pool, split, scaling, batch order, seeding)."""
ARRAYS = ("validation", "test", "seconds")
PARTS = ("train", "validation", "test")
_INFO = {
    "rules": str,
    "dataset": str,
    "seed": int,
    "units": int,
    "batch": int,
    "sizes": dict,
    "data_sha256": str,
    "rules_sha256": str,
    "versions": dict,
}


class CacheFileError(ValueError):
    """A task file that is damaged or foreign (one line naming the file and why)."""


@dataclass(frozen=True, eq=False)
class Task:
    """The recorded curves of one (data set, data-order seed): per candidate and unit, the
    validation accuracy, the test accuracy and the wall time of the unit in seconds."""

    dataset: str
    seed: int
    units: int
    batch: int
    candidates: tuple[str, ...]
    validation: np.ndarray
    test: np.ndarray
    seconds: np.ndarray
    sizes: Mapping[str, int]
    data_sha256: str
    versions: Mapping[str, str]

    def info(self) -> dict[str, Any]:
        return {
            "rules": RULES,
            "dataset": self.dataset,
            "seed": self.seed,
            "units": self.units,
            "batch": self.batch,
            "sizes": dict(self.sizes),
            "data_sha256": self.data_sha256,
            "rules_sha256": rules_digest(self.dataset),
            "versions": dict(self.versions),
        }


def cache_key(units: int) -> str:
    return FAMILY if units == V1_UNITS else f"{FAMILY}-units{units}"


def cache_folder(units: int) -> Path:
    """The private folder of the tasks recorded with ``units`` (created if missing); raises
    :class:`~risingbandits.user_cache.NotPrivate` for a folder another user could write."""
    return private_dir(user_cache_root(), "live", cache_key(units))


def task_path(folder: Path, dataset: str, seed: int) -> Path:
    return folder / f"{dataset}-{seed}.npz"


def build_command(dataset: str, seed: int, units: int) -> str:
    """The command that records one task (the family's whole build for a family task)."""
    if units == V1_UNITS and dataset in DATASETS:
        return "risingbandits data live"
    return f"risingbandits data live --datasets {dataset} --seeds {seed} --units {units}"


def write_task(folder: Path, task: Task) -> Path:
    """Write ``task`` into ``folder`` atomically (:func:`~risingbandits.outputs.atomic_write`)."""
    path = task_path(folder, task.dataset, task.seed)
    save = partial(
        np.savez,
        validation=task.validation,
        test=task.test,
        seconds=task.seconds,
        candidates=np.asarray(task.candidates, dtype=str),
        info=np.asarray(json.dumps(task.info(), sort_keys=True)),
    )
    atomic_write(path, save)
    return path


def read_task(path: Path, dataset: str, seed: int, units: int) -> Task:
    """The task recorded in ``path``, every field checked against the rules for (``dataset``,
    ``seed``, ``units``); raises :class:`CacheFileError` naming the file and the first problem,
    ``FileNotFoundError`` when it does not exist."""
    try:
        with np.load(path, allow_pickle=False) as data:
            if sorted(data.files) != sorted((*ARRAYS, "candidates", "info")):
                raise CacheFileError(f"it holds the arrays {sorted(data.files)}")
            arrays = {name: data[name] for name in (*ARRAYS, "candidates", "info")}
    except FileNotFoundError:
        raise
    except CacheFileError as exc:
        raise CacheFileError(f"{path} is foreign: {exc}") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CacheFileError(f"{path} cannot be read ({reason})") from None
    try:
        return _checked(arrays, dataset, seed, units)
    except CacheFileError as exc:
        raise CacheFileError(f"{path} is foreign or damaged: {exc}") from None


def _info(raw: np.ndarray) -> dict[str, Any]:
    if raw.dtype.kind != "U" or raw.shape != ():
        raise CacheFileError(f"info is a {raw.dtype} array of shape {raw.shape}, not a string")
    try:
        info = json.loads(str(raw[()]))
    except json.JSONDecodeError as exc:
        raise CacheFileError(f"info is not JSON ({exc})") from None
    except RecursionError:
        raise CacheFileError("info is JSON nested too deeply") from None
    if not isinstance(info, dict):
        raise CacheFileError(f"info is {info!r}, not an object")
    if sorted(info) != sorted(_INFO):
        raise CacheFileError(f"info has the fields {sorted(info)}, expected {sorted(_INFO)}")
    for key, kind in _INFO.items():
        if not isinstance(info[key], kind) or isinstance(info[key], bool):
            raise CacheFileError(f"info[{key!r}] = {info[key]!r} is not a {kind.__name__}")
    return info


def _expect(what: str, got: Any, wanted: Any) -> None:
    if got != wanted:
        raise CacheFileError(f"{what} is {got!r}, expected {wanted!r}")


def _checked(arrays: dict[str, np.ndarray], dataset: str, seed: int, units: int) -> Task:
    info = _info(arrays["info"])
    for key, wanted in (
        ("rules", RULES),
        ("dataset", dataset),
        ("seed", seed),
        ("units", units),
        ("batch", BATCH),
        ("data_sha256", DATA_SHA256[dataset]),
        ("rules_sha256", rules_digest(dataset)),
    ):
        _expect(key, info[key], wanted)
    sizes = info["sizes"]
    if sorted(sizes) != sorted(PARTS) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sizes.values()
    ):
        raise CacheFileError(f"sizes is {sizes!r}: expected a count >= 1 for {', '.join(PARTS)}")
    if not all(isinstance(v, str) for v in info["versions"].values()):
        raise CacheFileError(f"versions is {info['versions']!r}: expected names of versions")
    names = arrays["candidates"]
    if names.dtype.kind != "U":
        raise CacheFileError(f"candidates is a {names.dtype} array, not names")
    _expect("candidates", tuple(str(n) for n in names), pool_names(dataset))
    shape = (len(names), units)
    for name in ARRAYS:
        table = arrays[name]
        if table.dtype != np.float64 or table.shape != shape:
            raise CacheFileError(f"{name} is {table.dtype} {table.shape}, expected float64 {shape}")
        if not np.isfinite(table).all() or table.min() < 0.0:
            raise CacheFileError(f"{name} has values that are not finite numbers >= 0")
    for name, part in (("validation", "validation"), ("test", "test")):
        hits = arrays[name] * sizes[part]
        if arrays[name].max() > 1.0 or not np.allclose(hits, np.round(hits), atol=1e-6):
            raise CacheFileError(
                f"{name} holds values that are no accuracy on {sizes[part]} samples"
            )
    return Task(
        dataset,
        seed,
        units,
        BATCH,
        tuple(str(n) for n in names),
        arrays["validation"],
        arrays["test"],
        arrays["seconds"],
        sizes,
        info["data_sha256"],
        info["versions"],
    )


def read_built(dataset: str, seed: int, units: int) -> Task:
    """The recorded task, or one ``ValueError`` line saying which command records it: the cache
    is missing, damaged, foreign or in a folder another user could write."""
    command = build_command(dataset, seed, units)
    try:
        folder = cache_folder(units)
    except NotPrivate as exc:
        raise ValueError(f"the live-training cache is not read: {exc}") from None
    path = task_path(folder, dataset, seed)
    try:
        return read_task(path, dataset, seed, units)
    except FileNotFoundError:
        if command == "risingbandits data live":
            raise ValueError(
                f"{FAMILY} is not built: run `{command}` (about {BUILD_MINUTES} minutes on 2 "
                f"cores; {path} is missing)"
            ) from None
        raise ValueError(f"{path} is not built: run `{command}`") from None
    except CacheFileError as exc:
        raise CacheFileError(f"{exc}; run `{command}` to record it again") from None
