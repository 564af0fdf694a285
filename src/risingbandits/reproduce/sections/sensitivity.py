"""The sensitivity panel of the report: LTF under other noise models, CURE-UCB's sigma x0.1
and x10 on LTF and Concave, CURE-UCB and R-ed-UCB with sigma = 0.5 on IMDB."""

from __future__ import annotations

from risingbandits.experiments.store import Store
from risingbandits.reproduce import figures
from risingbandits.reproduce.claims import CURE, ci_text
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.document import Block, Heading, Table
from risingbandits.reproduce.sections.common import Context, num, per_horizon_table
from risingbandits.reproduce.sections.paper import FAMILIES
from risingbandits.reproduce.settings import (
    MAIN_NOISE,
    NOISE_LEVELS,
    PAPER_POLICIES,
    default_sigma,
    noise_store,
)


def noise_section(ctx: Context) -> list[Block]:
    """All ten policies on LTF under each noise model (the main sweep is gaussian:0.1)."""
    levels = [lv for lv in NOISE_LEVELS if noise_store(lv) in ctx.stores]
    if levels == [MAIN_NOISE] or not levels:
        return []
    by_level = {lv: ctx.results(noise_store(lv)) for lv in levels}
    hs = ctx.size.sensitivity_horizons
    rows = []
    for lv in levels:
        r = by_level[lv]
        cells = [ci_text(r.regret_ci(CURE, h)) for h in hs]
        cells += [ci_text(r.rank_ci(CURE, h), 2) for h in hs]
        best = [r.order(h)[0] for h in hs]
        cells += [
            f"{r.name(b)} ({num(r.regret_ci(b, h).mean)})" for b, h in zip(best, hs, strict=True)
        ]
        rows.append((f"{lv} (main)" if lv == MAIN_NOISE else lv, *cells))
    header = (
        "noise",
        *(f"CURE-UCB regret T={h // 1000}k" for h in hs),
        *(f"CURE-UCB rank T={h // 1000}k" for h in hs),
        *(f"lowest mean T={h // 1000}k" for h in hs),
    )
    return [
        Heading(3, "Noise model (LTF)"),
        figures.noise_panel(ctx.figures, levels, by_level, hs, ctx.dpi),
        Table(header, tuple(rows)),
        *(level_table(by_level, h) for h in hs),
    ]


def level_table(by_level: dict[str, Results], horizon: int) -> Table:
    """Every policy's mean regret and average rank under each noise model at ``horizon``."""
    levels = list(by_level)
    first = by_level[levels[0]]
    rows = tuple(
        (
            first.name(p),
            *(num(by_level[lv].regret_ci(p, horizon).mean) for lv in levels),
            *(num(by_level[lv].rank_ci(p, horizon).mean, 2) for lv in levels),
        )
        for p in first.labels
    )
    header = ("policy", *(f"regret {lv}" for lv in levels), *(f"rank {lv}" for lv in levels))
    return Table(header, rows, f"T = {horizon:,}: mean regret and average rank by noise model")


Panel = tuple[str, Results, list[str]]


def cure_sigma_blocks(ctx: Context, setting: str) -> tuple[list[Block], list[Panel]]:
    """CURE-UCB at sigma x0.1 and x10 beside the default on ``setting`` (``ltf``/``concave``)."""
    extra = f"{setting}-cure-sigma"
    if setting not in ctx.stores or extra not in ctx.stores:
        return [], []
    variants = [p.label for p in Store(ctx.stores[extra]).spec().policies]
    both = ctx.results(setting, extra)
    baselines = [p for p in both.labels if p in PAPER_POLICIES and p != CURE]
    sigma = default_sigma(CURE, setting)
    rank_hs = [h for h in (10_000, 50_000) if h in both.rank_horizons]
    last = both.horizons[-1]
    rows = []
    for label in (CURE, *variants):
        ranked = ctx.results(setting, extra, labels=[label, *baselines])
        rows.append(
            (
                label if label != CURE else f"{CURE} (default, sigma = {sigma:g})",
                *(ci_text(both.regret_ci(label, h)) for h in (10_000, last)),
                *(ci_text(ranked.rank_ci(label, h), 2) for h in rank_hs),
                ci_text(both.gap(label, CURE, last)) if label != CURE else "-",
            )
        )
    title = FAMILIES[setting][1]
    header = (
        "policy",
        "regret T=10k",
        f"regret T={last // 1000}k",
        *(f"rank among the ten T={h // 1000}k" for h in rank_hs),
        f"paired regret gain vs default at T={last // 1000}k",
    )
    table = Table(
        header,
        tuple(rows),
        f"{title}: CURE-UCB sigma variants (rank: the variant in CURE-UCB's place among the "
        "nine baselines; gain > 0: the variant has lower regret)",
    )
    curves = per_horizon_table(both, both.horizons, labels=[CURE, *variants])
    return [table, curves], [(f"{title}: CURE-UCB sigma variants", both, [CURE, *variants])]


def imdb_sigma_blocks(ctx: Context) -> tuple[list[Block], list[Panel]]:
    """CURE-UCB and R-ed-UCB with sigma = 0.5 beside their default 0.1 on IMDB."""
    if "imdb" not in ctx.stores or "imdb-sigma" not in ctx.stores:
        return [], []
    variants = [p.label for p in Store(ctx.stores["imdb-sigma"]).spec().policies]
    r = ctx.results("imdb", "imdb-sigma", labels=[CURE, "red-ucb", *variants])
    last = r.horizons[-1]
    rows = tuple(
        (
            r.name(p),
            *(ci_text(r.regret_ci(p, h)) for h in (10_000, last)),
            ci_text(r.gap(p, p.split("[")[0], last)) if "[" in p else "-",
        )
        for p in r.labels
    )
    header = ("policy", "regret T=10k", f"regret T={last // 1000}k", "paired gain vs sigma = 0.1")
    blocks: list[Block] = [
        Heading(3, "IMDB with sigma = 0.5 (the sub-Gaussian proxy of Bernoulli rewards)"),
        Table(header, rows),
        per_horizon_table(r, r.horizons),
    ]
    return blocks, [("IMDB: sigma 0.1 (solid) vs 0.5", r, list(r.labels))]


def sigma_section(ctx: Context) -> list[Block]:
    """The sigma variants' tables and one figure of their regret curves."""
    blocks: list[Block] = []
    panels: list[Panel] = []
    for part in (
        cure_sigma_blocks(ctx, "ltf"),
        cure_sigma_blocks(ctx, "concave"),
        imdb_sigma_blocks(ctx),
    ):
        blocks += part[0]
        panels += part[1]
    if not panels:
        return []
    figure = figures.variants(
        ctx.figures,
        panels,
        "sens-sigma",
        "Sensitivity to the sigma parameter: regret vs T of the default (solid) and the "
        "variants (dashed, dotted), 95% bands.",
        ctx.dpi,
    )
    return [Heading(3, "CURE-UCB's sigma (x0.1 and x10 the default; IMDB: 0.5)"), figure, *blocks]
