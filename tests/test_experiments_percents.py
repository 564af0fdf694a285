"""Sweeps whose horizons are percents of each instance's full horizon (``horizon_percents``)
or budgets per arm (``pulls_per_arm``): per-instance horizons in the plan and the rows, the
summary grouped by percent or pulls per arm, refusals."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from risingbandits.analysis.summary import summarize
from risingbandits.cli import app
from risingbandits.experiments import SpecError, make_plan, parse_spec, run_sweep
from risingbandits.experiments import spec as spec_module
from risingbandits.instances.families import full_horizons
from test_experiments_spec import TINY

SPEC = """
sweep_seed = 0
seeds = 2
horizon_percents = [100, 5, 40]

[[instances]]
family = "lcdb-v1"
count = 3
generator_seed = 0
params = { split = "dev" }

[[policies]]
name = "ucb1"

[[policies]]
name = "successive-rejects"
"""


def test_each_instance_runs_at_its_own_percents(lcdb_dir: Path) -> None:
    spec = parse_spec(SPEC)
    fulls = full_horizons("lcdb-v1", 3, 0, split="dev")
    assert fulls is not None and len(set(fulls)) > 1  # the fixture's instances differ
    assert spec.relative and spec.horizons == (5, 40, 100)
    for ref, full in zip(spec.instances, fulls, strict=True):
        assert ref.full_horizon == full
        assert spec.horizons_of(ref) == tuple(max(1, round(p * full / 100)) for p in (5, 40, 100))
    for task in make_plan(spec).tasks:
        assert task.horizons == spec.horizons_of(task.instance)
    assert parse_spec(TINY).horizon_keys() is None and not parse_spec(TINY).relative


def test_rows_hold_the_real_horizon_and_the_summary_groups_by_percent(
    lcdb_dir: Path, tmp_path: Path
) -> None:
    spec = parse_spec(SPEC)
    run_sweep(spec, tmp_path / "out", executor="serial")
    rows = pq.read_table(tmp_path / "out" / "parts").to_pylist()
    assert len(rows) == 3 * 2 * 3 * 2
    own = {ref.id: spec.horizons_of(ref) for ref in spec.instances}
    assert {(r["instance"], r["horizon"]) for r in rows} == {
        (i, h) for i, hs in own.items() for h in hs
    }
    assert all(sum(r["pulls"]) == r["horizon"] for r in rows)
    s = summarize(tmp_path / "out")
    assert s.horizons == (5, 40, 100) and s.grid == "horizon_percents"
    for k, percent in enumerate((5, 40, 100)):
        for label in ("ucb1", "successive-rejects"):
            values = [
                r["regret"]
                for r in rows
                if r["policy"] == label and r["horizon"] == own[r["instance"]][k]
            ]
            row = next(m for m in s.regret if (m.policy, m.horizon) == (label, percent))
            assert row.ci.n == 6 and row.ci.mean == pytest.approx(np.mean(values), rel=1e-12)
    assert {r.horizon for r in s.ranks} == {5, 40, 100} and s.win_rates[0].units == 6
    assert json.loads(json.dumps(s.to_dict()))["horizons_relative"] is True
    table = list(csv.DictReader(io.StringIO(s.to_csv())))
    assert {r["horizon"] for r in table} == {"5%", "40%", "100%"}
    shown = CliRunner().invoke(app, ["sweep", "summary", str(tmp_path / "out")])
    assert shown.exit_code == 0 and "40% of full T" in shown.output
    wrong = CliRunner().invoke(app, ["sweep", "summary", str(tmp_path / "out"), "--horizon", "50"])
    assert wrong.exit_code == 2 and "percents of each instance's full horizon" in wrong.stderr


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("horizon_percents = [100, 5, 40]", "horizon_percents = [5]\nhorizons = [100]"),
            "spec: give exactly one of horizons, horizon_percents, pulls_per_arm (got horizons, "
            "horizon_percents)",
        ),
        (
            ("horizon_percents = [100, 5, 40]", ""),
            "give exactly one of horizons, horizon_percents, pulls_per_arm (got none)",
        ),
        (
            ("horizon_percents = [100, 5, 40]", "pulls_per_arm = [4, 10000]"),
            "instances[0].family: pulls_per_arm = 10000 gives lcdb-v1/0/",
        ),
        (("horizon_percents = [100, 5, 40]", "pulls_per_arm = [0]"), "pulls_per_arm[0]: Input"),
        (("[100, 5, 40]", "[101]"), "horizon_percents[0]: Input should be less than or equal to"),
        (("[100, 5, 40]", "[0]"), "horizon_percents[0]: Input should be greater than or equal to"),
        (
            (
                '"lcdb-v1"\ncount = 3\ngenerator_seed = 0\nparams = { split = "dev" }',
                '"ltf-v1"\ncount = 3\ngenerator_seed = 0',
            ),
            "instances[0]: horizon_percents needs instances with a full horizon (a family such "
            "as lcdb-v1); ltf-v1/0/0 has none: give horizons instead",
        ),
    ],
)
def test_mistakes_give_one_line(lcdb_dir: Path, edit: tuple[str, str], expected: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(SPEC.replace(*edit))
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_percents_giving_one_horizon_are_refused(
    lcdb_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spec_module, "full_horizons", lambda *a, **k: [3, 3, 3])
    with pytest.raises(SpecError, match=r"5% and 40% give the same horizon 1 on lcdb-v1/0/\d+ "):
        parse_spec(SPEC)


def test_absolute_specs_keep_the_hash_they_had_before_percents() -> None:
    # written by risingbandits before horizon_percents existed; stores keep it in their manifest
    assert (
        parse_spec(TINY).hash == "078d9079b23b0134f831e03a44a4020296e95698424b703943c6234baff24e16"
    )


PER_ARM = """
sweep_seed = 0
seeds = 2
pulls_per_arm = [8, 4]

