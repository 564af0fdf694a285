"""The report's section "Against the tools you use today" (issue 20): Optuna's three pruners,
run by Optuna's own code (:mod:`risingbandits.reproduce.peers`), against every policy of the
library at exactly the steps each pruner consumed, paired on the same rewards."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from risingbandits.analysis.stats import MeanCI, ci_json, instance_mean_ci
from risingbandits.integrations.optuna_pruners import PRUNERS
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce import figures
from risingbandits.reproduce.claims import ci_text
from risingbandits.reproduce.document import Block, Heading, Para, Table
from risingbandits.reproduce.peers import COLUMNS, load_peers, peer_beds
from risingbandits.reproduce.sections.common import DIGITS, Context
from risingbandits.reproduce.task_rows import group_rows, instance_count

PRUNER_NAMES = {
    "optuna-sh": "Optuna SuccessiveHalvingPruner",
    "optuna-hyperband": "Optuna HyperbandPruner",
    "optuna-median": "Optuna MedianPruner",
}
Cell = tuple[int, str]
"""(budget per candidate m, pruner): one paired comparison at the pruner's consumed budget."""


class BedRows:
    """One test bed's rows, by cell and method, each array in the same unit order."""

    def __init__(self, tasks: Iterable[Mapping[str, list[Any]]]) -> None:
        self.values, self.units = group_rows(
            tasks,
            COLUMNS,
            ("budget", "pruner", "method"),
            ("final_gap", "regret", "used", "seconds", "instance"),
        )

    @property
    def cells(self) -> list[Cell]:
        return sorted(
            {(m, p) for m, p, _ in self.values}, key=lambda c: (c[0], PRUNERS.index(c[1]))
        )

    def methods(self, cell: Cell) -> list[str]:
        return [x for m, p, x in self.values if (m, p) == cell]

    def gap(self, cell: Cell, method: str) -> MeanCI:
        a = self.values[(*cell, method)]
        return instance_mean_ci(a["final_gap"], a["instance"])

    def paired(self, cell: Cell, method: str, against: str = DEFAULT_POLICY) -> MeanCI:
        """Mean of (method's gap - ``against``'s gap) on the same units, with its 95% interval
        over instances (over runs on a bed of one instance, IMDB):
        :func:`~risingbandits.analysis.stats.instance_mean_ci`."""
        a, b = self.values[(*cell, method)], self.values[(*cell, against)]
        return instance_mean_ci(a["final_gap"] - b["final_gap"], a["instance"])

    def best_policy(self, cell: Cell) -> str:
        """The library policy with the lowest mean gap at the pruner's budget."""
        policies = [x for x in self.methods(cell) if x not in PRUNERS]
        return min(  # equal means: the default first (it is then the same run)
            policies,
            key=lambda x: (float(self.values[(*cell, x)]["final_gap"].mean()), x != DEFAULT_POLICY),
        )

    def used(self, cell: Cell) -> float:
        return float(self.values[(*cell, cell[1])]["used"].mean())

    def seconds(self, cell: Cell, method: str) -> float:
        """Median wall time of a run (the median leaves out a first run's compilation)."""
        return float(np.median(self.values[(*cell, method)]["seconds"]))

    def curves(self) -> list[tuple[str, str, dict[str, dict[int, MeanCI]]]]:
        """One panel per pruner: its mean gap, and the default's and successive halving's at
        its budget, against the budget per candidate."""
        panels = []
        for pruner in PRUNERS:
            budgets = [m for m, p in self.cells if p == pruner]
            if budgets:
                methods = (pruner, DEFAULT_POLICY, "successive-halving")
                values = {x: {m: self.gap((m, pruner), x) for m in budgets} for x in methods}
                panels.append((f"vs {PRUNER_NAMES[pruner]}", "final-model gap", values))
        return panels


def _ms(seconds: float) -> str:
    return f"{1000 * seconds:.1f}"


def _verdict(diff: MeanCI) -> str:
    """How the pruner compares with the default, by the paired interval."""
    if diff.low > 0:
        return f"{DEFAULT_POLICY} better"
    if diff.high < 0:
        return "pruner better"
    return "no significant difference"


