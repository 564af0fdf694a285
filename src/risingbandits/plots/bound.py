"""Figure of the reproduction's Thm. 5.4 check: the bound and CURE-UCB's regret, over T."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from risingbandits.plots.common import DPI, save

Series = Mapping[str, Mapping[int, Sequence[tuple[float, float]]]]


def plot_bound_ratios(series: Series, path: Path, dpi: int = DPI) -> Path:
    """``series[setting][T]`` = (bound, measured regret) per instance. (a) bound / T (median
    over instances, band from min to max) with the trivial bound 1; (b) measured regret / bound."""
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
    tints = ("tab:blue", "tab:orange", "tab:green", "tab:red")
    for (setting, by_t), tint in zip(series.items(), tints, strict=False):
        hs = sorted(by_t)
        for ax, ratio in ((ax_a, lambda b, r, h: b / h), (ax_b, lambda b, r, h: r / b)):
            values = [np.array([ratio(b, r, h) for b, r in by_t[h]]) for h in hs]
            med = [float(np.median(v)) for v in values]
            ax.plot(hs, med, marker="o", ms=3, color=tint, label=f"{setting} (median)")
            low = [float(v.min()) for v in values]
            high = [float(v.max()) for v in values]
            ax.fill_between(hs, low, high, color=tint, alpha=0.15, linewidth=0)
    ax_a.axhline(1.0, color="k", lw=1, label="trivial bound Reg(T) <= T")
    ax_a.set_title("(a) Thm. 5.4 bound / T (best q; band: min-max over instances)")
    ax_a.set_ylabel("bound / T")
    ax_b.set_title("(b) CURE-UCB's measured regret / bound")
    ax_b.set_ylabel("regret / bound")
    ax_b.set_yscale("log")
    for ax in (ax_a, ax_b):
        ax.set_xlabel("horizon T")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    return save(fig, path, dpi)
