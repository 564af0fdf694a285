"""from_lcdb on a small CSV with LCDB's columns: curves, interpolation, noise, errors, cache."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from lcdb_fixture import TO_4096, mu_valid, spread, write_lcdb
from risingbandits.cli import app
from risingbandits.extras import MissingExtra
from risingbandits.instances import lcdb_table
from risingbandits.instances.lcdb import from_lcdb, lcdb_datasets
from risingbandits.instances.lcdb_table import load_table


def _expected(j: int, sizes: np.ndarray, last: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixture's curve at ``sizes``: flat below 16 and above the last anchor."""
    clipped = np.clip(sizes, 16, last)
    return mu_valid(j, clipped), spread(j, clipped)


def test_means_and_spread_follow_the_curves_in_log_size(lcdb_dir: Path) -> None:
    inst = from_lcdb(11, ["SVC_linear", "LogisticRegression"], pull_size=5)
    assert inst.means.shape == (2, 4096 // 5)
    sizes = 5.0 * np.arange(1, 4096 // 5 + 1)
    for arm, j in enumerate((0, 2)):
        mean, std = _expected(j, sizes, 4096)
        np.testing.assert_allclose(inst.means[arm], mean, rtol=1e-12)
        np.testing.assert_allclose(inst.noise_std[arm], std, rtol=1e-9)  # type: ignore[index]
    # between anchors 16 and 64 the value at 32 is the midpoint (log scale), not 1/3 of the way
    at32 = from_lcdb(11, ["SVC_linear", "SVC_rbf"], pull_size=32, horizon=1).means[0, 0]
    assert at32 == pytest.approx((mu_valid(0, 16) + mu_valid(0, 64)) / 2)


def test_instance_description_and_default_noise(lcdb_dir: Path) -> None:
    inst = from_lcdb(11, ["SVC_linear", "sklearn.linear_model.LogisticRegression"])
    assert inst.name == "lcdb:11:alpha"
    assert inst.arm_names == ("SVC_linear", "LogisticRegression")
    assert inst.noise.kind == "curve-std" and not inst.require_rising
    assert inst.noise_proxy == pytest.approx(spread(2, 4096))
    meta = inst.meta
    assert meta["openml_id"] == 11 and meta["dataset"] == "alpha" and meta["pull_size"] == 16
    assert meta["learners"] == ["SVC_linear", "sklearn.linear_model.LogisticRegression"]
    assert meta["full_horizon"] == 4096 // 16 == inst.max_horizon
    assert meta["min_splits"] == 3 and meta["metric"] == "accuracy"


def test_flat_before_the_first_and_after_the_last_anchor(lcdb_dir: Path) -> None:
    inst = from_lcdb(11, ["SVC_linear", "KNeighborsClassifier"], pull_size=4)
    assert inst.meta["last_anchor"] == [4096, 256]
    np.testing.assert_allclose(inst.means[:, :4], np.repeat(inst.means[:, [3]], 4, axis=1))
    short = inst.means[1]
    np.testing.assert_allclose(short[64:], mu_valid(6, 256))  # sizes 260.. are past 256
    assert short[63] == pytest.approx(mu_valid(6, 256)) and short[62] < short[63]


def test_test_accuracy_reads_the_test_scores(lcdb_dir: Path) -> None:
    valid = from_lcdb(12, ["SVC_rbf", "BernoulliNB"], pull_size=64)
    test = from_lcdb(12, ["SVC_rbf", "BernoulliNB"], pull_size=64, metric="test-accuracy")
    np.testing.assert_allclose(test.means, valid.means - 0.01, rtol=1e-12)


def test_default_learners_horizon_prefix_and_data_sets(lcdb_dir: Path) -> None:
    every = from_lcdb(11, pull_size=64)
    assert len(every.arm_names) == 7 and every.arm_names[0] == "SVC_linear"
    short = from_lcdb(11, pull_size=64, horizon=10)
    np.testing.assert_array_equal(short.means, every.means[:, :10])
    assert lcdb_datasets() == {11: "alpha", 12: "beta", 13: "gamma", 14: "delta"} | {
        15: "epsilon",
        16: "zeta",
        17: "eta",
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"openml_id": 99}, "openml_id=99 is not allowed: LCDB files in"),
        ({"learners": ["SVC_linear", "Nope"]}, "learner='Nope' is not allowed for OpenML data"),
        ({"learners": ["SVC_rbf", "SVC_rbf"]}, "learner='SVC_rbf' is given twice"),
        ({"metric": "logloss"}, "metric='logloss' is not allowed: use accuracy"),
        ({"pull_size": 0}, "pull_size=0 is not allowed: use an integer >= 1"),
        ({"pull_size": 5000}, "pull_size=5000 is not allowed for OpenML data set 11 (alpha)"),
        ({"horizon": 257}, "horizon=257 is not allowed for OpenML data set 11 (alpha) with "),
        ({"horizon": 0}, "horizon=0 is not allowed: use an integer >= 1"),
    ],
)
def test_bad_input_gives_one_line(lcdb_dir: Path, kwargs: dict, message: str) -> None:
    args = {"openml_id": 11, "learners": ["SVC_linear", "SVC_rbf"], "pull_size": 16} | kwargs
    with pytest.raises(ValueError) as err:
        from_lcdb(**args)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_too_short_names_the_longest_horizon(lcdb_dir: Path) -> None:
    with pytest.raises(ValueError, match=r"ends at 4096 training samples, use horizon <= 256"):
        from_lcdb(11, ["SVC_linear", "KNeighborsClassifier"], horizon=257)
    with pytest.raises(
        ValueError, match=r"use SVC_linear, SVC_rbf, RandomForestClassifier, .* \(short or full"
    ):
        from_lcdb(11, ["Forest"])


