"""Figures of the sensitivity panel: policies across noise models, and parameter variants."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from risingbandits.analysis import MeanCI
from risingbandits.plots.common import DPI, colour, plot_regret_curves, save

Curves = Mapping[str, Mapping[int, MeanCI]]


def plot_across_levels(
    levels: Sequence[str],
    panels: Sequence[tuple[str, Mapping[str, Mapping[str, MeanCI]]]],
    labels: Mapping[str, str],
    title: str,
    path: Path,
    dpi: int = DPI,
) -> Path:
    """One panel per ``(y label, {policy: {level: value}})``: each policy's value (with 95% error
    bars) at each level of a categorical x axis (e.g. the noise model)."""
    cols = 2
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 3.8 * rows), squeeze=False)
    x = np.arange(len(levels))
    for ax, (ylabel, values) in zip(axes.flat, panels, strict=False):
        for k, (policy, by_level) in enumerate(values.items()):
            cis = [by_level[lv] for lv in levels]
            mean = np.array([c.mean for c in cis])
            err = np.array([[c.mean - c.low, c.high - c.mean] for c in cis]).T
            err = np.where(np.isfinite(err), err, 0.0)
            shift = (k - (len(values) - 1) / 2) * 0.03
            ax.errorbar(
                x + shift,
                mean,
                yerr=err,
                marker="o",
                ms=3,
                capsize=2,
                color=colour(policy),
                lw=2.2 if policy == "cure-ucb" else 1.0,
                label=labels.get(policy, policy),
            )
        ax.set_xticks(x, list(levels), fontsize=8)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6, ncol=2)
    fig.suptitle(title, fontsize=10)
    return save(fig, path, dpi)


def plot_curve_panels(
    panels: Sequence[tuple[str, Curves, Mapping[str, str]]],
    labels: Mapping[str, str],
    path: Path,
    dpi: int = DPI,
) -> Path:
    """One regret-vs-T panel per ``(title, curves, line styles)``."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (title, curves, styles) in zip(axes[0], panels, strict=True):
        plot_regret_curves(ax, curves, labels, styles)
        ax.set_title(title, fontsize=9)
    return save(fig, path, dpi)
