"""Budgets in time on a held-out set of candidates that no report reads (issue 22): the cells
of ``risingbandits reproduce deadlines`` on the lcdb-v1 and live-v1 *test* tasks, with the
candidates of another generator seed.

Usage:
    python tuning/deadlines_heldout.py --draw 3 --out tuning-out
    python tuning/deadlines_heldout.py --draw 6-7 --out tuning-out     # unread sets, pooled
    python tuning/deadlines_heldout.py --pooled 0-4 --out tuning-out   # sets already read, pooled

The report's three sets draw the candidates with generator seeds 0, 1 and 2
(:data:`risingbandits.reproduce.deadlines.DRAWS`); every one of them was read before a rule of
the default was judged. A rule chosen on the development split (``tuning/deadlines_dev.py``) is
judged here once, on a seed none of them used (or several, pooled as ``--pooled`` pools), by a
decision rule written down before this runs (``docs/deadlines-tuning.md``). Prints, per bed, W
and deadline, the default's mean final-model gap, each method's paired difference (a "!" where
it is significantly lower) and whether the goal holds (the report's own test,
:meth:`~risingbandits.reproduce.sections.deadlines.DeadlineRows.goal_met`), then the count of
cells. Rows are kept in ``OUT/heldout-draw<seeds>/``.

``--pooled`` reads sets that have been read already (the report's among them) as one, each
(instance, draw) a unit of the intervals (as ``deadlines_dev.py --draws``): whether the cells
they lose one set at a time are lost with five times the candidates, or were the one flag in 40
a method as good as the default gets by chance. A report, never a judge: nothing is chosen on
it. Rows are kept in ``OUT/heldout-pooled/``. Pooled sets share their 70 LCDB and 20 live
tasks, so after the count with those units comes the count with intervals over tasks (each
task's draws averaged first; ``tuning/deadlines_dev.py --by task``), and the cells it loses.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from deadlines_dev import draw_list, pooled

from risingbandits.experiments.executors import make_executor
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce.deadlines import (
    DRAWS,
    FULL,
    deadline_beds,
    load_deadlines,
    run_deadlines,
)
from risingbandits.reproduce.sections.deadlines import DeadlineRows
from risingbandits.reproduce.settings import FULL as FULL_SIZE
from risingbandits.reproduce.task_rows import beds_not_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--draw", help="seeds no set used (3, or 6-7 pooled): a rule's one reading")
    which.add_argument("--pooled", help="seeds of sets already read, pooled: 0,1,2 or 0-4")
    parser.add_argument("--out", default="tuning-out")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.pooled is not None:
        draws, out = draw_list(parser, args.pooled, "--pooled"), Path(args.out) / "heldout-pooled"
    else:
        draws = draw_list(parser, args.draw, "--draw")
        if set(draws) & set(DRAWS):
            parser.error(f"--draw={args.draw} reads the report's sets {DRAWS}; use other seeds")
        out = Path(args.out) / f"heldout-draw{'-'.join(map(str, draws))}"
    with make_executor("processes", args.workers) as pool:
        progress = lambda d, n: print(f"\r{d}/{n} tasks", end="")  # noqa: E731
        run_deadlines(out, FULL_SIZE, pool, progress, "test", draws)
    print()
    for bed, why in beds_not_run(deadline_beds(FULL_SIZE, "test")):
        print(f"not read: {bed}: {why}")
    loaded = [(d, t) for d in draws for t in load_deadlines(out, FULL_SIZE, "test", d)]
    met, cells, lines = judge([pooled(t, d, len(draws)) for d, t in loaded])
    print("\n".join(lines))
    print(f"\nthe goal holds in {met} of {cells} cells")
    if len(draws) > 1:
        met, _, lines = judge([pooled(t, d, len(draws), "task") for d, t in loaded])
        print(f"with intervals over tasks (each task's draws averaged first): {met} of {cells}")
        print("\n".join(line for line in lines if line.endswith("GOAL FAILS")))


def judge(kept: list[dict[str, list[Any]]]) -> tuple[int, int, list[str]]:
    """The cells where the goal holds (the report's own test,
    :meth:`~risingbandits.reproduce.sections.deadlines.DeadlineRows.goal_met`), the cells there
    are, and a line per cell (a bed's title first)."""
    met, cells, lines = 0, 0, []
    for bed in dict.fromkeys(t["bed"][0] for t in kept if t["bed"]):
        rows = DeadlineRows(t for t in kept if t["bed"] and t["bed"][0] == bed)
        others = [x for x in rows.methods if x != DEFAULT_POLICY]
        lines.append(f"\n{bed}: mean final-model gap; paired (method - {DEFAULT_POLICY})")
        for cell in rows.cells:
            parts = [f"{bed} W={cell[0]:2d} m={'full' if cell[1] == FULL else cell[1]:>4}"]
            parts.append(f"{DEFAULT_POLICY} {rows.gap(cell, DEFAULT_POLICY).mean:.4f}")
            for x in others:
                d = rows.paired(cell, x)
                parts.append(f"{x[:12]} {d.mean:+.4f}{'!' if d.high < 0 else ' '}")
            ok = rows.goal_met(cell)
            met, cells = met + ok, cells + 1
            parts.append("goal holds" if ok else "GOAL FAILS")
            lines.append(" | ".join(parts))
    return met, cells, lines


if __name__ == "__main__":
    main()