def _no_lcdb(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.delenv("RISINGBANDITS_LCDB_DIR", raising=False)
    monkeypatch.setattr(lcdb_table, "distribution", missing)


def test_missing_package_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_lcdb(monkeypatch)
    with pytest.raises(MissingExtra, match=r'pip install "risingbandits\[lcdb\]"'):
        from_lcdb(3, ["SVC_linear", "SVC_rbf"])


def test_cli_missing_package_is_one_line_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_lcdb(monkeypatch)
    res = CliRunner().invoke(app, ["run", "--instance", "lcdb-v1/0/0", "--horizon", "100"])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert lines == [
        "error: LCDB learning curves need the lcdb package, which is not installed: "
        'pip install "risingbandits[lcdb]"'
    ]


def test_folder_without_the_table_or_with_missing_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lcdb_table, "user_cache_root", lambda: tmp_path / "cache")
    monkeypatch.setenv("RISINGBANDITS_LCDB_DIR", str(tmp_path))
    with pytest.raises(ValueError, match=r"holds no database-accuracy\.csv"):
        load_table()
    (tmp_path / "database-accuracy.csv").write_text("openmlid,learner,size_train\n3,x,16\n")
    with pytest.raises(ValueError, match=r"lacks the column\(s\) score_valid, score_test"):
        load_table()


def _cache_file(folder: Path) -> Path:
    (path,) = (folder.parent / "cache" / "lcdb").glob("dir-*/accuracy.parquet")
    return path


