"""``explain``: traced runs read at rounds (target points, horizon limits, rewards), the
Figure 3 view and the ``risingbandits explain`` command."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import risingbandits as rb
from conftest import random_ltf
from risingbandits.cli import app
from risingbandits.explain import explain
from risingbandits.policies import POLICIES, make_policy

runner = CliRunner()
NAMES = sorted(POLICIES)
TARGETED = {
    "ace-ucb",
    "hace-ucb",
    "cure-ucb",
    "cure-ucb-det",
    "red-ucb",
    "red-ucb-det",
    "ti-ucb",
}


@pytest.mark.parametrize("name", NAMES)
def test_views_match_the_run(name: str) -> None:
    instance = random_ltf(np.random.default_rng(4), 3, 600, rb.Noise("gaussian", 0.1))
    policy = make_policy(name)
    ex = explain(instance, [policy], 600, seed=2, rounds=[1, 150, 600])
    run = ex.runs[0]
    sim = rb.simulate(instance, policy, 600, [2], record_arms=True)
    assert sim.arms is not None
    np.testing.assert_array_equal(run.arms, sim.arms[0])
    # The rewards of the run are the simulator's: they add up to its realised reward.
    assert run.rewards.sum() == pytest.approx(sim.reward[0], abs=1e-9)
    assert run.regret == sim.regret[0]
    for t in ex.rounds:
        (view,) = ex.at(t)
        assert view.chosen == run.arms[t - 1]
        pulls = np.bincount(run.arms[: t - 1], minlength=3)
        assert [a.pulls for a in view.arms] == pulls.tolist()
        for a in view.arms:
            assert a.horizon_limit == a.pulls + 600 - t
            assert run.arm_rewards(a.arm, t).size == a.pulls
            assert a.index == sum(a.terms) or not np.isfinite(a.index)
            if a.target is not None:
                assert name in TARGETED and np.isfinite(a.target).all()


def test_target_points_follow_each_policy_s_definition() -> None:
    instance = random_ltf(np.random.default_rng(8), 3, 2_000, rb.Noise("gaussian", 0.1))
    names = ("cure-ucb", "red-ucb", "ti-ucb", "ace-ucb")
    t = 1_500
    ex = explain(instance, [make_policy(n) for n in names], 2_000, seed=1, rounds=[1, t])
    cure, red, ti, ace = ex.at(t)
    for a in cure.arms:  # N + (T - t)/2, recent average + future gain
        assert a.target == (a.pulls + (2_000 - t) / 2, a.terms[0] + a.terms[1])
    for a in red.arms:  # the round t itself, the projected estimate
        assert a.target == (t, a.terms[0])
    for a in ti.arms:  # the next pull, the prediction
        assert a.target == (a.pulls + 1, a.terms[0])
    for a in ace.arms:  # N + (T - t + 1)/2, the point commit value (level + expected growth)
        assert a.target == (a.pulls + (2_000 - t + 1) / 2, a.terms[0] + a.terms[1])
    at_round = explain(instance, [make_policy("ti-ucb", predict_at="round")], 2_000, 1, [t])
    for a in at_round.at(t)[0].arms:  # the line read at the round t
        assert a.target == (t, a.terms[0])
    # Round 1 is a forced round for CURE-UCB (+-inf): no target point.
    assert all(a.target is None for a in ex.at(1)[0].arms)
    assert make_policy("ucb1").target_point(10, 20, 100, np.array([0.5, 0.1])) is None


def test_refusals_are_one_line() -> None:
    inst, pols = rb.intro(100), [make_policy("cure-ucb")]
    with pytest.raises(ValueError, match=r"^round=0 is not allowed: use a round in \[1, 100\]$"):
        explain(inst, pols, 100, rounds=[0])
    with pytest.raises(ValueError, match=r"^round=101 is not allowed"):
        explain(inst, pols, 100, rounds=[50, 101])
    with pytest.raises(
        ValueError, match=r"round=52 is not allowed with trace_every=7: .*\(e\.g\. 50\)"
    ):
        explain(inst, pols, 100, rounds=[52], trace_every=7)
    with pytest.raises(ValueError, match="given twice"):
        explain(inst, pols * 2, 100, rounds=[5])
    with pytest.raises(ValueError, match="at least one policy"):
        explain(inst, [], 100, rounds=[5])
    with pytest.raises(ValueError, match=r"^policy=None is not allowed: use a Policy or a"):
        explain(inst, [None], 100, rounds=[5])  # type: ignore[list-item]


def test_policies_may_be_given_by_name() -> None:
    inst = rb.intro(500)
    by_name = explain(inst, ["cure-ucb", "ucb1"], 500, 2, [1, 400])
    by_object = explain(inst, [make_policy("cure-ucb"), make_policy("ucb1")], 500, 2, [1, 400])
    assert by_name.at(400) == by_object.at(400)


def test_trace_every_reads_the_recorded_rounds() -> None:
    inst = rb.intro(2_000)
    full = explain(inst, [make_policy("red-ucb")], 2_000, 3, [1, 701])
    sparse = explain(inst, [make_policy("red-ucb")], 2_000, 3, [1, 701], trace_every=10)
    assert sparse.at(701) == full.at(701)
    assert sparse.runs[0].trace.rounds.size == 200
    with pytest.raises(ValueError, match=r"round=700 is not allowed with trace_every=10"):
        sparse.runs[0].at(700)


def invoke(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, ["explain", *args])
    return res.exit_code, res.stdout, res.stderr


def test_cli_writes_figures_and_numbers(tmp_path: Path) -> None:
    out = tmp_path / "ex"
    code, stdout, _ = invoke(
        "--horizon", "3000", "--round", "300", "--round", "2700", "--out", str(out), "--json"
    )
    assert code == 0, stdout
    data = json.loads(stdout)
    assert [r["round"] for r in data["rounds"]] == [300, 2700]
    assert [p["label"] for p in data["policies"]] == ["cure-ucb", "red-ucb"]
    late = data["rounds"][1]["policies"]["red-ucb"]["arms"]
    assert all(a["target"]["pull"] == 2700 for a in late)
    for name in ("figure3.png", "terms.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (out / "explain.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 2 * 2  # rounds x policies x arms
    assert sum(int(r["chosen"]) for r in rows) == 4
    series = np.loadtxt(out / "terms-cure-ucb.csv", delimiter=",", skiprows=1)
    assert series.shape == (3000, 2 + 2 * 4)
    assert set(series[:, 1]) <= {0, 1}
    before = (out / "explain.json").read_bytes()
    code, _, err = invoke("--horizon", "3000", "--out", str(out))
    assert code == 2 and "already exists: pass --overwrite" in err
    assert (out / "explain.json").read_bytes() == before
    assert invoke("--horizon", "3000", "--out", str(out), "--overwrite")[0] == 0


def test_a_run_killed_while_writing_a_table_leaves_no_partial_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed while it wrote terms-<policy>.csv left its first rows under the final name
    (and a rerun then refused the folder with the truncated table in it)."""
    from risingbandits.cli import explain as cli_explain

    ex = explain(rb.intro(2_000), [make_policy("cure-ucb")], 2_000, 0, [200])
    real = np.savetxt

    def killed(fname: Any, X: np.ndarray, **kwargs: Any) -> None:
        real(fname, X[:10], **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savetxt", killed)
    with pytest.raises(KeyboardInterrupt):
        cli_explain.write_outputs(ex, tmp_path)
    assert (tmp_path / "explain.csv").is_file()
    assert not (tmp_path / "terms-cure-ucb.csv").exists()
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--round", "0"], "error: round=0 is not allowed: use a round in [1, 1000]"),
        (["--round", "1001"], "error: round=1001 is not allowed: use a round in [1, 1000]"),
        (["--policy", "nope"], "error: --policy='nope' is not allowed: use one of cure-ucb"),
        (["--policy", "ucb1"] * 3, "error: --policy given 3 times is not allowed"),
        (["--param", "window=3"], "error: --param 'window=3' is not allowed: no given policy"),
        (["--param", "eps=2"], "error: cure-ucb: eps=2.0 is not allowed"),
    ],
)
def test_cli_refuses_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    code, _, err = invoke("--horizon", "1000", "--out", str(tmp_path / "x"), *args)
    assert code == 2
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "x").exists()


