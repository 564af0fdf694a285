"""Figure 6 of the paper: the IMDB learning curves, and which fixed arm is best at each T."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from risingbandits.instances import RisingInstance
from risingbandits.plots.common import DPI, save


def plot_learning_curves(instance: RisingInstance, path: Path, dpi: int = DPI) -> Path:
    """(a) expected reward mu_i(n) of each learner against its pull count; (b) the average
    reward V_i(T)/T of playing learner i for all T rounds, whose maximum is the best fixed arm
    (switching points marked)."""
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
    n = np.arange(1, instance.max_horizon + 1)
    cumulative = instance.oracle.cumulative[:, 1:]
    for i, name in enumerate(instance.arm_names):
        ax_a.plot(n, instance.means[i], lw=0.8, label=name)
        ax_b.plot(n, cumulative[i] / n, lw=1.0, label=name)
    late = [s for s in instance.oracle.switching_horizons() if s.horizon >= 100]
    for s in late:
        ax_b.axvline(s.horizon, color="k", ls=":", lw=0.8)
    if late:
        ax_b.annotate(
            f"best fixed arm changes near T = {late[0].horizon:,}",
            (late[0].horizon, 0.55),
            xytext=(6, 0),
            textcoords="offset points",
            fontsize=8,
        )
    ax_a.set_title("(a) expected reward (validation accuracy) per pull")
    ax_a.set_xlabel("pull n")
    ax_a.set_ylabel("mu(n)")
    ax_b.set_title("(b) average reward of a fixed arm, V_i(T) / T")
    ax_b.set_xlabel("horizon T")
    ax_b.set_xscale("log")
    for ax in (ax_a, ax_b):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return save(fig, path, dpi)
