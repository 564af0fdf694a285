"""Shared plotting pieces: policy colours, regret-vs-horizon curves with 95% bands, bars with
error bars and win-rate heat maps, and where a finished figure goes (:func:`save`)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from operator import methodcaller
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from risingbandits.analysis import MeanCI
from risingbandits.outputs import atomic_write

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
    # the fixed-budget methods in light tones, ACE-UCB in navy, HACE-UCB (the default) in magenta
    "successive-halving": "#6baed6",
    "successive-rejects": "#74c476",
    "r-sr": "#c5b0d5",
    "r-ucbe": "#c49c94",
    "ace-ucb": "#08306b",
    "hace-ucb": "#e7298a",
    "hyperband": "#3182bd",
    "asha": "#31a354",
    # Optuna's pruners (run by Optuna itself) in warm tones
    "optuna-sh": "#e6550d",
    "optuna-hyperband": "#a63603",
    "optuna-median": "#fdae6b",
}
DPI = 110


def colour(policy: str) -> str:
    """The colour of a policy; a labelled variant (``cure-ucb[sigma=1]``) takes its base's."""
    return POLICY_COLOURS.get(policy.split("[", 1)[0], "#444444")


def plot_regret_curves(
    ax: Axes,
    curves: Mapping[str, Mapping[int, MeanCI]],
    labels: Mapping[str, str] | None = None,
    styles: Mapping[str, str] | None = None,
) -> None:
    """Mean regret vs horizon T per policy, with shaded 95% confidence bands.

    ``labels`` maps a policy to its legend text, ``styles`` to a line style (default solid).
    """
    alpha = 0.2 if len(curves) <= 4 else 0.1
    for policy, by_t in curves.items():
        hs: Sequence[int] = sorted(by_t)
        mean = np.array([by_t[h].mean for h in hs])
        low = np.array([by_t[h].low for h in hs])
        high = np.array([by_t[h].high for h in hs])
        label = (labels or {}).get(policy, policy)
        style = (styles or {}).get(policy, "-")
        ax.plot(hs, mean, style, marker="o", ms=3, color=colour(policy), label=label)
        if np.isfinite(low).all():
            ax.fill_between(hs, low, high, color=colour(policy), alpha=alpha, linewidth=0)
    ax.set_xlabel("horizon T")
    ax.set_ylabel("policy regret")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def plot_ci_bars(
    ax: Axes, values: Mapping[str, MeanCI], labels: Mapping[str, str], xlabel: str
) -> None:
    """Horizontal bars (one per policy, in the given order, top to bottom) with 95% error bars."""
    names = list(values)
    y = np.arange(len(names))[::-1]
    means = np.array([values[p].mean for p in names])
    lows = np.array([values[p].low for p in names])
    highs = np.array([values[p].high for p in names])
    err = np.vstack([means - lows, highs - means])
    err = np.where(np.isfinite(err), err, 0.0)
    ax.barh(y, means, xerr=err, color=[colour(p) for p in names], capsize=3, alpha=0.85)
    ax.set_yticks(y, [labels.get(p, p) for p in names], fontsize=8)
    ax.set_xlabel(xlabel)
    ax.grid(alpha=0.3, axis="x")


def plot_win_heatmap(ax: Axes, matrix: np.ndarray, names: Sequence[str]) -> None:
    """Pairwise win rates in percent: row beats column (ties count 1/2); diagonal blank."""
    shown = np.ma.masked_invalid(100.0 * matrix)
    ax.imshow(shown, cmap="RdYlGn", vmin=0, vmax=100)
    ticks = np.arange(len(names))
    ax.set_xticks(ticks, names, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(ticks, names, fontsize=7)
    for i in range(len(names)):
        for j in range(len(names)):
            if i != j and np.isfinite(matrix[i, j]):
                ax.text(j, i, f"{100 * matrix[i, j]:.0f}", ha="center", va="center", fontsize=6)


HandOver = Callable[[Figure, Path, int], None]
_HAND_OVER: ContextVar[HandOver | None] = ContextVar("risingbandits_hand_over", default=None)


def save(fig: Figure, path: Path, dpi: int = DPI) -> Path:
    """Close ``fig`` and write it as PNG at ``path``, whole
    (:func:`~risingbandits.outputs.atomic_write`; inside :func:`drawn_elsewhere`: hand it over
    to be drawn and written there)."""
    plt.close(fig)  # closed first, so a pickled copy does not join pyplot's figures
    hand_over = _HAND_OVER.get()
    if hand_over is None:
        png = png_bytes(fig, dpi)
        atomic_write(path, methodcaller("write", png))
    else:
        hand_over(fig, path, dpi)
    return path


def png_bytes(fig: Figure, dpi: int = DPI) -> bytes:
    """``fig`` laid out tightly and drawn as PNG."""
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


@contextmanager
def drawn_elsewhere(hand_over: HandOver) -> Iterator[None]:
    """In this block (this thread), :func:`save` calls ``hand_over(fig, path, dpi)`` instead
    of drawing."""
    token = _HAND_OVER.set(hand_over)
    try:
        yield
    finally:
        _HAND_OVER.reset(token)
