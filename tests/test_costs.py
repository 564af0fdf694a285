"""Costs in instances (issue 22, item 1): validation, LCDB's training times, live-v1's measured
unit times, and the cost option of the synthetic families."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import risingbandits as rb
from lcdb_fixture import LEARNERS, TO_4096, needs_lcdb, write_lcdb
from live_fixture import made_up_task, write_made_up
from risingbandits.experiments import SpecError, parse_spec
from risingbandits.instances import lcdb_table
from risingbandits.instances.families import SPREAD_COSTS, family_instance, generate
from risingbandits.instances.lcdb import MIN_PULL_SECONDS, from_lcdb, lcdb_v1_members
from risingbandits.instances.lcdb_table import load_table
from risingbandits.instances.live import MIN_UNIT_SECONDS, live_instance, live_v1_members
from risingbandits.instances.live_cache import cache_folder, write_task

MEANS = [[0.1, 0.2, 0.3], [0.2, 0.3, 0.4]]


# -- from_means --------------------------------------------------------------------------------


def test_costs_per_arm_are_repeated_along_the_pulls() -> None:
    inst = rb.from_means(MEANS, costs=[2.0, 0.5])
    np.testing.assert_array_equal(inst.pull_costs, [[2.0] * 3, [0.5] * 3])
    assert inst.pull_costs is inst.costs and not inst.pull_costs.flags.writeable


def test_a_table_of_costs_is_kept_as_given() -> None:
    table = [[1.0, 2.0, 3.0], [0.1, 0.2, 0.3]]
    inst = rb.from_means(MEANS, costs=table)
    np.testing.assert_array_equal(inst.pull_costs, table)
    np.testing.assert_array_equal(inst.with_noise(rb.Noise("none")).pull_costs, table)


def test_without_costs_every_pull_costs_one() -> None:
    inst = rb.from_means(MEANS)
    assert inst.costs is None
    np.testing.assert_array_equal(inst.pull_costs, np.ones((2, 3)))
    assert not inst.pull_costs.flags.writeable


@pytest.mark.parametrize(
    ("costs", "message"),
    [
        ([1.0, 2.0, 3.0], "costs has 3 entries for 2 arms"),
        (
            [[1.0, 2.0], [1.0, 2.0]],
            "costs has shape (2, 2): use one cost per arm (2,) or the shape of means, (2, 3)",
        ),
        ([1 + 1j, 2.0], "costs are complex numbers: use real numbers > 0"),
        (np.ones((2, 3, 1)), "costs has shape (2, 3, 1): use one cost per arm (2,) or the shape"),
        ("cheap", "costs must be numbers: one per arm, or a table arms x pulls"),
        ([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]], "costs[arm 1 (b), pull 2] = 0.0 is not allowed: use"),
        ([[1.0, -2.0, 1.0], [1.0, 1.0, 1.0]], "costs[arm 0 (a), pull 2] = -2.0 is not allowed"),
        ([[1.0, 1.0, np.nan], [1.0, 1.0, 1.0]], "costs[arm 0 (a), pull 3] = nan is not allowed"),
        ([1.0, np.inf], "costs[arm 1 (b), pull 1] = inf is not allowed: use a finite number > 0"),
        ([1.0, 1e308], "costs[arm 1 (b), pull 2] = 1e+308 is not allowed: use costs whose sum"),
        (["1", "2"], "costs has text values (dtype <U1): use numbers > 0"),
        ([True, True], "costs has boolean values (dtype bool): use numbers > 0"),
    ],
)
def test_bad_costs_give_one_line(costs: object, message: str) -> None:
    with pytest.raises(ValueError) as err:
        rb.from_means(MEANS, arm_names=("a", "b"), costs=costs)
    assert message in str(err.value) and "\n" not in str(err.value)


# -- LCDB --------------------------------------------------------------------------------------


def seconds(j: int, size: float | np.ndarray) -> np.ndarray:
    """The fixture's mean training time: linear in log(size), so interpolation is exact."""
    return 0.01 * (j + 1) * (1.0 + np.log2(np.asarray(size, dtype=np.float64) / 16))


TIMES = {
    # (data set, learner index, anchor): the three splits' times as written in the CSV
    (12, 1, 256): ("-1", "0", repr(float(seconds(1, 256)))),  # only the positive one counts
    (12, 1, 1024): ("", "", ""),  # no time: interpolated across from 256 and 4096
    **{(12, 2, a): ("1e-06",) * 3 for a in TO_4096},  # below the floor
    **{(12, 5, a): ("",) * 3 for a in TO_4096},  # no time at all
}


