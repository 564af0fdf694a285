"""Every figure of the reproduction, drawn from the stores' results into ``OUT/figures``.

Each function writes one PNG (through :mod:`risingbandits.plots`) and returns it as a report
block with its caption. Legends mark reconstructions with ``*`` (see the report's footnote).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from risingbandits.analysis.stats import MeanCI
from risingbandits.instances import RisingInstance
from risingbandits.plots.bound import plot_bound_ratios
from risingbandits.plots.imdb import plot_learning_curves
from risingbandits.plots.intro import plot_figure1
from risingbandits.plots.selection import (
    plot_bar_grid,
    plot_budget_overview,
    plot_difference_map,
)
from risingbandits.plots.sensitivity import plot_across_levels, plot_curve_panels
from risingbandits.plots.setting import plot_details, plot_examples, plot_overview
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.document import Figure
from risingbandits.reproduce.settings import FIGURE1_POLICIES, HELDOUT_NAME
from risingbandits.reproduce.theory_checks import BoundRow

RECON_NOTE = "* = reconstruction (see footnote)."


def labels_of(r: Results) -> dict[str, str]:
    """Legend text of each policy (``*`` for a reconstruction)."""
    return {p: r.name(p) for p in r.labels}


def figure1(folder: Path, r: Results, instance: RisingInstance, dpi: int) -> Figure:
    """Figure 1: the intro instance, CURE-UCB / R-ed-UCB / SW-UCB, then the other seven."""
    curves = r.curves()
    main = {p: curves[p] for p in FIGURE1_POLICIES}
    others = {p: c for p, c in curves.items() if p not in FIGURE1_POLICIES}
    path = plot_figure1(
        instance, main, folder / "fig1-intro.png", others=others, labels=labels_of(r), dpi=dpi
    )
    n = r.regret[r.labels[0], r.horizons[0]].size
    return Figure(
        path,
        f"Figure 1. (a) The intro instance; (b) regret vs T of CURE-UCB, R-ed-UCB and SW-UCB; "
        f"(c) the seven other policies. Mean over {n} runs per T, 95% bands. {RECON_NOTE}",
    )


def overview(folder: Path, r: Results, setting: str, number: int, dpi: int) -> Figure:
    """Figure 4 (LTF) or 5 (Concave): regret vs T and average ranks at 10,000 and 50,000."""
    bars = [
        (
            f"average rank at T = {h:,}",
            "average rank (1 = best)",
            {p: r.rank_ci(p, h) for p in r.labels},
        )
        for h in (10_000, 50_000)
        if h in r.rank_horizons
    ]
    n = r.regret[r.labels[0], r.horizons[0]].size
    path = plot_overview(
        r.curves(),
        bars,
        labels_of(r),
        f"{setting}: {n} instances",
        folder / f"fig{number}-{setting.lower()}.png",
        dpi,
    )
    return Figure(
        path,
        f"Figure {number}. {setting}: (a) mean regret vs T with 95% bands over {n} instances; "
        f"(b, c) average rank (1 = best) at T = 10,000 and 50,000 with 95% error bars. "
        f"{RECON_NOTE}",
    )


def details(folder: Path, r: Results, setting: str, dpi: int) -> Figure:
    """Appendix F: regret with CIs and pairwise win rates at 10k, 30k and 50k."""
    rows = [(h, {p: r.regret_ci(p, h) for p in r.labels}, r.wins[h]) for h in r.rank_horizons]
    path = plot_details(
        rows,
        labels_of(r),
        f"{setting}: regret and pairwise win rates",
        folder / f"figF-{setting.lower()}.png",
        dpi,
    )
    return Figure(
        path,
        f"Appendix F ({setting}). Left: mean regret with 95% CIs; right: pairwise win rate in % "
        f"(row beats column on a unit, ties count 1/2) at T = "
        f"{', '.join(f'{h:,}' for h in r.rank_horizons)}. {RECON_NOTE}",
    )


def examples(
    folder: Path, instances: Sequence[RisingInstance], setting: str, marks: Sequence[int], dpi: int
) -> Figure:
    path = plot_examples(
        instances,
        marks,
        f"{setting}: example instances",
        folder / f"figA-{setting.lower()}-examples.png",
        dpi,
    )
    return Figure(
        path,
        f"Appendix A ({setting}). The first {len(instances)} instances of the family (not "
        "chosen): expected reward of each arm against its pull count.",
    )


def imdb_curves(folder: Path, instance: RisingInstance, dpi: int) -> Figure:
    path = plot_learning_curves(instance, folder / "fig6-imdb-curves.png", dpi)
    return Figure(
        path,
        "Figure 6. IMDB: (a) the 7 learners' expected reward (accuracy on the next review) per "
        "pull; (b) the average reward of each fixed learner over T rounds (the highest is the "
        "best fixed arm).",
    )


def imdb_regret(folder: Path, r: Results, dpi: int) -> Figure:
    last = r.horizons[-1]
    bars = [
        (f"regret at T = {last:,}", "policy regret", {p: r.regret_ci(p, last) for p in r.labels})
    ]
    n = r.regret[r.labels[0], last].size
    path = plot_overview(
        r.curves(), bars, labels_of(r), f"IMDB: {n} runs", folder / "fig7-imdb-regret.png", dpi
    )
    return Figure(
        path,
        f"Figure 7. IMDB (Bernoulli rewards): (a) mean regret vs T over {n} runs, 95% bands; "
        f"(b) regret at T = {last:,} with 95% error bars. {RECON_NOTE}",
    )


def noise_panel(
    folder: Path,
    levels: Sequence[str],
    by_level: Mapping[str, Results],
    horizons: Sequence[int],
    dpi: int,
) -> Figure:
    first = by_level[levels[0]]
    panels = []
    for h in horizons:
        for metric, ylabel in (("regret", "mean regret"), ("rank", "average rank")):
            values = {p: {lv: by_level[lv].ci(p, h, metric) for lv in levels} for p in first.labels}
            panels.append((f"{ylabel} at T = {h:,}", values))
    path = plot_across_levels(
        levels,
        panels,
        labels_of(first),
        "LTF: sensitivity to the noise model",
        folder / "sens-noise.png",
        dpi,
    )
    return Figure(
        path,
        "Sensitivity: LTF with noise none, Gaussian sigma = 0.05, 0.1 (the main setting), 0.2 and "
        f"Bernoulli rewards; mean regret and average rank with 95% error bars. {RECON_NOTE}",
    )


def variants(
    folder: Path,
    panels: Sequence[tuple[str, Results, Sequence[str]]],
    name: str,
    caption: str,
    dpi: int,
) -> Figure:
    """Regret vs T of parameter variants (dashed and dotted) beside their defaults (solid)."""
    styles = ("--", ":", "-.")
    drawn = []
    labels: dict[str, str] = {}
    for title, r, shown in panels:
        variant = [p for p in shown if "[" in p]
        drawn.append((title, r.curves(shown), {p: styles[k % 3] for k, p in enumerate(variant)}))
        labels |= labels_of(r)
    path = plot_curve_panels(drawn, labels, folder / f"{name}.png", dpi)
    return Figure(path, caption)


def bound(folder: Path, rows: Mapping[str, Sequence[BoundRow]], dpi: int) -> Figure:
    series = {
        setting: {
            h: [(row.bound, row.regret) for row in rs if row.horizon == h]
            for h in sorted({row.horizon for row in rs})
        }
        for setting, rs in rows.items()
    }
    path = plot_bound_ratios(series, folder / "theory-bound.png", dpi)
    ratio = [row.regret / row.bound for rs in rows.values() for row in rs]
    return Figure(
        path,
        "Thm. 5.4: (a) the regret bound divided by T (best q, eps = 1/4, sigma = 0.1), median "
        "and range over instances, against the trivial bound 1; (b) CURE-UCB's measured regret "
        f"divided by the bound (median {float(np.median(ratio)):.3f}).",
    )


def selection_overview(
    folder: Path,
    name: str,
    title: str,
    r: Results,
    curves: Mapping[str, Mapping[str, Mapping[int, MeanCI]]],
    rank_horizons: Sequence[tuple[str, int]],
    styles: Mapping[str, str],
    xlabel: str,
    dpi: int,
) -> Figure:
    """Model selection on one setting: the final-model gap and the regret vs the budget (``curves``
    by metric, keyed by percent of the full budget or by pulls per candidate, as ``xlabel``
    says), the average rank by the final gap at each ``(budget text, horizon)`` of
    ``rank_horizons``."""
    bars = [
        (
            f"rank by final gap at {text}",
            "average rank (1 = best)",
            {p: r.ci(p, h, "final_gap_rank") for p in r.labels},
        )
        for text, h in rank_horizons
    ]
    panels = [
        ("final-model gap vs budget", "final-model gap", curves["final_gap"]),
        ("regret vs budget", "policy regret", curves["regret"]),
    ]
    n = r.regret[r.labels[0], r.horizons[0]].size
    path = plot_budget_overview(
        panels,
        bars,
        labels_of(r),
        styles,
        xlabel,
        f"{title}: {n} units per budget",
        folder / f"select-{name}.png",
        dpi,
    )
    return Figure(
        path,
        f"Model selection, {title}: (a) mean final-model gap and (b) mean policy regret vs the "
        f"budget with 95% bands over {n} units (instance, run); (c, d) average rank by the final "
        f"gap (1 = best) with 95% error bars. Dashed: fixed-budget methods and UCB1. {RECON_NOTE}",
    )


def peers_overview(
    folder: Path,
    name: str,
    title: str,
    panels: Sequence[tuple[str, str, Mapping[str, Mapping[int, MeanCI]]]],
    dpi: int,
) -> Figure:
    """Against Optuna's pruners: per pruner, its mean final-model gap and the library's at the
    budget it consumed, against the budget per candidate (log axis)."""
    path = plot_budget_overview(
        panels,
        [],
        {},
        {},
        "steps per candidate (at most; log scale)",
        f"{title}: Optuna's pruners and the library at equal budget",
        folder / f"peers-{name}.png",
        dpi,
    )
    return Figure(
        path,
        f"{title}: mean final-model gap of each Optuna pruner (by Optuna's own code) and of the "
        "library's default and successive halving run with exactly the steps that pruner "
        "consumed, on the same rewards, with 95% bands; x: the most steps a candidate may get.",
    )


def deadlines_overview(
    folder: Path,
    name: str,
    title: str,
    panels: Sequence[tuple[str, str, Mapping[str, Mapping[int, MeanCI]]]],
    labels: Mapping[str, str],
    styles: Mapping[str, str],
    dpi: int,
) -> Figure:
    """Budgets in time: per W, every method's mean final-model gap against the steps per
    candidate the deadline allows (log axis; the full table drawn at 1024)."""
    path = plot_budget_overview(
        panels,
        [],
        labels,
        styles,
        "steps per candidate by the deadline (log scale; full table at 1024)",
        f"{title}: a deadline, W workers, real costs",
        folder / f"deadlines-{name}.png",
        dpi,
    )
    return Figure(
        path,
        f"{title}: mean final-model gap at the deadline of the cost-aware default, the same "
        "policy counting pulls, Successive Halving, Hyperband and ASHA (resource = cost), with "
        "95% bands; one panel per number of workers W; x: the steps per candidate the deadline "
        "allows at the candidates' real costs (the full table drawn at 1024).",
    )


def heldout_map(
    folder: Path,
    differences: np.ndarray,
    marks: Sequence[Sequence[str]],
    rows: Sequence[str],
    columns: Sequence[str],
    name: str,
    dpi: int,
) -> Figure:
    """The default policy's mean final-model gap minus the best other policy's, per (setting,
    budget) cell (``figures/<name>.png``)."""
    path = plot_difference_map(
        differences,
        marks,
        rows,
        columns,
        f"{HELDOUT_NAME}'s final-model gap - the best other policy's, paired (below 0: lower)",
        folder / f"{name}.png",
        dpi,
    )
    return Figure(
        path,
        f"Held-out evaluation: {HELDOUT_NAME}'s mean final-model gap minus the lowest mean gap "
        f"of the other policies in each cell, paired per unit (green: {HELDOUT_NAME} lower; "
        "gaps judged on test curves can be below 0), with criterion (a) its gap no worse than "
        "the best other's (paired 95% CI) and (b) the lowest mean regret (synthetic cells; - "
        "elsewhere).",
    )


def heldout_bars(
    folder: Path,
    rows: Sequence[Sequence[tuple[str, str, Mapping[str, MeanCI]]]],
    labels: Mapping[str, str],
    name: str,
    dpi: int,
) -> Figure:
    """Every policy's mean regret (top) and final gap (bottom) at each setting's full budget
    (``figures/<name>.png``)."""
    path = plot_bar_grid(
        rows,
        labels,
        "Held-out settings at the full budget: every policy",
        folder / f"{name}.png",
        dpi,
    )
    return Figure(
        path,
        "Held-out evaluation at each setting's full budget: mean policy regret (top) and mean "
        f"final-model gap (bottom) of every policy, 95% error bars. {RECON_NOTE}",
    )
