"""Work beside the sweeps and the report: the theory checks (kept ones are read, missing ones run
on the pool), any function mapped over items in the background, figures drawn on a worker."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest

from risingbandits.experiments.executors import ProcessExecutor, SerialExecutor
from risingbandits.plots.common import save
from risingbandits.reproduce import run as run_module
from risingbandits.reproduce import theory_checks
from risingbandits.reproduce.background import InBackground, figures_on
from risingbandits.reproduce.run import pending_theory
from risingbandits.reproduce.theory_checks import load_theory, theory_params


def fake_checks(instances: int) -> dict[str, Any]:
    return {"params": theory_params(instances), "thread": threading.current_thread().name}


def broken_checks(instances: int) -> dict[str, Any]:
    raise ValueError(f"no checks for {instances} instances")


def test_missing_checks_run_beside_the_caller_and_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "run_theory_checks", fake_checks)
    path = tmp_path / "theory.json"
    with SerialExecutor() as pool:
        get = pending_theory(pool, path, 7, compute=True)
        checks = get()
    assert checks is not None and checks["params"] == theory_params(7)
    assert checks["thread"] == "risingbandits-background"  # not the caller's thread
    assert get() is checks and load_theory(path, 7) == checks

    monkeypatch.setattr(run_module, "run_theory_checks", broken_checks)
    with SerialExecutor() as pool:  # kept checks of the same parameters: nothing runs
        assert pending_theory(pool, path, 7, compute=True)() == checks
        failing = pending_theory(pool, path, 8, compute=True)  # starts, raises when asked
        with pytest.raises(ValueError, match="no checks for 8 instances"):
            failing()
    assert load_theory(path, 7) == checks  # a failed run replaces nothing


def test_damaged_or_stale_kept_checks_are_computed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file cut by a kill, edited, of another shape or of other code is not read: the checks
    run again (before, a cut file stopped the report with a JSONDecodeError)."""
    monkeypatch.setattr(run_module, "run_theory_checks", fake_checks)
    path = tmp_path / "theory.json"
    with SerialExecutor() as pool:
        checks = pending_theory(pool, path, 7, compute=True)()
    whole = path.read_text()
    edited = json.loads(whole)
    edited["thread"] = "another"
    for text in (whole[: len(whole) // 2], "[1, 2]", "{" * 100_000, json.dumps(edited)):
        path.write_text(text)
        assert load_theory(path, 7) is None
        with SerialExecutor() as pool:
            assert pending_theory(pool, path, 7, compute=True)() == checks
        assert load_theory(path, 7) == checks
    monkeypatch.setattr(theory_checks, "code_digest", lambda *modules: "0" * 64)
    assert load_theory(path, 7) is None  # kept by other code


def test_checks_not_kept_and_not_asked_for_are_none(tmp_path: Path) -> None:
    with SerialExecutor() as pool:
        assert pending_theory(pool, tmp_path / "theory.json", 7, compute=False)() is None
    assert not (tmp_path / "theory.json").exists()


@pytest.mark.parametrize("executor", [SerialExecutor, lambda: ProcessExecutor(1)])
def test_work_in_the_background_is_found_by_its_item_with_its_own_error(executor: Any) -> None:
    with executor() as pool:
        job = InBackground(pool, math.sqrt, [4.0, -1.0, 9.0])
        assert job.get(9.0) == 3.0 and job.get(4.0) == 2.0  # any order
        with pytest.raises(ValueError, match="math domain error"):
            job.get(-1.0)
        assert 4.0 in job and 16.0 not in job


def test_a_closed_pool_is_heard_by_every_waiter() -> None:
    with ProcessExecutor(1) as pool:
        pass
    job = InBackground(pool, math.sqrt, [4.0])
    with pytest.raises(RuntimeError, match="with` block"):
        job.get(4.0)


def a_figure() -> Any:
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [1, 3, 2], label="curve")
    ax.set_title("a figure")
    ax.legend()
    return fig


def test_a_figure_drawn_on_a_worker_is_the_same_file_written_when_the_block_ends(
    tmp_path: Path,
) -> None:
    here = save(a_figure(), tmp_path / "here.png")
    with ProcessExecutor(1) as pool:
        with figures_on(pool):
            there = save(a_figure(), tmp_path / "there.png")
            assert not there.exists()
        assert there.read_bytes() == here.read_bytes()
    assert plt.get_fignums() == []  # save closed both
