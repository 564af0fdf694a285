"""The results directory of a sweep: a manifest and one Parquet part file per finished task.

Layout::

    DIR/manifest.json            spec text, spec hash, input digests, library version, code
                                 digest, created at, plan size
    DIR/parts/<task-id>.parquet  the rows of one task (task id and spec hash in its metadata)
    DIR/parts/.damaged/          files a resume set aside (never deleted)

Every file is written under a temporary name (``.NAME.<random>.tmp``), flushed to disk (fsync)
and renamed into place (:func:`~risingbandits.outputs.atomic_write`), so a reader sees a whole
file or none, and a process killed at any moment leaves no half file visible: resuming cleans
the temporary files and runs the tasks whose part is missing. A sweep (run or resume) refuses a
directory another user could write or replace before reading anything from it
(:func:`~risingbandits.outputs.check_ours`). Parts are checked before they are counted
(:mod:`.integrity`): a resume moves damaged, duplicate and foreign files to
``parts/.damaged/`` and recomputes their tasks; the summary refuses a store that holds any. A
directory never mixes two specs: one with another spec hash is refused, and a manifest whose
spec no longer gives its recorded hash (a means file changed, or the manifest was edited) is
refused with the reason; nor two codes: a resume by code other than the one that started the
sweep is refused (:mod:`risingbandits.provenance`). A lock file (``DIR/.lock``, ``flock``)
keeps two runs from writing into one directory at once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from risingbandits.experiments.integrity import (
    PartProblem,
    PartsReport,
    check_parts,
    with_part_metadata,
    write_part_file,
)
from risingbandits.experiments.plan import Plan, make_plan
from risingbandits.experiments.spec import Spec, parse_spec
from risingbandits.outputs import (
    atomic_write,
    check_ours,
    fsync_dir,
    temporary_pattern,
    writable_dir,
)
from risingbandits.policies.machinery.checkpoint import shown
from risingbandits.provenance import code_digest

try:
    import fcntl
except ImportError:  # pragma: no cover (not POSIX: no lock)
    fcntl = None  # type: ignore[assignment]

MANIFEST = "manifest.json"
PARTS = "parts"
LOCK = ".lock"
SET_ASIDE = ".damaged"
FORMAT = 2
"""2: parts carry their task id and spec hash, the manifest the digests of its input files
(format 1 stores are still read: see :mod:`.integrity`)."""


TEXT_FIELDS = {
    "spec_text": "a spec",
    "spec_hash": "a digest",
    "spec_dir": "a folder",
    "library_version": "a version",
    "created_at": "a time",
    "code": "a digest",
}
"""The manifest's fields that must be text, and what each is."""


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
    inputs: dict[str, str] = field(default_factory=dict)
    """SHA-256 of each mean-table file, keyed by ``means_file`` as the spec writes it."""
    code: str = ""
    """:func:`~risingbandits.provenance.code_digest` of the code that started the sweep (empty
    in stores made before it was recorded)."""


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
    code: str
    created_at: str
    tasks_done: int
    tasks_total: int
    cells_done: int
    cells_total: int
    by_policy: tuple[PolicyProgress, ...]
    problems: tuple[PartProblem, ...] = ()

    @property
    def complete(self) -> bool:
        return self.cells_done == self.cells_total


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
        except (OSError, ValueError) as exc:
            raise StoreError(f"{self.manifest_path} cannot be read: {exc}") from None
        except RecursionError:
            raise StoreError(
                f"{self.manifest_path} cannot be read: JSON nested too deeply"
            ) from None
        names = {f.name for f in fields(Manifest)}
        needed = {
            f.name
            for f in fields(Manifest)
            if f.default is MISSING and f.default_factory is MISSING
        }
        if not isinstance(data, dict) or not needed <= data.keys() <= names:
            # a file of the user's: the fields were Manifest(**data)'s TypeError, a class name
            raise StoreError(
                f"{self.manifest_path} is not a sweep manifest (a sweep's records "
                f"{', '.join(sorted(needed))}, and may record {', '.join(sorted(names - needed))})"
            )
        manifest = Manifest(**data)
        for name, what in TEXT_FIELDS.items():
            value = getattr(manifest, name)
            if not isinstance(value, str):
                raise StoreError(
                    f"{self.manifest_path}: {name}={shown(value)} is not allowed: {what} is text"
                )
        if manifest.format not in (1, FORMAT):
            raise StoreError(
                f"{self.manifest_path}: format={manifest.format!r} is not allowed: this "
                f"risingbandits reads formats 1 and {FORMAT}"
            )
        return manifest

    def spec(self) -> Spec:
        """The stored spec (relative mean-table paths start where the spec file was), refused
        when it no longer gives the recorded hash: a means file changed, the manifest was
        edited, or this library resolves a policy's parameters differently (the hash covers
        them as resolved)."""
        m = self.manifest()
        try:
            spec = parse_spec(m.spec_text, m.spec_dir)
        except ValueError as exc:
            raise StoreError(
                f"{self.manifest_path}: spec_text={shown(m.spec_text)} is not allowed: {exc} "
                "(was it edited? restore it, or run the spec into a new --out)"
            ) from None
        if spec.hash != m.spec_hash:
            raise StoreError(self._mismatch(m, spec, resuming=True))
        return spec

    def plan(self) -> Plan:
        """The stored spec's plan, with the task size it was started with (refused when it
        disagrees with the manifest's task and cell counts)."""
        m = self.manifest()
        plan = make_plan(self.spec(), m.target_steps)
        if (len(plan.tasks), plan.n_cells) != (m.tasks, m.cells):
            raise StoreError(
                f"{self.manifest_path} says {m.tasks} tasks and {m.cells} cells but its spec "
                f"plans {len(plan.tasks)} and {plan.n_cells} (was it edited?): restore it, or "
                "run the spec into a new --out"
            )
        return plan

    def _mismatch(self, m: Manifest, spec: Spec, resuming: bool) -> str:
        """Why ``spec`` does not have the stored hash, and what to do."""
        changed = [
            name for name, digest in spec.input_hashes if m.inputs.get(name, digest) != digest
        ]
        if m.inputs and spec.hash_with_inputs(m.inputs) == m.spec_hash and changed:
            files = ", ".join(repr(n) for n in changed)
            was = ", ".join(m.inputs[n][:12] for n in changed)
            return (
                f"{self.path}: means file {files} changed since this sweep started (sha256 "
                f"{was}... then): put the original back to resume, or run the spec into a new "
                "--out for the new data"
            )
        if resuming and not m.inputs and spec.input_hashes:
            files = ", ".join(repr(name) for name, _ in spec.input_hashes)
            return (
                f"{self.manifest_path}: its spec no longer gives the recorded hash: means file "
                f"{files} changed or the manifest was edited: restore them, or run the spec "
                "into a new --out"
            )
        if resuming:
            from risingbandits import __version__

            return (
                f"{self.manifest_path}: its spec_text does not give its spec_hash "
                f"{m.spec_hash[:12]}: the manifest was edited, or this risingbandits "
                f"({__version__}) resolves one of its policies differently from the one that "
                f"ran it ({m.library_version[:40]}; a parameter added or a default changed): "
                "restore the manifest or read the store with that version, or run the spec into "
                "a new --out"
            )
        return (
            f"{self.path} holds a sweep of another spec (hash {m.spec_hash[:12]}; this spec "
            f"has {spec.hash[:12]}): choose another --out, or `risingbandits sweep resume "
            f"{self.path}` to finish the stored one"
        )

    def create(self, spec: Spec, plan: Plan) -> None:
        """Write the manifest of a new sweep (the directory must be empty of results)."""
        from risingbandits import __version__

        manifest = Manifest(
            spec_text=spec.text,
            spec_hash=spec.hash,
            spec_dir=str(spec.base_dir),
            library_version=__version__,
            code=code_digest(),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            target_steps=plan.target_steps,
            tasks=len(plan.tasks),
            cells=plan.n_cells,
            inputs=dict(spec.input_hashes),
        )
        text = json.dumps(asdict(manifest), indent=2).encode()
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.manifest_path, lambda f: f.write(text))

    def discard_new(self) -> None:
        """Undo :meth:`create` while no part is written: the manifest and the empty parts
        folder go (the folder holds no result, and stays free for another spec)."""
        if any(self.parts_dir.iterdir()):
            return
        self.manifest_path.unlink(missing_ok=True)
        self.parts_dir.rmdir()

    def check_new_or_same(self, spec: Spec) -> bool:
        """True when the directory holds this spec's sweep (resume), False when it is new.

        Refuses a directory another user could write or replace (before reading it), one of
        another spec, or of the same spec started by other code
        (:func:`~risingbandits.provenance.code_digest`; a store that does not record it is
        taken as it is), or a non-empty directory that is not a sweep.
        """
        check_ours(self.path, "out")
        if self.exists():
            m = self.manifest()
            if m.spec_hash != spec.hash:
                raise StoreError(self._mismatch(m, spec, resuming=False))
            if m.code and m.code != code_digest():
                raise StoreError(
                    f"{self.path} was started by other risingbandits code (code "
                    f"{m.code[:12]}; this one {code_digest()[:12]}: a policy or the simulator "
                    "changed), so its rows and new ones would mix: run the spec into a new --out,"
                    " or resume with the code that started it; its rows can still be read as "
                    "they are (`sweep summary`, `reproduce --report-only`)"
                )
            return True
        if self.path.exists():
            if not self.path.is_dir():
                raise StoreError(f"{self.path} is a file: choose a directory for --out")
            if any(p.is_file() and not self._is_scratch(p) for p in self.path.rglob("*")):
                raise StoreError(
                    f"{self.path} is not empty and is not a sweep results directory "
                    f"(no {MANIFEST}): choose another --out"
                )
        return False

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory's lock (refused at once when another run holds it); the
        directory is made and tried for writing first."""
        writable_dir(self.path, "out")
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
        """Every part file, sorted, checked or not (temporary files are never listed)."""
        if not self.parts_dir.is_dir():
            return []
        return sorted(self.parts_dir.glob("*.parquet"))

    def inspect(
        self,
        full: bool = False,
        plan: Plan | None = None,
        keep_rows: bool | Collection[str] = False,
    ) -> PartsReport:
        """Every part file checked against the plan (``full``: every row and page checksum;
        ``keep_rows``: keep the rows read by the full check, or only the named columns)."""
        tasks = {t.id: t for t in (self.plan() if plan is None else plan).tasks}
        return check_parts(
            self.part_files(), tasks, self.manifest().spec_hash, full=full, keep_rows=keep_rows
        )

    def done_ids(self) -> set[str]:
        """Tasks whose part passes the full check."""
        return set(self.inspect(full=True).good)

    def verified_parts(self, report: PartsReport | None = None) -> list[Path]:
        """The good part of every finished task, once each; refused (one line that says to
        resume) when any part file is damaged, a duplicate or foreign."""
        if report is None:
            report = self.inspect(full=True)
        if report.problems:
            raise StoreError(
                f"{self.path} holds {report.describe()} ({report.problems[0]}): run "
                f"`risingbandits sweep resume {self.path}` to set them aside and recompute them"
            )
        return sorted(report.good.values())

    def verified_rows(self, report: PartsReport | None = None) -> list[pa.Table]:
        """The rows of every finished task, one table per part in task order, as the full check
        read them (``report``: one made with ``full=True`` and ``keep_rows``): readers query
        these, never the files again. Empty before the first part; refused like
        :meth:`verified_parts`."""
        if report is None:
            report = self.inspect(full=True, keep_rows=True)
        self.verified_parts(report)
        return [report.rows[k] for k in sorted(report.rows)]

    def set_aside(self, problems: tuple[PartProblem, ...]) -> list[Path]:
        """Move the given files to ``parts/.damaged/`` (never overwriting, never deleting);
        returns where they went."""
        target_dir = self.parts_dir / SET_ASIDE
        moved = []
        for problem in problems:
            target_dir.mkdir(exist_ok=True)
            target = target_dir / problem.path.name
            k = 0
            while target.exists():
                k += 1
                target = target_dir / f"{problem.path.name}.{k}"
            os.replace(problem.path, target)
            moved.append(target)
        if moved:
            fsync_dir(self.parts_dir)
        return moved

    def _is_scratch(self, path: Path) -> bool:
        """Files a killed run may leave before its manifest exists: the lock and the manifest's
        temporary files (another ``*.tmp`` is someone's file: never counted as ours)."""
        return path.parent == self.path and (
            path.name == LOCK or path.match(temporary_pattern(MANIFEST))
        )

    def clean_tmp(self) -> int:
        """Remove the temporary files a killed run left behind (the manifest's and the parts');
        returns how many."""
        removed = 0
        pattern = temporary_pattern()
        for p in [*self.path.glob(temporary_pattern(MANIFEST)), *self.parts_dir.glob(pattern)]:
            p.unlink(missing_ok=True)
            removed += 1
        return removed

    def write_part(self, task_id: str, rows: pa.Table, spec_hash: str | None = None) -> None:
        """Write a task's rows atomically as ``parts/<task-id>.parquet``, with the task id and
        the spec hash (default: the manifest's) in its metadata and page checksums."""
        table = with_part_metadata(rows, task_id, spec_hash or self.manifest().spec_hash)
        atomic_write(self.part_path(task_id), lambda f: write_part_file(table, f))

    def status(self, report: PartsReport | None = None) -> StoreStatus:
        """Done / total from the plan and the parts that pass the quick check (footers only),
        with the files that do not."""
        m = self.manifest()
        plan = self.plan()
        if report is None:
            report = self.inspect(plan=plan)
        done = report.good
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
            code=m.code,
            created_at=m.created_at,
            tasks_done=tasks_done,
            tasks_total=len(plan.tasks),
            cells_done=sum(finished.values()),
            cells_total=plan.n_cells,
            by_policy=tuple(PolicyProgress(k, finished[k], totals[k]) for k in totals),
            problems=report.problems,
        )
