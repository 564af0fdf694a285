"""Figures comparing every policy across budgets (model selection) and the default policy
against the best other policy cell by cell (the held-out evaluation)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from risingbandits.analysis import MeanCI
from risingbandits.plots.common import DPI, plot_ci_bars, plot_regret_curves, save

Curves = Mapping[str, Mapping[int, MeanCI]]
CurvePanel = tuple[str, str, Curves]
"""(title, y label, ``{policy: {budget: mean and CI}}``)."""
BarPanel = tuple[str, str, Mapping[str, MeanCI]]
"""(title, x label, ``{policy: mean and CI}``)."""


def plot_budget_overview(
    curves: Sequence[CurvePanel],
    bars: Sequence[BarPanel],
    labels: Mapping[str, str],
    styles: Mapping[str, str],
    xlabel: str,
    title: str,
    path: Path,
    dpi: int = DPI,
) -> Path:
    """Curve panels (a metric vs the budget, log x axis, 95% bands) then bar panels (e.g. the
    average rank at one budget, 95% error bars), side by side."""
    n = len(curves) + len(bars)
    widths = [1.5] * len(curves) + [1.0] * len(bars)
    fig, axes = plt.subplots(
        1, n, figsize=(5.2 * len(curves) + 3.6 * len(bars), 5.0), width_ratios=widths
    )
    axes = np.atleast_1d(axes)
    for k, (panel, ylabel, values) in enumerate(curves):
        plot_regret_curves(axes[k], values, labels, styles)
        axes[k].set_xscale("log")
        xs = sorted({x for by_x in values.values() for x in by_x})
        axes[k].set_xticks(xs, [f"{x:g}" for x in xs])
        axes[k].minorticks_off()
        axes[k].set_xlabel(xlabel)
        axes[k].set_ylabel(ylabel)
        axes[k].set_title(f"({'abcdefg'[k]}) {panel}")
        if k > 0:
            axes[k].get_legend().remove()
    for k, (panel, bar_label, means) in enumerate(bars, start=len(curves)):
        plot_ci_bars(axes[k], means, labels, bar_label)
        axes[k].set_title(f"({'abcdefg'[k]}) {panel}")
    fig.suptitle(title, fontsize=10)
    return save(fig, path, dpi)


def plot_difference_map(
    values: np.ndarray,
    marks: Sequence[Sequence[str]],
    rows: Sequence[str],
    columns: Sequence[str],
    title: str,
    path: Path,
    dpi: int = DPI,
) -> Path:
    """A heat map of differences (a linear colour scale centred on 0: green below, red above)
    with each cell's value and its ``marks`` text written in it (NaN: an empty cell)."""
    fig, ax = plt.subplots(figsize=(2.0 + 1.9 * len(columns), 1.2 + 0.75 * len(rows)))
    finite = values[np.isfinite(values)]
    span = float(np.max(np.abs(finite))) if finite.size and np.any(finite != 0) else 1.0
    image = ax.imshow(values, cmap="RdYlGn_r", vmin=-span, vmax=span, aspect="auto")
    ax.set_xticks(np.arange(len(columns)), columns, fontsize=8)
    ax.set_yticks(np.arange(len(rows)), rows, fontsize=8)
    for i in range(len(rows)):
        for j in range(len(columns)):
            text = f"{values[i, j]:+.4f}\n{marks[i][j]}" if np.isfinite(values[i, j]) else "-"
            ax.text(j, i, text, ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax)
    ax.set_title(title, fontsize=9)
    return save(fig, path, dpi)


def plot_bar_grid(
    rows: Sequence[Sequence[BarPanel]],
    labels: Mapping[str, str],
    title: str,
    path: Path,
    dpi: int = DPI,
) -> Path:
    """Bar panels in a grid (one row per metric, one column per setting), 95% error bars."""
    n_rows, n_cols = len(rows), max(len(r) for r in rows)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.4 * n_cols, 4.6 * n_rows), squeeze=False)
    for i, row in enumerate(rows):
        for j, (panel, xlabel, values) in enumerate(row):
            plot_ci_bars(axes[i, j], values, labels, xlabel)
            axes[i, j].set_title(panel, fontsize=9)
            if j > 0:
                axes[i, j].set_yticklabels([])
        for j in range(len(row), n_cols):
            axes[i, j].set_visible(False)
    fig.suptitle(title, fontsize=10)
    return save(fig, path, dpi)
