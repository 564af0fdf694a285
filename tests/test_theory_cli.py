"""``risingbandits theory``: JSON fields, human output and one-line errors with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from typer.testing import CliRunner

import risingbandits.cli.theory as theory_cli
from risingbandits.cli import app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    res = runner.invoke(app, ["theory", *args])
    return res.exit_code, res.stdout, res.stderr


def test_dominance_json_on_the_issue_example() -> None:
    code, out, _ = invoke(
        "dominance", "--ltf-b", "0.5,0.3", "--ltf-t-sat", "100,20", "--horizon", "50", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert {"horizon", "regret_cure", "regret_red", "holds"} <= set(data)
    assert data["horizon"] == 50 and data["holds"] is True
    assert data["regret_cure"] == data["regret_red"] == pytest.approx(0.295)  # 59/200 by hand


def test_dominance_reports_a_violation() -> None:
    code, out, _ = invoke("dominance", "--ltf-b", "1/2,1/3", "--ltf-t-sat", "2,1", "--horizon", "4")
    assert code == 0
    assert "FAILS (CURE-UCB worse by 1/6)" in out and "exact 1/2" in out and "exact 1/3" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ltf-b", "0.5", "--ltf-t-sat", "100,20", "--horizon", "5"], "--ltf-b has 1 value"),
        (  # the value that is no number, not the count of values (said first before)
            ["--ltf-b", "abc", "--ltf-t-sat", "10,20", "--horizon", "5"],
            "--ltf-b[arm 0]='abc' is not allowed: use a rational number",
        ),
        (
            ["--ltf-b", "0.5,0.3", "--ltf-t-sat", "10,x,3", "--horizon", "5"],
            "--ltf-t-sat[arm 1]='x' is not allowed: use a rational number",
        ),
        (["--ltf-b", "1.5,0.3", "--ltf-t-sat", "100,20", "--horizon", "5"], "use 0 < b < 1"),
        (["--ltf-b", "0,0.3", "--ltf-t-sat", "100,20", "--horizon", "5"], "use 0 < b < 1"),
        (["--ltf-b", "0.5,0.3", "--ltf-t-sat", "100,20", "--horizon", "0"], "--horizon=0"),
        (["--ltf-b", "0.5,0.3", "--ltf-t-sat", "100,20"], "--horizon is required"),
        (["--ltf-b", "0.5,0.3", "--horizon", "3"], "give both --ltf-b and --ltf-t-sat"),
        (["--search", "--horizon", "3"], "--search draws its own instances"),
        (["--search", "--instances", "0"], "--instances=0 is not allowed"),
        (["--search", "--instances", "1" + "0" * 30], "use an integer in 1..1,000,000"),
        (["--search", "--max-horizon", "1" + "0" * 30], "use an integer in 1..10,000,000"),
        (
            ["--ltf-b", "0.5,0.3", "--ltf-t-sat", "100,200", "--horizon", "1" + "0" * 30],
            "--horizon=1" + "0" * 30 + " is not allowed: use an integer in 1..10,000,000",
        ),
    ],
)
def test_dominance_bad_input(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("searched with a bad setting")  # --instances 10**30 never ended

    monkeypatch.setattr(theory_cli.dom, "candidates", no_search)
    code, out, err = invoke("dominance", *args)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_dominance_search_json_and_text() -> None:
    code, out, _ = invoke(
        "dominance",
        "--search",
        "--instances",
        "30",
        "--max-horizon",
        "60",
        "--shrink",
        "1",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["instances"] == 30 and data["cases"] > 30 * 10
    assert sum(f["cases"] for f in data["by_family"].values()) == data["cases"]
    assert len(data["violations"]) == sum(f["violations"] for f in data["by_family"].values())
    code, text, _ = invoke("dominance", "--search", "--instances", "3", "--max-horizon", "2")
    assert code == 0 and "no violation found in" in text  # T <= 2 <= K: only the start rounds


def test_bound_writes_png_and_refuses_to_overwrite(tmp_path: Path) -> None:
    png = tmp_path / "bound.png"
    args = ["bound", "--instance", "concave-v1/0/0", "--horizons", "1000,2000", "--seeds", "2"]
    code, out, err = invoke(*args, "--out", str(png), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert png.stat().st_size > 10_000 and data["figure"] == str(png)
    assert "png" not in data  # the figure may be a .pdf or .svg: its key says "figure"
    assert [r["horizon"] for r in data["rows"]] == [1000, 2000]
    for row in data["rows"]:
        parts = row["increment_term"] + row["noise_term"] + row["constant_term"]
        assert row["bound"] == pytest.approx(parts) and row["q"] in data["q_grid"]
        assert row["bound"] >= row["regret_mean"]  # the theorem's claim, on this instance
    code, _, err = invoke(*args, "--out", str(png))
    assert code == 2 and "already exists" in err
    code, out, _ = invoke(*args, "--out", str(png), "--overwrite", "--ltf-b", "0.5,0.3")
    assert code == 2  # --instance and --ltf-b together
    code, out, _ = invoke(
        "bound",
        "--ltf-b",
        "0.5,0.3",
        "--ltf-t-sat",
        "400,100",
        "--horizons",
        "800",
        "--seeds",
        "1",
        "--q",
        "0,1",
        "--out",
        str(png),
        "--overwrite",
    )
    assert code == 0 and "wrote" in out


def test_bound_killed_while_writing_keeps_the_figure_it_replaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --overwrite, a run killed while matplotlib wrote the figure left a partial file in
    place of the user's (and without it, a partial figure the next run refused to replace)."""

    def killed(fig: Figure, fname: Any, **kwargs: Any) -> None:
        if isinstance(fname, str | Path):
            Path(fname).write_bytes(b"partial")
        else:
            fname.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", killed)
    open_before = plt.get_fignums()
    (tmp_path / "kept.pdf").write_bytes(b"kept")
    for name in ("kept.pdf", "new.svg"):
        out = str(tmp_path / name)
        code, _, _ = invoke(
            "bound", "--horizons", "50", "--seeds", "1", "--out", out, "--overwrite"
        )
        assert code != 0
    assert (tmp_path / "kept.pdf").read_bytes() == b"kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.pdf"]  # no new.svg, no *.tmp
    assert plt.get_fignums() == open_before  # the stopped runs' figures were left open


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("q", "is not allowed: use a file name ending in .png or .pdf or .svg"),  # q.png exists
        ("b.txt", "is not allowed: use a file name ending in .png or .pdf or .svg"),
        ("dd.png", "is not allowed: it is a directory, not a file"),
        ("afile/x.png", "is not allowed: it is a file, not a directory"),
    ],
)
def test_bound_refuses_an_out_it_cannot_write_before_computing(
    name: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_computing(*args: object, **kwargs: object) -> None:
        raise AssertionError("theory bound computed before checking --out")

    monkeypatch.setattr(theory_cli, "simulate_horizons", no_computing)
    monkeypatch.setattr(theory_cli.bounds, "bound_curve", no_computing)
    (tmp_path / "q.png").write_bytes(b"kept")
    (tmp_path / "dd.png").mkdir()
    (tmp_path / "afile").write_bytes(b"")
    out = tmp_path / name
    args = ("bound", "--horizons", "50", "--seeds", "1", "--out", str(out), "--overwrite")
    code, _, err = invoke(*args)
    assert code == 2 and err.startswith("error: --out") and len(err.strip().splitlines()) == 1
    assert message in err and str(out if "/" not in name else out.parent) in err
    assert (tmp_path / "q.png").read_bytes() == b"kept" and not (tmp_path / "dd.png.png").exists()


def test_bound_bad_input(tmp_path: Path) -> None:
    for args, message in (
        (["--horizons", "0,10"], "--horizons='0,10' is not allowed"),
        (["--q", "0,2"], "q=2.0 is not allowed"),
        (["--eps", "0.5"], "eps=0.5 is not allowed"),
        (["--seeds", "0"], "--seeds=0"),
        (["--q", "0,1e400"], "--q='0,1e400' is not allowed: use comma-separated numbers in [0, 1]"),
    ):
        code, _, err = invoke("bound", *args, "--out", str(tmp_path / "x.png"))
        assert code == 2 and message in err, err


def test_horizon_awareness_json() -> None:
    code, out, err = invoke("horizon-awareness", "--policies", "ucb1", "--seeds", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["switching_horizon"] == 16_000 and data["probe"] == 8_000
    (row,) = data["policies"]
    assert row["policy"] == "ucb1" and not row["uses_horizon"]
    assert row["case"] == ("case 2" if row["pulls_a_short"] > 4_000 else "case 1")
    assert max(row["regret_10000"], row["regret_30000"]) >= data["agnostic_price"]["randomised"]
    code, _, err = invoke("horizon-awareness", "--policies", "nope")
    assert code == 2 and "--policies='nope' is not allowed" in err
    code, _, err = invoke("horizon-awareness", "--policies", "ucb1,")
    assert code == 2 and "--policies='ucb1,' is not allowed: use comma-separated policy" in err
    code, _, err = invoke("horizon-awareness", "--policies", "")
    assert code == 2 and "--policies='' is not allowed: give a non-empty value" in err
