"""Average ranks (ties share the mean rank) and pairwise win rates (ties count 1/2)."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import rankdata

from risingbandits.analysis.ranks import average_ranks, unit_ranks
from risingbandits.analysis.stats import mean_ci
from risingbandits.analysis.winrate import win_rates

POLICIES = ["a", "b", "c", "d"]
HORIZONS = [100, 200]


def regret_cube(seed: int = 0) -> np.ndarray:
    """regret[horizon, instance, seed, policy] on a coarse grid, so ties are frequent."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 4, (len(HORIZONS), 6, 3, len(POLICIES))).astype(float)


def connection(cube: np.ndarray, drop: tuple[int, int, int, int] | None = None):
    cols: dict[str, list] = {"instance": [], "seed": [], "horizon": [], "policy": [], "regret": []}
    for idx in np.ndindex(cube.shape):
        if idx == drop:
            continue
        h, i, s, p = idx
        cols["instance"].append(f"inst{i}")
        cols["seed"].append(s)
        cols["horizon"].append(HORIZONS[h])
        cols["policy"].append(POLICIES[p])
        cols["regret"].append(cube[idx])
    con = duckdb.connect()
    con.register("rows", pa.table(cols))
    return con


def test_unit_ranks_match_scipy_average_ranks() -> None:
    cube = regret_cube()
    ranks = unit_ranks(connection(cube), HORIZONS, len(POLICIES))
    for h, horizon in enumerate(HORIZONS):
        expected = rankdata(cube[h].reshape(-1, len(POLICIES)), axis=1, method="average")
        for p, name in enumerate(POLICIES):
            got = ranks[name, horizon]
            # units come back in no particular order: compare as multisets
            assert sorted(got) == sorted(expected[:, p])


def test_average_rank_is_the_mean_over_units_with_a_t_interval() -> None:
    cube = regret_cube(1)
    rows = average_ranks(connection(cube), POLICIES, HORIZONS)
    assert [(r.policy, r.horizon) for r in rows] == [(p, h) for h in HORIZONS for p in POLICIES]
    for r in rows:
        h, p = HORIZONS.index(r.horizon), POLICIES.index(r.policy)
        expected = rankdata(cube[h].reshape(-1, len(POLICIES)), axis=1, method="average")[:, p]
        ref = mean_ci(expected)
        assert r.ci.n == 18
        assert r.ci.mean == pytest.approx(ref.mean)
        assert (r.ci.low, r.ci.high) == pytest.approx((ref.low, ref.high))
    for h in HORIZONS:  # ranks 1..4 always sum to 10
        assert sum(r.ci.mean for r in rows if r.horizon == h) == pytest.approx(10.0)


def test_units_missing_a_policy_are_not_ranked() -> None:
    cube = regret_cube(2)
    rows = average_ranks(connection(cube, drop=(0, 2, 1, 3)), POLICIES, HORIZONS)
    n = {(r.policy, r.horizon): r.ci.n for r in rows}
    assert all(n[p, 100] == 17 for p in POLICIES)
    assert all(n[p, 200] == 18 for p in POLICIES)


def test_win_rates_match_a_direct_count_with_half_ties() -> None:
    cube = regret_cube(3)
    w = win_rates(connection(cube), POLICIES, 200)
    units = cube[1].reshape(-1, len(POLICIES))
    assert w.units == units.shape[0] and w.policies == tuple(POLICIES)
    for i in range(len(POLICIES)):
        assert np.isnan(w.matrix[i, i])
        for j in range(len(POLICIES)):
            if i != j:
                a, b = units[:, i], units[:, j]
                expected = np.mean((a < b) + 0.5 * (a == b))
                assert w.matrix[i, j] == pytest.approx(expected)
                assert w.matrix[i, j] + w.matrix[j, i] == pytest.approx(1.0)


def test_identical_policies_win_half_the_time() -> None:
    cube = regret_cube(4)
    cube[..., 1] = cube[..., 0]
    w = win_rates(connection(cube), POLICIES, 100)
    assert w.matrix[0, 1] == 0.5 and w.matrix[1, 0] == 0.5