def bed_table(title: str, rows: BedRows) -> Table:
    digits = DIGITS["final_gap"]
    out = []
    for cell in rows.cells:
        m, pruner = cell
        diff = rows.paired(cell, pruner)
        best = rows.best_policy(cell)
        out.append(
            (
                str(m),
                PRUNER_NAMES[pruner],
                f"{rows.used(cell):,.0f}",
                ci_text(rows.gap(cell, pruner), digits),
                ci_text(rows.gap(cell, DEFAULT_POLICY), digits),
                ci_text(diff, digits),
                _verdict(diff),
                (
                    f"{best} (the default itself)"
                    if best == DEFAULT_POLICY
                    else f"{best} {ci_text(rows.paired(cell, best), digits)}"
                ),
                _ms(rows.seconds(cell, pruner)),
                _ms(rows.seconds(cell, DEFAULT_POLICY)),
            )
        )
    header = (
        "steps per candidate (max)",
        "pruner",
        "steps used (mean)",
        "pruner's gap [95% CI]",
        f"{DEFAULT_POLICY} at that budget",
        f"pruner - {DEFAULT_POLICY}, paired",
        "verdict",
        f"lowest-gap policy, its gap - {DEFAULT_POLICY}'s",
        "pruner ms/run",
        f"{DEFAULT_POLICY} ms/run",
    )
    instances = instance_count(rows.values)
    over = "intervals over instances" if instances > 1 else "intervals over runs"
    caption = f"{title}: {instances} instance(s) x {rows.units // instances} runs per row; {over}"
    return Table(header, tuple(out), caption)


def bed_json(name: str, rows: BedRows) -> list[dict[str, Any]]:
    out = []
    for cell in rows.cells:
        for method in rows.methods(cell):
            out.append(
                {
                    "bed": name,
                    "budget_per_candidate": cell[0],
                    "pruner": cell[1],
                    "method": method,
                    "steps_used": rows.used(cell),
                    "final_gap": ci_json(rows.gap(cell, method)),
                    "minus_default": ci_json(rows.paired(cell, method)),
                    "seconds_per_run": rows.seconds(cell, method),
                }
            )
    return out


def peers_section(ctx: Context, out: Path) -> tuple[list[Block], dict[str, Any]]:
    """The section and its ``report.json`` entry (empty when no peer run was kept)."""
    found = []
    for bed in peer_beds(ctx.size):
        tasks = [t for t in load_peers(out, ctx.size) if t["bed"] and t["bed"][0] == bed.name]
        if tasks:
            found.append((bed, BedRows(tasks)))
    if not found:
        return [], {}
    blocks: list[Block] = [
        Heading(2, "Against the tools you use today"),
        Para(
            "Optuna's SuccessiveHalvingPruner, HyperbandPruner and MedianPruner, run by Optuna "
            "itself (its defaults) on the same curves: the K candidates are trials enqueued in an "
            "order shuffled by the run's seed and run one after another; every step reports the "
            "candidate's score with `trial.report` and asks `should_prune`; each trial trains "
            "at most m steps (m = the budget per candidate of the row), so a pruner spends at "
            "most K x m steps, and the deployed model is the completed trial with the best last "
            "score. Every policy of the library is then run with exactly the steps the pruner "
            f"consumed, on the same rewards; the rows compare with the library's default, "
            f"`{DEFAULT_POLICY}`, by the paired 95% interval of the difference in final-model "
            "gap (judged on test data where the bed has it), over instances, each instance's "
            "runs averaged first (live-v1 has no reward noise: a policy's runs of one instance "
            "are often the same run); over the runs on IMDB, one instance. Lower is better. "
            "Cost per run: "
            "median wall time on this machine (Optuna's in-memory study, or one compiled "
            "simulation)."
        ),
    ]
    payload: list[dict[str, Any]] = []
    for bed, rows in found:
        blocks += [
            Heading(3, bed.title),
            figures.peers_overview(ctx.figures, bed.name, bed.title, rows.curves(), ctx.dpi),
            bed_table(bed.title, rows),
        ]
        payload += bed_json(bed.name, rows)
    return blocks, {"rows": payload}
