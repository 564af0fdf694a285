"""The results directory of a sweep: a manifest and one Parquet part file per finished task.

Layout::

    DIR/manifest.json            spec text, spec hash, library version, created at, plan size
    DIR/parts/<task-id>.parquet  the rows of one task

Every file is written under a temporary name (``*.tmp``), flushed to disk (fsync) and renamed
into place, so a reader sees a whole file or none, and a process killed at any moment leaves
no half file visible: resuming cleans the ``*.tmp`` files and runs the tasks whose part is
missing. A directory never mixes two specs: one with another spec hash is refused. A lock file
(``DIR/.lock``, ``flock``) keeps two runs from writing into one directory at once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from risingbandits.experiments.plan import Plan, make_plan
from risingbandits.experiments.spec import Spec, parse_spec

try:
    import fcntl
except ImportError:  # pragma: no cover (not POSIX: no lock)
    fcntl = None  # type: ignore[assignment]

MANIFEST = "manifest.json"
PARTS = "parts"
LOCK = ".lock"
TMP = ".tmp"
FORMAT = 1


class StoreError(ValueError):
    """A results directory that cannot be used as asked (another spec, not a sweep, busy)."""


@dataclass(frozen=True)
class Manifest:
    """What ``DIR/manifest.json`` records about a sweep."""

    spec_text: str
    spec_hash: str
    spec_dir: str
    library_version: str
    created_at: str
    target_steps: int
    tasks: int
    cells: int
    format: int = FORMAT


@dataclass(frozen=True)
class PolicyProgress:
    label: str
    done: int
    total: int


@dataclass(frozen=True)
class StoreStatus:
    """Cells and tasks done against the plan, overall and by policy label."""

    path: Path
    spec_hash: str
    library_version: str
    created_at: str
    tasks_done: int
    tasks_total: int
    cells_done: int
    cells_total: int
    by_policy: tuple[PolicyProgress, ...]

    @property
    def complete(self) -> bool:
        return self.cells_done == self.cells_total


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":  # pragma: no cover
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, write: Callable[[IO[bytes]], Any]) -> None:
    """Write ``path`` through ``write(file)`` under ``path.tmp``, fsync, then rename."""
    tmp = path.with_name(path.name + TMP)
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class Store:
    """A sweep results directory."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def parts_dir(self) -> Path:
        return self.path / PARTS

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def manifest(self) -> Manifest:
        if not self.exists():
            raise StoreError(f"{self.path} is not a sweep results directory (no {MANIFEST})")
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            return Manifest(**data)
        except (OSError, ValueError, TypeError) as exc:
            raise StoreError(f"{self.manifest_path} cannot be read: {exc}") from None

    def spec(self) -> Spec:
        """The stored spec (relative mean-table paths start where the spec file was)."""
        m = self.manifest()
        return parse_spec(m.spec_text, m.spec_dir)

    def plan(self) -> Plan:
        """The stored spec's plan, with the task size it was started with."""
        return make_plan(self.spec(), self.manifest().target_steps)

    def create(self, spec: Spec, plan: Plan) -> None:
        """Write the manifest of a new sweep (the directory must be empty of results)."""
        from risingbandits import __version__

        manifest = Manifest(
            spec_text=spec.text,
            spec_hash=spec.hash,
            spec_dir=str(spec.base_dir),
            library_version=__version__,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            target_steps=plan.target_steps,
            tasks=len(plan.tasks),
            cells=plan.n_cells,
        )
        text = json.dumps(asdict(manifest), indent=2).encode()
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.manifest_path, lambda f: f.write(text))

    def check_new_or_same(self, spec: Spec) -> bool:
        """True when the directory holds this spec's sweep (resume), False when it is new.

        Refuses a directory of another spec, or a non-empty directory that is not a sweep.
        """
        if self.exists():
            stored = self.manifest().spec_hash
            if stored != spec.hash:
                raise StoreError(
                    f"{self.path} holds a sweep of another spec (hash {stored[:12]}; this spec "
                    f"has {spec.hash[:12]}): choose another --out, or `risingbandits sweep resume "
                    f"{self.path}` to finish the stored one"
                )
            return True
        if self.path.exists():
            if not self.path.is_dir():
                raise StoreError(f"{self.path} is a file: choose a directory for --out")
            if any(p.is_file() and not _is_scratch(p) for p in self.path.rglob("*")):
                raise StoreError(
                    f"{self.path} is not empty and is not a sweep results directory "
                    f"(no {MANIFEST}): choose another --out"
                )
        return False

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory's lock (refused at once when another run holds it)."""
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / LOCK, "a+b") as f:
            if fcntl is not None:
                try:
                    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise StoreError(
                        f"another sweep is writing into {self.path}: wait for it or stop it"
                    ) from None
            yield

    def part_path(self, task_id: str) -> Path:
        return self.parts_dir / f"{task_id}.parquet"

    def part_files(self) -> list[Path]:
        """Finished part files, sorted (temporary files are never listed)."""
        if not self.parts_dir.is_dir():
            return []
        return sorted(self.parts_dir.glob("*.parquet"))

    def done_ids(self) -> set[str]:
        return {p.stem for p in self.part_files()}

    def clean_tmp(self) -> int:
        """Remove the temporary files a killed run left behind; returns how many."""
        removed = 0
        for p in list(self.path.glob(f"*{TMP}")) + list(self.parts_dir.glob(f"*{TMP}")):
            p.unlink(missing_ok=True)
            removed += 1
        return removed

    def write_part(self, task_id: str, rows: pa.Table) -> None:
        """Write a task's rows atomically as ``parts/<task-id>.parquet``."""
        atomic_write(self.part_path(task_id), lambda f: pq.write_table(rows, f))

    def status(self) -> StoreStatus:
        """Done / total from the plan and the part files present (no part is opened)."""
        m = self.manifest()
        plan = self.plan()
        done = self.done_ids()
        totals = plan.cells_by_policy()
        finished: dict[str, int] = dict.fromkeys(totals, 0)
        tasks_done = 0
        for task in plan.tasks:
            if task.id in done:
                finished[task.policy.label] += task.n_cells
                tasks_done += 1
        return StoreStatus(
            path=self.path,
            spec_hash=m.spec_hash,
            library_version=m.library_version,
            created_at=m.created_at,
            tasks_done=tasks_done,
            tasks_total=len(plan.tasks),
            cells_done=sum(finished.values()),
            cells_total=plan.n_cells,
            by_policy=tuple(PolicyProgress(k, finished[k], totals[k]) for k in totals),
        )


def _is_scratch(path: Path) -> bool:
    """Files a killed run may leave before its manifest exists: the lock and ``*.tmp``."""
    return path.name == LOCK or path.name.endswith(TMP)
