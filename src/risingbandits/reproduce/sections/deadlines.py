"""The report's section "Budgets in time" (issue 22): the cost-aware default against the same
policy counting pulls, Successive Halving, Hyperband and ASHA (resource = cost) under a deadline
with W workers and the test beds' real costs (:mod:`risingbandits.reproduce.deadlines`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from risingbandits.analysis.stats import MeanCI, ci_json, instance_mean_ci
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce import figures
from risingbandits.reproduce.claims import ci_text
from risingbandits.reproduce.deadlines import (
    COLUMNS,
    COUNTING,
    DRAWS,
    FULL,
    PLOT_KEYS,
    STEPS,
    DeadlineBed,
    deadline_beds,
    load_deadlines,
    methods,
)
from risingbandits.reproduce.document import Block, Heading, Para, Table
from risingbandits.reproduce.sections.common import DIGITS, Context
from risingbandits.reproduce.task_rows import group_rows, instance_count, missing_beds

Cell = tuple[int, int]
"""(workers W, steps per candidate the deadline allows; 0: the full table)."""
FULL_AT = 1024
"""Where the full-table deadline is drawn on the figure's steps axis."""


class DeadlineRows:
    """One test bed's rows, by cell and method, each array in the same unit order (instance,
    run). Intervals are over instances, each instance's runs averaged first
    (:func:`~risingbandits.analysis.stats.instance_mean_ci`): on live-v1, which has no reward
    noise, the default's runs of one instance are the same run in most instances."""

    def __init__(self, tasks: Iterable[Mapping[str, list[Any]]]) -> None:
        self.values, self.units = group_rows(
            tasks,
            COLUMNS,
            ("workers", "steps", "method"),
            ("final_gap", "cost_regret", "idle", "spent", "seconds", "instance"),
        )
        labels = [label for label, _, _ in methods()]
        self.methods = [m for m in labels if any(k[2] == m for k in self.values)]

    @property
    def cells(self) -> list[Cell]:
        return sorted({(w, m) for w, m, _ in self.values}, key=lambda c: (c[0], c[1] == FULL, c[1]))

    @property
    def instances(self) -> int:
        return instance_count(self.values)

    def gap(self, cell: Cell, method: str) -> MeanCI:
        a = self.values[(*cell, method)]
        return instance_mean_ci(a["final_gap"], a["instance"])

    def paired(self, cell: Cell, method: str) -> MeanCI:
        """Mean of (method's gap - the default's) on the same units, with its 95% interval over
        instances."""
        a, b = self.values[(*cell, method)], self.values[(*cell, DEFAULT_POLICY)]
        return instance_mean_ci(a["final_gap"] - b["final_gap"], a["instance"])

    def mean(self, cell: Cell, method: str, column: str) -> float:
        return float(self.values[(*cell, method)][column].mean())

    def goal_met(self, cell: Cell) -> bool:
        """The default has the lowest mean gap, or no other method is significantly lower."""
        others = [x for x in self.methods if x != DEFAULT_POLICY]
        lowest = all(
            self.mean(cell, DEFAULT_POLICY, "final_gap") <= self.mean(cell, x, "final_gap")
            for x in others
        )
        return lowest or not any(self.paired(cell, x).high < 0 for x in others)

    def curves(self) -> list[tuple[str, str, dict[str, dict[int, MeanCI]]]]:
        """One panel per W: every method's mean gap against the steps per candidate."""
        panels = []
        for workers in sorted({w for w, _ in self.cells}):
            steps = [m for w, m in self.cells if w == workers]
            at = {m: FULL_AT if m == FULL else m for m in steps}
            values = {
                PLOT_KEYS[x]: {at[m]: self.gap((workers, m), x) for m in steps}
                for x in self.methods
            }
            panels.append((f"W = {workers}", "final-model gap", values))
        return panels


def _steps_text(steps: int) -> str:
    return "full table" if steps == FULL else str(steps)


def bed_table(title: str, rows: DeadlineRows) -> Table:
    digits = DIGITS["final_gap"]
    others = [x for x in rows.methods if x != DEFAULT_POLICY]
    out = []
    for cell in rows.cells:
        diffs = [rows.paired(cell, x) for x in others]
        out.append(
            (
                str(cell[0]),
                _steps_text(cell[1]),
                ci_text(rows.gap(cell, DEFAULT_POLICY), digits),
                *(ci_text(d, digits) for d in diffs),
                "yes" if rows.goal_met(cell) else "**no**",
                f"{rows.mean(cell, DEFAULT_POLICY, 'idle'):.0%}",
            )
        )
    header = (
        "W",
        "steps per candidate by the deadline",
        f"{DEFAULT_POLICY} gap [95% CI]",
        *(f"{x} - {DEFAULT_POLICY}, paired" for x in others),
        "default lowest or none significantly lower",
        f"{DEFAULT_POLICY} idle share",
    )
    runs = rows.units // max(rows.instances, 1)
    return Table(
        header,
        tuple(out),
        f"{title}: {rows.instances} instances x {runs} runs per row; intervals over instances",
    )


def bed_json(name: str, rows: DeadlineRows) -> list[dict[str, Any]]:
    return [
        {
            "bed": name,
            "workers": cell[0],
            "steps_per_candidate": "full" if cell[1] == FULL else cell[1],
            "method": method,
            "final_gap": ci_json(rows.gap(cell, method)),
            "minus_default": ci_json(rows.paired(cell, method)),
            "cost_regret_share": rows.mean(cell, method, "cost_regret"),
            "idle_share": rows.mean(cell, method, "idle"),
            "seconds_per_run": rows.mean(cell, method, "seconds"),
        }
        for cell in rows.cells
        for method in rows.methods
    ]


