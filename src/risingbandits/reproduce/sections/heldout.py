"""The report's sections "Held-out evaluation of the default policy", "Second held-out set" and
"Third held-out set" (issues 13 and 21): every policy on instances never used while the default
(HACE-UCB) was developed, and issue 21's two criteria checked cell by cell by the rules of
:mod:`risingbandits.reproduce.leads`, then with every other policy judged in the default's place
(whether any comes nearer the goal). The second set was made once the first had been read for
four rules (a fifth reading would be tuning on it): its instances are new to every rule frozen
since; the third, once the second had been read twice for decisions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from risingbandits.analysis.stats import ci_json
from risingbandits.experiments.store import Store
from risingbandits.instances.families import FAMILIES
from risingbandits.reproduce import figures
from risingbandits.reproduce.claims import ci_text
from risingbandits.reproduce.document import Block, Heading, Para, Table
from risingbandits.reproduce.figures import labels_of
from risingbandits.reproduce.leads import (
    CRITERIA,
    HeldoutCell,
    criteria_counts,
    heldout_cells,
    yes_no,
)
from risingbandits.reproduce.sections.budgets import Setting, load_setting
from risingbandits.reproduce.sections.common import DIGITS, Context, per_horizon_table
from risingbandits.reproduce.sections.modelselection import budget_field
from risingbandits.reproduce.settings import (
    HELDOUT2_SWEEPS,
    HELDOUT2_SYNTHETIC,
    HELDOUT3_SWEEPS,
    HELDOUT3_SYNTHETIC,
    HELDOUT_NAME,
    HELDOUT_POLICY,
    HELDOUT_SWEEPS,
    HELDOUT_SYNTHETIC,
    LCDB_PRESET,
)

_SYNTHETIC_TITLES = {
    "heldout-ltf": "LTF",
    "heldout-concave": "Concave",
    "heldout-concave-v2": "Concave-v2",
    "heldout-ltf-arm": "LTF, per candidate",
    "heldout-concave-arm": "Concave, per candidate",
    "heldout-concave-v2-arm": "Concave-v2, per candidate",
}
TITLES = {
    **_SYNTHETIC_TITLES,
    "select-imdb": "IMDB, 7 learners",
    "select-lcdb": "LCDB test",
    "select-live": "live-v1 test",
    "select-imdb-arm": "IMDB, 7 learners, per candidate",
    "select-lcdb-arm": "LCDB test, per candidate",
    "select-live-arm": "live-v1 test, per candidate",
    **{
        f"{prefix}-{k.removeprefix('heldout-')}": v
        for prefix in ("heldout2", "heldout3")
        for k, v in _SYNTHETIC_TITLES.items()
    },
    **{
        f"{prefix}-{key}{arm}": f"{title}{per}"
        for prefix in ("heldout2", "heldout3")
        for key, title in (
            ("imdb", "IMDB, 7 learners, new rewards"),
            ("lcdb", "LCDB test, new candidates"),
            ("live", "live-v1 test, new candidates"),
        )
        for arm, per in (("", ""), ("-arm", ", per candidate"))
    },
}
TUNING = "docs/hace-ucb-tuning.md"
SYNTHETIC = frozenset(HELDOUT_SYNTHETIC + HELDOUT2_SYNTHETIC + HELDOUT3_SYNTHETIC)
"""The stores of synthetic families, where criterion (b), the regret, is judged."""


def budgets(s: Setting) -> list[int]:
    """Every budget of ``s`` (its store's horizons)."""
    return list(s.results.horizons)


def source_row(ctx: Context, s: Setting) -> tuple[str, ...]:
    """Where the instances of ``s`` come from, read from its store's spec."""
    spec = Store(ctx.stores[s.store]).spec()
    sources = []
    for src in spec.model.instances:
        assert src.family is not None  # every held-out source is a family
        drawn = FAMILIES[src.family].random or src.generator_seed != 0  # lcdb-v1, live-v1: draws
        seed = f", generator seed {src.generator_seed}" if drawn else ""
        split = f", split {src.params['split']}" if "split" in src.params else ""
        sources.append(f"{src.family}{seed}{split}")
    return (
        s.title,
        "; ".join(sources),
        str(len(spec.instances)),
        f"{spec.seeds}" + (f" (sweep seed {spec.sweep_seed})" if spec.sweep_seed else ""),
        ", ".join(s.budget(h) for h in budgets(s)),
        f"`{ctx.stores[s.store].name}`",
    )


def cell_row(s: Setting, c: HeldoutCell) -> tuple[str, ...]:
    reg, gap = DIGITS["regret"], DIGITS["final_gap"]
    return (
        s.title,
        s.budget(c.horizon),
        ci_text(c.own_gap, gap),
        f"{s.results.name(c.gap_rival.best)} {ci_text(c.gap_rival.best_ci, gap)}",
        ci_text(c.gap_rival.margin, gap),
        f"**{yes_no(c.gap_no_worse)}**" + also_lower(s, c),
        ci_text(c.own_regret, reg),
        f"{s.results.name(c.regret_rival.best)} {ci_text(c.regret_rival.best_ci, reg)}",
        ci_text(c.regret_rival.margin, reg),
        f"**{yes_no(c.lowest_regret)}**",
    )


def also_lower(s: Setting, c: HeldoutCell) -> str:
    """The policies significantly below the default other than the best by its mean (which the
    row shows): (a) fails on any of them."""
    also = [s.results.name(p) for p in c.gap_lower if p != c.gap_rival.best]
    return f" (also lower: {', '.join(also)})" if also else ""


def cell_json(s: Setting, c: HeldoutCell) -> dict[str, Any]:
    return {
        "setting": s.store,
        budget_field(s): s.key(c.horizon),
        "horizon": c.horizon,
        "policy": HELDOUT_POLICY,
        "final_gap": ci_json(c.own_gap),
        "best_other_final_gap": c.gap_rival.best,
        "best_other_final_gap_ci": ci_json(c.gap_rival.best_ci),
        "final_gap_difference": ci_json(c.gap_rival.margin),
        "significantly_lower_final_gap": list(c.gap_lower),
        "a": c.gap_no_worse,
        "regret": ci_json(c.own_regret),
        "best_other_regret": c.regret_rival.best,
        "best_other_regret_ci": ci_json(c.regret_rival.best_ci),
        "regret_difference": ci_json(c.regret_rival.margin),
        "b": c.lowest_regret,
    }


def tally(cells: Sequence[HeldoutCell]) -> str:
    """How many cells meet each criterion (b: of the synthetic ones)."""
    n, synthetic = len(cells), sum(c.synthetic for c in cells)
    a, b = criteria_counts(cells)
    met = "met" if a == n and b == synthetic else "not met"
    return (
        f"(a) holds in {a} of {n} cells, (b) in {b} of {synthetic} synthetic cells: the "
        f"issue's goal (both in every cell) is **{met}** on these held-out instances."
    )


def every_policy(settings: Sequence[Setting]) -> list[tuple[str, int, int]]:
    """``(policy, cells meeting (a), cells meeting (b))`` for every policy of ``settings``
    judged in the default's place by the same rules, most cells first: whether any other policy
    of the library comes nearer the issue's goal."""
    labels = [p for p in settings[0].results.labels if all(p in s.results.labels for s in settings)]
    counts = []
    for p in labels:
        cells = [
            c
            for s in settings
            for c in heldout_cells(s.store, s.results, budgets(s), s.store in SYNTHETIC, p)
        ]
        counts.append((p, *criteria_counts(cells)))
    return sorted(counts, key=lambda row: (-row[1] - row[2], labels.index(row[0])))


def ratio_figure(
    ctx: Context, key: str, found: Sequence[tuple[Setting, list[HeldoutCell]]], per_arm: bool
) -> Block:
    """The heat map of paired final-gap differences: settings as rows, the budgets (percents of
    the full budget, or pulls per candidate) as columns."""
    keys = sorted({s.key(c.horizon) for s, cells in found for c in cells})
    differences = np.full((len(found), len(keys)), np.nan)
    marks = [[""] * len(keys) for _ in found]
    for i, (s, cells) in enumerate(found):
        for c in cells:
            j = keys.index(s.key(c.horizon))
            differences[i, j] = c.gap_rival.margin.mean
            marks[i][j] = f"a: {yes_no(c.gap_no_worse)}, b: {yes_no(c.lowest_regret)}"
    unit = " per candidate" if per_arm else "%"
    columns = [f"{k}{unit}" for k in keys]
    rows = [s.title for s, _ in found]
    name = f"{key}-ratio-per-arm" if per_arm else f"{key}-ratio"
    return figures.heldout_map(ctx.figures, differences, marks, rows, columns, name, ctx.dpi)


def bars_figure(ctx: Context, key: str, settings: Sequence[Setting]) -> Block:
    rows = []
    for metric, xlabel in (("regret", "policy regret"), ("final_gap", "final-model gap")):
        rows.append(
            [
                (
                    f"{s.title}, {s.budget(budgets(s)[-1])}",
                    xlabel,
                    {p: s.results.ci(p, budgets(s)[-1], metric) for p in s.results.labels},
                )
                for s in settings
            ]
        )
    labels = labels_of(settings[0].results)
    return figures.heldout_bars(ctx.figures, rows, labels, f"{key}-bars", ctx.dpi)


@dataclass(frozen=True)
class HeldoutSet:
    """One held-out set: its stores, its ``report.json`` key (also its figures' prefix), its
    heading and what its first paragraph says about where its instances come from."""

    key: str
    stores: tuple[str, ...]
    heading: str
    intro: str


FIRST = HeldoutSet(
    "heldout",
    HELDOUT_SWEEPS,
    f"Held-out evaluation of {HELDOUT_NAME}, the default policy",
    (
        f"{HELDOUT_NAME} (issue 21) is ACE-UCB (issue 13, its parameters frozen then) with "
        "successive halving rounds first when the budget per candidate is small (until the "
        "leader is clear) and ACE-UCB's warm-up scaled to that budget; its four parameters of "
        "its own were chosen on development instances only, each rule frozen before the instances "
        "below were read (three times: for the first rule, after the warm-up rule and after "
        "the hand-over rule; a fourth reading, of an exploration that fades with the budget "
        f"left, was not kept: the tuning log, `{TUNING}`). "
        "Development used generator "
        "seed 0 of the synthetic families, the `dev` halves of lcdb-v1 and live-v1 and "
        "7-learner IMDB instances drawn from the 22 curves outside the paper's 7; held out, "
        "and used here only: **generator seed 1** of ltf-v1, concave-v1 and concave-v2, the "
        "**test** halves of lcdb-v1 and live-v1 and the paper's 7 IMDB learners (the table "
        "lists what each store's spec holds), at shares of the full budget and at 4 to 128 "
        f"pulls per candidate. {HELDOUT_NAME} runs with its defaults (no preset, sigma estimated "
        "online); the paper's ten with the presets of their setting (`ltf`, `concave`, "
        f"`imdb`; `{LCDB_PRESET}` on LCDB and live-v1); successive halving, successive "
        "rejects, R-SR, R-UCBE, UCB1 and ACE-UCB with their defaults. Synthetic rewards are "
        "Gaussian with sigma = 0.1. Optuna's pruners are compared in the section after the "
        "second held-out set, at the budget each of them used."
    ),
)
SECOND = HeldoutSet(
    "heldout2",
    HELDOUT2_SWEEPS,
    f"Second held-out set: {HELDOUT_NAME} on instances made after the first set was read",
    (
        "The first set was read for four rules in turn, and each reading makes it a little "
        "less independent of the choices, so rules frozen after the fourth are judged here, on "
        "instances no earlier rule was read on (the tuning log, "
        f"`{TUNING}`): **generator seed 2** of ltf-v1, concave-v1 and concave-v2; the **test** "
        "tasks of lcdb-v1 and live-v1 with **other candidates** drawn (generator seed 1; the "
        "tasks were never used for development); and, as IMDB has no curves outside "
        "development but the paper's 7, those 7 curves with **new Bernoulli rewards** (sweep "
        "seed 1), the least independent part of the set. Policies, presets, budgets and "
        "criteria are those of the first set; each reading of this set is in the tuning log."
    ),
)


THIRD = HeldoutSet(
    "heldout3",
    HELDOUT3_SWEEPS,
    f"Third held-out set: {HELDOUT_NAME} on instances made after the second set was read",
    (
        "The second set was read twice for decisions (steps 13 and 17 of the tuning log, "
        f"`{TUNING}`), so a third was made: **generator seed 3** of ltf-v1, concave-v1 and "
        "concave-v2; the **test** tasks of lcdb-v1 and live-v1 with candidates drawn with "
        "**generator seed 2**; the paper's 7 IMDB curves with rewards of **sweep seed 2**. "
        "Each reading judged one rule by a decision rule committed before it: the first step "
        "20 (halving rounds after the warm-up in noisy runs at long budgets; not kept), the "
        "second step 21 (the last quarter of a small budget trains the deployed model; kept, "
        "so the default these numbers show was judged on this set, and chosen on development "
        "instances). Policies, presets, budgets and criteria are those of the first set."
    ),
)


def heldout_section(ctx: Context) -> tuple[list[Block], dict[str, Any]]:
    """The first set's section and its ``report.json`` entry (empty when no store of it is
    done)."""
    return section(ctx, FIRST)


def heldout2_section(ctx: Context) -> tuple[list[Block], dict[str, Any]]:
    """The second set's section and its ``report.json`` entry (empty when none is done)."""
    return section(ctx, SECOND)


def heldout3_section(ctx: Context) -> tuple[list[Block], dict[str, Any]]:
    """The third set's section and its ``report.json`` entry (empty when none is done)."""
    return section(ctx, THIRD)


def section(ctx: Context, held: HeldoutSet) -> tuple[list[Block], dict[str, Any]]:
    names = [n for n in held.stores if n in ctx.stores]
    if not any(n in SYNTHETIC for n in names):
        return [], {}
    settings = [load_setting(ctx, n, TITLES[n]) for n in names]
    found = [
        (s, heldout_cells(s.store, s.results, budgets(s), s.store in SYNTHETIC)) for s in settings
    ]
    cells = [c for _, cs in found for c in cs]
    criteria = " ".join(f"({key}) {text}." for key, text, _ in CRITERIA)
    name = HELDOUT_NAME
    blocks: list[Block] = [
        Heading(2, held.heading),
        Para(held.intro),
        Table(
            ("setting", "instances from", "instances", "runs each", "budgets", "store"),
            tuple(source_row(ctx, s) for s in settings),
        ),
        Heading(3, "The issue's criteria, cell by cell"),
        Para(
            f"{criteria} {name} is compared with the best other policy of each cell (lowest "
            "mean of the metric among the other policies); differences are paired per unit "
            f"(same instance and run = same rewards), with 95% intervals. {tally(cells)}"
        ),
        Table(
            (
                "setting",
                "budget",
                f"{name} final gap",
                "best other by final gap",
                f"{name} - other, paired",
                "(a)",
                f"{name} regret",
                "best other by regret",
                f"{name} - other, paired",
                "(b)",
            ),
            tuple(cell_row(s, c) for s, cs in found for c in cs),
        ),
        ratio_figure(ctx, held.key, [(s, cs) for s, cs in found if not s.per_arm], False),
    ]
    if any(s.per_arm for s in settings):
        blocks.append(ratio_figure(ctx, held.key, [(s, cs) for s, cs in found if s.per_arm], True))
    ranked = every_policy(settings)
    synthetic = sum(c.synthetic for c in cells)
    name_of = settings[0].results.name
    meeting = [name_of(p) for p, a, b in ranked if a == len(cells) and b == synthetic]
    blocks += [
        bars_figure(ctx, held.key, [s for s in settings if not s.per_arm]),
        Heading(3, "Every policy judged in the default's place"),
        Para(
            "The same two criteria with each policy in turn judged against all the others "
            f"(the default among them): cells where (a) holds, of {len(cells)}, and (b), of "
            f"{synthetic} synthetic cells. Policies that meet both in every cell: "
            f"{', '.join(meeting) or 'none'}."
        ),
        Table(
            ("policy", "(a) cells", "(b) cells"),
            tuple((name_of(p), str(a), str(b)) for p, a, b in ranked),
        ),
    ]
    for s in settings:
        hs = budgets(s)
        blocks += [
            Heading(3, f"{s.title}: every policy"),
            Para("Mean policy regret [95% CI]:"),
            per_horizon_table(s.results, hs, "regret", heading=s.budget),
            Para("Mean final-model gap [95% CI]:"),
            per_horizon_table(s.results, hs, "final_gap", heading=s.budget),
        ]
    payload = {
        "cells": [cell_json(s, c) for s, cs in found for c in cs],
        "criteria": {key: text for key, text, _ in CRITERIA},
        "every_policy": {p: {"a": a, "b": b} for p, a, b in ranked},
    }
    return blocks, payload
