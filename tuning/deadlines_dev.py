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
from collections import defaultdict
from pathlib import Path

import numpy as np

from risingbandits.analysis.stats import clustered_mean_ci
from risingbandits.experiments.executors import make_executor
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce.deadlines import COLUMNS, load_deadlines, run_deadlines
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
    columns: dict[str, list] = defaultdict(list)
    for rows in load_deadlines(out, FULL, "dev"):
        for key in COLUMNS:
            columns[key] += rows[key]
    data = {k: np.asarray(v) for k, v in columns.items()}
    methods = list(dict.fromkeys(data["method"]))
    for bed in dict.fromkeys(data["bed"]):
        print(f"\n{bed}: mean final-model gap; paired (method - {DEFAULT_POLICY}) [95% CI]")
        for w in sorted(set(data["workers"])):
            for m in sorted(set(data["steps"]), key=lambda x: (x == 0, x)):
                sel = (data["bed"] == bed) & (data["workers"] == w) & (data["steps"] == m)
                gap = {x: data["final_gap"][sel & (data["method"] == x)] for x in methods}
                where = data["instance"][sel & (data["method"] == DEFAULT_POLICY)]
                parts = [f"W={w:2d} m={m or 'full':>4}"]
                for x in methods:
                    if x == DEFAULT_POLICY:
                        parts.append(f"{x} {gap[x].mean():.4f}")
                    else:
                        d = clustered_mean_ci(gap[x] - gap[DEFAULT_POLICY], where)
                        flag = "!" if d.high < 0 else " "
                        parts.append(f"{x[:12]} {d.mean:+.4f}{flag}")
                print(" | ".join(parts))


if __name__ == "__main__":
    main()
