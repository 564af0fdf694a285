"""Figure 1 of the paper: the intro instance's mean functions and regret vs horizon."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from risingbandits.analysis import MeanCI
from risingbandits.instances import RisingInstance
from risingbandits.plots.common import plot_regret_curves, save

Curves = Mapping[str, Mapping[int, MeanCI]]


def plot_mean_functions(ax: Axes, instance: RisingInstance) -> None:
    """Expected reward of each arm against its pull count, with the switching horizons."""
    n = np.arange(1, instance.max_horizon + 1)
    for i, name in enumerate(instance.arm_names):
        ax.plot(n, instance.means[i], label=name, color=("tab:blue", "tab:red", "tab:gray")[i % 3])
    for switch in instance.oracle.switching_horizons():
        ax.axvline(switch.horizon, color="k", ls=":", lw=1)
        ax.annotate(
            f"best fixed arm switches\nat T = {switch.horizon:,}",
            (switch.horizon, 0.1),
            xytext=(6, 0),
            textcoords="offset points",
            fontsize=8,
        )
    ax.set_xlabel("pull n")
    ax.set_ylabel("expected reward mu(n)")
    ax.set_title("(a) expected reward functions")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def plot_figure1(
    instance: RisingInstance,
    curves: Curves,
    path: Path,
    *,
    others: Curves | None = None,
    labels: Mapping[str, str] | None = None,
    dpi: int = 150,
) -> Path:
    """(a) expected reward functions with the switching horizon; (b) regret vs T, 95% bands;
    (c) when ``others`` is given, the same for those policies."""
    panels = 3 if others else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4))
    plot_mean_functions(axes[0], instance)
    plot_regret_curves(axes[1], curves, labels)
    axes[1].set_title(f"(b) regret vs horizon (noise {instance.noise})")
    if others:
        plot_regret_curves(axes[2], others, labels)
        axes[2].set_title("(c) the other policies")
    return save(fig, path, dpi)
