"""Figures of :mod:`risingbandits.explain`: the CURE-UCB paper's Figure 3 view at chosen rounds,
and the index terms over time.

Figure 3 of the paper draws one arm's curve so far, the point each algorithm's estimate targets
and the horizon limit. Here every policy has its own run (the same seed, so the same rewards
pull by pull), hence its own pulls N and its own limit N + (T - t): both are drawn in the
policy's colour; the region beyond a policy's limit (pulls it cannot reach) is shaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes

from risingbandits.explain import Explanation, PolicyAtRound, TracedRun
from risingbandits.plots.common import DPI, colour, save

MAX_POINTS = 4_000
"""Lines over the rounds are drawn with at most this many points (every k-th recorded round;
the numbers themselves are all in the CSV files)."""


def arm_colour(arm: int) -> tuple[float, float, float, float]:
    return plt.get_cmap("tab10")(arm % 10)


def moving_average(x: np.ndarray, width: int) -> np.ndarray:
    """Mean of each run of ``width`` consecutive values (len(x) - width + 1 values)."""
    c = np.concatenate([[0.0], np.cumsum(x)])
    return (c[width:] - c[:-width]) / width


def _stage_panel(ax: Axes, ex: Explanation, views: tuple[PolicyAtRound, ...], arm: int) -> None:
    """One arm at one round: its mean curve, each policy's rewards so far (moving average), pulls
    N, horizon limit and target point."""
    inst, t = ex.instance, views[0].round
    points = [(v.arms[arm].pulls, v.arms[arm].horizon_limit) for v in views]
    targets = [v.arms[arm].target for v in views]
    right = max([lim for _, lim in points] + [p[0] for p in targets if p is not None] + [10])
    right = int(right * 1.06) + 1
    n = np.arange(1, min(right, inst.max_horizon) + 1)
    ax.plot(n, inst.means[arm, : n.size], color="0.55", lw=1.2, label="mean reward mu(n)")
    low, high = float(inst.means[arm, : n.size].min()), float(inst.means[arm, : n.size].max())
    lines = []
    for run, view, (pulls, limit) in zip(ex.runs, views, points, strict=True):
        c = colour(run.label)
        seen = run.arm_rewards(arm, t)
        if seen.size:
            width = max(1, seen.size // 50)
            avg = moving_average(seen, width)
            ax.plot(np.arange(width, seen.size + 1), avg, color=c, lw=0.8, alpha=0.7)
            low, high = min(low, float(avg.min())), max(high, float(avg.max()))
        ax.axvline(pulls, color=c, ls=":", lw=1.2)
        ax.axvline(limit, color=c, ls="-", lw=2.0, alpha=0.8)
        ax.axvspan(limit, right, color=c, alpha=0.07, lw=0)
        a = view.arms[arm]
        chosen = " (chosen)" if view.chosen == arm else ""
        lines.append(f"{run.label}: N={pulls:,}, limit {limit:,}, index {a.index:.3g}{chosen}")
    span = max(high - low, 0.05)
    bottom, top = low - 0.15 * span, high + 0.35 * span
    for run, target in zip(ex.runs, targets, strict=True):
        if target is None:
            continue
        x, y = target
        shown = min(max(y, bottom), top)
        marker = "o" if shown == y else ("^" if y > top else "v")
        c = colour(run.label)
        ax.plot([x, x], [bottom, shown], color=c, ls="--", lw=1.0)
        ax.plot([x], [shown], marker=marker, color=c, ms=7, ls="none")
        ax.annotate(f"{y:.3g}", (x, shown), xytext=(4, -10), textcoords="offset points", fontsize=7)
    ax.set_xlim(0, right)
    ax.set_ylim(bottom, top)
    head = f"{inst.arm_names[arm]}, round t = {t:,} (T - t = {ex.horizon - t:,})"
    ax.set_title("\n".join([head, *lines]), fontsize=7)
    ax.set_xlabel("pull n", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.25)


def plot_stages(
    ex: Explanation, path: Path, dpi: int = DPI, arms: Sequence[int] | None = None
) -> Path:
    """The Figure 3 view: one row per asked round, one panel per arm (``arms``: these only).
    Dotted line: the policy's pulls N of the arm; solid line: its horizon limit N + (T - t)
    (shaded beyond: out of reach); marker: its target point (a triangle when off the scale,
    with the value)."""
    rounds = ex.rounds
    shown = list(range(ex.instance.n_arms)) if arms is None else list(arms)
    k = len(shown)
    fig, axes = plt.subplots(len(rounds), k, figsize=(3.8 * k, 3.6 * len(rounds)), squeeze=False)
    for r, t in enumerate(rounds):
        views = ex.at(t)
        for col, arm in enumerate(shown):
            _stage_panel(axes[r, col], ex, views, arm)
    handles = [plt.Line2D([], [], color="0.55", lw=1.2, label="mean reward mu(n)")]
    for run in ex.runs:
        handles.append(
            plt.Line2D([], [], color=colour(run.label), marker="o", label=f"{run.label} target")
        )
    axes[0, 0].legend(handles=handles, loc="lower right", fontsize=7)
    fig.suptitle(
        f"{ex.instance.name}: what each policy's index aims at (T = {ex.horizon:,}, "
        f"seed {ex.seed if isinstance(ex.seed, int) else 'of the store'})",
        fontsize=10,
    )
    return save(fig, path, dpi)


def plot_run_terms(axes: np.ndarray, run: TracedRun, names: tuple[str, ...]) -> None:
    """A run's traced index and terms against the round, one panel each, one line per arm (a
    symmetric log scale where values pass 10: rewards near 0..1 and bonuses in the thousands
    on one axis)."""
    trace = run.trace
    step = max(1, trace.rounds.size // MAX_POINTS)
    rounds = trace.rounds[::step]
    series = [("index", trace.index[0, ::step])]
    series += [(n, trace.terms[0, ::step, :, j]) for j, n in enumerate(trace.term_names)]
    for ax, (name, values) in zip(axes, series, strict=False):
        shown = np.where(np.isfinite(values), values, np.nan)
        for arm in range(shown.shape[1]):
            ax.plot(rounds, shown[:, arm], color=arm_colour(arm), lw=0.7, label=names[arm])
        if np.nanmax(np.abs(shown), initial=0.0) > 10.0:
            ax.set_yscale("symlog", linthresh=1.0)
        ax.set_title(f"{run.label}: {name}", fontsize=8)
        ax.set_xlabel("round t", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.25)
    for ax in axes[len(series) :]:
        ax.set_visible(False)


def plot_terms(ex: Explanation, path: Path, dpi: int = DPI) -> Path:
    """Each policy's index and its terms over the run (rows: policies), the asked rounds
    marked; forced rounds (+-inf) are left blank."""
    cols = 1 + max(len(run.trace.term_names) for run in ex.runs)
    fig, axes = plt.subplots(
        len(ex.runs), cols, figsize=(3.8 * cols, 3.0 * len(ex.runs)), squeeze=False
    )
    for r, run in enumerate(ex.runs):
        plot_run_terms(axes[r], run, ex.instance.arm_names)
        for ax in axes[r]:
            for t in ex.rounds:
                ax.axvline(t, color="k", ls=":", lw=0.8)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(f"{ex.instance.name}: index terms over the run (T = {ex.horizon:,})", fontsize=10)
    return save(fig, path, dpi)


def _pulls_panel(ax: Axes, run: TracedRun, names: Sequence[str], best: int) -> None:
    """Cumulative pulls of each arm against the round (the best fixed arm drawn thick)."""
    rounds = np.arange(1, run.arms.size + 1)
    step = max(1, rounds.size // MAX_POINTS)
    for arm, name in enumerate(names):
        pulls = np.cumsum(run.arms == arm)[::step]
        label = f"{name} (best fixed arm)" if arm == best else name
        ax.plot(rounds[::step], pulls, color=arm_colour(arm), lw=2.2 if arm == best else 0.9,
                label=label)  # fmt: skip
    ax.set_xlabel("round t", fontsize=8)
    ax.set_ylabel("pulls so far", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6)
    ax.grid(alpha=0.25)


def plot_played_terms(
    run: TracedRun, names: Sequence[str], best: int, path: Path, dpi: int = DPI
) -> Path:
    """(a) Each traced term of the arm played in each round (symmetric log scale); (b) the
    pulls of each arm so far. Shows which term drives the choices over the horizon."""
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 3.8))
    trace = run.trace
    step = max(1, trace.rounds.size // MAX_POINTS)
    rows = np.arange(trace.rounds.size)
    played = trace.terms[0, rows, trace.arms[0]][::step]
    for j, name in enumerate(trace.term_names):
        shown = np.where(np.isfinite(played[:, j]), played[:, j], np.nan)
        ax_a.plot(trace.rounds[::step], shown, lw=0.8, label=name)
    ax_a.set_yscale("symlog", linthresh=1.0)
    ax_a.set_title(f"(a) {run.label}: the terms of the arm played", fontsize=9)
    ax_a.set_xlabel("round t", fontsize=8)
    ax_a.tick_params(labelsize=7)
    ax_a.legend(fontsize=7)
    ax_a.grid(alpha=0.25)
    _pulls_panel(ax_b, run, names, best)
    ax_b.set_title("(b) pulls of each arm", fontsize=9)
    return save(fig, path, dpi)


def plot_lock_in(
    run: TracedRun, names: Sequence[str], best: int, dropout: int, path: Path, dpi: int = DPI
) -> Path:
    """(a) Each arm's traced index against the round (log round axis, at most MAX_POINTS rounds
    spaced evenly on it; symmetric log values),
    the round at which the best fixed arm is pulled for the last time marked; (b) the pulls of
    each arm so far (log scale)."""
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(11, 3.8))
    trace = run.trace
    rows = np.unique(np.geomspace(1, trace.rounds.size, MAX_POINTS).astype(np.int64) - 1)
    index = trace.index[0, rows]
    index = np.where(np.isfinite(index), index, np.nan)
    for arm, name in enumerate(names):
        ax_a.plot(trace.rounds[rows], index[:, arm], color=arm_colour(arm),
                  lw=2.2 if arm == best else 0.8, label=name)  # fmt: skip
    ax_a.axvline(dropout, color="k", ls=":", lw=1.0)
    ax_a.set_xscale("log")
    ax_a.set_yscale("symlog", linthresh=1.0)
    ax_a.set_title(
        f"(a) {run.label}: index of each arm (dotted: last pull of the best)", fontsize=9
    )
    ax_a.set_xlabel("round t", fontsize=8)
    ax_a.tick_params(labelsize=7)
    ax_a.grid(alpha=0.25)
    _pulls_panel(ax_b, run, names, best)
    ax_b.set_yscale("log")
    ax_b.set_title("(b) pulls of each arm", fontsize=9)
    return save(fig, path, dpi)
