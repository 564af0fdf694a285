"""Issue 14, items 4 and 7: output that says what it means.

``demo`` checks its output directory before computing; a bar that waits for kernels to compile
says so; the sweep bar's rate is the final line's rate; rank intervals stay within the ranks;
``run --json`` shows the sigma used; ``theory dominance --search`` lists each counterexample
once; ``modelselect imdb`` says what its regret is measured on; the README's commands name files
that exist and its test command builds its own environment.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import duckdb
import numpy as np
import pytest
from rich.console import Console
from rich.progress import Progress
from typer.testing import CliRunner

import risingbandits as rb
import risingbandits._jit as jit
import risingbandits.cli.demo as demo_cli
import risingbandits.cli.progress as progress_cli
from risingbandits.analysis.ranks import average_ranks
from risingbandits.cli import app
from risingbandits.cli.progress import COMPILING, bar_task
from risingbandits.cli.sweep import CellRate, cell_rate
from test_modelselect_data import write_aclimdb

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


@pytest.mark.parametrize("out", ["/sys/risingbandits-test/demo", "/dev/null/demo"])
def test_demo_refuses_an_unwritable_out_before_computing(
    out: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_computing(*args: object, **kwargs: object) -> None:
        raise AssertionError("demo computed before checking --out")

    monkeypatch.setattr(demo_cli, "simulate_horizons", no_computing)
    result = runner.invoke(app, ["demo", "--out", out, "--seeds", "2"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: --out={out!r} cannot be written (")
    assert line.endswith("): choose a writable directory")


def test_kernels_cached_looks_for_compiled_kernels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jit, "cache_dir", lambda: tmp_path)
    assert not jit.kernels_cached()
    (tmp_path / "risingbandits_0123").mkdir()  # Numba's folder of the module's package
    (tmp_path / "risingbandits_0123" / "simulate._run-37.py311.nbi").write_bytes(b"")
    assert jit.kernels_cached()


def test_kernels_cached_once_a_kernel_is_compiled() -> None:
    """It looked only at the cache's top folder, where Numba writes nothing: every progress bar
    said "compiling kernels (first run only)", also with every kernel on disk."""
    if jit.cache_dir() is None:
        pytest.skip("kernels are not cached on disk in this process (RISINGBANDITS_NO_JIT_CACHE)")
    rb.simulate(rb.intro(20), "ucb1", 10)  # compiled and saved, or loaded from the cache
    assert jit.kernels_cached()


@pytest.mark.parametrize("cached", [False, True])
def test_a_bar_waiting_for_compilation_says_so(
    cached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress_cli, "kernels_cached", lambda: cached)
    bar = Progress(console=Console(file=io.StringIO()))
    update = bar_task(bar, "cure-ucb seeds", 20)
    first = bar.tasks[0].description
    assert first == ("cure-ucb seeds" if cached else f"cure-ucb seeds: {COMPILING}")
    assert COMPILING == "compiling kernels (first run only)"
    update(1, 20)
    assert bar.tasks[0].description == "cure-ucb seeds" and bar.tasks[0].completed == 1


def test_the_sweep_bar_shows_the_same_rate_as_the_final_line() -> None:
    now = [0.0]
    bar = Progress(console=Console(file=io.StringIO()), get_time=lambda: now[0])
    update = bar_task(bar, "cells", 1000, 100, before=100)  # 100 cells from an earlier run
    for t, done in ((1.0, 110), (2.0, 300), (4.0, 340)):  # uneven progress
        now[0] = t
        update(done, 1000)
    task = bar.tasks[0]
    shown = CellRate().render(task).plain
    assert shown == cell_rate(340 - 100, 4.0) == "60.0 cells/s"
    assert task.speed is not None and f"{task.speed:,.1f} cells/s" != shown  # rich's window


def test_rank_intervals_stay_within_the_possible_ranks() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE rows (instance VARCHAR, seed BIGINT, horizon BIGINT, policy VARCHAR, "
        "regret DOUBLE)"
    )
    regrets = {"a": (1.0, 5.0, 1.0), "b": (2.0, 2.0, 2.0), "c": (3.0, 3.0, 3.0)}
    for policy, values in regrets.items():
        for seed, regret in enumerate(values):
            con.execute("INSERT INTO rows VALUES ('i', ?, 10, ?, ?)", [seed, policy, regret])
    rows = average_ranks(con, ["a", "b", "c"], [10])
    a = rows[0].ci
    assert a.mean == pytest.approx(5 / 3) and a.low == 1.0  # the t-interval reaches below 1
    assert all(1.0 <= r.ci.low <= r.ci.mean <= r.ci.high <= 3.0 for r in rows)


def test_run_json_shows_the_sigma_used() -> None:
    args = ["run", "--horizon", "200", "--seeds", "2", "--noise", "bernoulli", "--json"]
    auto = json.loads(runner.invoke(app, [*args, "--param", "sigma=auto"]).stdout)
    assert auto["params"]["sigma"] == "auto" and auto["sigma_used"] == 0.5
    fixed = json.loads(runner.invoke(app, [*args, "--param", "sigma=0.2"]).stdout)
    assert fixed["sigma_used"] == 0.2
    human = runner.invoke(app, [*args[:-1], "--param", "sigma=auto"], env={"COLUMNS": "200"})
    assert "sigma=auto (0.5 used)" in human.stdout


@pytest.mark.parametrize("policy", ["hace-ucb", "ace-ucb", "cure-ucb"])
def test_run_accepts_a_noise_level_estimated_online(policy: str) -> None:
    """sigma="estimate" (ACE-UCB's and HACE-UCB's default) has no single value to show: the
    run reports the parameter and no ``sigma_used`` (it failed with "could not convert string
    to float: 'estimate'", so the default policy could not be run from the shell)."""
    args = ["run", "--policy", policy, "--horizon", "200", "--seeds", "2"]
    extra = [] if policy != "cure-ucb" else ["--param", "sigma=estimate"]
    out = runner.invoke(app, [*args, *extra, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["params"]["sigma"] == "estimate" and "sigma_used" not in data
    assert np.isfinite(data["regret_mean"])
    human = runner.invoke(app, [*args, *extra], env={"COLUMNS": "200"})
    assert human.exit_code == 0 and "sigma=estimate" in human.stdout


def test_dominance_search_lists_each_minimal_counterexample_once() -> None:
    args = ["theory", "dominance", "--search", "--instances", "30", "--max-horizon", "2000"]
    result = runner.invoke(app, args, env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    minimal = result.stdout.split("minimal counterexamples")[1].splitlines()[1:]
    cases = [line.split("(from T=")[0].strip() for line in minimal if line.strip()]
    assert len(cases) >= 2 and len(cases) == len(set(cases))
    assert any(", " in line.split("(from T=")[1] for line in minimal)  # merged origins


def test_modelselect_says_what_its_regret_is_measured_on(tmp_path: Path) -> None:
    acl = write_aclimdb(tmp_path / "data", n_per_split=40)
    names = ["lr_0.05", "ogd_0.5", "nn_2"]
    curves = tmp_path / "curves.npz"
    np.savez(curves, **{n: np.full(200, 0.4 + 0.1 * i) for i, n in enumerate(names)})
    common = ["--imdb-dir", str(acl), "--cache-dir", str(tmp_path / "cache")]
    args = ["modelselect", "imdb", "--budget", "60", "--holdout", "10", "--curves", str(curves)]
    result = runner.invoke(
        app, [*args, "--learners", ",".join(names), *common], env={"COLUMNS": "400"}
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "live run: cumulative reward" in out and "best learner of this run" in out
    assert "regret is measured on the learning curves' expected values" in out
    data = json.loads(
        runner.invoke(app, [*args, "--learners", ",".join(names), *common, "--json"]).stdout
    )
    assert data["live_best_learner"] == names[int(np.argmax(data["holdout_accuracy"]))]
    assert data["regret_basis"].startswith("regret is measured on the learning curves'")


def test_readme_means_examples_name_files_that_exist(imdb_curves_dir: Path) -> None:
    commands = "\n".join(re.findall(r"```bash\n(.*?)```", README, flags=re.S))
    paths = re.findall(r"--means (\S+)", commands)
    assert paths
    for path in paths:
        assert (REPO / path).resolve().is_file(), path


def test_the_readme_test_command_builds_its_own_environment_and_ci_runs_it() -> None:
    setup = README.split("## Set-up")[1].split("\n## ")[0]
    main_job, tests = re.findall(r"```bash\n(.*?)\n```", setup, flags=re.S)
    assert tests.startswith("python3 -m venv --clear .venv-test && . .venv-test/bin/activate")
    assert ".venv-test" not in main_job
    assert tests in (REPO / ".ci" / "run").read_text().splitlines()
    assert "/.venv-test/" in (REPO / ".gitignore").read_text().splitlines()
