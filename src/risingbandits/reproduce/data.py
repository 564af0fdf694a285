"""Results of reproduction stores as arrays: per-unit metrics and ranks, intervals, win rates.

Metrics: ``regret`` (policy regret), ``final_gap`` (final-model gap), and the ranks by each,
``rank`` and ``final_gap_rank``. A unit is an (instance, seed) pair. Only units in which every
chosen policy has a result at a horizon are kept, so at one horizon the arrays of all policies
are aligned unit by unit (in (instance, seed) order) and paired differences are meaningful.
Several stores can be read together (e.g. the CURE-UCB sigma variants beside the main sweep's
baselines): they share instance ids and run seeds (:mod:`risingbandits.reproduce.settings`).
Intervals are Student-t 95% intervals across units (:func:`risingbandits.analysis.mean_ci`), as
in ``sweep summary``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from risingbandits.analysis.queries import ANALYSIS_COLUMNS, connect, grouped_values
from risingbandits.analysis.ranks import complete_units, unit_ranks
from risingbandits.analysis.stats import MeanCI, mean_ci
from risingbandits.analysis.winrate import WinRates, win_rates
from risingbandits.experiments.store import Store, StoreError
from risingbandits.reproduce.settings import HELDOUT_POLICY, RANK_HORIZONS, display_name

Curves = dict[str, dict[int, MeanCI]]


@dataclass(frozen=True)
class Results:
    """Regrets (every horizon) and ranks and win rates (rank horizons) of ``labels``."""

    labels: tuple[str, ...]
    reconstruction: frozenset[str]
    horizon_free: frozenset[str]
    """Labels of policies that do not use T (one run read at every horizon)."""
    horizons: tuple[int, ...]
    regret: Mapping[tuple[str, int], np.ndarray]
    ranks: Mapping[tuple[str, int], np.ndarray]
    wins: Mapping[int, WinRates]
    units: Mapping[int, tuple[tuple[str, int], ...]]
    """(instance, seed) of each array entry, per horizon."""
    final_gap: Mapping[tuple[str, int], np.ndarray] = field(default_factory=dict)
    gap_ranks: Mapping[tuple[str, int], np.ndarray] = field(default_factory=dict)
    """Ranks by the final-model gap (rank horizons)."""

    def values(self, metric: str) -> Mapping[tuple[str, int], np.ndarray]:
        """Per-unit values of ``metric`` (see the module docstring)."""
        table = {
            "regret": self.regret,
            "rank": self.ranks,
            "final_gap": self.final_gap,
            "final_gap_rank": self.gap_ranks,
        }
        if metric not in table:
            raise ValueError(f"metric={metric!r} is not allowed: use one of {', '.join(table)}")
        return table[metric]

    @property
    def rank_horizons(self) -> tuple[int, ...]:
        return tuple(sorted(self.wins))

    def name(self, label: str) -> str:
        """Display name: ``*`` marks a reconstruction."""
        return display_name(label, tuple(self.reconstruction))

    def regret_ci(self, label: str, horizon: int) -> MeanCI:
        return mean_ci(self.regret[label, horizon])

    def rank_ci(self, label: str, horizon: int) -> MeanCI:
        return mean_ci(self.ranks[label, horizon])

    def ci(self, label: str, horizon: int, metric: str = "regret") -> MeanCI:
        """Mean of ``metric`` (e.g. regret, or average rank: ``"rank"``) with its interval."""
        return mean_ci(self.values(metric)[label, horizon])

    def curves(self, labels: Sequence[str] | None = None, metric: str = "regret") -> Curves:
        """``{label: {T: mean and CI of metric}}``."""
        return {
            p: {h: self.ci(p, h, metric) for h in self.horizons} for p in (labels or self.labels)
        }

    def gap(self, better: str, other: str, horizon: int, metric: str = "regret") -> MeanCI:
        """Paired difference ``other - better`` per unit (positive: ``better`` is lower)."""
        values = self.values(metric)
        return mean_ci(values[other, horizon] - values[better, horizon])

    def order(self, horizon: int, metric: str = "regret") -> list[str]:
        """Labels from the lowest mean to the highest (of ``metric``); equal means put the
        library's default first (HACE-UCB makes ACE-UCB's or Successive Halving's very choices
        in its two regimes: the tie is exact), then the spec's order."""
        values = self.values(metric)
        return sorted(
            self.labels,
            key=lambda p: (float(values[p, horizon].mean()), p != HELDOUT_POLICY),
        )

    def renamed(self, names: Mapping[str, str]) -> Results:
        """The same results with labels renamed (``{old: new}``), e.g. a variant standing in
        for its default policy under the default's name."""

        def new(label: str) -> str:
            return names.get(label, label)

        wins = {
            h: WinRates(w.horizon, tuple(map(new, w.policies)), w.matrix, w.units)
            for h, w in self.wins.items()
        }
        return Results(
            tuple(map(new, self.labels)),
            frozenset(map(new, self.reconstruction)),
            frozenset(map(new, self.horizon_free)),
            self.horizons,
            {(new(p), h): v for (p, h), v in self.regret.items()},
            {(new(p), h): v for (p, h), v in self.ranks.items()},
            wins,
            self.units,
            {(new(p), h): v for (p, h), v in self.final_gap.items()},
            {(new(p), h): v for (p, h), v in self.gap_ranks.items()},
        )

    def per_instance(self, label: str, horizon: int) -> dict[str, float]:
        """Mean regret per instance (over its seeds)."""
        sums: dict[str, list[float]] = {}
        for (inst, _), value in zip(self.units[horizon], self.regret[label, horizon], strict=True):
            sums.setdefault(inst, []).append(float(value))
        return {k: float(np.mean(v)) for k, v in sums.items()}