def test_console_script_round_error_has_no_traceback(tmp_path: Path) -> None:
    cmd = "from risingbandits.cli import main; main()"
    res = subprocess.run(
        [sys.executable, "-c", cmd, "explain", "--round", "0", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 2
    assert res.stderr.strip() == "error: round=0 is not allowed: use a round in [1, 10000]"


def test_cli_params_go_to_the_policies_that_have_them(tmp_path: Path) -> None:
    code, stdout, _ = invoke(
        "--horizon", "800", "--round", "400", "--param", "sigma=0.5", "--param", "delta=0.01",
        "--preset", "imdb", "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == 0
    params = {p["label"]: p["params"] for p in json.loads(stdout)["policies"]}
    assert params["cure-ucb"]["sigma"] == params["red-ucb"]["sigma"] == 0.5
    assert params["red-ucb"]["delta"] == 0.01 and "delta" not in params["cure-ucb"]
    assert params["cure-ucb"]["eps"] == 1 / 32  # the imdb preset


def test_cli_means_file_one_policy(tmp_path: Path) -> None:
    table = np.vstack([np.full(500, 0.3), np.linspace(0.0, 0.9, 500)])
    np.save(tmp_path / "m.npy", table)
    code, stdout, _ = invoke(
        "--means", str(tmp_path / "m.npy"), "--policy", "ti-ucb", "--horizon", "500",
        "--round", "250", "--out", str(tmp_path / "o"), "--json",
    )  # fmt: skip
    assert code == 0, stdout
    data = json.loads(stdout)
    assert data["instance"] == "m.npy" and list(data["rounds"][0]["policies"]) == ["ti-ucb"]
    assert (tmp_path / "o" / "terms-ti-ucb.csv").exists()


def test_cli_lcdb_instance(lcdb_dir: Path, tmp_path: Path) -> None:
    code, stdout, _ = invoke(
        "--instance", "lcdb-v1/0/0", "--horizon", "300", "--round", "200",
        "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == 0, stdout
    assert json.loads(stdout)["noise"] == "curve-std"


def test_cli_imdb_instance(imdb_curves_dir: Path, tmp_path: Path) -> None:
    code, stdout, _ = invoke(
        "--instance", "imdb-v1", "--curves", str(imdb_curves_dir), "--preset", "imdb",
        "--horizon", "2000", "--round", "1500", "--out", str(tmp_path), "--json",
    )  # fmt: skip
    assert code == 0, stdout
    data = json.loads(stdout)
    assert len(data["arm_names"]) == 7 and data["noise"] == "bernoulli"


def test_cli_refuses_an_out_it_cannot_write(tmp_path: Path) -> None:
    """A file in the way gave exit 1 and a bare "File exists"."""
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    for out, reason in ((blocker, "it is a file, not a directory"), (blocker / "sub", "cannot be")):
        code, _, err = invoke("--horizon", "3000", "--out", str(out))
        assert code == 2 and err.startswith(f"error: --out={str(out)!r}") and reason in err, err
        assert err.count("\n") == 1