def test_parsed_table_is_cached_and_reused(lcdb_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = from_lcdb(12, ["SVC_rbf", "BernoulliNB"]).means
    path = _cache_file(lcdb_dir)
    assert [p.name for p in path.parent.iterdir()] == ["accuracy.parquet"]  # no temporary left
    lcdb_table._load.cache_clear()

    def no_parse(path: Path) -> None:
        raise AssertionError("the CSV was parsed again")

    monkeypatch.setattr(lcdb_table, "_parse_csv", no_parse)
    np.testing.assert_array_equal(from_lcdb(12, ["SVC_rbf", "BernoulliNB"]).means, first)


def test_damaged_cache_is_rebuilt(lcdb_dir: Path) -> None:
    first = from_lcdb(12, ["SVC_rbf", "BernoulliNB"]).means
    path = _cache_file(lcdb_dir)
    path.write_bytes(b"not parquet")
    lcdb_table._load.cache_clear()
    np.testing.assert_array_equal(from_lcdb(12, ["SVC_rbf", "BernoulliNB"]).means, first)
    assert path.read_bytes()[:4] == b"PAR1"


def _replaced(table: Any, name: str, values: Any) -> Any:
    import pyarrow as pa

    return table.set_column(table.column_names.index(name), name, pa.array(values))


def _first(table: Any, name: str, value: Any) -> Any:
    return _replaced(table, name, [value, *table[name].to_pylist()[1:]])


@pytest.mark.parametrize(
    "tamper",
    [
        lambda t: t.take([1, 0, *range(2, t.num_rows)]),  # a curve's sizes out of order
        lambda t: _first(t, "size_train", 0),
        lambda t: _first(t, "splits", 0),
        lambda t: _first(t, "valid_mean", 1.5),
        lambda t: _first(t, "test_std", float("nan")),
        lambda t: _first(t, "seconds", float("inf")),
        lambda t: _first(t, "seconds", None),  # a missing value
        lambda t: _replaced(t, "splits", t["splits"].to_numpy().astype(float)),
    ],
    ids=["order", "size", "splits", "mean", "std", "seconds", "null", "type"],
)
def test_a_cache_with_values_the_curves_cannot_use_is_rebuilt(lcdb_dir: Path, tamper) -> None:  # type: ignore[no-untyped-def]
    import pyarrow.parquet as pq

    first = from_lcdb(11, ["SVC_linear", "SVC_rbf"]).means
    path = _cache_file(lcdb_dir)
    parsed = pq.read_table(path)
    pq.write_table(tamper(parsed).replace_schema_metadata(parsed.schema.metadata), path)
    lcdb_table._load.cache_clear()
    np.testing.assert_array_equal(from_lcdb(11, ["SVC_linear", "SVC_rbf"]).means, first)
    assert pq.read_table(path).equals(parsed)  # rewritten from the CSV


def test_a_csv_with_a_score_out_of_range_is_named(lcdb_dir: Path) -> None:
    """Refused when parsed: its cache would be refused, so parsed again, at every load."""
    csv = lcdb_dir / "database-accuracy.csv"
    with csv.open("a") as f:
        f.write("12,SVC_rbf,8,100,0,0,0.01,1.0,1.5,0.5\n")
    with pytest.raises(
        ValueError,
        match=rf"^LCDB table {re.escape(str(csv))}: valid_mean is 1.5 for openmlid 12, SVC_rbf, "
        r"size_train 8: not within \[0, 1\]$",
    ):
        load_table()


def test_changed_csv_makes_the_cache_stale(lcdb_dir: Path) -> None:
    before = from_lcdb(12, ["SVC_rbf", "BernoulliNB"], pull_size=8)
    assert before.means[0, 0] == pytest.approx(mu_valid(1, 16))  # flat below 16 samples
    csv = lcdb_dir / "database-accuracy.csv"
    with csv.open("a") as f:
        f.write("12,SVC_rbf,8,100,0,0,0.01,1.0,0.0,0.0\n")  # a new first anchor at 8 samples
    after = from_lcdb(12, ["SVC_rbf", "BernoulliNB"], pull_size=8)
    assert after.means[0, 0] == 0.0 and after.noise_std[0, 0] == 0.0  # type: ignore[index]


def test_cache_follows_the_source_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lcdb_table, "user_cache_root", lambda: tmp_path / "cache")
    for name in ("a", "b"):
        monkeypatch.setenv("RISINGBANDITS_LCDB_DIR", str(write_lcdb(tmp_path / name)))
        assert load_table().openml_ids == (11, 12, 13, 14, 15, 16, 17)
    assert len(list((tmp_path / "cache" / "lcdb").glob("dir-*/accuracy.parquet"))) == 2


def test_anchor_sizes_of_the_fixture_are_the_table_anchors(lcdb_dir: Path) -> None:
    curve = load_table().curve(11, "SVC_linear")
    assert tuple(curve.sizes) == TO_4096 and set(curve.splits) == {3}
