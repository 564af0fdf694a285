"""Checking a sweep's part files against its plan: which parts can be trusted.

Each part is written with its task id and its sweep's spec hash in the Parquet key-value
metadata (:data:`TASK_KEY`, :data:`SPEC_KEY`) and a CRC-32 checksum on every data page (Parquet
page checksums). Two depths of check:

* **quick** (``status``; reads only the footer): the file opens, holds the task's number of
  rows, names the task its file is named after and the sweep's spec hash;
* **full** (``resume``, ``summary``, ``sweep verify``): also reads every page with its checksum
  verified and checks that the rows are exactly the task's cells (instance, policy label,
  every horizon x seed index).

A file that fails is *damaged* (a planned task's file that is truncated, empty, of the wrong
size, of another task, or corrupt), a *duplicate* (a file not named after a task, holding a
task of this sweep, e.g. a copy) or *foreign* (anything else: another sweep's part, an unknown
file). Parts written before the metadata existed (store format 1) carry none: the quick check
then trusts the row count, and the full check still compares every cell.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from risingbandits.experiments.plan import Task

TASK_KEY = b"risingbandits.task"
SPEC_KEY = b"risingbandits.spec_hash"
ProblemKind = Literal["damaged", "duplicate", "foreign"]


def with_part_metadata(rows: pa.Table, task_id: str, spec_hash: str) -> pa.Table:
    """``rows`` with the task id and the spec hash in their schema metadata."""
    return rows.replace_schema_metadata(
        {**(rows.schema.metadata or {}), TASK_KEY: task_id.encode(), SPEC_KEY: spec_hash.encode()}
    )


def write_part_file(rows: pa.Table, sink: object) -> None:
    """Write ``rows`` as Parquet with page checksums."""
    pq.write_table(rows, sink, write_page_checksum=True)


@dataclass(frozen=True)
class PartProblem:
    """A part file that cannot be counted, and why."""

    path: Path
    kind: ProblemKind
    reason: str

    def __str__(self) -> str:
        return f"{self.path.name}: {self.kind}, {self.reason}"


@dataclass(frozen=True)
class PartsReport:
    """The parts that passed (task id -> file) and the files that did not; ``rows`` holds the
    rows of each good part when the full check was asked to keep them (task id -> table)."""

    good: dict[str, Path] = field(default_factory=dict)
    problems: tuple[PartProblem, ...] = ()
    rows: dict[str, pa.Table] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Number of problems of each kind (only the kinds present)."""
        out: dict[str, int] = {}
        for p in self.problems:
            out[p.kind] = out.get(p.kind, 0) + 1
        return out

    def describe(self) -> str:
        """E.g. ``2 damaged parts and 1 duplicate part``."""
        items = [f"{n} {kind} part{'s' if n > 1 else ''}" for kind, n in self.counts().items()]
        return " and ".join(items)


def _open(path: Path, full: bool) -> pq.ParquetFile | str:
    """The file with its footer read (``full``: its pages will be read with their checksums
    verified), or why it cannot be opened."""
    try:
        return pq.ParquetFile(path, page_checksum_verification=full)
    except (OSError, pa.ArrowException) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"cannot be read ({first})"


def _read_cells(part: pq.ParquetFile, task: Task) -> pa.Table | str:
    """The rows of ``part`` when they are exactly the cells of ``task``, else why not."""
    try:  # every column: each page's checksum is verified as it is read
        rows = part.read()
    except (OSError, pa.ArrowException) as exc:
        return f"its data cannot be read ({str(exc).splitlines()[0]})"
    for column, value in (("instance", task.instance.id), ("policy", task.policy.label)):
        if rows.column(column).unique().to_pylist() != [value]:
            return f"its {column} column is not {value!r}"
    horizons = np.asarray(task.horizons, np.int64)
    seeds = np.asarray(task.seeds, np.int64)
    want = np.sort(np.add.outer(horizons * (seeds.max() + 1), seeds).ravel())
    h, s = (rows.column(c).to_numpy().astype(np.int64) for c in ("horizon", "seed"))
    got = np.sort(h * (seeds.max() + 1) + s)
    if (s < 0).any() or (s > seeds.max()).any() or not np.array_equal(got, want):
        return "its (horizon, seed) cells are not those of its task"
    return rows


def check_part(
    path: Path, tasks: Mapping[str, Task], spec_hash: str, full: bool
) -> PartProblem | tuple[str, pa.Table | None]:
    """The task id ``path`` holds with its rows (None unless ``full``), or its problem."""
    part = _open(path, full)
    planned = path.stem in tasks
    if isinstance(part, str):
        return PartProblem(path, "damaged" if planned else "foreign", part)
    footer = part.metadata
    meta = footer.metadata or {}
    task_id = meta.get(TASK_KEY, b"").decode() or None
    stored_hash = meta.get(SPEC_KEY, b"").decode() or None
    if stored_hash is not None and stored_hash != spec_hash:
        return PartProblem(path, "foreign", f"written by another sweep (spec {stored_hash[:12]})")
    if not planned:
        if task_id in tasks:
            return PartProblem(path, "duplicate", f"a copy of task {task_id}")
        return PartProblem(path, "foreign", "not named after a task of this sweep")
    if task_id is not None and task_id != path.stem:
        return PartProblem(path, "damaged", f"holds task {task_id}, not {path.stem}")
    task = tasks[path.stem]
    if footer.num_rows != task.n_cells:
        return PartProblem(
            path, "damaged", f"{footer.num_rows} rows where its task has {task.n_cells} cells"
        )
    if not full:
        return path.stem, None
    rows = _read_cells(part, task)
    return PartProblem(path, "damaged", rows) if isinstance(rows, str) else (path.stem, rows)


def check_parts(
    files: Iterable[Path],
    tasks: Mapping[str, Task],
    spec_hash: str,
    *,
    full: bool = False,
    keep_rows: bool | Collection[str] = False,
) -> PartsReport:
    """Check every file (see the module docstring for the two depths); ``keep_rows`` (with
    ``full``) keeps the rows read, every column or only the named ones (those a part has), so a
    reader needs no second pass over the files and holds only the columns it uses."""
    good: dict[str, Path] = {}
    rows: dict[str, pa.Table] = {}
    problems: list[PartProblem] = []
    for path in files:
        result = check_part(path, tasks, spec_hash, full)
        if isinstance(result, PartProblem):
            problems.append(result)
            continue
        task_id, table = result
        good[task_id] = path
        if keep_rows and table is not None:
            if keep_rows is not True:
                table = table.select([c for c in table.column_names if c in keep_rows])
            rows[task_id] = table
    return PartsReport(good, tuple(problems), rows)