def store_labels(path: Path) -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
    """Policy labels of a store (spec order), those that are reconstructions and those that do
    not use the horizon."""
    refs = Store(path).spec().policies
    return (
        tuple(p.label for p in refs),
        frozenset(p.label for p in refs if p.reconstruction),
        frozenset(p.label for p in refs if not p.uses_horizon),
    )


def read_rows(store: Path) -> pa.Table:
    """The analysis columns of every finished part of ``store`` (read once, kept by callers);
    in a sweep with horizon percents, ``horizon`` is the percent."""
    s = Store(store)
    parts = s.verified_rows(s.inspect(full=True, keep_rows=ANALYSIS_COLUMNS))
    if not parts:
        raise StoreError(f"{store} has no finished task yet")
    con = connect(parts, s.spec().horizon_keys())
    try:
        return con.table("rows").to_arrow_table()
    finally:
        con.close()


def load_results(
    stores: Sequence[Path],
    labels: Sequence[str] | None = None,
    rank_horizons: Sequence[int] = RANK_HORIZONS,
    rows: Callable[[Path], pa.Table] = read_rows,
) -> Results:
    """Results of ``labels`` (default: every policy of the stores) read from ``stores``
    (``rows`` reads a store's rows; pass a cached reader to read each store once)."""
    all_labels: list[str] = []
    recon: set[str] = set()
    free: set[str] = set()
    for path in stores:
        found, rec, no_t = store_labels(path)
        all_labels += [p for p in found if p not in all_labels]
        recon |= rec
        free |= no_t
    chosen = tuple(labels) if labels is not None else tuple(all_labels)
    missing = [p for p in chosen if p not in all_labels]
    if missing:
        raise StoreError(f"stores {[str(s) for s in stores]} have no policy {missing}")
    con = duckdb.connect()
    try:
        con.register("source", pa.concat_tables([rows(p) for p in stores]))
        con.execute(
            "CREATE TABLE rows AS SELECT * FROM source WHERE list_contains(?, policy)",
            [list(chosen)],
        )
        present = [r[0] for r in con.sql("SELECT DISTINCT horizon FROM rows").fetchall()]
        units_sql = complete_units(sorted(present), len(chosen))
        found_hs = con.sql(f"SELECT DISTINCT horizon FROM ({units_sql})").fetchall()
        horizons = tuple(sorted(int(r[0]) for r in found_hs))
        source = f"(SELECT r.* FROM rows r JOIN ({units_sql}) u USING (instance, seed, horizon))"
        regret = grouped_values(con, "regret", source)
        final_gap = grouped_values(con, "final_gap", source)
        units = {
            h: tuple(
                (str(i), int(s))
                for i, s in con.sql(
                    f"SELECT instance, seed FROM ({units_sql}) WHERE horizon = {int(h)} "
                    "ORDER BY instance, seed"
                ).fetchall()
            )
            for h in horizons
        }
        rank_hs = [h for h in rank_horizons if h in horizons]
        ranks = unit_ranks(con, rank_hs, len(chosen)) if rank_hs else {}
        gap_ranks = unit_ranks(con, rank_hs, len(chosen), "final_gap") if rank_hs else {}
        wins = {h: win_rates(con, chosen, h) for h in rank_hs}
    finally:
        con.close()
    keep = set(chosen)
    return Results(
        chosen,
        frozenset(recon & keep),
        frozenset(free & keep),
        horizons,
        regret,
        ranks,
        wins,
        units,
        final_gap,
        gap_ranks,
    )
