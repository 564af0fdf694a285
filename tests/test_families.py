"""The versioned generators match the paper's appendix A distributions (over many seeds)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from risingbandits.instances import RisingInstance, families
from risingbandits.instances.families import (
    CONCAVE_REACH_T,
    CONCAVE_SCALES,
    IMDB_ARMS,
    default_curves_dir,
    family_instance,
    generate,
)


def test_ltf_v1_distributions() -> None:
    insts = generate("ltf-v1", 1500, seed=11, horizon=60)
    ks = np.array([x.n_arms for x in insts])
    counts = np.bincount(ks, minlength=6)[2:]
    assert counts.sum() == 1500 and (counts > 0).all()
    assert stats.chisquare(counts).pvalue > 1e-4  # K uniform on {2, 3, 4, 5}
    b = np.concatenate([x.meta["b"] for x in insts])
    t_sat = np.concatenate([x.meta["t_sat"] for x in insts])
    assert b.min() >= 0.1 and b.max() <= 1.0
    assert t_sat.min() >= 2_500 and t_sat.max() <= 50_000
    assert stats.kstest(b, stats.uniform(0.1, 0.9).cdf).pvalue > 1e-4
    assert stats.kstest(t_sat, stats.uniform(2_500, 47_500).cdf).pvalue > 1e-4
    n = np.arange(1, 61)
    for x in insts[:50]:
        a = np.array(x.meta["b"]) / np.array(x.meta["t_sat"])
        np.testing.assert_allclose(
            x.means, np.minimum(np.array(x.meta["b"])[:, None], a[:, None] * n)
        )


@pytest.mark.parametrize(("family", "count"), [("concave-v1", 300), ("concave-v2", 100)])
def test_concave_structure_and_ranges(family: str, count: int) -> None:
    insts = generate(family, count, seed=5, horizon=50_000)
    shapes = set()
    for x in insts:
        roles = x.meta["roles"]
        assert roles.count("early peaker") == 1 and roles.count("late bloomer") == 1
        assert 2 <= x.n_arms <= 5 and x.concavity_report().all_concave
        final = x.means[:, -1]
        np.testing.assert_allclose(final, [a["L"] for a in x.meta["arms"]], rtol=1e-9)
        assert (x.means[:, CONCAVE_REACH_T - 1] >= 0.75 * final - 1e-9).all()
        for role, arm in zip(roles, x.meta["arms"], strict=True):
            shapes.add(arm["g"])
            s, L = arm["s"], arm["L"]
            if role == "early peaker":
                assert 0.54 <= s <= 0.56 and 0.57 <= L <= 0.59
            elif role == "late bloomer":
                assert 0.08 <= s <= 0.12 and 0.94 <= L <= 0.96
            else:
                assert 0.05 <= s <= 0.35 and 0.90 <= L <= 0.99
    assert shapes == {"rat", "exp", "atan"}
    ks = np.bincount([x.n_arms for x in insts], minlength=6)[2:]
    assert stats.chisquare(ks).pvalue > 1e-4


def late_bloomer_best(x: RisingInstance, horizon: int = 50_000) -> bool:
    return x.meta["roles"][x.oracle.best_arm(horizon)] == "late bloomer"


def test_concave_v2_late_bloomer_is_the_best_fixed_arm_at_50k() -> None:
    checked = 0
    for seed in (0, 1, 7):
        for index in range(0, 120, 3):
            x = family_instance("concave-v2", index, seed=seed, horizon=50_000)
            assert late_bloomer_best(x), x.name
            checked += 1
    assert checked == 120
    # concave-v1 read literally does not force it (the reason for v2)
    v1 = [late_bloomer_best(x) for x in generate("concave-v1", 40, seed=0)]
    assert 0 < sum(v1) < 40


def test_concave_v2_rule_is_checked_at_50k_whatever_the_table_length() -> None:
    full = family_instance("concave-v2", 3, seed=2, horizon=50_000)
    short = family_instance("concave-v2", 3, seed=2, horizon=200)
    np.testing.assert_array_equal(short.means, full.means[:, :200])
    assert short.name == full.name == "concave-v2/2/3"


def test_concave_first_pull_near_start_value() -> None:
    x = family_instance("concave-v1", 0, seed=1, horizon=100)
    starts = np.array([a["s"] for a in x.meta["arms"]])
    assert np.all(x.means[:, 0] >= starts) and np.all(x.means[:, 0] - starts < 0.01)


@pytest.mark.parametrize(
    ("family", "params", "refused"),
    [
        ("ltf-v1", {"t_sat_scale": float("nan")}, "t_sat_scale=nan is not allowed for ltf-v1"),
        ("ltf-v1", {"t_sat_scale": True}, "t_sat_scale=True is not allowed"),
        ("concave-v1", {"scale": CONCAVE_SCALES[0] - 1}, "scale=24999 is not allowed"),
        ("concave-v2", {"scale": 1e300}, "use a number of pulls from 25,000 to 10,000,000"),
        ("imdb-v1", {"arms": []}, "arms=[] is not allowed for imdb-v1"),
    ],
)
def test_family_parameter_values_are_checked(family: str, params: dict, refused: str) -> None:
    with pytest.raises(ValueError, match=re.escape(refused)):
        family_instance(family, 0, horizon=50, **params)


def test_concave_builds_every_instance_at_the_smallest_scale() -> None:
    """From a scale of 25,000 every drawn fraction is reachable (at 22,000 some concave-v2
    draws failed in brentq); the paper's 50,000 lies inside the range."""
    assert CONCAVE_SCALES[0] <= 50_000 <= CONCAVE_SCALES[1]
    for family in ("concave-v1", "concave-v2"):
        for j in range(60):
            family_instance(family, j, horizon=10, scale=CONCAVE_SCALES[0])


