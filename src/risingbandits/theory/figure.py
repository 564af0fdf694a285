"""Figure of ``risingbandits theory bound``: Thm. 5.4's bound vs T beside CURE-UCB's regret."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from risingbandits.analysis import MeanCI
from risingbandits.outputs import atomic_write
from risingbandits.plots.common import colour, plot_regret_curves
from risingbandits.theory.bound import RegretBound


def plot_bound(
    bounds: Sequence[RegretBound], regret: Mapping[int, MeanCI], title: str, path: Path
) -> Path:
    """(a) the bound (minimum over the q grid) and its three terms vs T, log scale, with the
    trivial bound Reg(T) <= T; (b) CURE-UCB's empirical regret vs T with 95% bands."""
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 4))
    hs = np.array([b.horizon for b in bounds])
    series = {
        "bound (best q)": [b.total for b in bounds],
        "Upsilon term": [b.increment_term for b in bounds],
        "noise term": [b.noise_term for b in bounds],
        "constant term": [b.constant_term for b in bounds],
    }
    styles = (("-", "tab:blue"), ("--", "tab:orange"), ("-.", "tab:purple"), (":", "tab:red"))
    for (label, values), (line, tint) in zip(series.items(), styles, strict=True):
        ax_a.plot(hs, values, line, color=tint, marker="o", ms=3, label=label)
    ax_a.plot(hs, hs, color="k", lw=1, label="trivial: T")
    empirical = [regret[int(h)].mean for h in hs]
    ax_a.plot(hs, empirical, color=colour("cure-ucb"), marker="s", ms=3, label="CURE-UCB regret")
    ax_a.set_yscale("log")
    ax_a.set_xlabel("horizon T")
    ax_a.set_ylabel("regret bound")
    ax_a.set_title("(a) Theorem 5.4 bound (min over q)")
    ax_a.grid(alpha=0.3, which="both")
    ax_a.legend(fontsize=7)
    plot_regret_curves(ax_b, {"cure-ucb": regret})
    ax_b.set_title("(b) CURE-UCB empirical regret")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    # written whole (temporary file, rename): a run killed while writing leaves no partial
    # figure, nor a replaced one half written
    fmt = path.suffix[1:].lower()
    try:
        atomic_write(path, partial(fig.savefig, dpi=150, format=fmt))
    finally:  # also when stopped while writing: pyplot keeps an unclosed figure for good
        plt.close(fig)
    return path
