"""The report's traces: the paper's Figure 3 on the intro instance, and why CURE-UCB loses on
LTF (bonus-dominated exploration) and on IMDB (lock-in), each shown on one run picked by a rule
written here (never by hand).

Every run is a run of a store: its instance, the store's policy parameters and the store's run
seed (:func:`risingbandits.experiments.seeds.run_seed`), replayed with the index trace on
(:mod:`risingbandits.explain`), so its regret is the store's regret for that unit.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from risingbandits.experiments.seeds import run_seed
from risingbandits.experiments.store import Store
from risingbandits.explain import Explanation, TracedRun, explain, traced_run
from risingbandits.instances import RisingInstance
from risingbandits.instances.families import PAPER_HORIZON
from risingbandits.plots.explain import plot_lock_in, plot_played_terms, plot_stages
from risingbandits.policies import Policy
from risingbandits.reproduce.claims import CURE
from risingbandits.reproduce.document import Block, Figure, Heading, Para, Table
from risingbandits.reproduce.sections.common import Context, num

RED = "red-ucb"
FIGURE3_HORIZON = 10_000
"""The horizon of Figure 3 on the intro instance: the best fixed arm is A (T < 16,000), and the
report's claims compare CURE-UCB and R-ed-UCB there."""
FIGURE3_ROUNDS = (FIGURE3_HORIZON // 10, 9 * FIGURE3_HORIZON // 10)
"""The early and the late stage: rounds T/10 and 9T/10."""
BONUS_SHARE = 0.5
"""LTF rule: the bonus of the arm played exceeds its estimate (the other terms) in at least this
share of the rounds of the first half of the horizon."""


@dataclass(frozen=True)
class StoreRun:
    """Unit ``seed`` (a seed index) on instance ``instance`` of a store, and its run seed."""

    instance: RisingInstance
    instance_id: str
    seed: int
    run_seed: np.random.SeedSequence


def store_policy(ctx: Context, sweep: str, label: str) -> Policy:
    """The policy of a store with its label (the store's parameters)."""
    (ref,) = [p for p in Store(ctx.stores[sweep]).spec().policies if p.label == label]
    return ref.build()


def store_units(ctx: Context, sweep: str, horizon: int) -> Iterator[StoreRun]:
    """The store's units in spec order (instances as the family numbers them, then seeds)."""
    spec = Store(ctx.stores[sweep]).spec()
    for ref in spec.instances:
        inst = ref.build(horizon)
        for s in range(spec.model.seeds):
            yield StoreRun(inst, ref.id, s, run_seed(spec.sweep_seed, ref.id, s))


def unit_regrets(ctx: Context, sweep: str, horizon: int) -> dict[tuple[str, int], dict[str, float]]:
    """Every policy's regret per unit (instance id, seed index) at ``horizon``."""
    r = ctx.results(sweep)
    return {
        unit: {p: float(r.regret[p, horizon][k]) for p in r.labels}
        for k, unit in enumerate(r.units[horizon])
    }


def target_text(ex: Explanation, label: str, t: int) -> str:
    """Where a policy's targets lie at round t, arm by arm, against its horizon limits."""
    (view,) = [v for v in ex.at(t) if v.label == label]
    parts = []
    for a in view.arms:
        if a.target is None:
            continue
        where = "beyond" if a.target[0] > a.horizon_limit else "within"
        parts.append(
            f"{ex.instance.arm_names[a.arm]}: pull {a.target[0]:,.0f}, {where} its limit "
            f"{a.horizon_limit:,}"
        )
    chosen = ex.instance.arm_names[view.chosen]
    return f"{label} targets {'; '.join(parts) or 'no point'} and plays {chosen}"


def stage_rows(ex: Explanation) -> tuple[tuple[str, ...], ...]:
    rows = []
    for t in ex.rounds:
        for run, view in zip(ex.runs, ex.at(t), strict=True):
            for a in view.arms:
                terms = " + ".join(f"{x:.3g}" for x in a.terms)
                target = "-" if a.target is None else f"{a.target[1]:.3g} at {a.target[0]:,.0f}"
                rows.append(
                    (
                        f"{t:,}",
                        run.label,
                        ex.instance.arm_names[a.arm]
                        + (" (played)" if a.arm == view.chosen else ""),
                        f"{a.pulls:,}",
                        f"{a.index:.3g} = {terms}",
                        target,
                        f"{a.horizon_limit:,}",
                    )
                )
    return tuple(rows)


def figure3_section(ctx: Context) -> list[Block]:
    """Figure 3 on the intro instance: CURE-UCB and R-ed-UCB at T/10 and 9T/10 of T = 10,000,
    run seed 0 of the intro store."""
    unit = next(store_units(ctx, "intro", FIGURE3_HORIZON))
    policies = [store_policy(ctx, "intro", label) for label in (CURE, RED)]
    ex = explain(unit.instance, policies, FIGURE3_HORIZON, unit.run_seed, FIGURE3_ROUNDS)
    path = plot_stages(ex, ctx.figures / "fig3-intro-stages.png", ctx.dpi)
    early, late = FIGURE3_ROUNDS
    regrets = ", ".join(f"{run.label} {num(run.regret)}" for run in ex.runs)
    terms = "; ".join(f"{run.label}: {' + '.join(run.trace.term_names)}" for run in ex.runs)
    return [
        Heading(2, "Figure 3: what CURE-UCB and R-ed-UCB aim at (intro instance)"),
        Para(
            f"Run seed 0 of the intro store at T = {FIGURE3_HORIZON:,} (regret of these runs: "
            f"{regrets}), read at the early round {early:,} and the late round {late:,}. Each "
            "policy has its own run (the same rewards pull by pull), so its own pulls N and "
            "horizon limit N + (T - t), the furthest pull an arm can reach. CURE-UCB's target is "
            "pull N + (T - t)/2 with recent average + future gain; R-ed-UCB's is the round t "
            "itself with its projected estimate."
        ),
        Figure(
            path,
            "Figure 3 (ours). Dotted: pulls N; solid: horizon limit (shaded beyond: out of "
            "reach); markers: target points (triangles when off the scale).",
        ),
        Para(
            f"Round {early:,}: {target_text(ex, CURE, early)}; {target_text(ex, RED, early)}. "
            f"Round {late:,}: {target_text(ex, CURE, late)}; {target_text(ex, RED, late)}."
        ),
        Table(
            ("round", "policy", "arm", "N", f"index = terms ({terms})", "target", "limit"),
            stage_rows(ex),
            "The numbers behind Figure 3",
        ),
    ]


# -- why CURE-UCB loses -----------------------------------------------------------------------


def bonus_share(run: TracedRun) -> float:
    """Share of the index rounds of the first half of the horizon in which the bonus (the last
    term) of the arm played exceeds the rest of its index (its estimate)."""
    trace = run.trace
    rows = np.arange(trace.rounds.size)
    terms = trace.terms[0, rows, trace.arms[0]]
    half = (trace.rounds <= trace.rounds[-1] // 2) & np.isfinite(terms).all(axis=1)
    estimate = terms[half, :-1].sum(axis=1)
    return float((terms[half, -1] > estimate).mean()) if half.any() else 0.0


def bonus_driven_share(run: TracedRun) -> float:
    """Share of the index rounds in which the arm played is not the one with the largest
    estimate (the index without its last term, the bonus)."""
    trace = run.trace
    index_rounds = np.isfinite(trace.index[0]).all(axis=1)
    estimate = trace.terms[0, index_rounds, :, :-1].sum(axis=2)
    return float((estimate.argmax(axis=1) != trace.arms[0, index_rounds]).mean())


def bonus_dominated_run(ctx: Context) -> tuple[StoreRun, TracedRun, dict[str, float]] | None:
    """LTF rule: the first unit (spec order) on which CURE-UCB's regret at T = 50,000 is above
    the lowest of the store's policies and its bonus dominates (:data:`BONUS_SHARE`)."""
    regrets = unit_regrets(ctx, "ltf", PAPER_HORIZON)
    cure = store_policy(ctx, "ltf", CURE)
    for unit in store_units(ctx, "ltf", PAPER_HORIZON):
        row = regrets[unit.instance_id, unit.seed]
        if row[CURE] <= min(row.values()):
            continue
        run = traced_run(unit.instance, cure, PAPER_HORIZON, unit.run_seed)
        if bonus_share(run) >= BONUS_SHARE:
            return unit, run, row
    return None


def ltf_blocks(ctx: Context) -> list[Block]:
    found = bonus_dominated_run(ctx)
    head = Heading(3, "LTF: exploration dominated by the bonus")
    if found is None:
        return [head, Para("No LTF unit meets the rule (CURE-UCB loses and its bonus dominates).")]
    unit, run, row = found
    inst = unit.instance
    best = inst.oracle.best_arm(PAPER_HORIZON)
    winner = min(row, key=row.__getitem__)
    path = plot_played_terms(run, inst.arm_names, best, ctx.figures / "why-ltf-bonus.png", ctx.dpi)
    pulls = np.bincount(run.arms, minlength=inst.n_arms)
    driven = bonus_driven_share(run)
    return [
        head,
        Para(
            f"Rule: the first LTF unit (instances in family order, T = {PAPER_HORIZON:,}) on "
            "which CURE-UCB's regret is above the lowest of the ten policies and the bonus of "
            f"the arm it plays exceeds the arm's recent average + future gain in at least "
            f"{BONUS_SHARE:.0%} of the rounds of the first half of the horizon. It is "
            f"`{unit.instance_id}` (seed {unit.seed}): CURE-UCB's regret {num(row[CURE])} "
            f"against {num(row[winner])} for {ctx.results('ltf').name(winner)}. The bonus "
            f"exceeds the estimate in {bonus_share(run):.0%} of the first half's rounds, and "
            f"in {driven:.0%} of all index rounds CURE-UCB plays an arm other than the one "
            "with the largest estimate: the suboptimal arms get "
            f"{num(pulls.sum() - pulls[best])} pulls (best fixed arm: {inst.arm_names[best]}, "
            f"{num(pulls[best])} pulls)."
        ),
        Figure(
            path,
            f"{unit.instance_id}: (a) CURE-UCB's three terms for the arm it plays; (b) pulls of "
            "each arm.",
        ),
    ]


def lock_in_run(ctx: Context) -> tuple[StoreRun, TracedRun, int, int] | None:
    """IMDB rule: the first run (seed order) in which CURE-UCB does not pull the best fixed arm
    at T = 50,000 in the second half of the horizon; with that arm and its last pull's round."""
    cure = store_policy(ctx, "imdb", CURE)
    for unit in store_units(ctx, "imdb", PAPER_HORIZON):
        best = unit.instance.oracle.best_arm(PAPER_HORIZON)
        run = traced_run(unit.instance, cure, PAPER_HORIZON, unit.run_seed)
        last = int(np.flatnonzero(run.arms == best)[-1]) + 1 if (run.arms == best).any() else 0
        if last <= PAPER_HORIZON // 2:
            return unit, run, best, last
    return None


def imdb_blocks(ctx: Context) -> list[Block]:
    found = lock_in_run(ctx)
    head = Heading(3, "IMDB: lock-in")
    if found is None:
        return [head, Para("No IMDB run meets the rule (CURE-UCB keeps pulling the best arm).")]
    unit, run, best, last = found
    inst, t = unit.instance, last + 1
    view = run.at(t)
    names = inst.arm_names
    path = plot_lock_in(run, names, best, last, ctx.figures / "why-imdb-lock-in.png", ctx.dpi)
    pulls = np.bincount(run.arms, minlength=inst.n_arms)
    rows = tuple(
        (
            names[a.arm]
            + (" (best)" if a.arm == best else "")
            + (" (played)" if a.arm == view.chosen else ""),
            f"{a.pulls:,}",
            *(f"{x:,.4g}" for x in a.terms),
            f"{a.index:,.4g}",
            f"{pulls[a.arm]:,}",
        )
        for a in view.arms
    )
    b = view.arms[best]
    eps = float(run.policy.params["eps"])
    h = max(1, math.floor(eps * b.pulls))
    recent, future, bonus = b.terms
    weighs = "outweighs" if -future > bonus else "does not outweigh"
    top = int(pulls.argmax())
    return [
        head,
        Para(
            f"Rule: the first IMDB run (seed order) in which CURE-UCB never pulls the best fixed "
            f"learner at T = {PAPER_HORIZON:,} ({names[best]}) in the second half of the "
            f"horizon. It is seed {unit.seed} (regret {num(run.regret)}): its last pull of "
            f"{names[best]} is in round {last:,}, after {b.pulls:,} pulls. At round {t:,} its "
            f"index is {b.index:,.4g}, below {names[view.chosen]}'s "
            f"{view.arms[view.chosen].index:,.4g} (played). Its window is h = max(1, "
            f"floor(eps N)) = {h} pulls (eps = {eps:g}), so its last {2 * h} Bernoulli rewards "
            f"set its recent average ({recent:,.4g}) and its slope; (T - t)/2 times that slope, "
            f"the future gain {future:,.4g}, {weighs} its bonus {bonus:,.4g}. An arm's terms "
            "change only when it is pulled (and through t), so a low index can stay low: "
            f"CURE-UCB spends {pulls[top]:,} of the {PAPER_HORIZON:,} pulls on {names[top]} and "
            f"{pulls[best]:,} on {names[best]}."
        ),
        Table(
            ("learner", "N", *run.trace.term_names, "index", f"pulls by T = {PAPER_HORIZON:,}"),
            rows,
            f"CURE-UCB's index terms at round {t:,}, when it stops pulling {names[best]}",
        ),
        Figure(
            path,
            f"IMDB run {unit.seed}: (a) CURE-UCB's index of each learner (dotted: the last pull "
            f"of {names[best]}); (b) pulls of each learner.",
        ),
    ]


def failure_section(ctx: Context) -> list[Block]:
    """Why CURE-UCB loses here: one LTF unit and one IMDB run, each picked by its rule."""
    parts = (ltf_blocks(ctx) if "ltf" in ctx.stores else []) + (
        imdb_blocks(ctx) if "imdb" in ctx.stores else []
    )
    if not parts:
        return []
    intro = Para(
        "The two failure modes named above, seen in CURE-UCB's own index terms (traces of one "
        "store run each; `risingbandits explain` draws the same for any run)."
    )
    return [Heading(2, "Why CURE-UCB loses here (traces)"), intro, *parts]


def explain_sections(ctx: Context) -> list[Block]:
    """The report's blocks of this module (the stores they need permitting)."""
    return (figure3_section(ctx) if "intro" in ctx.stores else []) + failure_section(ctx)