def _timed_lcdb(folder: Path) -> Path:
    """The LCDB fixture with ``traintime`` = :func:`seconds` x (0.9, 1, 1.1) over the 3 splits
    (mean :func:`seconds`), except the rows of :data:`TIMES`."""
    write_lcdb(folder)
    path = folder / "database-accuracy.csv"
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    for row in rows[1:]:
        j, size, split = LEARNERS.index(row[1]), int(row[2]), int(row[5])
        given = TIMES.get((int(row[0]), j, size))
        row[6] = given[split] if given else repr(float(seconds(j, size)) * (0.9, 1.0, 1.1)[split])
    with path.open("w", newline="") as f:
        csv.writer(f).writerows(rows)
    return folder


@pytest.fixture
def timed_lcdb(lcdb_dir: Path) -> Path:
    """:func:`_timed_lcdb` written over the ``lcdb_dir`` folder (source and cache as there)."""
    return _timed_lcdb(lcdb_dir)


def test_a_pull_costs_the_fit_on_all_its_samples(timed_lcdb: Path) -> None:
    inst = from_lcdb(11, ["SVC_linear", "LogisticRegression"], pull_size=5)
    sizes = np.clip(5.0 * np.arange(1, 4096 // 5 + 1), 16, 4096)  # flat below 16 samples
    for arm, j in enumerate((0, 2)):
        np.testing.assert_allclose(inst.pull_costs[arm], seconds(j, sizes), rtol=1e-9)
    # a fit from scratch, not the increment over the previous pull's fit
    assert inst.pull_costs[0, 99] == pytest.approx(seconds(0, 500))
    short = from_lcdb(11, ["SVC_linear", "KNeighborsClassifier"], pull_size=64)
    np.testing.assert_allclose(short.pull_costs[1, 3:], seconds(6, 256))  # held after 256


def test_missing_zero_negative_and_tiny_times(timed_lcdb: Path) -> None:
    learners = ["SVC_rbf", "LogisticRegression", "BernoulliNB"]
    inst = from_lcdb(12, learners, pull_size=16)
    sizes = 16.0 * np.arange(1, 4096 // 16 + 1)
    np.testing.assert_allclose(inst.pull_costs[0], seconds(1, sizes), rtol=1e-9)
    np.testing.assert_array_equal(inst.pull_costs[1:], MIN_PULL_SECONDS)
    curve = load_table().curve(12, "SVC_rbf")
    assert np.isnan(curve.seconds[TO_4096.index(1024)])


def test_lcdb_v1_members_carry_the_costs_of_their_curves(timed_lcdb: Path) -> None:
    member = lcdb_v1_members(0, {})[2]
    inst = family_instance("lcdb-v1", 2, horizon=2048)
    direct = from_lcdb(member["openml_id"], member["learners"], pull_size=1, horizon=2048)
    np.testing.assert_array_equal(inst.pull_costs, direct.pull_costs)
    assert inst.pull_costs.shape == (5, 2048) and (inst.pull_costs > 0).all()


def test_a_cache_without_times_is_rebuilt_not_misread(timed_lcdb: Path) -> None:
    """A cache of the former parsed form (format 1, no ``seconds``) with the current CSV's
    stamp is parsed again, whatever its format tag says."""
    import pyarrow.parquet as pq

    first = from_lcdb(12, ["SVC_linear", "SVC_rbf"]).pull_costs
    (path,) = (timed_lcdb.parent / "cache" / "lcdb").glob("dir-*/accuracy.parquet")
    for tag in (lcdb_table.CACHE_FORMAT, b"1"):
        old = pq.read_table(path).drop_columns(["seconds"])
        stamp = old.schema.metadata[b"source"]
        pq.write_table(old.replace_schema_metadata({b"source": stamp, b"format": tag}), path)
        lcdb_table._load.cache_clear()
        np.testing.assert_array_equal(from_lcdb(12, ["SVC_linear", "SVC_rbf"]).pull_costs, first)
        assert "seconds" in pq.read_table(path).column_names


@needs_lcdb
def test_real_lcdb_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Values read once from lcdb 0.1.0's database-accuracy.csv (awk over the raw rows, column
    traintime): kr-vs-kp (OpenML 3), SVC_linear at 16 samples: mean 0.00096 s over 125 splits;
    RandomForestClassifier at 2,588 samples: mean 0.7056624 s over 125 splits."""
    monkeypatch.delenv("RISINGBANDITS_LCDB_DIR", raising=False)
    inst = from_lcdb(3, ["SVC_linear", "RandomForestClassifier"], pull_size=4)
    assert inst.pull_costs[0, 3] == pytest.approx(0.00096, abs=1e-12)  # pull 4 = 16 samples
    assert inst.pull_costs[1, 646] == pytest.approx(0.7056624, abs=1e-12)  # 2,588 samples
    (member,) = generate("lcdb-v1", 1, horizon=2048)
    assert member.pull_costs.shape == (5, 2048) and (member.pull_costs >= MIN_PULL_SECONDS).all()


# -- live-v1 -----------------------------------------------------------------------------------


def test_live_v1_costs_are_the_recorded_unit_times(root: Path) -> None:
    task = write_made_up("breast_cancer", 0, 1024, np.random.default_rng(3))
    (inst,) = generate("live-v1", 1, horizon=200, split="dev")
    member = live_v1_members(0, {"split": "dev"})[0]
    rows = [task.candidates.index(a) for a in member["arms"]]
    np.testing.assert_array_equal(inst.pull_costs, task.seconds[rows, :200])
    assert inst.meta["unit_seconds"] == task.seconds[rows, :200].tolist()
    np.testing.assert_array_equal(live_instance("breast_cancer", 0).pull_costs, task.seconds)


def test_a_recorded_zero_time_costs_the_floor(root: Path) -> None:
    task = made_up_task("wine", 0, 1024, np.random.default_rng(4))
    zeroed = task.seconds.copy()
    zeroed[3, 7] = 0.0
    write_task(cache_folder(1024), dataclasses.replace(task, seconds=zeroed))
    inst = live_instance("wine", 0)
    assert inst.pull_costs[3, 7] == MIN_UNIT_SECONDS and inst.meta["unit_seconds"][3][7] == 0.0


# -- synthetic families ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ltf-v1", "concave-v1", "concave-v2"])
def test_spread_costs_leave_the_means_and_are_reproducible(name: str) -> None:
    for index in range(3):
        plain = family_instance(name, index, seed=5, horizon=300)
        spread = family_instance(name, index, seed=5, horizon=300, costs="spread")
        again = family_instance(name, index, seed=5, horizon=300, costs="spread")
        np.testing.assert_array_equal(spread.means, plain.means)
        assert spread.meta == plain.meta and spread.arm_names == plain.arm_names
        assert plain.costs is None
        np.testing.assert_array_equal(again.pull_costs, spread.pull_costs)
        per_arm = spread.pull_costs[:, 0]
        np.testing.assert_array_equal(spread.pull_costs, np.repeat(per_arm[:, None], 300, 1))
        assert SPREAD_COSTS[0] <= per_arm.min() and per_arm.max() <= SPREAD_COSTS[1]
    other = family_instance(name, 0, seed=6, horizon=300, costs="spread")
    assert not np.array_equal(other.pull_costs[:, 0], per_arm)


def test_unit_costs_are_the_default() -> None:
    unit = family_instance("ltf-v1", 1, horizon=100, costs="unit")
    assert unit.costs is None
    np.testing.assert_array_equal(unit.means, family_instance("ltf-v1", 1, horizon=100).means)


def test_spread_draws_are_log_uniform() -> None:
    drawn = [family_instance("ltf-v1", j, horizon=2, costs="spread") for j in range(300)]
    logs = np.log(np.concatenate([inst.pull_costs[:, 0] for inst in drawn]))
    low, high = np.log(SPREAD_COSTS)
    assert np.mean(logs) == pytest.approx((low + high) / 2, abs=0.25)
    assert np.histogram(logs, 4, (low, high))[0].min() > 0.15 * len(logs)


def test_bad_cost_option_gives_one_line() -> None:
    with pytest.raises(ValueError) as err:
        family_instance("concave-v1", 0, horizon=10, costs="free")
    assert str(err.value) == (
        "costs='free' is not allowed for concave-v1: use unit (every pull costs 1) or spread "
        "(one cost per arm, log-uniform over [0.1, 10.0])"
    )
    with pytest.raises(ValueError, match="imdb-v1: unknown parameter 'costs': allowed are arms"):
        family_instance("imdb-v1", 0, horizon=10, costs="spread")


SPEC = """
sweep_seed = 0
seeds = 1
horizons = [50]

[[instances]]
family = "ltf-v1"
count = 2
generator_seed = 0
params = { costs = "COSTS" }

[[policies]]
name = "ucb1"
"""


def test_the_cost_option_flows_through_sweep_specs() -> None:
    spec = parse_spec(SPEC.replace("COSTS", "spread"))
    inst = spec.instances[1].build(50)
    expected = generate("ltf-v1", 2, horizon=50, costs="spread")[1]
    assert inst.costs is not None
    np.testing.assert_array_equal(inst.costs, expected.pull_costs)
    with pytest.raises(SpecError) as err:
        parse_spec(SPEC.replace("COSTS", "free"))
    assert "instances[0].params.costs: costs='free' is not allowed for ltf-v1" in str(err.value)
    assert "\n" not in str(err.value)
