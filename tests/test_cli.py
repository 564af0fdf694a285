"""The command line: run (human and JSON), list, demo, and one-line user errors (exit 2)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from risingbandits.cli import app
from risingbandits.cli.signals import Stopped

runner = CliRunner()

JSON_FIELDS = {
    "instance",
    "policy",
    "params",
    "horizon",
    "noise",
    "seeds",
    "regret_mean",
    "regret_ci95",
    "regret_per_seed",
    "pulls_mean",
    "best_arm",
    "optimal_value",
    "final_gap_mean",
    "final_gap_ci95",
    "final_gap_per_seed",
    "final_gap_on",
    "recommended",
}


def test_run_json_fields() -> None:
    res = runner.invoke(
        app,
        [
            "run",
            "--instance",
            "intro",
            "--policy",
            "cure-ucb",
            "--horizon",
            "2000",
            "--seeds",
            "3",
            "--param",
            "eps=1/4",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) >= JSON_FIELDS
    assert data["horizon"] == 2000 and data["seeds"] == [0, 1, 2]
    assert data["params"]["eps"] == 0.25
    low, high = data["regret_ci95"]
    assert low <= data["regret_mean"] <= high
    assert data["regret_mean"] == pytest.approx(np.mean(data["regret_per_seed"]))
    assert sum(data["pulls_mean"]) == pytest.approx(2000)
    assert data["optimal_value"] == pytest.approx(0.4 * 2000)
    assert len(data["final_gap_per_seed"]) == len(data["recommended"]) == 3
    assert data["final_gap_mean"] == pytest.approx(np.mean(data["final_gap_per_seed"]))
    low, high = data["final_gap_ci95"]
    assert low <= data["final_gap_mean"] <= high
    assert data["final_gap_on"] == "means"  # intro has no test curves


def test_run_final_gap_by_hand(tmp_path: Path) -> None:
    # arm 0 blooms late (0.1, 0.2, 0.6, 0.9), arm 1 stays at 0.5. Successive Rejects with
    # T = 4 pulls each arm once, rejects arm 0 and deploys arm 1: gap 0.9 - 0.5 = 0.4.
    np.save(tmp_path / "m.npy", np.array([[0.1, 0.2, 0.6, 0.9], [0.5] * 4]))
    args = ["run", "--means", str(tmp_path / "m.npy"), "--policy", "successive-rejects"]
    args += ["--horizon", "4", "--seeds", "2", "--noise", "none"]
    data = json.loads(runner.invoke(app, [*args, "--json"]).stdout)
    assert data["final_gap_per_seed"] == pytest.approx([0.4, 0.4])
    assert data["final_gap_mean"] == pytest.approx(0.4) and data["recommended"] == [1, 1]
    text = runner.invoke(app, args).stdout
    assert "final gap       0.4000 ± 0.0000" in text
    assert "recommended     arm 1 (arm1) in 2 of 2 seeds" in text


def test_run_human_output_and_means_file(tmp_path: Path) -> None:
    table = np.array([np.full(500, 0.3), np.minimum(1, np.arange(1, 501) / 250)])
    np.save(tmp_path / "m.npy", table)
    res = runner.invoke(
        app,
        [
            "run",
            "--means",
            str(tmp_path / "m.npy"),
            "--policy",
            "ucb1",
            "--horizon",
            "500",
            "--seeds",
            "2",
            "--noise",
            "bernoulli",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "regret" in res.stdout and "95% CI" in res.stdout and "pulls per arm" in res.stdout
    assert "final gap" in res.stdout and "recommended     arm " in res.stdout


def test_run_with_a_budget_in_cost_and_a_costs_file(tmp_path: Path) -> None:
    # arm 0 blooms late (0.9 at its 4th pull) and costs 1 a pull; arm 1 stays at 0.5 and costs
    # 2: a total budget of 6 lets arm 0 alone make 4 pulls, arm 1 alone 3.
    np.save(tmp_path / "m.npy", np.array([[0.1, 0.2, 0.6, 0.9], [0.5] * 4]))
    (tmp_path / "c.csv").write_text("1\n2\n")
    args = ["run", "--means", str(tmp_path / "m.npy"), "--policy", "successive-halving"]
    args += ["--seeds", "2", "--noise", "none", "--budget", "6", "--budget-kind", "total"]
    res = runner.invoke(app, [*args, "--costs", str(tmp_path / "c.csv"), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["budget"] == 6 and data["budget_kind"] == "total" and data["workers"] == 1
    assert data["reach"] == [4, 3] and data["best_reachable"] == pytest.approx(0.9)
    assert data["pulls_mean"][0] + 2 * data["pulls_mean"][1] <= 6 + 1e-9
    assert data["spent_mean"] <= 6 + 1e-9 and len(data["idle_mean_per_worker"]) == 1
    assert len(data["final_gap_per_seed"]) == len(data["cost_regret_per_seed"]) == 2
    assert all(0 <= g <= 0.9 for g in data["final_gap_per_seed"])
    unit = json.loads(runner.invoke(app, [*args, "--json"]).stdout)  # no --costs: 1 a pull
    assert unit["reach"] == [4, 4] and unit["spent_mean"] == pytest.approx(6)
    text = runner.invoke(app, [*args, "--costs", str(tmp_path / "c.csv")]).stdout
    assert "budget 6 (total cost), 1 worker(s)" in text and "idle per worker" in text
    assert "final gap" in text and "cost regret" in text and "pulls per arm" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--costs", "c.csv", "--budget", "5"], "--costs goes with --means FILE"),
        (["run", "--workers", "4"], "--workers, --budget-kind and --costs go with --budget"),
        (["run", "--costs", "c.csv"], "--workers, --budget-kind and --costs go with --budget"),
        (["run", "--budget", "5", "--budget-kind", "x"], "--budget-kind='x' is not allowed"),
        (["run", "--budget", "-1"], "--budget=-1.0 is not allowed: use a finite number > 0"),
        (["run", "--param", "eps=0.7"], "eps=0.7 is not allowed: use a number in (0, 1/2)"),
        (["run", "--policy", "nope"], "--policy='nope' is not allowed"),
        (["run", "--noise", "gauss"], "--noise='gauss' is not allowed"),
        (["run", "--instance", "nope"], "--instance='nope' is not allowed"),
        (["run", "--means", "missing.npy"], "does not exist"),
        (["run", "--seeds", "0"], "--seeds=0 is not allowed"),
        (["run", "--horizon", "0"], "--horizon=0 is not allowed"),
        (["run", "--param", "eps"], "use NAME=VALUE"),
        (["run", "--preset", "x"], "--preset='x' is not allowed"),
    ],
)
def test_user_errors_one_line_exit_2(args: list[str], message: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.stderr + res.stdout


def test_a_bad_costs_file_is_one_line_naming_it(tmp_path: Path) -> None:
    np.save(tmp_path / "m.npy", np.array([[0.1, 0.2, 0.6, 0.9], [0.5] * 4]))
    (tmp_path / "c.csv").write_text("1\n0\n")
    (tmp_path / "three.csv").write_text("1\n2\n3\n")
    base = ["run", "--means", str(tmp_path / "m.npy"), "--budget", "6", "--costs"]
    for costs, message in [
        ("c.csv", "is not allowed: use a finite number > 0"),
        ("three.csv", "costs has 3 entries for 2 arms"),
        ("missing.csv", f"--costs={str(tmp_path / 'missing.csv')!r} does not exist"),
    ]:
        res = runner.invoke(app, [*base, str(tmp_path / costs)])
        assert res.exit_code == 2 and message in res.stderr, res.output
        assert len(res.stderr.strip().splitlines()) == 1


def test_a_budget_below_every_first_step_is_refused(tmp_path: Path) -> None:
    """It ran no pull and printed a final gap of 0 with exit code 0."""
    np.save(tmp_path / "m.npy", np.array([[0.1, 0.2, 0.6, 0.9], [0.5] * 4]))
    (tmp_path / "c.csv").write_text("2\n3\n")
    args = ["run", "--means", str(tmp_path / "m.npy"), "--costs", str(tmp_path / "c.csv")]
    res = runner.invoke(app, [*args, "--budget", "1.5"])
    assert res.exit_code == 2 and res.stdout == "", res.output
    assert res.stderr.strip() == (
        "error: --budget=1.5 is not allowed: it buys no step (the cheapest first step costs 2); "
        "give at least that"
    )


def test_console_script_error_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "risingbandits", "run", "--param", "sigma=-2"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: cure-ucb: sigma=-2.0 is not allowed: use a number >= 0, 'auto' or 'estimate'"
    )


def test_list_one_line_each() -> None:
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0
    lines = res.stdout.strip().splitlines()
    assert any(line.startswith("policy    cure-ucb ") for line in lines)
    assert any(line.startswith("instance  intro ") for line in lines)
    from risingbandits.policies import POLICIES

    assert sum(line.startswith("policy") for line in lines) == len(POLICIES)


def test_demo_writes_figure_runs_again_and_refuses_to_replace_other_results(
    tmp_path: Path,
) -> None:
    """The README's main command can be run twice: a demo with the same settings gives the same
    numbers and replaces its own output; other settings, or other numbers, are refused."""
    out = tmp_path / "demo"
    res = runner.invoke(app, ["demo", "--out", str(out), "--seeds", "2"])
    assert res.exit_code == 0, res.output
    png = (out / "figure1.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    first = (out / "figure1.json").read_text()
    table = json.loads(first)
    assert table["switching_horizons"] == [16000]
    assert set(table["regret"]["cure-ucb"]) == {str(t) for t in range(5000, 50001, 5000)}
    again = runner.invoke(app, ["demo", "--out", str(out), "--seeds", "2"])
    assert again.exit_code == 0, again.output
    assert "the same numbers as the earlier demo there" in again.stdout
    assert (out / "figure1.json").read_text() == first
    other = runner.invoke(app, ["demo", "--out", str(out), "--seeds", "3"])
    assert other.exit_code == 2 and "already exists" in other.stderr
    table["regret"]["cure-ucb"]["5000"]["mean"] += 1.0  # an earlier demo's other numbers
    (out / "figure1.json").write_text(json.dumps(table))
    changed = runner.invoke(app, ["demo", "--out", str(out), "--seeds", "2"])
    assert changed.exit_code == 2 and "holds other numbers" in changed.stderr
    assert json.loads((out / "figure1.json").read_text()) == table


def test_demo_with_seeds_beyond_memory_is_refused_before_its_folder_is_made(
    tmp_path: Path,
) -> None:
    """``demo --seeds 10000000000`` was refused by the simulator, after --out had been made."""
    out = tmp_path / "demo"
    res = runner.invoke(app, ["demo", "--out", str(out), "--seeds", "10000000000"])
    assert res.exit_code == 2 and "--seeds=10,000,000,000 is not allowed" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("name", ["figure1.png", "figure1.json"])
def test_demo_refuses_a_folder_in_the_way_of_a_file_before_computing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A folder where the demo writes a file was found after the whole computation (its results
    lost), even with --overwrite."""

    def no_computing(*args: object, **kwargs: object) -> None:
        raise AssertionError("demo computed before checking its files")

    monkeypatch.setattr("risingbandits.cli.demo.simulate_horizons", no_computing)
    (tmp_path / name).mkdir()
    res = runner.invoke(app, ["demo", "--out", str(tmp_path), "--seeds", "2", "--overwrite"])
    assert res.exit_code == 2, res.output
    assert res.stderr.strip() == (
        f"error: --out={str(tmp_path)!r} is not allowed: {tmp_path / name} is a folder where the "
        "demo writes a file; move it or choose another --out"
    )


