"""Settings read at budgets given as a share of each instance's full budget (IMDB's horizons are
T out of its 50,000 pulls, lcdb-v1's percents of each instance's own full horizon: a store with
``horizon_percents``) or as pulls per candidate (a store with ``pulls_per_arm``: T = K x m).
Shared by the model-selection and held-out sections."""

from __future__ import annotations

from dataclasses import dataclass

from risingbandits.analysis.stats import MeanCI
from risingbandits.experiments.store import Store
from risingbandits.instances.families import PAPER_HORIZON
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.sections.common import Context
from risingbandits.reproduce.settings import EXTRA_POLICIES, OWN_POLICIES

STYLES = {p: "--" for p in EXTRA_POLICIES if p not in OWN_POLICIES}
"""Line styles: the fixed-budget methods and UCB1 dashed, the library's own and the ten solid."""


@dataclass(frozen=True)
class Setting:
    """One store read for a section: its results (ranked at every budget) and how its budgets
    read."""

    store: str
    title: str
    results: Results
    grid: str
    """The store's grid: ``horizons`` (T of 50,000), ``horizon_percents`` or ``pulls_per_arm``."""

    @property
    def per_arm(self) -> bool:
        """Budgets are pulls per candidate (else shares of the full budget)."""
        return self.grid == "pulls_per_arm"

    def key(self, horizon: int) -> int:
        """The budget as a percent of the full budget, or as pulls per candidate."""
        return horizon * 100 // PAPER_HORIZON if self.grid == "horizons" else horizon

    def budget(self, horizon: int) -> str:
        """``20%`` (per-instance budgets), ``20% (T = 10,000)`` or ``8 per candidate``."""
        if self.per_arm:
            return f"{horizon} per candidate"
        if self.grid == "horizon_percents":
            return f"{horizon}%"
        return f"{self.key(horizon)}% (T = {horizon:,})"

    @property
    def axis(self) -> str:
        """The x label of the budget figures."""
        if self.per_arm:
            return "budget (pulls per candidate, T = K x m)"
        return "budget (% of the full budget)"

    def by_key(self, metric: str) -> dict[str, dict[int, MeanCI]]:
        """``{label: {budget key: mean and CI of metric}}`` (the x axis of the budget figures)."""
        curves = self.results.curves(metric=metric)
        return {p: {self.key(h): c for h, c in by_h.items()} for p, by_h in curves.items()}


def load_setting(ctx: Context, store: str, title: str) -> Setting:
    """``store``'s results with ranks at every budget."""
    spec = Store(ctx.stores[store]).spec()
    results = ctx.results(store, rank_horizons=spec.horizons)
    return Setting(store, title, results, spec.grid_key)
