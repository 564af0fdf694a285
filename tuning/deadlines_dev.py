"""Budgets in time on the development instances only (issue 22): the numbers of
docs/deadlines-tuning.md.

Usage:
    python tuning/deadlines_dev.py                  # every dev task, 2 processes
    python tuning/deadlines_dev.py --workers 1      # one process
    python tuning/deadlines_dev.py --out tuning-out # where the task rows are kept
    python tuning/deadlines_dev.py --draws 0,1,2,3  # four candidate draws of the dev tasks, pooled
    python tuning/deadlines_dev.py --draws 0-31 --by task  # 32 draws, intervals over tasks

The tasks of ``risingbandits reproduce deadlines`` (:mod:`risingbandits.reproduce.deadlines`) on
the ``dev`` splits of lcdb-v1 (the first 70 of its 71 instances) and live-v1 (20 instances,
seeds 0-3 of its five data sets); the test splits, which the report shows, are never read
here. Prints, per bed, W and deadline, each method's mean final-model gap and the paired
difference with the default.
Rows are kept in ``OUT/deadlines-dev/`` (delete it after changing a policy). A "!" marks a
method significantly lower than the default (its paired 95% interval below 0; intervals over
instances, each instance's runs averaged first, as in the report). ``--draws`` reads the dev
tasks with the candidates of several generator seeds and pools them (each (instance, draw) one
unit of the intervals): more development instances where one draw shows no signal
(docs/deadlines-tuning.md, "Halving stops at the lanes"). The draws share the 20 live and 70
LCDB tasks, so such units are not independent samples of tasks: ``--by task`` averages each
task's draws first and takes the intervals over tasks (the question for a new task;
docs/deadlines-tuning.md, "Pooled draws share their tasks").
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from risingbandits.cli.data import seed_list
from risingbandits.cli.errors import UserError
from risingbandits.experiments.executors import make_executor
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce.deadlines import deadline_beds, load_deadlines, run_deadlines
from risingbandits.reproduce.sections.deadlines import DeadlineRows
from risingbandits.reproduce.settings import FULL
from risingbandits.reproduce.task_rows import beds_not_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="tuning-out")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--draws", default="0", help="generator seeds of the candidates: 0,1,2 or 0-3"
    )
    parser.add_argument(
        "--by", choices=UNITS, default="instance", help="unit of the intervals (pooled draws)"
    )
    args = parser.parse_args()
    draws = draw_list(parser, args.draws)
    out = Path(args.out) / "deadlines-dev"
    with make_executor("processes", args.workers) as pool:
        run_deadlines(out, FULL, pool, lambda d, n: print(f"\r{d}/{n} tasks", end=""), "dev", draws)
    print()
    for bed, why in beds_not_run(deadline_beds(FULL, "dev")):
        print(f"not read: {bed}: {why}")
    loaded = [(d, t) for d in draws for t in load_deadlines(out, FULL, "dev", d)]
    kept = [pooled(t, d, len(draws), args.by) for d, t in loaded]
    for bed in dict.fromkeys(t["bed"][0] for t in kept if t["bed"]):
        rows = DeadlineRows(t for t in kept if t["bed"] and t["bed"][0] == bed)
        print(
            f"\n{bed} ({rows.instances} {args.by}s): mean final-model gap; paired (method - "
            f"{DEFAULT_POLICY}); '!' significantly lower"
        )
        for cell in rows.cells:
            parts = [f"W={cell[0]:2d} m={cell[1] or 'full':>4}"]
            for x in rows.methods:
                if x == DEFAULT_POLICY:
                    parts.append(f"{x} {rows.gap(cell, x).mean:.4f}")
                else:
                    d = rows.paired(cell, x)
                    parts.append(f"{x[:12]} {d.mean:+.4f}{'!' if d.high < 0 else ' '}")
            print(" | ".join(parts))


def draw_list(
    parser: argparse.ArgumentParser, text: str, option: str = "--draws"
) -> tuple[int, ...]:
    """``option``'s value as distinct generator seeds (``0,1,2`` or ``0-3``, read as ``data live
    --seeds`` is); a parser error names the option and the value otherwise."""
    try:
        return tuple(dict.fromkeys(seed_list(text, option)))
    except UserError as exc:
        parser.error(str(exc))


UNITS = ("instance", "task")


def pooled(
    task: dict[str, list[Any]], draw: int, draws: int, by: str = "instance"
) -> dict[str, list[Any]]:
    """A task's rows with each instance named for the unit of the intervals when several draws
    are pooled: ``by="instance"``, with its draw (the same task with other candidates is
    another unit); ``by="task"``, with its task (:func:`task_name`: its draws are one unit,
    their mean)."""
    if draws == 1:
        return task
    if by == "task":
        return {**task, "instance": [task_name(name) for name in task["instance"]]}
    return {**task, "instance": [f"{name}@draw{draw}" for name in task["instance"]]}


def task_name(unit: str) -> str:
    """The task of an instance ``family/draw/index``, pooled or not (``...@drawN``;
    :func:`~risingbandits.instances.families.instance_id`): ``family/index``."""
    family, _, index = unit.split("@draw")[0].split("/")
    return f"{family}/{index}"


if __name__ == "__main__":
    main()
