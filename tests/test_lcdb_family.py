"""The lcdb-v1 family (on the small CSV), its use from specs, the CLI and the engine; and one
check of a known curve in the real LCDB package (skipped when it is not installed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from lcdb_fixture import DATASETS, ELIGIBLE, LEARNERS, needs_lcdb
from risingbandits.cli import app
from risingbandits.experiments import SpecError, parse_spec, run_sweep
from risingbandits.instances.families import family_instance, family_size, generate
from risingbandits.instances.lcdb import from_lcdb, lcdb_v1_members


def _ids(split: str, seed: int = 0) -> list[int]:
    return [m["openml_id"] for m in lcdb_v1_members(seed, {"split": split})]


def test_members_follow_the_rule(lcdb_dir: Path) -> None:
    assert _ids("all") == list(ELIGIBLE)
    dev, test = _ids("dev"), _ids("test")
    assert sorted(dev + test) == list(ELIGIBLE) and len(dev) == len(test) == 3
    assert dev == sorted(dev) and test == sorted(test)
    for m in lcdb_v1_members(0, {}):
        curves = DATASETS[m["openml_id"]][1]
        reaching = {LEARNERS[j] for j, anchors in curves.items() if anchors[-1] >= 2048}
        assert len(set(m["learners"])) == 5 and set(m["learners"]) <= reaching
        last = min(curves[LEARNERS.index(n)][-1] for n in m["learners"])
        assert m["full_horizon"] == min(last, 50_000)
    assert {m["full_horizon"] for m in lcdb_v1_members(0, {}) if m["openml_id"] == 17} == {50_000}


def test_learner_draw_depends_on_seed_and_data_set_only(lcdb_dir: Path) -> None:
    every = {m["openml_id"]: m for m in lcdb_v1_members(0, {"split": "all"})}
    for split in ("dev", "test"):
        for m in lcdb_v1_members(0, {"split": split}):
            assert m == every[m["openml_id"]] and m["split"] == split
    draws = {tuple(lcdb_v1_members(seed, {})[0]["learners"]) for seed in range(8)}
    assert len(draws) > 1  # data set 11 has 6 eligible learners: seeds draw different arms


def test_family_instance_is_the_members_curves(lcdb_dir: Path) -> None:
    inst = family_instance("lcdb-v1", 1, seed=0, horizon=300, split="test")
    member = lcdb_v1_members(0, {"split": "test"})[1]
    place = _ids("all").index(member["openml_id"])  # named by its place in the whole family
    assert inst.name == f"lcdb-v1/0/{place}" and inst.noise.kind == "curve-std"
    assert family_instance("lcdb-v1", place, seed=0, horizon=300).meta == inst.meta
    assert inst.meta["openml_id"] == member["openml_id"] and inst.meta["split"] == "test"
    assert inst.meta["family"] == "lcdb-v1" and inst.meta["pull_size"] == 1
    assert inst.meta["full_horizon"] == member["full_horizon"]
    direct = from_lcdb(member["openml_id"], member["learners"], pull_size=1, horizon=300)
    np.testing.assert_array_equal(inst.means, direct.means)
    np.testing.assert_array_equal(inst.noise_std, direct.noise_std)  # type: ignore[arg-type]
    # the gap is judged on LCDB's test accuracy, which no policy observes
    test = from_lcdb(member["openml_id"], member["learners"], 1, "test-accuracy", 300).means
    np.testing.assert_array_equal(inst.test_means, test)  # type: ignore[arg-type]
    np.testing.assert_array_equal(direct.test_means, test)  # type: ignore[arg-type]
    assert not np.array_equal(inst.means, test)
    assert inst.oracle.judged is inst.test_means


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: family_instance("lcdb-v1", 6, horizon=10), "index=6 is not allowed for lcdb-v1:"),
        (
            lambda: family_instance("lcdb-v1", 3, horizon=10, split="dev"),
            "index=3 is not allowed for lcdb-v1 (split=dev): it has 3 instances, use 0..2",
        ),
        (
            lambda: family_instance("lcdb-v1", 0, horizon=10, split="train"),
            "split='train' is not allowed for lcdb-v1: use all, dev or test",
        ),
        (
            lambda: generate("lcdb-v1", 7, horizon=10),
            "count=7 is not allowed: family lcdb-v1 has 6 instances, use a count from 1 to 6",
        ),
        (lambda: generate("ltf-v1", 0, horizon=10), "count=0 is not allowed: use a count >= 1"),
        (
            lambda: generate("lcdb-v1", 6, horizon=2049),
            "horizon=2049 is not allowed for the first 6 instances of lcdb-v1: the shortest",
        ),
        (
            lambda: family_instance("lcdb-v1", 0, horizon=4097),
            "horizon=4097 is not allowed for lcdb-v1 on OpenML data set 11: its full horizon",
        ),
    ],
)
def test_bad_requests_give_one_line(lcdb_dir: Path, call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as err:
        call()
    assert message in str(err.value) and "\n" not in str(err.value)


def test_generate_and_size(lcdb_dir: Path) -> None:
    assert family_size("lcdb-v1") == 6 and family_size("lcdb-v1", split="dev") == 3
    assert family_size("ltf-v1") is None and family_size("imdb-v1") == 1
    insts = generate("lcdb-v1", 3, horizon=2048, split="dev")
    assert [x.meta["openml_id"] for x in insts] == _ids("dev")


SPEC = """
sweep_seed = 0
seeds = 2
horizons = [100, 300]

