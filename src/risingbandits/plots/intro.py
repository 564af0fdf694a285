"""Figure 1 of the paper: the intro instance's mean functions and regret vs horizon."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from risingbandits.analysis import MeanCI
from risingbandits.instances import RisingInstance
from risingbandits.plots.common import plot_regret_curves


def plot_figure1(
    instance: RisingInstance, curves: Mapping[str, Mapping[int, MeanCI]], path: Path
) -> Path:
    """(a) expected reward functions with the switching horizon; (b) regret vs T, 95% bands."""
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
    n = np.arange(1, instance.max_horizon + 1)
    for i, name in enumerate(instance.arm_names):
        ax_a.plot(
            n, instance.means[i], label=name, color=("tab:blue", "tab:red", "tab:gray")[i % 3]
        )
    for switch in instance.oracle.switching_horizons():
        ax_a.axvline(switch.horizon, color="k", ls=":", lw=1)
        ax_a.annotate(
            f"best fixed arm switches\nat T = {switch.horizon:,}",
            (switch.horizon, 0.1),
            xytext=(6, 0),
            textcoords="offset points",
            fontsize=8,
        )
    ax_a.set_xlabel("pull n")
    ax_a.set_ylabel("expected reward mu(n)")
    ax_a.set_title("(a) expected reward functions")
    ax_a.set_ylim(0, 1.05)
    ax_a.legend(fontsize=8)
    ax_a.grid(alpha=0.3)
    plot_regret_curves(ax_b, curves)
    ax_b.set_title(f"(b) regret vs horizon (noise {instance.noise})")
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path
