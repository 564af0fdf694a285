"""Budgets in time on the development instances only (issue 22): the numbers of
docs/deadlines-tuning.md.

Usage:
    python tuning/deadlines_dev.py                  # every dev task, 2 processes
    python tuning/deadlines_dev.py --workers 1      # one process
    python tuning/deadlines_dev.py --out tuning-out # where the task rows are kept

The tasks of ``risingbandits reproduce deadlines`` (:mod:`risingbandits.reproduce.deadlines`) on
the ``dev`` splits of lcdb-v1 (71 instances) and live-v1 (20 instances, seeds 0-3 of its five
data sets); the test splits, which the report shows, are never read here. Prints, per bed, W
and deadline, each method's mean final-model gap and the paired difference with the default.
Rows are kept in ``OUT/deadlines-dev/`` (delete it after changing a policy). A "!" marks a
method significantly lower than the default (its paired 95% interval below 0; intervals over
instances, each instance's runs averaged first, as in the report).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from risingbandits.experiments.executors import make_executor
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce.deadlines import load_deadlines, run_deadlines
from risingbandits.reproduce.sections.deadlines import DeadlineRows
from risingbandits.reproduce.settings import FULL


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tuning-out")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    out = Path(args.out) / "deadlines-dev"
    with make_executor("processes", args.workers) as pool:
        run_deadlines(out, FULL, pool, lambda d, n: print(f"\r{d}/{n} tasks", end=""), "dev", (0,))
    print()
    kept = list(load_deadlines(out, FULL, "dev"))
    for bed in dict.fromkeys(t["bed"][0] for t in kept if t["bed"]):
        rows = DeadlineRows(t for t in kept if t["bed"] and t["bed"][0] == bed)
        print(f"\n{bed}: mean final-model gap; paired (method - {DEFAULT_POLICY}) [95% CI]")
        for cell in rows.cells:
            parts = [f"W={cell[0]:2d} m={cell[1] or 'full':>4}"]
            for x in rows.methods:
                if x == DEFAULT_POLICY:
                    parts.append(f"{x} {rows.gap(cell, x).mean:.4f}")
                else:
                    d = rows.paired(cell, x)
                    parts.append(f"{x[:12]} {d.mean:+.4f}{'!' if d.high < 0 else ' '}")
            print(" | ".join(parts))


if __name__ == "__main__":
    main()