@pytest.mark.parametrize(
    ("stop", "line", "code"),
    [
        (KeyboardInterrupt(), "interrupted", 130),
        (Stopped(signal.SIGTERM), "stopped by SIGTERM", 143),
    ],
)
def test_a_command_stopped_by_a_signal_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, stop: KeyboardInterrupt, line: str, code: int
) -> None:
    """Ctrl-C or SIGTERM during `run` (no handler of its own) exited 130 without a word, also
    for SIGTERM (Typer's own handling); it is one line with the signal's exit code."""
    from risingbandits.cli import run as run_command

    def stopped(*args: object, **kwargs: object) -> None:
        raise stop

    monkeypatch.setattr(run_command, "simulate", stopped)
    res = runner.invoke(app, ["run", "--policy", "ucb1", "--horizon", "100", "--seeds", "2"])
    assert res.exit_code == code
    assert res.stderr.strip().splitlines() == [line]


def test_run_imdb_with_curves_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from risingbandits.instances.families import IMDB_ARMS

    monkeypatch.setenv("RISINGBANDITS_IMDB_CURVES", str(tmp_path / "unset"))  # restored after
    n = np.arange(1, 201)
    curves = {arm: 0.5 + 0.4 * (1 - np.exp(-n / (50 * (i + 1)))) for i, arm in enumerate(IMDB_ARMS)}
    np.savez(tmp_path / "curves.npz", **curves)
    res = runner.invoke(
        app,
        [
            "run",
            "--instance",
            "imdb-v1",
            "--curves",
            str(tmp_path),
            "--horizon",
            "200",
            "--seeds",
            "2",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["arm_names"] == list(IMDB_ARMS) and data["noise"] == "bernoulli"
    assert data["optimal_value"] == pytest.approx(max(c.sum() for c in curves.values()))
    bad = runner.invoke(app, ["run", "--instance", "imdb-v1", "--curves", str(tmp_path / "no")])
    assert bad.exit_code == 2 and "holds no curves.npz" in bad.stderr


def test_version() -> None:
    from importlib.metadata import version

    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0
    assert res.stdout == f"risingbandits {version('risingbandits')}\n"
