"""``risingbandits sweep run | resume | status | summary`` end to end (serial executor)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from risingbandits.analysis.stats import MeanCI
from risingbandits.analysis.summary import Summary
from risingbandits.analysis.winrate import WinRates
from risingbandits.cli import app
from risingbandits.cli.sweep import print_summary
from risingbandits.experiments import Store, parse_spec
from test_experiments_spec import TINY

runner = CliRunner()


def sweep(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["sweep", *args], env={"COLUMNS": "200"})


def one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("cli")
    spec = base / "tiny.toml"
    spec.write_text(TINY)
    out = base / "out"
    result = sweep("run", str(spec), "--out", str(out), "--executor", "serial")
    assert result.exit_code == 0, result.output
    assert "done: 36 cells" in result.stderr
    return spec, out


def test_run_into_the_same_directory_says_it_resumes(store: tuple[Path, Path]) -> None:
    spec, out = store
    result = sweep("run", str(spec), "--out", str(out), "--executor", "serial")
    assert result.exit_code == 0
    assert f"resumed {out}: 36 of 36 cells were already done" in result.stderr


def test_run_of_another_spec_into_it_is_refused(store: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = store
    other = tmp_path / "other.toml"
    other.write_text(TINY.replace("sweep_seed = 3", "sweep_seed = 9"))
    line = one_error_line(sweep("run", str(other), "--out", str(out)))
    assert "holds a sweep of another spec" in line and "--out" in line


def test_a_bad_spec_is_one_line_naming_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(TINY.replace("sigma = 1.0", "eps = 0.9"))
    line = one_error_line(sweep("run", str(bad), "--out", str(tmp_path / "o")))
    assert "bad.toml: policies[2].params.eps: cure-ucb: eps=0.9 is not allowed" in line
    assert not (tmp_path / "o").exists()


def test_missing_dask_is_one_line_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    spec = tmp_path / "s.toml"
    spec.write_text(TINY)
    line = one_error_line(
        sweep("run", str(spec), "--out", str(tmp_path / "o"), "--executor", "dask")
    )
    assert "pip install risingbandits[dask]" in line


def test_status_shows_done_and_total_by_policy(store: tuple[Path, Path]) -> None:
    _, out = store
    result = sweep("status", str(out))
    assert result.exit_code == 0
    assert "36 / 36 cells (100.0%)" in result.stdout and "complete" in result.stdout
    for label in ("cure-ucb", "ucb1", "cure-ucb[sigma=1]"):
        assert label in result.stdout
    assert one_error_line(sweep("status", str(out / "nope"))).endswith(
        "is not a sweep results directory (no manifest.json)"
    )


def test_resume_of_a_complete_sweep_does_nothing(store: tuple[Path, Path]) -> None:
    _, out = store
    result = sweep("resume", str(out), "--executor", "serial")
    assert result.exit_code == 0 and "done: 0 cells (0 tasks)" in result.stderr


def test_too_many_workers_is_refused_before_anything_is_made(
    store: tuple[Path, Path], tmp_path: Path
) -> None:
    """--workers 10**30 was an OverflowError traceback once the pool started: after run had
    made the directory, or in the middle of a resume."""
    spec, out = store
    huge = str(10**30)
    new = tmp_path / "new"
    line = one_error_line(sweep("run", str(spec), "--out", str(new), "--workers", huge))
    assert line == f"error: --workers={huge} is not allowed: use an integer from 1 to 1,024"
    assert not new.exists()
    partial = tmp_path / "partial"
    shutil.copytree(out, partial)
    parts = sorted((partial / "parts").glob("*.parquet"))
    parts[0].unlink()
    assert one_error_line(sweep("resume", str(partial), "--workers", huge)) == line
    assert sorted((partial / "parts").glob("*.parquet")) == parts[1:]


def test_resume_remakes_a_removed_parts_folder(store: tuple[Path, Path], tmp_path: Path) -> None:
    """Without parts/ a resume failed on its first write ("No such file or directory ... make
    room", exit code 1): it now computes every task again."""
    _, out = store
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    shutil.rmtree(copy / "parts")
    result = sweep("resume", str(copy), "--executor", "serial")
    assert result.exit_code == 0, result.output
    assert "done: 36 cells" in result.stderr
    names = sorted(p.name for p in (out / "parts").glob("*.parquet"))
    assert sorted(p.name for p in (copy / "parts").glob("*.parquet")) == names


def test_summary_formats_agree_with_the_rows(store: tuple[Path, Path]) -> None:
    _, out = store
    values: dict[tuple[str, int], list[float]] = {}
    for path in Store(out).part_files():
        for r in pq.read_table(path).to_pylist():
            values.setdefault((r["policy"], r["horizon"]), []).append(r["regret"])
    data = json.loads(sweep("summary", str(out), "--format", "json").stdout)
    assert {(r["policy"], r["horizon"]) for r in data["regret"]} == set(values)
    for r in data["regret"]:
        assert r["mean"] == pytest.approx(np.mean(values[r["policy"], r["horizon"]]))
        assert r["n"] == 6
    table = list(csv.DictReader(io.StringIO(sweep("summary", str(out), "--format", "csv").stdout)))
    assert {r["metric"] for r in table} == {"regret", "final_gap", "rank", "win_rate"}
    text = sweep("summary", str(out)).stdout
    assert "Policy regret (mean ± 95% CI, t-interval)" in text
    assert "Average rank" in text and "Win rate % at T=300" in text
    boot = sweep("summary", str(out), "--horizon", "120", "--ci", "bootstrap", "--resamples", "500")
    assert boot.exit_code == 0 and "percentile bootstrap" in boot.stdout
    assert "Win rate % at T=120" in boot.stdout and "T=300" not in boot.stdout
    line = one_error_line(sweep("summary", str(out), "--horizon", "7"))
    assert "--horizon=7 is not allowed: the sweep has horizons 120, 300" in line


def test_summary_refuses_too_many_resamples(store: tuple[Path, Path]) -> None:
    """--resamples 10**10 was a MemoryError traceback, 10**30 numpy's "Maximum allowed
    dimension exceeded"."""
    _, out = store
    for huge in (str(10**10), str(10**30)):
        line = one_error_line(sweep("summary", str(out), "--ci", "bootstrap", "--resamples", huge))
        assert (
            line == f"error: --resamples={huge} is not allowed: use an integer from 1 to 1,000,000"
        )


def test_summary_by_final_gap(store: tuple[Path, Path]) -> None:
    _, out = store
    gaps: dict[tuple[str, int], list[float]] = {}
    for path in Store(out).part_files():
        for r in pq.read_table(path).to_pylist():
            gaps.setdefault((r["policy"], r["horizon"]), []).append(r["final_gap"])
    result = sweep("summary", str(out), "--metric", "final-gap", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ranked_by"] == "final_gap"
    for r in data["final_gap"]:
        assert r["mean"] == pytest.approx(np.mean(gaps[r["policy"], r["horizon"]]))
    text = sweep("summary", str(out), "--metric", "final-gap").stdout
    assert "Final-model gap (mean ± 95% CI, t-interval)" in text
    assert "final-model gap = max_i mu_i(T) - mu_rec(N_rec)" in text
    assert "Average rank by final-model gap" in text
    assert "Win rate % at T=300 by final-model gap" in text
    assert "Average rank by regret" in sweep("summary", str(out)).stdout


def test_the_table_marks_reconstructions_with_a_star_and_a_note() -> None:
    from rich.console import Console

    spec = parse_spec(TINY.replace('name = "ucb1"', 'name = "ti-ucb"'))
    ci = MeanCI(1.0, 0.5, 1.5, 4)
    from risingbandits.analysis.ranks import RankRow
    from risingbandits.analysis.summary import MeanRow

    labels = [p.label for p in spec.policies]
    s = Summary(
        "store",
        "",
        spec.policies,
        (300,),
        tuple(MeanRow(p, 300, ci) for p in labels),
        tuple(RankRow(p, 300, ci) for p in labels),
        (WinRates(300, tuple(labels), np.full((3, 3), 0.5), 4),),
        10,
        10,
        "t",
        0.95,
    )
    console = Console(file=io.StringIO(), width=200, markup=False)
    print_summary(s, console)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "ti-ucb*" in text and "cure-ucb*" not in text
    assert "* reconstruction:" in text
