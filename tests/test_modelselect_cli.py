"""``risingbandits data`` and ``risingbandits modelselect`` end to end, without the network."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import risingbandits.cli.data as data_cli
from risingbandits.cli import app
from test_modelselect_data import write_aclimdb

runner = CliRunner()


@pytest.fixture
def acl(tmp_path: Path) -> Path:
    return write_aclimdb(tmp_path / "data", n_per_split=60)


def one_line_error(args: list[str], *, env: dict[str, str] | None = None) -> str:
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_curves_then_live_run_on_an_aclimdb_folder(acl: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    out = tmp_path / "curves.npz"
    common = ["--imdb-dir", str(acl), "--cache-dir", str(cache)]
    learners = ["--learners", "lr_0.05,ogd_0.5,nn_2"]
    made = runner.invoke(
        app, ["data", "curves", "imdb", "--runs", "6", "--out", str(out), *learners, *common]
    )
    assert made.exit_code == 0, made.output
    assert "lr_0.05" in made.stdout and out.is_file()
    again = one_line_error(["data", "curves", "imdb", "--out", str(out), *common])
    assert "already exists" in again
    other = tmp_path / "other.npz"
    manifest = tmp_path / "other.npz.json"
    manifest.write_text("a file of the user's")  # the manifest beside a new --out is kept too
    kept = one_line_error(["data", "curves", "imdb", "--out", str(other), *common])
    assert str(manifest) in kept and "already exists" in kept and not other.exists()
    assert manifest.read_text() == "a file of the user's"

    sizes = ["--budget", "90", "--holdout", "20", "--curves", str(out)]
    live = runner.invoke(app, ["modelselect", "imdb", *sizes, *learners, *common, "--json"])
    assert live.exit_code == 0, live.output
    data = json.loads(live.stdout)
    assert sum(data["pulls"]) == 90 and data["learners"] == ["lr_0.05", "ogd_0.5", "nn_2"]
    rec = data["learners"].index(data["recommended"])
    assert data["recommended_accuracy"] == data["holdout_accuracy"][rec]
    assert data["best_accuracy"] == max(data["holdout_accuracy"])
    with np.load(out) as curves:
        table = np.vstack([curves[n][:90] for n in data["learners"]])
    collected = sum(table[i, : data["pulls"][i]].sum() for i in range(3))
    assert data["expected_reward"] == pytest.approx(collected)
    assert data["optimal_value"] == pytest.approx(table.sum(axis=1).max())

    human = runner.invoke(
        app, ["modelselect", "imdb", "--budget", "30", "--holdout", "9", *learners, *common]
    )
    assert human.exit_code == 0, human.output
    assert "held-out accuracy" in human.stdout and "cumulative reward" in human.stdout
    assert "recommended: " in human.stdout

    fetched = runner.invoke(app, ["data", "imdb", *common])
    assert fetched.exit_code == 0 and "120 reviews (60 positive)" in fetched.stdout


def test_bad_input_one_line_each(acl: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    common = ["--imdb-dir", str(acl), "--cache-dir", str(tmp_path / "cache")]
    assert "learner='svm_1' is not allowed" in one_line_error(
        ["modelselect", "imdb", "--learners", "lr_0.003,svm_1", *common]
    )
    assert "policy='nope' is not allowed" in one_line_error(
        ["modelselect", "imdb", "--policy", "nope", *common]
    )
    assert "--budget=5 is not allowed" in one_line_error(
        ["modelselect", "imdb", "--budget", "5", *common]
    )
    assert "IMDB reviews not found" in one_line_error(
        ["modelselect", "imdb", "--cache-dir", str(empty)]
    )
    assert "is not an aclImdb folder" in one_line_error(
        ["modelselect", "imdb", "--imdb-dir", str(empty)]
    )
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "reviews.json").write_text("[]")
    assert "checksum mismatch" in one_line_error(["modelselect", "imdb", "--cache-dir", str(bad)])
    a_file = tmp_path / "a.csv"
    a_file.write_text("")
    assert one_line_error(["modelselect", "imdb", "--cache-dir", str(a_file)]) == (
        f"error: --cache-dir={str(a_file)!r} is not allowed: it is a file, not a directory"
    )
    assert "--out=" in one_line_error(
        ["data", "curves", "imdb", "--out", str(tmp_path / "c.txt"), *common]
    )


def test_data_imdb_without_npm_names_both_ways(tmp_path: Path) -> None:
    line = one_line_error(
        ["data", "imdb", "--cache-dir", str(tmp_path)], env={"PATH": str(tmp_path)}
    )
    assert "npm was not found" in line and "--imdb-dir" in line and "npm pack" in line


def test_data_imdb_refuses_a_cache_dir_it_cannot_fill(acl: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    group = tmp_path / "group"
    group.mkdir()
    group.chmod(0o775)  # fine for results, not for a cache read back
    for folder, why in (
        (tmp_path / "afile" / "x", "cannot be written (Not a directory)"),
        (shared, "can be written by others (mode 777"),
        (group, "can be written by group or others (mode 775"),
    ):
        result = runner.invoke(
            app, ["data", "imdb", "--imdb-dir", str(acl), "--cache-dir", str(folder)]
        )
        assert result.exit_code == 2 and result.stdout == "", (
            result.output
        )  # "features cached" before
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"error: --cache-dir={str(folder)!r} ") and why in line
    assert list(shared.iterdir()) == list(group.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", "-1"], "--seed=-1 is not allowed: use an integer >= 0"),  # left a manifest
        (["--runs", "1" + "0" * 30], "is not allowed: use an integer in 1..10,000"),  # endless
        (["--workers", "-1"], "--workers=-1 is not allowed: use an integer >= 0"),
        (["--out", "afile/x.npz"], "--out folder='afile' is not allowed: it is a file"),  # exit 1
    ],
)
def test_data_curves_refuses_bad_settings_before_making_anything(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_loading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the reviews were loaded before the settings were checked")

    monkeypatch.setattr(data_cli, "load_features", no_loading)
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("")
    line = one_line_error(["data", "curves", "imdb", "--out", "new/c.npz", *args])
    assert message in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # no new/, no c.npz.parts
