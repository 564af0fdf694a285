"""Figures of a setting with many instances (the paper's Figures 4, 5 and 7, Appendix F) and of
example instances (Appendix A)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from risingbandits.analysis import MeanCI
from risingbandits.analysis.winrate import WinRates
from risingbandits.instances import RisingInstance
from risingbandits.plots.common import DPI, plot_ci_bars, plot_regret_curves, plot_win_heatmap, save

Curves = Mapping[str, Mapping[int, MeanCI]]


def plot_overview(
    curves: Curves,
    bars: Sequence[tuple[str, str, Mapping[str, MeanCI]]],
    labels: Mapping[str, str],
    title: str,
    path: Path,
    dpi: int = DPI,
) -> Path:
    """(a) regret vs T with 95% bands; then one bar panel per ``(title, x label, values)``
    (e.g. the average rank at T = 10,000 and 50,000 with 95% error bars)."""
    widths = [1.5] + [1.0] * len(bars)
    fig, axes = plt.subplots(
        1, 1 + len(bars), figsize=(5.5 + 3.6 * len(bars), 4.2), width_ratios=widths
    )
    axes = np.atleast_1d(axes)
    plot_regret_curves(axes[0], curves, labels)
    axes[0].set_title("(a) regret vs horizon T")
    for k, (panel, xlabel, values) in enumerate(bars, start=1):
        plot_ci_bars(axes[k], values, labels, xlabel)
        axes[k].set_title(f"({'abcdefg'[k]}) {panel}")
    fig.suptitle(title, fontsize=10)
    return save(fig, path, dpi)


def plot_details(
    rows: Sequence[tuple[int, Mapping[str, MeanCI], WinRates]],
    labels: Mapping[str, str],
    title: str,
    path: Path,
    dpi: int = DPI,
) -> Path:
    """One row per horizon: (left) mean regret with 95% error bars, (right) pairwise win rates."""
    fig, axes = plt.subplots(len(rows), 2, figsize=(11, 4.2 * len(rows)), squeeze=False)
    for k, (horizon, regret, wins) in enumerate(rows):
        plot_ci_bars(axes[k, 0], regret, labels, "policy regret (mean, 95% CI)")
        axes[k, 0].set_title(f"T = {horizon:,}: regret")
        plot_win_heatmap(axes[k, 1], wins.matrix, [labels.get(p, p) for p in wins.policies])
        axes[k, 1].set_title(f"T = {horizon:,}: win rate % (row beats column; {wins.units} units)")
    fig.suptitle(title, fontsize=10)
    return save(fig, path, dpi)


def arm_name(instance: RisingInstance, arm: int) -> str:
    """The arm's name, or ``arm i`` when the instance has none."""
    return instance.arm_names[arm] if instance.arm_names else f"arm {arm}"


def plot_examples(
    instances: Sequence[RisingInstance],
    marks: Sequence[int],
    title: str,
    path: Path,
    dpi: int = DPI,
) -> Path:
    """Mean functions of a few instances; the best fixed arm at each horizon of ``marks`` is
    named in the panel title."""
    fig, axes = plt.subplots(1, len(instances), figsize=(4.3 * len(instances), 3.6), squeeze=False)
    for ax, inst in zip(axes[0], instances, strict=True):
        n = np.arange(1, inst.max_horizon + 1)
        for i in range(inst.n_arms):
            ax.plot(n, inst.means[i], lw=1.4, label=arm_name(inst, i))
        best = ", ".join(f"T={h:,}: {arm_name(inst, inst.oracle.best_arm(h))}" for h in marks)
        ax.set_title(f"{inst.name}\nbest fixed arm at {best}", fontsize=8)
        ax.set_xlabel("pull n")
        ax.set_ylabel("mu(n)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle(title, fontsize=10)
    return save(fig, path, dpi)
