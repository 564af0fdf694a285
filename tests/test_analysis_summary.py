"""Summary of a store: regret +- CI, ranks and win rates, formats, notes (synthetic rows)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import rankdata
from typer.testing import CliRunner

from risingbandits.analysis.bootstrap import bootstrap_ci
from risingbandits.analysis.stats import mean_ci
from risingbandits.analysis.summary import summarize
from risingbandits.cli import app
from risingbandits.experiments import Store, StoreError, make_plan, parse_spec
from risingbandits.experiments.worker import ROW_SCHEMA
from test_experiments_spec import TINY


def fake_store(
    path: Path, text: str, skip: int = 0, metric: str = "regret"
) -> dict[tuple[str, int], list[float]]:
    """A store of ``text`` whose rows have random regrets and final gaps (no simulation);
    returns the values of ``metric`` by (policy, horizon) in (instance, seed) order. The last
    ``skip`` tasks are left unfinished."""
    spec = parse_spec(text)
    plan = make_plan(spec, target_steps=500)
    store = Store(path)
    store.create(spec, plan)
    rng = np.random.default_rng(0)
    written: dict[tuple[str, int], list[tuple[str, int, float]]] = {}
    for task in plan.tasks[: len(plan.tasks) - skip]:
        rows = []
        for h in task.horizons:
            for s in task.seeds:
                regret = float(rng.integers(0, 50)) * (1 + task.policy.label.count("u"))
                final_gap = float(rng.integers(0, 4)) / 10  # coarse: frequent ties
                value = regret if metric == "regret" else final_gap
                key = (task.policy.label, h)
                written.setdefault(key, []).append((task.instance.id, s, value))
                rows.append(
                    {
                        "instance": task.instance.id,
                        "family": "fake",
                        "n_arms": 2,
                        "noise": "none",
                        "policy": task.policy.label,
                        "policy_name": task.policy.name,
                        "params": task.policy.params_json,
                        "reconstruction": task.policy.reconstruction,
                        "horizon": h,
                        "seed": s,
                        "regret": regret,
                        "final_gap": final_gap,
                        "recommended": 0,
                        "reward": 0.0,
                        "pulls": [h, 0],
                        "optimal_arm": 0,
                        "optimal_value": 0.0,
                        "wall_time": 0.0,
                    }
                )
        store.write_part(task.id, pa.Table.from_pylist(rows, schema=ROW_SCHEMA))
    return {k: [r for _, _, r in sorted(v)] for k, v in written.items()}


def test_regret_intervals_are_t_intervals_over_every_run(tmp_path: Path) -> None:
    written = fake_store(tmp_path / "s", TINY)
    s = summarize(tmp_path / "s")
    assert s.horizons == (120, 300) and s.cells_done == s.cells_total
    assert len(s.regret) == len(written)
    for r in s.regret:
        ref = mean_ci(np.array(written[r.policy, r.horizon]))
        assert r.ci.n == ref.n == 6
        assert r.ci.mean == pytest.approx(ref.mean)
        assert (r.ci.low, r.ci.high) == pytest.approx((ref.low, ref.high))
    # ranks: 3 policies, each unit's ranks sum to 6
    for h in s.horizons:
        assert sum(r.ci.mean for r in s.ranks if r.horizon == h) == pytest.approx(6.0)
    # win rates at the largest horizon only, unless horizons are chosen
    assert [w.horizon for w in s.win_rates] == [300]
    assert s.win_rates[0].units == 6
    assert s.notes == []


def test_bootstrap_option_and_chosen_horizons(tmp_path: Path) -> None:
    written = fake_store(tmp_path / "s", TINY)
    s = summarize(tmp_path / "s", [120], ci="bootstrap", resamples=2_000, seed=5)
    assert s.horizons == (120,) and {r.horizon for r in s.regret} == {120}
    assert [w.horizon for w in s.win_rates] == [120]
    for r in s.regret:
        values = np.array(written[r.policy, 120])
        ref = bootstrap_ci(values, n_resamples=2_000, seed=5)
        assert r.ci.mean == pytest.approx(ref.mean)
        # same values in the same (instance, seed) order, same seed: the same interval
        assert (r.ci.low, r.ci.high) == (ref.low, ref.high)
    again = summarize(tmp_path / "s", [120], ci="bootstrap", resamples=2_000, seed=5)
    assert again.regret == s.regret
    with pytest.raises(
        ValueError, match=r"horizon=7 is not allowed: the sweep has horizons 120, 300"
    ):
        summarize(tmp_path / "s", [7])
    with pytest.raises(ValueError, match=r"ci='jackknife' is not allowed"):
        summarize(tmp_path / "s", ci="jackknife")  # type: ignore[arg-type]


def test_csv_and_json_carry_the_same_numbers(tmp_path: Path) -> None:
    fake_store(tmp_path / "s", TINY)
    s = summarize(tmp_path / "s")
    data = json.loads(json.dumps(s.to_dict(), allow_nan=False))
    table = list(csv.DictReader(io.StringIO(s.to_csv())))
    regret_csv = {
        (r["policy"], int(r["horizon"])): float(r["value"])
        for r in table
        if r["metric"] == "regret"
    }
    regret_json = {(r["policy"], r["horizon"]): r["mean"] for r in data["regret"]}
    assert regret_csv == pytest.approx(regret_json)
    wins = [r for r in table if r["metric"] == "win_rate"]
    assert len(wins) == 3 * 2  # ordered pairs of 3 policies
    matrix = data["win_rate"][0]["matrix"]
    assert matrix[0][0] is None and matrix[0][1] + matrix[1][0] == pytest.approx(1.0)
    assert [p["label"] for p in data["policies"]] == ["cure-ucb", "ucb1", "cure-ucb[sigma=1]"]


def test_final_gap_means_ranks_and_win_rates(tmp_path: Path) -> None:
    written = fake_store(tmp_path / "s", TINY, metric="final_gap")
    s = summarize(tmp_path / "s", metric="final_gap")
    labels = ["cure-ucb", "ucb1", "cure-ucb[sigma=1]"]
    assert s.metric == "final_gap" and len(s.final_gap) == len(written)
    for r in s.final_gap:
        ref = mean_ci(np.array(written[r.policy, r.horizon]))
        assert r.ci.mean == pytest.approx(ref.mean) and r.ci.n == ref.n == 6
        assert (r.ci.low, r.ci.high) == pytest.approx((ref.low, ref.high))
    for h in s.horizons:  # every policy ran every unit: rows are aligned by (instance, seed)
        gaps = np.column_stack([written[p, h] for p in labels])
        expected = rankdata(gaps, axis=1, method="average").mean(axis=0)
        got = {r.policy: r.ci.mean for r in s.ranks if r.horizon == h}
        assert [got[p] for p in labels] == pytest.approx(expected.tolist())
    w = s.win_rates[0]
    gaps = np.column_stack([written[p, 300] for p in labels])
    a, b = gaps[:, 0], gaps[:, 1]
    assert w.metric == "final_gap"
    assert w.matrix[0, 1] == pytest.approx(np.mean((a < b) + 0.5 * (a == b)))
    by_regret = summarize(tmp_path / "s")
    assert by_regret.metric == "regret" and by_regret.ranks != s.ranks
    assert by_regret.final_gap == s.final_gap  # both means are always there
    data = s.to_dict()
    assert data["ranked_by"] == "final_gap" and len(data["final_gap"]) == len(written)
    table = list(csv.DictReader(io.StringIO(s.to_csv())))
    assert {r["ranked_by"] for r in table} == {"final_gap"}
    assert {r["metric"] for r in table} == {"regret", "final_gap", "rank", "win_rate"}
    with pytest.raises(ValueError, match=r"metric='reward' is not allowed: use one of regret"):
        summarize(tmp_path / "s", metric="reward")


@pytest.mark.parametrize("which", [0, -1])
def test_results_written_before_the_final_gap_are_refused_in_one_line(
    tmp_path: Path, which: int
) -> None:
    fake_store(tmp_path / "s", TINY)
    part = Store(tmp_path / "s").part_files()[which]
    pq.write_table(pq.read_table(part).drop(["final_gap"]), part)
    with pytest.raises(ValueError, match=r"without the column 'final_gap'.*run the sweep again"):
        summarize(tmp_path / "s")


def test_an_incomplete_store_says_so_and_ranks_complete_units_only(tmp_path: Path) -> None:
    fake_store(tmp_path / "s", TINY, skip=2)
    s = summarize(tmp_path / "s")
    assert s.cells_done < s.cells_total
    assert any(n.startswith("incomplete sweep") for n in s.notes)
    full_units = 6
    assert all(r.ci.n < full_units for r in s.ranks if r.horizon == 300)


def test_reconstructions_are_marked(tmp_path: Path) -> None:
    text = TINY.replace('name = "ucb1"', 'name = "ti-ucb"')
    fake_store(tmp_path / "s", text)
    s = summarize(tmp_path / "s")
    assert s.display_name("ti-ucb") == "ti-ucb*" and s.display_name("cure-ucb") == "cure-ucb"
    assert any("reconstruction" in n for n in s.notes)
    table = list(csv.DictReader(io.StringIO(s.to_csv())))
    assert {r["reconstruction"] for r in table if r["policy"] == "ti-ucb"} == {"true"}
    assert {r["reconstruction"] for r in table if r["policy"] == "ucb1"} == set()


def test_a_store_without_parts_cannot_be_summarised(tmp_path: Path) -> None:
    spec = parse_spec(TINY)
    Store(tmp_path).create(spec, make_plan(spec))
    with pytest.raises(StoreError, match="has no finished task yet"):
        summarize(tmp_path)


def test_a_store_in_a_folder_named_like_a_glob_reads_only_its_own_parts(tmp_path: Path) -> None:
    """DuckDB's ``read_parquet`` expanded ``* ? [ ]`` in the checked part paths: the store in
    ``s[12]*?`` was summarised from the parts of ``s1-planted``, which no check had seen."""
    store = tmp_path / "s[12]*?"
    written = fake_store(store, TINY)
    planted = tmp_path / "s1-planted"  # matched by the pattern s[12]*?
    shutil.copytree(store, planted)
    for part in Store(planted).part_files():
        table = pq.read_table(part)
        regret = pa.array([123_456.0] * table.num_rows)
        pq.write_table(
            table.set_column(table.schema.get_field_index("regret"), "regret", regret), part
        )
    means = {k: float(np.mean(v)) for k, v in written.items()}

    s = summarize(store)
    assert {(r.policy, r.horizon): r.ci.mean for r in s.regret} == pytest.approx(means)
    result = CliRunner().invoke(app, ["sweep", "summary", str(store), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {(r["policy"], r["horizon"]): r["mean"] for r in data["regret"]} == pytest.approx(means)