Found = list[tuple[DeadlineBed, DeadlineRows]]
"""Test beds with kept rows, and the rows."""


def found_beds(ctx: Context, out: Path, draw: int) -> Found:
    """The test beds of the candidates of ``draw`` with kept rows, and those rows."""
    found = []
    kept = list(load_deadlines(out, ctx.size, "test", draw))  # read once, then split by bed
    for bed in deadline_beds(ctx.size, "test", draw):
        tasks = [t for t in kept if t["bed"] and t["bed"][0] == bed.name]
        if tasks:
            found.append((bed, DeadlineRows(tasks)))
    return found


def tally(found: Found) -> tuple[int, int]:
    """(cells where the goal is met, cells)."""
    met = sum(rows.goal_met(c) for _, rows in found for c in rows.cells)
    return met, sum(len(rows.cells) for _, rows in found)


def bed_blocks(ctx: Context, found: Found, level: int) -> list[Block]:
    blocks: list[Block] = []
    for bed, rows in found:
        blocks += [
            Heading(level, bed.title),
            figures.deadlines_overview(
                ctx.figures,
                f"{bed.name}-draw{bed.draw}" if bed.draw else bed.name,
                bed.title,
                rows.curves(),
                {key: label for label, key in PLOT_KEYS.items()},
                {PLOT_KEYS[COUNTING]: "--"},
                ctx.dpi,
            ),
            bed_table(bed.title, rows),
        ]
    return blocks


def absent_beds(ctx: Context, found: Found) -> list[Block]:
    """One line per test bed without rows, and why (its data is not readable here, or it was not
    run): a report of LCDB alone says it is half the evaluation."""
    shown = {bed.name for bed, _ in found}
    absent = [bed for bed in deadline_beds(ctx.size) if bed.name not in shown]
    why = missing_beds(absent)
    return [Para(f"Not in this report: {b.title}: {why.get(b, 'no rows kept')}.") for b in absent]


def deadlines_section(ctx: Context, out: Path) -> tuple[list[Block], dict[str, Any]]:
    """The section and its ``report.json`` entry (empty when no deadline run was kept): the
    test beds with the first held-out set's candidates, then with the second and third sets'
    (:data:`~risingbandits.reproduce.deadlines.DRAWS`)."""
    first, second, third = (found_beds(ctx, out, draw) for draw in DRAWS)
    if not first:
        return [], {}
    met, total = tally(first)
    blocks: list[Block] = [
        Heading(2, "Budgets in time: real costs, W workers, a deadline"),
        Para(
            "Each pull costs what the test bed recorded (LCDB's training time at the pull's "
            "training-set size, live-v1's measured seconds per unit); W workers train at once, a "
            "candidate on one worker at a time, and nothing starts that cannot finish by the "
            "deadline (`risingbandits.simulate_budget`). The deadline of a row is the time at "
            "which the W workers could give every candidate m steps at their real costs (the "
            "cost of those steps summed over candidates, over min(W, K) workers; m = "
            f"{', '.join(map(str, STEPS))} or the full table). The final-model gap is measured "
            "against the best value a candidate alone can reach by the deadline, on test data. "
            f"Methods: `{DEFAULT_POLICY}` planning in cost (the default: its halving rounds give "
            "each survivor an equal share of cost, its commit values use the pulls each "
            "candidate can still make at its own cost), the same policy counting pulls, "
            "Successive Halving in cost (`hyperband` with one bracket), `hyperband` and `asha` "
            "(resource = cost). Paired columns: method's gap minus the default's on the same "
            "rewards, with the 95% interval over instances (each instance's runs averaged "
            "first: on live-v1, which has no reward noise, the default's runs of one instance "
            "are the same run in most instances; > 0: the default deploys better models). Test "
            "splits only; the choices were made on the dev splits (`docs/deadlines-tuning.md`). "
            "live-v1's seconds are those measured when it was built on the machine that ran "
            "this: another build has the same curves and other costs, and its rows differ "
            "(`docs/budgets-in-time.md`). "
            f"Goal (issue 22): the default lowest, or no method significantly lower, in every "
            f"cell: met in {met} of {total} cells."
        ),
        *absent_beds(ctx, first),
        *bed_blocks(ctx, first, 3),
    ]
    payload: dict[str, Any] = {
        "rows": [x for bed, rows in first for x in bed_json(bed.name, rows)],
        "goal_met_cells": met,
        "cells": total,
    }
    for number, word, later in ((2, "second", second), (3, "third", third)):
        if not later:
            continue
        met_n, total_n = tally(later)
        blocks += [
            Heading(3, f"The {word} held-out set: other candidates on the same test tasks"),
            Para(
                f"The same grid and methods on the candidates of the {word} held-out "
                "set (the test tasks with other candidates drawn, generator seed "
                f"{later[0][0].draw}, as in `reproduce heldout{number}`), computed after the "
                f"rules of the default were fixed. Goal met in {met_n} of {total_n} cells."
            ),
            *bed_blocks(ctx, later, 4),
        ]
        payload[f"heldout{number}"] = {
            "rows": [x for bed, rows in later for x in bed_json(bed.name, rows)],
            "goal_met_cells": met_n,
            "cells": total_n,
        }
    return blocks, payload
