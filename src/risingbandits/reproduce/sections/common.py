"""Pieces shared by the report's sections: the context (stores, figure folder) and tables."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from risingbandits.experiments.executors import Executor
from risingbandits.reproduce.background import InBackground
from risingbandits.reproduce.claims import ci_text
from risingbandits.reproduce.data import Results, load_results, read_rows
from risingbandits.reproduce.document import Table
from risingbandits.reproduce.settings import RANK_HORIZONS, Size


@dataclass
class Context:
    """Where the report reads its stores and writes its figures."""

    size: Size
    stores: dict[str, Path]
    figures: Path
    dpi: int

    _rows: dict[Path, pa.Table] = field(default_factory=dict)
    _ahead: InBackground[Path, pa.Table] | None = None

    def read_ahead(self, pool: Executor) -> None:
        """Read every store's rows on the workers of ``pool``, in report order, from now on."""
        self._ahead = InBackground(pool, read_rows, list(self.stores.values()))

    def rows(self, store: Path) -> pa.Table:
        """A store's rows, read once (by the workers when :meth:`read_ahead` was called)."""
        if store not in self._rows:
            ahead = self._ahead
            try:
                rows = ahead.get(store) if ahead is not None and store in ahead else None
            except Exception:  # e.g. a remote worker that cannot see OUT: read here (and
                rows = None  # say here what is wrong with the store, if anything is)
            self._rows[store] = read_rows(store) if rows is None else rows
        return self._rows[store]

    def results(
        self,
        *names: str,
        labels: Sequence[str] | None = None,
        rank_horizons: Sequence[int] = RANK_HORIZONS,
    ) -> Results:
        """Results of the stores ``names`` (together), of ``labels`` or every policy, ranked at
        ``rank_horizons``."""
        stores = [self.stores[n] for n in names]
        return load_results(stores, labels, rank_horizons, rows=self.rows)


def num(x: float, digits: int = 0) -> str:
    """``x`` with thousands separators, or ``-`` when it is not finite."""
    return f"{x:,.{digits}f}" if math.isfinite(x) else "-"


DIGITS = {"regret": 0, "final_gap": 4}
"""Decimals a metric is shown with (average ranks: 2)."""


def t_text(horizon: int) -> str:
    return f"T={horizon:,}"


def grid_text(value: int, grid: str) -> str:
    """One value of a store's grid, short: ``10k`` (a horizon), ``20%``, ``8/arm``."""
    if grid == "horizon_percents":
        return f"{value}%"
    if grid == "pulls_per_arm":
        return f"{value}/arm"
    return f"{value / 1000:g}k"


def per_horizon_table(
    r: Results,
    horizons: Sequence[int],
    metric: str = "regret",
    labels: Sequence[str] = (),
    heading: Callable[[int], str] = t_text,
) -> Table:
    """Policies (``labels``, default all) as rows, horizons (columns headed by ``heading``) as
    columns: mean [95% CI] of ``metric`` (regret, final_gap or an average rank)."""
    digits = DIGITS.get(metric, 2)
    return Table(
        ("policy", *(heading(h) for h in horizons)),
        tuple(
            (r.name(p), *(ci_text(r.ci(p, h, metric), digits) for h in horizons))
            for p in (labels or r.labels)
        ),
    )


def win_table(r: Results, horizon: int) -> Table:
    """The win-rate matrix at ``horizon`` in percent (rows and columns numbered alike)."""
    w = r.wins[horizon]
    names = [r.name(p) for p in w.policies]
    rows = tuple(
        (
            f"{i + 1} {name}",
            *("-" if i == j else num(100 * float(w.matrix[i, j])) for j in range(len(names))),
        )
        for i, name in enumerate(names)
    )
    return Table(
        ("row beats column (%)", *(str(j + 1) for j in range(len(names)))),
        rows,
        f"Win rates at T = {horizon:,} over {w.units} units (ties count 1/2)",
    )
