"""Shared plotting pieces: policy colours and regret-vs-horizon curves with 95% bands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes

from risingbandits.analysis import MeanCI

# Rising-bandit algorithms in blues/greens, non-stationary ones in reds (as the paper's figures).
POLICY_COLOURS: dict[str, str] = {
    "cure-ucb": "#2ca02c",
    "red-ucb": "#1f77b4",
    "et-swgts": "#17becf",
    "ti-ucb": "#9467bd",
    "red-ae": "#8c564b",
    "sw-ucb": "#d62728",
    "sw-kl-ucb": "#ff7f0e",
    "sw-ts": "#e377c2",
    "rexp3": "#bcbd22",
    "ser4": "#7f7f7f",
    "ucb1": "#000000",
}


def colour(policy: str) -> str:
    return POLICY_COLOURS.get(policy, "#444444")


def plot_regret_curves(
    ax: Axes, curves: Mapping[str, Mapping[int, MeanCI]], labels: Mapping[str, str] | None = None
) -> None:
    """Mean regret vs horizon T per policy, with shaded 95% confidence bands."""
    for policy, by_t in curves.items():
        hs: Sequence[int] = sorted(by_t)
        mean = np.array([by_t[h].mean for h in hs])
        low = np.array([by_t[h].low for h in hs])
        high = np.array([by_t[h].high for h in hs])
        label = (labels or {}).get(policy, policy)
        ax.plot(hs, mean, marker="o", ms=3, color=colour(policy), label=label)
        if np.isfinite(low).all():
            ax.fill_between(hs, low, high, color=colour(policy), alpha=0.2, linewidth=0)
    ax.set_xlabel("horizon T")
    ax.set_ylabel("policy regret")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
