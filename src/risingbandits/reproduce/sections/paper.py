"""Sections of the report that follow the paper: claims, method, Figure 1, the LTF and
Concave settings (Figures 4-5, Appendices A and F), IMDB (Figures 6-7)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from risingbandits.experiments.store import Store
from risingbandits.instances import RisingInstance, intro
from risingbandits.instances.families import PAPER_HORIZON, family_instance
from risingbandits.plots.setting import arm_name
from risingbandits.policies import make_policy
from risingbandits.reproduce import figures
from risingbandits.reproduce.claims import CURE, NOT_RUN, VERDICTS, ClaimResult
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.document import Block, Bullets, Code, Heading, Para, Table
from risingbandits.reproduce.sections.common import (
    Context,
    grid_text,
    per_horizon_table,
    win_table,
)
from risingbandits.reproduce.settings import GENERATOR_SEED, sweeps
from risingbandits.reproduce.theory_checks import BoundRow, bound_rows

N_EXAMPLES = 3
FORCED = {
    "concave-v1": "concave-v1 does not force either; another rising arm is often best",
    "concave-v2": "concave-v2 forces the late bloomer at T = 50,000, not the early peaker",
}
FAMILIES = {
    "ltf": ("ltf-v1", "LTF"),
    "concave": ("concave-v1", "Concave"),
    "concave-v2": ("concave-v2", "Concave-v2"),
}


def claims_section(
    claims: Sequence[ClaimResult], concave_v2: Sequence[ClaimResult] = ()
) -> list[Block]:
    """The claims table: claim, our numbers, the rule, the verdict; then the Concave claims
    judged again on concave-v2 (when it was run)."""
    counts = Counter(c.verdict for c in claims)
    tally = ", ".join(f"{counts[v]} {v}" for v in (*VERDICTS, NOT_RUN) if counts[v])
    blocks: list[Block] = [
        Heading(2, "Claims vs our results"),
        Para(
            f"Each claim of the paper with our numbers and a verdict decided by the rule beside it "
            f"(fixed in `risingbandits.reproduce.claims` before the results were seen; nothing "
            f"was tuned to agree). Intervals are 95% Student-t intervals; **{tally}**. The "
            "Concave claims are judged on concave-v1 (the paper's generator read literally); "
            'how each verdict changes with our other choices is in the section "How much each '
            'verdict depends on our choices".'
        ),
        Table(
            ("#", "claim (paper)", "our numbers", "rule", "verdict"),
            tuple((str(c.number), c.claim, c.numbers, c.rule, f"**{c.verdict}**") for c in claims),
        ),
    ]
    if concave_v2:
        blocks.append(
            Table(
                ("#", "our numbers on concave-v2", "verdict"),
                tuple((str(c.number), c.numbers, f"**{c.verdict}**") for c in concave_v2),
                "Claims 6-8 on concave-v2, whose late bloomer is the best fixed arm at T = 50,000 "
                'in every instance (the paper\'s "optimal arm"), same rules',
            )
        )
    return blocks


def method_section(ctx: Context, partial: Sequence[str]) -> list[Block]:
    """Sizes, choices, the stores read (with spec hashes) and how to make the report again."""
    defs = sweeps(ctx.size)
    rows = []
    for name, path in ctx.stores.items():
        spec = Store(path).spec()
        rows.append(
            (
                f"`{path.name}`",
                defs[name].title,
                str(len(spec.instances)),
                str(spec.seeds),
                ", ".join(grid_text(h, spec.grid_key) for h in spec.horizons),
                str(len(spec.policies)),
                f"{Store(path).plan().n_cells:,}",
                Store(path).manifest().spec_hash[:12],
            )
        )
    blocks: list[Block] = [
        Heading(2, "How this report was made"),
        Bullets(
            (
                f"Size **{ctx.size.name}**: {ctx.size.instances} instances per synthetic setting "
                f"(generator seed {GENERATOR_SEED}, one noise seed each), {ctx.size.intro_seeds} "
                f"runs per horizon on the intro instance, {ctx.size.imdb_runs} IMDB runs, "
                f"T in {{{', '.join(f'{h:,}' for h in ctx.size.horizons)}}}; ranks and win rates "
                "at T = 10,000, 30,000, 50,000 (DECISIONS.md rows 14-17).",
                "Policies: the paper's ten with the presets of their setting (`ltf` for the intro "
                "instance); synthetic rewards Gaussian with sigma = 0.1 (the paper states no "
                "noise), IMDB rewards Bernoulli(curve value). TI-UCB and R-ed-AE are "
                "reconstructions, marked `*` everywhere.",
                "Regret is the expected policy regret of the pulls made against the best fixed arm "
                "for that T. Intervals: 95% Student-t across units (instance, seed); paired "
                "intervals use per-unit differences (every policy meets the same rewards).",
                "Every sweep is a resumable engine store in the output directory (listed below "
                "with its spec hash); running the same command again computes nothing new and "
                "rewrites the figures and this report (`--report-only` skips the sweeps).",
            )
        ),
        Table(
            ("store", "what", "instances", "seeds", "T", "policies", "cells", "spec"),
            tuple(rows),
        ),
        Para("To make it again (full size; `--quick` for the small one; `--workers N`):"),
        Code(
            f"risingbandits reproduce all{' --quick' if ctx.size.name == 'quick' else ''} --out DIR"
        ),
    ]
    if partial:
        blocks.append(Para(f"Not included (incomplete stores, resume them): {', '.join(partial)}."))
    return blocks


def intro_section(ctx: Context, r: Results) -> list[Block]:
    """Figure 1 and its regret table."""
    inst = intro(PAPER_HORIZON)
    switches = ", ".join(f"{s.horizon:,}" for s in inst.oracle.switching_horizons())
    return [
        Heading(2, "Figure 1: the intro instance"),
        Para(
            f"Arm A = 0.4, arm B = min(1, n/20,000); the exact oracle's best fixed arm switches at "
            f"T = {switches}. Mean regret [95% CI] over the runs at each T:"
        ),
        figures.figure1(ctx.figures, r, inst, ctx.dpi),
        per_horizon_table(r, r.horizons),
    ]


def family_pass(
    family: str, count: int, regret: dict[int, dict[str, float]]
) -> Iterator[tuple[RisingInstance, list[BoundRow]]]:
    """Each instance of the family (built one at a time: 100 tables of 50,000 pulls would not fit
    comfortably in memory at once) with its bound rows."""
    for j in range(count):
        inst = family_instance(family, j, GENERATOR_SEED, PAPER_HORIZON)
        yield inst, bound_rows([inst], regret, **bound_params(family))


def bound_params(family: str) -> dict[str, float]:
    """CURE-UCB's eps and sigma in the preset of the family's setting."""
    preset = "concave" if family.startswith("concave") else "ltf"
    params = make_policy(CURE, preset).params
    return {"eps": float(params["eps"]), "sigma": float(params["sigma"])}


def _example_table(instances: Sequence[RisingInstance], setting: str) -> Table:
    rows = []
    for inst in instances:
        if setting == "ltf":
            arms = "; ".join(
                f"b={b:.3f}, t_sat={t:,.0f}"
                for b, t in zip(inst.meta["b"], inst.meta["t_sat"], strict=True)
            )
        else:
            arms = "; ".join(
                f"{name}: s={a['s']:.2f}, L={a['L']:.2f}, {a['g']}, "
                f"g(10k)={a['fraction_at_10k']:.2f}"
                for name, a in zip(inst.arm_names, inst.meta["arms"], strict=True)
            )
        best = [arm_name(inst, inst.oracle.best_arm(h)) for h in (10_000, PAPER_HORIZON)]
        rows.append((inst.name, str(inst.n_arms), arms, *best))
    return Table(("instance", "K", "arms", "best at 10k", "best at 50k"), tuple(rows))


def family_section(
    ctx: Context, setting: str, r: Results, number: int
) -> tuple[list[Block], list[BoundRow]]:
    """Figure 4 or 5 with regret and rank tables, Appendix F, Appendix A; and the Thm. 5.4
    bound rows of every instance (made in the same pass over the instances)."""
    family, title = FAMILIES[setting]
    regret = {h: r.per_instance(CURE, h) for h in r.horizons}
    count = len(Store(ctx.stores[setting]).spec().instances)
    examples: list[RisingInstance] = []
    rows: list[BoundRow] = []
    roles: Counter[str] = Counter()
    for inst, brows in family_pass(family, count, regret):
        rows += brows
        if len(examples) < N_EXAMPLES:
            examples.append(inst)
        if family.startswith("concave"):
            roles["late bloomer best at 50k"] += (
                inst.arm_names[inst.oracle.best_arm(PAPER_HORIZON)] == "late bloomer"
            )
            roles["early peaker best at 10k"] += (
                inst.arm_names[inst.oracle.best_arm(10_000)] == "early peaker"
            )
    blocks: list[Block] = [
        Heading(2, f"Figure {number}: {title}"),
        figures.overview(ctx.figures, r, title, number, ctx.dpi),
        Para(f"Mean regret [95% CI] over {count} instances:"),
        per_horizon_table(r, r.horizons),
        Para("Average rank (1 = best) [95% CI]:"),
        per_horizon_table(r, r.rank_horizons, "rank"),
        Heading(3, f"Appendix F ({title}): regret and pairwise win rates"),
        figures.details(ctx.figures, r, title, ctx.dpi),
        *(win_table(r, h) for h in r.rank_horizons),
        Heading(3, f"Appendix A ({title}): example instances"),
        figures.examples(ctx.figures, examples, title, (10_000, PAPER_HORIZON), ctx.dpi),
        _example_table(examples, setting),
    ]
    if roles:
        blocks.append(
            Para(
                f"Over the {count} instances the late bloomer is the best fixed arm at T = 50,000 "
                f"in {roles['late bloomer best at 50k']} and the early peaker at T = 10,000 in "
                f"{roles['early peaker best at 10k']} ({FORCED[family]})."
            )
        )
    return blocks, rows


def imdb_section(ctx: Context, r: Results) -> list[Block]:
    """Figures 6 (curves, with a table of their values) and 7 (regret) of the IMDB setting."""
    inst = family_instance("imdb-v1", 0, GENERATOR_SEED, PAPER_HORIZON)
    curve_rows = tuple(
        (
            name,
            *(f"{inst.means[i, n - 1]:.3f}" for n in (1, 1_000, 10_000, PAPER_HORIZON)),
            f"{inst.oracle.cumulative[i, -1] / PAPER_HORIZON:.4f}",
        )
        for i, name in enumerate(inst.arm_names)
    )
    late = [s for s in inst.oracle.switching_horizons() if s.horizon >= 100]
    best = inst.arm_names[inst.oracle.best_arm(PAPER_HORIZON)]
    return [
        Heading(2, "Figures 6-7: IMDB online model selection"),
        figures.imdb_curves(ctx.figures, inst, ctx.dpi),
        Table(
            ("learner", "mu(1)", "mu(1,000)", "mu(10,000)", "mu(50,000)", "V(50,000)/50,000"),
            curve_rows,
        ),
        Para(
            f"The best fixed learner is {best} at T = 50,000; it changes near T = "
            f"{late[0].horizon:,} (from {inst.arm_names[late[0].before]})."
            if late
            else f"The best fixed learner is {best} at T = 50,000."
        ),
        figures.imdb_regret(ctx.figures, r, ctx.dpi),
        per_horizon_table(r, r.horizons),
    ]