[[instances]]
family = "lcdb-v1"
count = COUNT
generator_seed = 0
params = { split = "dev" }

[[policies]]
name = "ucb1"

[[policies]]
name = "cure-ucb"
preset = "imdb"
params = { sigma = "auto" }
"""


def _places(split: str) -> list[str]:
    return [f"lcdb-v1/0/{_ids('all').index(i)}" for i in _ids(split)]


def test_spec_lists_the_split_and_refuses_too_many(lcdb_dir: Path) -> None:
    spec = parse_spec(SPEC.replace("COUNT", "3"))
    assert [r.id for r in spec.instances] == _places("dev")
    test_half = '\n[[instances]]\nfamily = "lcdb-v1"\ncount = 3\ngenerator_seed = 0\n'
    both = SPEC.replace("COUNT", "3") + test_half + 'params = { split = "test" }\n'
    ids = [r.id for r in parse_spec(both).instances]  # one spec may hold both halves
    assert ids == _places("dev") + _places("test") and len(set(ids)) == 6
    with pytest.raises(SpecError, match=r"instances\[0\]: count=4 is not allowed: family lcdb-v1"):
        parse_spec(SPEC.replace("COUNT", "4"))
    with pytest.raises(SpecError, match=r"instances\[0\]: horizon=5000 is not allowed"):
        parse_spec(SPEC.replace("COUNT", "3").replace("[100, 300]", "[100, 5000]"))


def test_sweep_runs_through_the_engine(lcdb_dir: Path, tmp_path: Path) -> None:
    result = run_sweep(parse_spec(SPEC.replace("COUNT", "2")), tmp_path / "out", executor="serial")
    assert result.cells_total == result.cells_run == 2 * 2 * 2 * 2  # instances x pol. x T x seeds
    rows = pq.read_table(tmp_path / "out" / "parts").to_pydict()
    assert set(rows["family"]) == {"lcdb-v1"} and set(rows["noise"]) == {"curve-std"}
    assert set(rows["instance"]) == set(_places("dev")[:2])


def test_cli_run_on_a_family_instance(lcdb_dir: Path) -> None:
    args = ["run", "--instance", "lcdb-v1/0/2", "--policy", "ucb1", "--horizon", "500"]
    res = CliRunner().invoke(app, [*args, "--seeds", "2", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["instance"] == "lcdb-v1/0/2" and data["noise"] == "curve-std"
    assert len(data["arm_names"]) == 5 and data["horizon"] == 500
    assert data["final_gap_on"] == "test"
    human = CliRunner().invoke(app, [*args, "--seeds", "2"])
    assert "max_i test_i(T) - test_rec(N_rec), on the test curves" in human.output


def test_cli_run_without_a_horizon_runs_the_whole_table(lcdb_dir: Path) -> None:
    """Without --horizon an lcdb-v1 instance runs to where its curves end (the default 10,000
    was refused as longer than its table, with or without --budget)."""
    full = family_instance("lcdb-v1", 2, seed=0, horizon=10).meta["full_horizon"]
    assert full < 10_000
    base = ["run", "--instance", "lcdb-v1/0/2", "--policy", "ucb1", "--seeds", "2", "--json"]
    res = CliRunner().invoke(app, base)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["horizon"] == full
    res = CliRunner().invoke(app, [*base, "--budget", "50", "--workers", "2"])
    assert res.exit_code == 0, res.output  # a budget in cost over the whole table
    assert np.isfinite(json.loads(res.output)["final_gap_mean"])
    res = CliRunner().invoke(app, ["run", "--policy", "ucb1", "--seeds", "2", "--json"])
    assert json.loads(res.output)["horizon"] == 10_000  # intro: any horizon, the default


@needs_lcdb
def test_real_lcdb_known_curve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values read once from lcdb 0.1.0's database-accuracy.csv (awk over the raw rows):
    kr-vs-kp (OpenML 3), SVC_linear at 16 samples: mean score_valid 0.6874968 and mean score_test
    0.6917696 over 125 splits; RandomForestClassifier at 2,588 samples (the last anchor): mean
    score_valid 0.9917248."""
    monkeypatch.delenv("RISINGBANDITS_LCDB_DIR", raising=False)
    inst = from_lcdb(3, ["SVC_linear", "RandomForestClassifier"], pull_size=4)
    assert inst.meta["dataset"] == "kr-vs-kp" and inst.meta["source"] == "lcdb 0.1.0"
    assert inst.means[0, 3] == pytest.approx(0.6874968, abs=1e-9)  # pull 4 = 16 samples
    assert inst.means[1, 646] == pytest.approx(0.9917248, abs=1e-9)  # pull 647 = 2,588 samples
    assert inst.max_horizon == 647 and inst.meta["min_splits"] == 125
    test = from_lcdb(3, ["SVC_linear", "RandomForestClassifier"], metric="test-accuracy")
    assert test.means[0, 0] == pytest.approx(0.6917696, abs=1e-9)
    assert family_size("lcdb-v1") == 141
    assert (family_size("lcdb-v1", split="dev"), family_size("lcdb-v1", split="test")) == (71, 70)
