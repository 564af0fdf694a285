"""The report's section "Online model selection: which policy for which budget" (issues 11 and
20): every policy on IMDB (7 and 29 learners) and on the lcdb-v1 test split, from 5% to 100% of
each instance's full budget and from 4 to 128 pulls per candidate, with a recommendation
computed from the results by the rules of :mod:`risingbandits.reproduce.leads` (never written
by hand)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from risingbandits.analysis.stats import ci_json
from risingbandits.experiments.store import Store
from risingbandits.reproduce import figures
from risingbandits.reproduce.claims import ci_text
from risingbandits.reproduce.document import Block, Bullets, Heading, Para, Table
from risingbandits.reproduce.leads import (
    METRIC_NAMES,
    BudgetRange,
    Lead,
    budget_ranges,
    lead,
    overall_choice,
)
from risingbandits.reproduce.sections.budgets import STYLES, Setting, load_setting
from risingbandits.reproduce.sections.common import DIGITS, Context, per_horizon_table
from risingbandits.reproduce.settings import LCDB_PRESET, SELECT_SWEEPS

TITLES = {
    "select-imdb": "IMDB, 7 learners",
    "select-imdb29": "IMDB, 29 learners",
    "select-lcdb": "LCDB (lcdb-v1 test split)",
    "select-live": "live training (live-v1 test split)",
    "select-imdb-arm": "IMDB, 7 learners, per candidate",
    "select-lcdb-arm": "LCDB (lcdb-v1 test split), per candidate",
    "select-live-arm": "live training (live-v1 test split), per candidate",
}
LIVE_MISSING = (
    "The live-training settings (live-v1: scikit-learn `partial_fit` curves, validation scores "
    "observed, the gap judged on test scores) are missing: live-v1 is not recorded here (run "
    "`risingbandits data live`, about 15 minutes on 2 cores, then this target again)."
)
RULE = (
    "A practitioner deploys the model the policy recommends at the end, so the recommendation "
    "goes by the **final-model gap** (how far that model, trained with the pulls it got, is from "
    "the best model trained with the whole budget); the policy regret (what the budget earned on "
    "the way) is given beside it. At each budget the policy with the lowest mean final gap "
    "leads; its lead over the runner-up is the paired 95% interval of (runner-up - leader) over "
    "the units (same instance and run = same rewards), **significant** when it lies above 0. "
    "Consecutive budgets with the same leader form a range."
)


def lead_cell(x: Lead, digits: int, name: Callable[[str], str]) -> tuple[str, str, str, str]:
    """Leader, runner-up (display ``name``), paired lead and significance as table cells."""
    return (
        f"{name(x.best)} {ci_text(x.best_ci, digits)}",
        f"{name(x.runner_up)} {ci_text(x.runner_ci, digits)}",
        ci_text(x.margin, digits),
        "yes" if x.significant else "no",
    )


def lead_json(x: Lead, setting: Setting) -> dict[str, Any]:
    return {
        "setting": setting.store,
        budget_field(setting): setting.key(x.horizon),
        "horizon": x.horizon,
        "metric": x.metric,
        "best": x.best,
        "best_ci": ci_json(x.best_ci),
        "runner_up": x.runner_up,
        "runner_up_ci": ci_json(x.runner_ci),
        "margin": ci_json(x.margin),
        "significant": x.significant,
    }


def budget_field(setting: Setting) -> str:
    """The ``report.json`` name of a budget of ``setting``."""
    return "pulls_per_candidate" if setting.per_arm else "budget_percent"


def leaders_table(settings: Sequence[Setting]) -> Table:
    """Per setting and budget: the leader by final gap and by regret, runner-up, paired lead."""
    rows = []
    for s in settings:
        for h in s.results.horizons:
            gap, regret = lead(s.results, h, "final_gap"), lead(s.results, h, "regret")
            rows.append(
                (
                    s.title,
                    s.budget(h),
                    *lead_cell(gap, DIGITS["final_gap"], s.results.name),
                    *lead_cell(regret, DIGITS["regret"], s.results.name),
                )
            )
    header = ["setting", "budget"]
    for metric in ("final gap", "regret"):
        header += [f"lowest {metric} [95% CI]", "runner-up", "lead, paired [95% CI]", "significant"]
    return Table(
        tuple(header), tuple(rows), "Leaders at each budget (lower is better for both metrics)"
    )


def range_text(s: Setting, rng: BudgetRange) -> str:
    """One sentence of the recommendation: the range, its policy and how clear its lead is (the
    paired intervals), and the lowest regret at the same budgets."""
    name, policy = s.results.name, s.results.name(rng.policy)
    first, last = rng.budgets[0], rng.budgets[-1]
    where = s.budget(first) if first == last else f"{s.budget(first)} to {s.budget(last)}"
    n, k = len(rng.budgets), rng.significant
    margins = "; ".join(
        f"{s.budget(x.horizon)}: {ci_text(x.margin, DIGITS['final_gap'])} over {name(x.runner_up)}"
        for x in rng.leads
    )
    at = "" if n == 1 else f" at each of these {n} budgets"
    if k == 0:
        verdict = (
            f"**{policy}** has the lowest mean final-model gap{at}, but its lead over the "
            f"runner-up is not significant{'' if n == 1 else ' at any of them'}: no clear choice"
        )
    else:
        clear = "significantly" if k == n else f"significantly at {k} of {n} budgets"
        verdict = f"use **{policy}**: lowest mean final-model gap{at}, {clear} below the runner-up"
    regret = Counter(x.best for x in rng.regret)
    regret_text = ", ".join(f"{name(p)} ({c} of {n})" for p, c in regret.most_common())
    return (
        f"{s.title}, budget {where}: {verdict} (lead, paired 95% CI: {margins}); lowest mean "
        f"regret: {regret_text}."
    )


def overall(settings: Sequence[Setting]) -> list[tuple[list[int], str, list[tuple[int, int]]]]:
    """Budgets (percents, or pulls per candidate: ``settings`` share one kind) grouped by the
    policy that leads by final gap in the most settings: ``(budgets, policy, [(settings it leads
    in, settings with that budget) per budget])``."""
    percents = sorted({s.key(h) for s in settings for h in s.results.horizons})
    groups: list[tuple[list[int], str, list[tuple[int, int]]]] = []
    for pct in percents:
        leads = {
            s.store: lead(s.results, h, "final_gap")
            for s in settings
            for h in s.results.horizons
            if s.key(h) == pct
        }
        policy, count = overall_choice(leads)
        if groups and groups[-1][1] == policy:
            groups[-1][0].append(pct)
            groups[-1][2].append((count, len(leads)))
        else:
            groups.append(([pct], policy, [(count, len(leads))]))
    return groups


def overall_text(
    group: tuple[list[int], str, list[tuple[int, int]]], name: Callable[[str], str], per_arm: bool
) -> str:
    budgets, label, counts = group
    policy = name(label)
    unit = "" if per_arm else "%"
    where = (
        f"{budgets[0]}{unit}" if len(budgets) == 1 else f"{budgets[0]}{unit} to {budgets[-1]}{unit}"
    )
    whole = "pulls per candidate" if per_arm else "of the full budget"
    detail = ", ".join(
        f"{k} of {n} settings at {p}{unit}" for p, (k, n) in zip(budgets, counts, strict=True)
    )
    return f"**{where}** {whole}: **{policy}** (lowest mean final-model gap in {detail})"


def setting_blocks(ctx: Context, s: Setting) -> list[Block]:
    """The figure and the tables of one setting."""
    r = s.results
    ranked = [(s.budget(h), h) for h in (r.horizons[0], r.horizons[-1])]
    curves = {m: s.by_key(m) for m in METRIC_NAMES}
    name = s.store.removeprefix("select-")
    return [
        Heading(3, s.title),
        figures.selection_overview(
            ctx.figures, name, s.title, r, curves, ranked, STYLES, s.axis, ctx.dpi
        ),
        Para("Mean final-model gap [95% CI]:"),
        per_horizon_table(r, r.horizons, "final_gap", heading=s.budget),
        Para("Mean policy regret [95% CI]:"),
        per_horizon_table(r, r.horizons, "regret", heading=s.budget),
        Para("Average rank by the final-model gap (1 = best) [95% CI]:"),
        per_horizon_table(r, r.horizons, "final_gap_rank", heading=s.budget),
    ]


def sizes_text(ctx: Context, settings: Sequence[Setting]) -> str:
    parts = []
    for s in settings:
        spec = Store(ctx.stores[s.store]).spec()
        parts.append(
            f"{s.title}: {len(spec.instances)} instance(s) x {spec.seeds} run(s), "
            f"{len(spec.policies)} policies"
        )
    return "; ".join(parts)


def selection_section(ctx: Context) -> tuple[list[Block], dict[str, Any]]:
    """The section and its ``report.json`` entry (empty when no model-selection store is done)."""
    settings = [load_setting(ctx, n, TITLES[n]) for n in SELECT_SWEEPS if n in ctx.stores]
    if not settings:
        return [], {}
    ranges = [(s, rng) for s in settings for rng in budget_ranges(s.store, s.results)]
    kinds = [[s for s in settings if s.per_arm == per_arm] for per_arm in (False, True)]
    groups = [(kind[0].per_arm, overall(kind)) for kind in kinds if kind]
    blocks: list[Block] = [
        Heading(2, "Online model selection: which policy for which budget"),
        Para(
            "Every policy (the paper's ten with the presets of their setting: `imdb` on IMDB, "
            f"`{LCDB_PRESET}` on LCDB, whose accuracies carry a small Gaussian noise like the "
            "concave family's rewards; then successive halving, successive rejects, R-SR, "
            "R-UCBE, UCB1, ACE-UCB and HACE-UCB with their defaults) on "
            "IMDB with the paper's 7 learners and with all 29 learning curves (Bernoulli "
            "rewards), and on the test split of lcdb-v1 (never used to tune anything), at 5% to "
            "100% of each instance's full budget (IMDB: T = 2,500 to 50,000; LCDB: each data "
            "set's own full horizon), and at budgets practitioners give: 4 to 128 pulls per "
            "candidate (T = K x m for K candidates); then on live training curves (the test "
            "split of live-v1: scikit-learn learners trained with `partial_fit`, their noisy, "
            "non-monotone validation accuracy observed as it was recorded, no noise added). "
            "On LCDB and live-v1 the final-model gap is judged on test accuracy, which no "
            f"policy sees. {sizes_text(ctx, settings)}."
        ),
        *([] if "select-live" in ctx.stores else [Para(LIVE_MISSING)]),
        Heading(3, "Which policy to use"),
        Para(RULE),
        Para("Across the settings, by budget:"),
        Bullets(
            tuple(
                overall_text(g, settings[0].results.name, per_arm)
                for per_arm, found in groups
                for g in found
            )
        ),
        Para("By setting:"),
        Bullets(tuple(range_text(s, rng) for s, rng in ranges)),
        leaders_table(settings),
    ]
    for s in settings:
        blocks += setting_blocks(ctx, s)
    payload = {
        "leads": [
            lead_json(lead(s.results, h, m), s)
            for s in settings
            for h in s.results.horizons
            for m in ("final_gap", "regret")
        ],
        "ranges": [
            {
                "setting": s.store,
                "policy": rng.policy,
                "horizons": list(rng.budgets),
                "significant": rng.significant,
            }
            for s, rng in ranges
        ],
        "overall": [
            {
                "pulls_per_candidate" if per_arm else "budget_percents": p,
                "policy": policy,
                "leads_in": [k for k, _ in c],
            }
            for per_arm, found in groups
            for p, policy, c in found
        ],
    }
    return blocks, payload
