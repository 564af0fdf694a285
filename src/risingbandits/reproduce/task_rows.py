"""Rows of one reproduction task kept as a JSON file (the peers and deadlines parts): written
atomically, read back only when every value has its type and its fingerprint is the task's, so
a damaged, foreign or stale file is computed again instead of entering the report."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import methodcaller
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

from risingbandits.experiments.executors import Executor
from risingbandits.instances.base import RisingInstance
from risingbandits.outputs import atomic_write
from risingbandits.provenance import code_digest

Rows = dict[str, list[Any]]


def write_task(folder: Path, result: dict[str, Any]) -> None:
    """Keep a task's result (``{"format", "task", "fingerprint", "rows"}``) as
    ``folder/<task>.json``."""
    text = json.dumps(result, separators=(",", ":"), allow_nan=False).encode()
    atomic_write(folder / f"{result['task']}.json", methodcaller("write", text))


def read_task(
    path: Path,
    key: str,
    fmt: str,
    columns: Sequence[str],
    text_columns: Sequence[str],
    fingerprint: str,
) -> Rows | None:
    """A kept task's rows, or None when the file is missing, damaged, of another format, task
    or ``fingerprint`` (what the rows depend on besides the key: :func:`fingerprint`), or holds
    a value of the wrong type (text in ``text_columns``, finite numbers elsewhere)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        return None
    ok = isinstance(data, dict) and data.get("format") == fmt and data.get("task") == key
    ok = ok and data.get("fingerprint") == fingerprint
    rows = data.get("rows") if ok else None
    if not isinstance(rows, dict) or set(rows) != set(columns):
        return None
    lengths = {len(v) if isinstance(v, list) else -1 for v in rows.values()}
    if len(lengths) != 1 or -1 in lengths:
        return None
    for column, values in rows.items():
        kind = str if column in text_columns else (int, float)
        if not all(isinstance(v, kind) and not isinstance(v, bool) for v in values):
            return None
        if kind is not str and not np.isfinite(np.asarray(values, dtype=float)).all():
            return None
    return rows


class Bed(Protocol):
    """A test bed of the peers or deadlines part: its instances, ``count`` of them."""

    @property
    def title(self) -> str: ...

    @property
    def count(self) -> int: ...

    def instance(self, index: int) -> RisingInstance: ...


B = TypeVar("B", bound=Bed)


def missing_beds(beds: Iterable[B]) -> dict[B, str]:
    """The beds whose instances cannot be read here (an unbuilt live-v1, missing IMDB curves or
    LCDB), each with the one-line reason its family gives (which command records it)."""
    missing = {}
    for bed in beds:
        try:
            bed.instance(0)
        except (ValueError, OSError, ImportError) as exc:
            missing[bed] = str(exc)
            continue
        if bed.count <= 0:
            missing[bed] = "no instances"
    return missing


def beds_not_run(beds: Iterable[Bed]) -> list[tuple[str, str]]:
    """(title, why) of the :func:`missing_beds` among ``beds``: what a run that skips them says
    (without live-v1 the peers' and deadlines' parts are half their evaluation)."""
    return [(bed.title, why) for bed, why in missing_beds(beds).items()]


def fingerprint(grid: Mapping[str, Any], instance: RisingInstance, *code: str) -> str:
    """What a task's rows depend on besides its key (sha256): ``grid`` (JSON-able: budgets,
    seeds, each method with its resolved parameters), the instance's means, test means and
    costs, and the code (:func:`~risingbandits.provenance.code_digest` of the row code and the
    task's own modules ``code``). live-v1's costs are the wall times measured when it was built,
    so another build (another machine) is another instance: its kept rows are computed again,
    not reported; so are rows kept by other code."""
    digest = hashlib.sha256(json.dumps(grid, sort_keys=True).encode())
    digest.update(code_digest(*code).encode())
    for table in (instance.means, instance.test_means, instance.pull_costs):
        if table is None:
            digest.update(b"none")
        else:
            digest.update(repr(table.shape).encode() + np.ascontiguousarray(table, float).tobytes())
    return digest.hexdigest()


def read_fingerprinted(
    read: Callable[[Path, str, str], Rows | None], expected: Mapping[str, str], path: Path, key: str
) -> Rows | None:
    """``read(path, key, expected[key])``: a kept task's rows only with the fingerprint its
    task has now (bind ``read`` and ``expected`` for :func:`compute_tasks`)."""
    return read(path, key, expected[key])


def compute_tasks(
    folder: Path,
    tasks: Sequence[Any],
    run: Callable[[Any], dict[str, Any]],
    read: Callable[[Path, str], Rows | None],
    pool: Executor,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Run on ``pool`` every task (with a ``key``) whose rows ``read`` does not find in
    ``folder``, keeping each result as it comes (:func:`write_task`); ``progress(done, total)``
    counts tasks, the kept ones first."""
    folder.mkdir(parents=True, exist_ok=True)
    todo = [t for t in tasks if read(folder / f"{t.key}.json", t.key) is None]
    done = len(tasks) - len(todo)
    if progress is not None:
        progress(done, len(tasks))
    for result in pool.imap_unordered(run, todo):
        write_task(folder, result)
        done += 1
        if progress is not None:
            progress(done, len(tasks))


def group_rows(
    tasks: Iterable[Mapping[str, list[Any]]],
    columns: Sequence[str],
    by: Sequence[str],
    values: Sequence[str],
) -> tuple[dict[tuple[Any, ...], dict[str, np.ndarray]], int]:
    """The kept tasks' rows grouped by the ``by`` columns (cell and method): each group's
    ``values`` columns as arrays, in the same unit order (instance, then seed) in every group,
    so two methods' arrays of one cell pair up; and the units per group."""
    merged: dict[str, list[Any]] = defaultdict(list)
    for task in tasks:
        for key in columns:
            merged[key] += task[key]
    order = np.lexsort((np.asarray(merged["seed"]), np.asarray(merged["instance"])))
    groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for i in order:
        groups[tuple(merged[c][i] for c in by)].append(i)
    grouped = {
        key: {c: np.asarray([merged[c][i] for i in rows]) for c in values}
        for key, rows in groups.items()
    }
    return grouped, len(next(iter(groups.values()), []))


def instance_count(grouped: Mapping[tuple[Any, ...], Mapping[str, np.ndarray]]) -> int:
    """How many instances the groups of :func:`group_rows` hold (grouped with an ``instance``
    value column; every group holds the same units)."""
    return len(set(next(iter(grouped.values()))["instance"])) if grouped else 0
