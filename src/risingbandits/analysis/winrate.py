"""Pairwise win rates (the heat maps of the paper's Appendix F).

At a horizon, policy i beats policy j in a unit (instance, seed) when its value of the metric
(policy regret by default, or the final-model gap) is lower; a tie counts 1/2. The win rate
W[i, j] is the fraction of units i beats j, over the units where every policy has a result, so
W[i, j] + W[j, i] = 1. The diagonal is NaN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from risingbandits.analysis.queries import check_metric
from risingbandits.analysis.ranks import complete_units


@dataclass(frozen=True)
class WinRates:
    """``matrix[i, j]`` = how often ``policies[i]`` beats ``policies[j]`` by ``metric`` at
    ``horizon``."""

    horizon: int
    policies: tuple[str, ...]
    matrix: np.ndarray
    units: int
    metric: str = "regret"


def win_rates(
    con: duckdb.DuckDBPyConnection,
    policies: Sequence[str],
    horizon: int,
    metric: str = "regret",
) -> WinRates:
    """The win-rate matrix by ``metric`` at ``horizon`` over complete units."""
    m = check_metric(metric)
    units = complete_units([horizon], len(policies))
    pairs = con.sql(
        f"""
        SELECT a.policy, b.policy,
            avg(CASE WHEN a.{m} < b.{m} THEN 1.0
                     WHEN a.{m} = b.{m} THEN 0.5 ELSE 0.0 END)
        FROM ({units}) u
            JOIN rows a USING (instance, seed, horizon)
            JOIN rows b USING (instance, seed, horizon)
        WHERE a.policy <> b.policy
        GROUP BY ALL
        """
    ).fetchall()
    n_units = con.sql(f"SELECT count(*) FROM ({units})").fetchall()[0][0]
    index = {p: k for k, p in enumerate(policies)}
    matrix = np.full((len(policies), len(policies)), np.nan)
    for a, b, rate in pairs:
        matrix[index[a], index[b]] = rate
    return WinRates(int(horizon), tuple(policies), matrix, int(n_units), m)
