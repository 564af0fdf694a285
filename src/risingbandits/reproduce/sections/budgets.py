"""Settings read at budgets given as a share of each instance's full budget: IMDB's horizons are
T out of its 50,000 pulls, lcdb-v1's are percents of each instance's own full horizon (a store
with ``horizon_percents``). Shared by the model-selection and held-out sections."""

from __future__ import annotations

from dataclasses import dataclass

from risingbandits.analysis.stats import MeanCI
from risingbandits.experiments.store import Store
from risingbandits.instances.families import PAPER_HORIZON
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.sections.common import Context
from risingbandits.reproduce.settings import ACE, EXTRA_POLICIES

STYLES = {p: "--" for p in EXTRA_POLICIES if p != ACE}
"""Line styles: the fixed-budget methods and UCB1 dashed, ACE-UCB and the ten solid."""


@dataclass(frozen=True)
class Setting:
    """One store read for a section: its results (ranked at every budget) and how its budgets
    read."""

    store: str
    title: str
    results: Results
    relative: bool
    """Budgets are percents of each instance's full horizon (else horizons T of 50,000)."""

    def percent(self, horizon: int) -> int:
        """The budget as a percent of the full budget."""
        return horizon if self.relative else horizon * 100 // PAPER_HORIZON

    def budget(self, horizon: int) -> str:
        """``20%`` (per-instance budgets) or ``20% (T = 10,000)``."""
        if self.relative:
            return f"{horizon}%"
        return f"{self.percent(horizon)}% (T = {horizon:,})"

    def by_percent(self, metric: str) -> dict[str, dict[int, MeanCI]]:
        """``{label: {percent: mean and CI of metric}}`` (the x axis of the budget figures)."""
        curves = self.results.curves(metric=metric)
        return {p: {self.percent(h): c for h, c in by_h.items()} for p, by_h in curves.items()}


def load_setting(ctx: Context, store: str, title: str) -> Setting:
    """``store``'s results with ranks at every budget."""
    spec = Store(ctx.stores[store]).spec()
    return Setting(store, title, ctx.results(store, rank_horizons=spec.horizons), spec.relative)
