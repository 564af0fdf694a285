"""Summary of a sweep store: mean +- CI of the policy regret and of the final-model gap, average
rank +- CI and pairwise win rates by either of them.

Intervals of the means are taken across every (instance, seed) row of a (policy, horizon): a
Student-t interval (:func:`~risingbandits.analysis.stats.mean_ci`) or, on request, a seeded
percentile bootstrap (:func:`~risingbandits.analysis.bootstrap.bootstrap_ci`). Average ranks and
win rates rank by one metric (``metric``: ``regret``, the default, or ``final_gap``) over the
units (instance, seed) where every policy has a result. Policies marked
``reconstruction`` (TI-UCB, R-ed-AE) carry a ``*`` and a note in every output.

Only parts that pass the store's check are read, each task once: the rows analysed are those
the check read. A store holding a damaged, duplicate or foreign part file is refused with one
line that says to resume it. An unfinished sweep is summarised as it stands, with a note naming
each policy's missing cells.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal

import duckdb
import numpy as np
import pyarrow as pa

from risingbandits.analysis.bootstrap import bootstrap_ci, check_resamples
from risingbandits.analysis.queries import (
    ANALYSIS_COLUMNS,
    METRICS,
    check_metric,
    connect,
    grouped_values,
    in_list,
)
from risingbandits.analysis.ranks import RankRow, average_ranks
from risingbandits.analysis.stats import MeanCI, ci_json, finite_or_none, mean_ci
from risingbandits.analysis.winrate import WinRates, win_rates
from risingbandits.experiments.spec import GRID_UNITS, PolicyRef
from risingbandits.experiments.store import PolicyProgress, Store, StoreError

CIMethod = Literal["t", "bootstrap"]
CI_METHODS = ("t", "bootstrap")
CSV_COLUMNS = (
    "metric",
    "ranked_by",
    "policy",
    "opponent",
    "horizon",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "reconstruction",
)
RECONSTRUCTION_NOTE = (
    "* reconstruction: the algorithm is rebuilt from an incomplete description in its paper "
    "(DECISIONS.md rows 7-8); read its numbers with care"
)


def horizon_text(horizon: int, grid: str = "horizons") -> str:
    """``T=5,000``; ``20% of full T`` in a sweep with horizon percents; ``8 pulls per arm``."""
    if grid == "horizon_percents":
        return f"{horizon}% of full T"
    if grid == "pulls_per_arm":
        return f"{horizon} pulls per arm"
    return f"T={horizon:,}"


@dataclass(frozen=True)
class MeanRow:
    """Mean of a metric for ``policy`` at ``horizon`` with its interval over ``ci.n`` runs."""

    policy: str
    horizon: int
    ci: MeanCI


@dataclass(frozen=True)
class Summary:
    """Everything ``risingbandits sweep summary`` shows, as data."""

    path: str
    description: str
    policies: tuple[PolicyRef, ...]
    horizons: tuple[int, ...]
    regret: tuple[MeanRow, ...]
    ranks: tuple[RankRow, ...]
    win_rates: tuple[WinRates, ...]
    cells_done: int
    cells_total: int
    ci_method: str
    level: float
    progress: tuple[PolicyProgress, ...] = ()
    """Cells done / planned per policy (the incomplete-sweep note names what is missing)."""
    final_gap: tuple[MeanRow, ...] = ()
    metric: str = "regret"
    """What ``ranks`` and ``win_rates`` rank by: ``regret`` or ``final_gap``."""
    grid: str = "horizons"
    """What ``horizons`` hold: horizons, percents of each instance's full horizon
    (``horizon_percents``) or pulls per arm (``pulls_per_arm``)."""

    def horizon_text(self, horizon: int) -> str:
        return horizon_text(horizon, self.grid)

    def display_name(self, label: str) -> str:
        """The label, with ``*`` for a reconstruction."""
        return label + ("*" if self.is_reconstruction(label) else "")

    def is_reconstruction(self, label: str) -> bool:
        return any(p.reconstruction for p in self.policies if p.label == label)

    @property
    def notes(self) -> list[str]:
        notes = []
        if any(p.reconstruction for p in self.policies):
            notes.append(RECONSTRUCTION_NOTE)
        if self.cells_done < self.cells_total:
            missing = ", ".join(
                f"{p.label} {p.done}/{p.total}" for p in self.progress if p.done < p.total
            )
            notes.append(
                f"incomplete sweep: {self.cells_done} of {self.cells_total} cells done "
                f"(cells done by policy: {missing}); ranks and win rates use the units where "
                "every policy ran"
            )
        if not self.ranks:
            notes.append(
                "no (instance, seed) has a result of every policy yet: no ranks or win rates"
            )
        return notes

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (NaN bounds become null)."""

        def table(rows: Sequence[MeanRow | RankRow]) -> list[dict[str, Any]]:
            return [{"policy": r.policy, "horizon": r.horizon, **ci_json(r.ci)} for r in rows]

        return {
            "store": self.path,
            "description": self.description,
            "cells_done": self.cells_done,
            "cells_total": self.cells_total,
            "ci": self.ci_method,
            "level": self.level,
            "horizons": list(self.horizons),
            "horizons_relative": self.grid != "horizons",
            "grid": self.grid,
            "policies": [
                {
                    "label": p.label,
                    "name": p.name,
                    "params": p.params,
                    "uses_horizon": p.uses_horizon,
                    "reconstruction": p.reconstruction,
                }
                for p in self.policies
            ],
            "regret": table(self.regret),
            "final_gap": table(self.final_gap),
            "ranked_by": self.metric,
            "rank": table(self.ranks),
            "win_rate": [
                {
                    "horizon": w.horizon,
                    "units": w.units,
                    "policies": list(w.policies),
                    "matrix": [[finite_or_none(float(x)) for x in row] for row in w.matrix],
                }
                for w in self.win_rates
            ],
            "notes": self.notes,
        }

    def to_csv(self) -> str:
        """One long table: ``metric`` is regret, final_gap, rank or win_rate (``opponent`` for
        the last); ``ranked_by`` says what ranks and win rates rank by."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)

        def number(x: float) -> str:
            return repr(x) if math.isfinite(x) else ""

        def recon(label: str) -> str:
            return "true" if self.is_reconstruction(label) else "false"

        def horizon(h: int) -> str | int:
            return f"{h}{GRID_UNITS[self.grid]}" if self.grid != "horizons" else h

        tables = (("regret", self.regret), ("final_gap", self.final_gap), ("rank", self.ranks))
        for metric, rows in tables:
            for r in rows:
                c = r.ci
                bounds = (number(c.mean), number(c.low), number(c.high))
                row = (r.policy, "", horizon(r.horizon), *bounds, c.n, recon(r.policy))
                writer.writerow((metric, self.metric, *row))
        for w in self.win_rates:
            for i, a in enumerate(w.policies):
                for j, b in enumerate(w.policies):
                    if i != j:
                        value = number(float(w.matrix[i, j]))
                        row = (a, b, horizon(w.horizon), value, "", "", w.units, recon(a))
                        writer.writerow(("win_rate", self.metric, *row))
        return out.getvalue()


def interval_function(
    method: str, level: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> Callable[[np.ndarray], MeanCI]:
    """The interval of a mean: ``t`` (Student t) or ``bootstrap`` (seeded percentile)."""
    if method == "t":
        return partial(mean_ci, level=level)
    if method == "bootstrap":
        n_resamples = check_resamples(resamples, "resamples")
        return partial(bootstrap_ci, level=level, n_resamples=n_resamples, seed=seed)
    raise ValueError(f"ci={method!r} is not allowed: use one of {', '.join(CI_METHODS)}")


def _chosen_horizons(
    available: tuple[int, ...], wanted: Sequence[int] | None, grid: str
) -> tuple[int, ...]:
    if not wanted:
        return available
    for h in wanted:
        if h not in available:
            unit = {
                "horizon_percents": " (percents of each instance's full horizon)",
                "pulls_per_arm": " (pulls per arm)",
            }.get(grid, "")
            raise ValueError(
                f"horizon={h} is not allowed: the sweep has horizons "
                f"{', '.join(str(a) for a in available)}{unit}"
            )
    return tuple(sorted(set(wanted)))


def summarize(
    path: str | Path,
    horizons: Sequence[int] | None = None,
    *,
    ci: CIMethod = "t",
    level: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    metric: str = "regret",
) -> Summary:
    """Summary of the store at ``path``: means of both metrics, ranks and win rates by
    ``metric`` (``regret`` or ``final_gap``).

    ``horizons`` restricts every table to those horizons (default: all of the sweep's; percents
    in a sweep with horizon percents); win rates are given at each chosen horizon, or at the
    largest one when none is chosen.
    """
    check_metric(metric)
    store = Store(path)
    spec = store.spec()
    report = store.inspect(full=True, keep_rows=ANALYSIS_COLUMNS)
    parts = store.verified_rows(report)
    status = store.status(report)
    if not parts:
        raise StoreError(f"{store.path} has no finished task yet: run or resume the sweep first")
    chosen = _chosen_horizons(spec.horizons, horizons, spec.grid_key)
    interval = interval_function(ci, level, resamples, seed)
    labels = [p.label for p in spec.policies]
    try:
        con = connect(parts, spec.horizon_keys())
    except (duckdb.Error, pa.ArrowException) as exc:
        raise StoreError(
            f"{store.path}: a part cannot be read ({str(exc).splitlines()[0]}): run "
            f"`risingbandits sweep verify {store.path}`"
        ) from None
    try:
        source = f"(SELECT * FROM rows WHERE horizon IN {in_list(chosen)})"
        means = {}
        for m in METRICS:
            values = grouped_values(con, m, source)
            means[m] = tuple(
                MeanRow(p, h, interval(values[p, h]))
                for p in labels
                for h in chosen
                if (p, h) in values
            )
        ranks = tuple(average_ranks(con, labels, chosen, interval, metric))
        win_horizons = chosen if horizons else chosen[-1:]
        wins = tuple(win_rates(con, labels, h, metric) for h in win_horizons)
    finally:
        con.close()
    return Summary(
        str(store.path),
        spec.model.description,
        spec.policies,
        chosen,
        means["regret"],
        ranks,
        wins,
        status.cells_done,
        status.cells_total,
        ci,
        level,
        status.by_policy,
        final_gap=means["final_gap"],
        metric=metric,
        grid=spec.grid_key,
    )
