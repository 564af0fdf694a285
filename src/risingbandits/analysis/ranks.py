"""Average rank of policies (the paper's Section 6, panels (b, c) of the LTF and concave figures).

For each unit (instance, seed) at a horizon, the policies are ranked by a metric (policy regret
by default, or the final-model gap; :data:`~risingbandits.analysis.queries.METRICS`), 1 = lowest;
tied policies share the mean of the ranks they span (two policies tied for first both get 1.5).
The average rank of a policy at a horizon is the mean over units, with a confidence interval
across units (t-interval by default), clipped to [1, number of policies] where every rank lies
(a t-interval of ranks near 1 would otherwise reach below 1). Only units in which every policy
has a result are ranked, so an unfinished sweep never compares policies on different instances.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import duckdb
import numpy as np

from risingbandits.analysis.queries import check_metric, grouped_values, in_list
from risingbandits.analysis.stats import MeanCI, mean_ci


@dataclass(frozen=True)
class RankRow:
    """Average rank of ``policy`` at ``horizon`` over ``ci.n`` units."""

    policy: str
    horizon: int
    ci: MeanCI


def complete_units(horizons: Sequence[int], n_policies: int) -> str:
    """SQL of the (instance, seed, horizon) units at ``horizons`` where every policy ran."""
    return (
        f"SELECT instance, seed, horizon FROM rows WHERE horizon IN {in_list(horizons)} "
        f"GROUP BY ALL HAVING count(DISTINCT policy) = {int(n_policies)}"
    )


def unit_ranks(
    con: duckdb.DuckDBPyConnection,
    horizons: Sequence[int],
    n_policies: int,
    metric: str = "regret",
) -> dict[tuple[str, int], np.ndarray]:
    """``{(policy, horizon): rank by metric in each complete unit}`` (ties share the mean
    rank)."""
    m = check_metric(metric)
    source = f"""(
        SELECT r.policy, r.horizon, r.instance, r.seed,
            rank() OVER (PARTITION BY r.instance, r.seed, r.horizon ORDER BY r.{m})
            + (count(*) OVER (PARTITION BY r.instance, r.seed, r.horizon, r.{m}) - 1) / 2.0
            AS mean_rank
        FROM rows r JOIN ({complete_units(horizons, n_policies)}) u
            USING (instance, seed, horizon)
    )"""
    return grouped_values(con, "mean_rank", source)


def average_ranks(
    con: duckdb.DuckDBPyConnection,
    policies: Sequence[str],
    horizons: Sequence[int],
    ci: Callable[[np.ndarray], MeanCI] = mean_ci,
    metric: str = "regret",
) -> list[RankRow]:
    """Average rank by ``metric`` with its interval (within [1, number of policies]) per
    (policy, horizon), in the order given."""
    ranks = unit_ranks(con, horizons, len(policies), metric)
    return [
        RankRow(p, h, _within_ranks(ci(ranks[p, h]), len(policies)))
        for h in horizons
        for p in policies
        if (p, h) in ranks
    ]


def _within_ranks(interval: MeanCI, n_policies: int) -> MeanCI:
    """The interval clipped to the possible ranks 1..n_policies (NaN bounds stay NaN)."""
    low, high = np.clip([interval.low, interval.high], 1.0, float(n_policies))
    return replace(interval, low=float(low), high=float(high))
