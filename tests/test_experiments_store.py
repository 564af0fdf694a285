"""The results directory: manifest, atomic parts, refusal of another spec, resume, status."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import risingbandits as rb
from risingbandits.experiments import (
    Store,
    StoreError,
    make_plan,
    parse_spec,
    resume_sweep,
    run_sweep,
)
from test_experiments_spec import TINY

TARGET = 800  # several tasks per (instance, policy) pair


def read_rows(path: Path) -> list[dict]:
    rows = [r for p in Store(path).part_files() for r in pq.read_table(p).to_pylist()]
    for r in rows:
        r.pop("wall_time")
    return sorted(rows, key=lambda r: (r["instance"], r["policy"], r["horizon"], r["seed"]))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("store") / "sweep"
    run_sweep(parse_spec(TINY), out, executor="serial", target_steps=TARGET)
    return out


def test_manifest_records_spec_hash_version_time_and_plan(finished: Path) -> None:
    data = json.loads((finished / "manifest.json").read_text())
    spec = parse_spec(TINY)
    plan = make_plan(spec, TARGET)
    assert data["spec_text"] == TINY
    assert data["spec_hash"] == spec.hash
    assert data["library_version"] == rb.__version__
    assert datetime.fromisoformat(data["created_at"]).tzinfo is not None
    assert (data["tasks"], data["cells"], data["target_steps"]) == (
        len(plan.tasks),
        plan.n_cells,
        TARGET,
    )


def test_one_part_per_task_with_exactly_the_planned_cells(finished: Path) -> None:
    plan = make_plan(parse_spec(TINY), TARGET)
    assert Store(finished).done_ids() == {t.id for t in plan.tasks}
    rows = read_rows(finished)
    keys = [(r["instance"], r["policy"], r["horizon"], r["seed"]) for r in rows]
    assert len(keys) == len(set(keys)) == plan.n_cells
    assert not list(finished.rglob("*.tmp"))


def test_verified_rows_are_every_part_read_once(finished: Path) -> None:
    rows = [r for t in Store(finished).verified_rows() for r in t.to_pylist()]
    on_disk = [r for p in Store(finished).part_files() for r in pq.read_table(p).to_pylist()]
    assert rows == on_disk  # every row, in task order


def test_the_full_check_can_keep_only_the_named_columns(finished: Path) -> None:
    report = Store(finished).inspect(full=True, keep_rows=["seed", "regret", "absent"])
    assert report.rows.keys() == report.good.keys()
    assert all(t.column_names == ["seed", "regret"] for t in report.rows.values())


def test_verified_rows_of_a_store_without_parts_are_empty(tmp_path: Path) -> None:
    out = tmp_path / "empty"
    spec = parse_spec(TINY)
    Store(out).create(spec, make_plan(spec, TARGET))
    assert Store(out).verified_rows() == []


def test_another_spec_is_refused_and_nothing_is_written(finished: Path) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in Store(finished).part_files()}
    other = parse_spec(TINY.replace("sweep_seed = 3", "sweep_seed = 4"))
    with pytest.raises(StoreError, match=r"holds a sweep of another spec \(hash [0-9a-f]{12};"):
        run_sweep(other, finished, executor="serial")
    assert {p.name: p.stat().st_mtime_ns for p in Store(finished).part_files()} == before


def test_the_same_spec_resumes_with_nothing_to_do(finished: Path) -> None:
    result = run_sweep(parse_spec(TINY), finished, executor="serial")
    assert result.resumed and result.tasks_run == 0
    assert result.cells_before == result.cells_total


def test_resume_runs_only_missing_tasks_and_cleans_temporary_files(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(parse_spec(TINY), out, executor="serial", target_steps=TARGET)
    full = read_rows(out)
    store = Store(out)
    victim = store.part_files()[3]
    victim.unlink()
    half = victim.with_name(f".{victim.name}.0123456789abcdef.tmp")
    half.write_bytes(b"PAR1 truncated")  # what a kill during a write leaves
    (out / ".manifest.json.0123456789abcdef.tmp").write_bytes(b"{")
    status = store.status()
    assert status.cells_done < status.cells_total and not status.complete
    calls: list[tuple[int, int]] = []
    result = resume_sweep(out, executor="serial", progress=lambda d, n: calls.append((d, n)))
    assert result.resumed and result.tasks_run == 1
    assert calls[0] == (status.cells_done, status.cells_total)
    assert calls[-1] == (status.cells_total, status.cells_total)
    assert not list(out.rglob("*.tmp"))
    assert read_rows(out) == full
    assert store.status().complete


def test_status_counts_cells_by_policy(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(parse_spec(TINY), out, executor="serial", target_steps=TARGET)
    store = Store(out)
    plan = store.plan()
    dropped = [t for t in plan.tasks if t.policy.label == "ucb1"][:2]
    for t in dropped:
        store.part_path(t.id).unlink()
    st = store.status()
    by = {p.label: (p.done, p.total) for p in st.by_policy}
    totals = plan.cells_by_policy()
    lost = sum(t.n_cells for t in dropped)
    assert by["ucb1"] == (totals["ucb1"] - lost, totals["ucb1"])
    assert by["cure-ucb"] == (totals["cure-ucb"], totals["cure-ucb"])
    assert (st.tasks_done, st.tasks_total) == (len(plan.tasks) - 2, len(plan.tasks))
    assert st.cells_done == st.cells_total - lost


def test_a_directory_that_is_not_a_sweep_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="is not empty and is not a sweep results directory"):
        run_sweep(parse_spec(TINY), tmp_path, executor="serial")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]  # left untouched
    with pytest.raises(StoreError, match="is not a sweep results directory"):
        resume_sweep(tmp_path, executor="serial")


def test_a_manifest_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(StoreError, match=r"manifest\.json cannot be read: JSON nested too deeply"):
        resume_sweep(tmp_path, executor="serial")


def test_leftovers_of_a_run_killed_before_its_manifest_are_accepted(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    out.mkdir()
    (out / ".lock").write_bytes(b"")
    (out / ".manifest.json.0123456789abcdef.tmp").write_bytes(b"{")
    spec = parse_spec(TINY.replace("seeds = 2", "seeds = 1"))
    result = run_sweep(spec, out, executor="serial")
    assert not result.resumed and Store(out).status().complete


def test_a_directory_holding_someone_elses_tmp_file_is_refused_and_the_file_kept(
    tmp_path: Path,
) -> None:
    (tmp_path / "draft.tmp").write_text("mine")  # named like a temporary file, but not ours
    with pytest.raises(StoreError, match="is not empty and is not a sweep results directory"):
        run_sweep(parse_spec(TINY), tmp_path, executor="serial")
    assert (tmp_path / "draft.tmp").read_text() == "mine"


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    with Store(out).lock(), pytest.raises(StoreError, match="another sweep is writing"):
        run_sweep(parse_spec(TINY), out, executor="serial")


def test_the_library_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = parse_spec(TINY.replace("seeds = 2", "seeds = 1"))
    run_sweep(spec, tmp_path / "quiet", executor="serial")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