def _plant_curves(parent: Path) -> Path:
    """``parent/shared/data/imdb-learning-curves/curves.npz`` (and ``parent/work`` to run from)."""
    folder = parent / "shared" / "data" / "imdb-learning-curves"
    folder.mkdir(parents=True)
    np.savez(folder / "curves.npz", **{a: np.full(10, 0.5) for a in IMDB_ARMS})
    (parent / "work").mkdir()
    return folder


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """No $RISINGBANDITS_IMDB_CURVES; the source tree's implicit place under ``tmp_path/tree``
    and ``tmp_path/open`` a folder anyone may write (0777, not sticky), like a shared /tmp."""
    monkeypatch.delenv("RISINGBANDITS_IMDB_CURVES", raising=False)
    monkeypatch.setenv("RISINGBANDITS_NOTICES_SHOWN", "compiling")
    tree = tmp_path / "tree"
    monkeypatch.setattr(families, "__file__", str(tree / "repo/src/rb/instances/families.py"))
    (tmp_path / "open").mkdir()
    (tmp_path / "open").chmod(0o777)
    return tree, tmp_path / "open"


def test_curves_planted_beside_the_working_directory_are_refused(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regular install run from /tmp/x would read /tmp/shared/...: anyone could plant it."""
    _, open_folder = places
    _plant_curves(open_folder)
    monkeypatch.chdir(open_folder / "work")
    with pytest.raises(ValueError, match=r"open can be written by group or others \(mode 777\)"):
        family_instance("imdb-v1", 0, horizon=10)


def test_curves_others_can_write_are_refused(
    places: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _plant_curves(tmp_path / "mine")
    (folder / "curves.npz").chmod(0o666)
    monkeypatch.chdir(tmp_path / "mine" / "work")
    with pytest.raises(ValueError, match=r"curves.npz can be written by group or others"):
        default_curves_dir()


def test_a_refused_place_is_skipped_with_a_notice_for_a_private_one(
    places: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    """The source tree's place is planted in the open folder (and reached through a link, as in
    CI); the working directory's place is private: that one is used, the other named."""
    tree, open_folder = places
    _plant_curves(open_folder)
    tree.mkdir()
    (tree / "shared").symlink_to(open_folder / "shared")
    mine = _plant_curves(tmp_path / "mine")
    monkeypatch.chdir(tmp_path / "mine" / "work")
    assert default_curves_dir() == mine
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"{tree / 'shared'}" in err[0] and "mode 777" in err[0]


def test_a_private_place_reached_through_a_link_is_used_by_its_real_path(
    places: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    """CI reaches the shared data through a link (/tmp/cf/shared -> /work/shared)."""
    tree, open_folder = places
    _plant_curves(open_folder)
    mine = _plant_curves(tmp_path / "mine")
    tree.mkdir()
    (tree / "shared").symlink_to(tmp_path / "mine" / "shared")
    monkeypatch.chdir(open_folder / "work")
    assert default_curves_dir() == mine
    assert family_instance("imdb-v1", 0, horizon=10).means.shape == (7, 10)
    assert capsys.readouterr().err == ""


def test_imdb_v1(imdb_curves_dir) -> None:  # type: ignore[no-untyped-def]
    x = family_instance("imdb-v1", 0, curves_dir=imdb_curves_dir)
    assert x.arm_names == IMDB_ARMS and x.means.shape == (7, 50_000)
    assert x.noise.kind == "bernoulli"
    assert x.oracle.best_arm(50_000) == IMDB_ARMS.index("nn_2")
    assert x.oracle.value(50_000) == pytest.approx(41_544.0, abs=1.0)  # spec section 7
    with pytest.raises(ValueError, match="count=2"):
        generate("imdb-v1", 2, curves_dir=imdb_curves_dir)
    with pytest.raises(ValueError, match="curves not found"):
        family_instance("imdb-v1", 0, curves_dir=imdb_curves_dir / "nope")
