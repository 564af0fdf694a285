"""Which code computed kept rows: a sweep started by other code is not resumed, kept task files
of other code are computed again, and `sweep status` says which code started a store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from risingbandits.experiments import Store, StoreError, parse_spec, resume_sweep, run_sweep
from risingbandits.provenance import ROW_CODE, code_digest, tree_digest
from risingbandits.reproduce import task_rows
from risingbandits.reproduce.deadlines import DeadlineTask, task_fingerprint
from test_experiments_cli import one_error_line, sweep
from test_experiments_spec import TINY
from test_reproduce_deadlines import _Bed


def test_the_digest_follows_the_listed_files_only(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "ucb.py").write_text("C = 1\n")
    (tmp_path / "simulate.py").write_text("LOOP = 1\n")
    (tmp_path / "plots.py").write_text("DPI = 100\n")
    names = ["policies", "simulate.py"]
    before = tree_digest(tmp_path, names)
    (tmp_path / "plots.py").write_text("DPI = 200\n")  # presentation: not listed
    assert tree_digest(tmp_path, names) == before
    (tmp_path / "policies" / "ucb.py").write_text("C = 2\n")
    changed = tree_digest(tmp_path, names)
    assert changed != before
    (tmp_path / "policies" / "ucb.py").rename(tmp_path / "policies" / "kl.py")
    assert tree_digest(tmp_path, names) != changed  # same bytes, another module


def test_the_package_digest_covers_the_row_code_and_the_extra_modules() -> None:
    base = code_digest()
    assert len(base) == 64 and int(base, 16) >= 0
    assert code_digest("reproduce/deadlines.py") not in (base, code_digest("reproduce/peers.py"))
    root = Path(task_rows.__file__).parents[1]
    assert all((root / name).exists() for name in ROW_CODE)


def test_kept_task_rows_of_other_code_are_another_fingerprint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = DeadlineTask(_Bed("toy", "toy", "none", "test", 1, 2), 0)
    same = task_fingerprint(task)
    monkeypatch.setattr(task_rows, "code_digest", lambda *extra: "0" * 64)
    assert task_fingerprint(task) != same


def _started_by(out: Path, code: str | None) -> None:
    """Make the store's manifest record ``code`` (None: no code, as before it was recorded)."""
    manifest = out / "manifest.json"
    data = json.loads(manifest.read_text())
    if code is None:
        del data["code"]
    else:
        data["code"] = code
    manifest.write_text(json.dumps(data))


def test_a_sweep_started_by_other_code_is_not_resumed(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(parse_spec(TINY), out, executor="serial")
    assert Store(out).manifest().code == code_digest()
    victim = Store(out).part_files()[0]
    victim.unlink()  # one task left to run
    _started_by(out, "a" * 64)
    before = sorted(p.name for p in Store(out).part_files())
    for again in (
        lambda: run_sweep(parse_spec(TINY), out, executor="serial"),
        lambda: resume_sweep(out, executor="serial"),
    ):
        with pytest.raises(StoreError, match=r"started by other risingbandits code \(code a{12}"):
            again()
    assert sorted(p.name for p in Store(out).part_files()) == before  # nothing written
    status = sweep("status", str(out))
    other = f"code aaaaaaaaaaaa (not this code, {code_digest()[:12]})"
    assert status.exit_code == 0 and other in status.stdout
    assert "run the spec into a new --out" in one_error_line(sweep("resume", str(out)))


def test_a_store_that_records_no_code_resumes_as_before(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(parse_spec(TINY), out, executor="serial")
    shutil.move(Store(out).part_files()[0], tmp_path / "gone.parquet")
    _started_by(out, None)
    assert "code not recorded" in sweep("status", str(out)).stdout
    result = resume_sweep(out, executor="serial")
    assert result.resumed and result.tasks_run == 1 and Store(out).status().complete
    _started_by(out, code_digest())
    assert f"code {code_digest()[:12]} (this code)" in sweep("status", str(out)).stdout


def test_a_manifest_whose_code_is_not_text_is_refused_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(parse_spec(TINY), out, executor="serial")
    _started_by(out, 5)  # type: ignore[arg-type]
    with pytest.raises(StoreError, match=r"code=5 is not allowed: a digest is text"):
        run_sweep(parse_spec(TINY), out, executor="serial")
    assert "code=5 is not allowed" in one_error_line(sweep("status", str(out)))