[[instances]]
family = "ltf-v1"
count = 6
generator_seed = 0

[[instances]]
family = "lcdb-v1"
count = 2
generator_seed = 0
params = { split = "dev" }

[[policies]]
name = "ucb1"

[[policies]]
name = "successive-halving"
"""


def test_budgets_per_arm_give_each_instance_k_times_m(lcdb_dir: Path, tmp_path: Path) -> None:
    """Budgets as practitioners count them: m steps for each of the K candidates."""
    spec = parse_spec(PER_ARM)
    assert spec.relative and spec.grid_key == "pulls_per_arm" and spec.horizons == (4, 8)
    arms = {ref.id: ref.build(1).n_arms for ref in spec.instances}
    assert len(set(arms.values())) > 1  # ltf-v1 draws K in 2..5: the budgets differ
    for ref in spec.instances:
        assert spec.horizons_of(ref) == (4 * arms[ref.id], 8 * arms[ref.id])
    run_sweep(spec, tmp_path / "out", executor="serial")
    rows = pq.read_table(tmp_path / "out" / "parts").to_pylist()
    assert {(r["instance"], r["horizon"]) for r in rows} == {
        (i, m * k) for i, k in arms.items() for m in (4, 8)
    }
    s = summarize(tmp_path / "out", metric="final_gap")
    assert s.horizons == (4, 8) and s.grid == "pulls_per_arm"
    for m in (4, 8):
        values = [
            r["final_gap"]
            for r in rows
            if r["policy"] == "ucb1" and r["horizon"] == m * arms[r["instance"]]
        ]
        row = next(g for g in s.final_gap if (g.policy, g.horizon) == ("ucb1", m))
        assert row.ci.n == 16 and row.ci.mean == pytest.approx(np.mean(values), rel=1e-12)
    assert {r["horizon"] for r in csv.DictReader(io.StringIO(s.to_csv()))} == {"4/arm", "8/arm"}
    assert json.loads(json.dumps(s.to_dict()))["grid"] == "pulls_per_arm"
    shown = CliRunner().invoke(app, ["sweep", "summary", str(tmp_path / "out")])
    assert shown.exit_code == 0 and "8 pulls per arm" in shown.output
    wrong = CliRunner().invoke(app, ["sweep", "summary", str(tmp_path / "out"), "--horizon", "5"])
    assert wrong.exit_code == 2 and "(pulls per arm)" in wrong.stderr
