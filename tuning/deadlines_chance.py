"""How often a set of test instances meets issue 22's goal by chance, if the development split
showed the truth: a report on the goal's test, never a judge (nothing is chosen on it).

Usage:
    python tuning/deadlines_dev.py --draws 0-31 --out tuning-out      # keeps the dev rows
    python tuning/deadlines_chance.py --draws 0-31 --out tuning-out   # reads them, runs nothing

The report judges each (bed, W, deadline) cell on one set of test instances (70 LCDB and 20
live-v1 instances): the goal holds where the default has the lowest mean final-model gap or no
other method's paired 95% interval lies below 0
(:meth:`~risingbandits.reproduce.sections.deadlines.DeadlineRows.goal_met`). This draws many
such sets from the development rows ``tuning/deadlines_dev.py`` kept (each set: as many tasks
as the test split has, drawn with replacement from the dev tasks, each with the candidates of
one of the pooled draws; ``--together`` sets share their tasks with distinct draws, as the
report's three sets do) and applies the same test to each, in two worlds:

- *as measured*: every (instance, method) gap as the dev rows have it;
- *as good*: each unit's paired difference of each method with the default given a random sign
  (the randomization null): every method exactly as good as the default, on average, in every
  cell, with the differences the dev rows show in size.

Prints, per world, the share of sets in which the goal holds in every cell, and of reports
(``--together`` sets) in which it holds in every cell of every set, the cells lost per set, and
the cells lost most often. The test's own chance: what a reading of 29 of 30 cells
says about a policy.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np
from deadlines_dev import draw_list, pooled, task_name

from risingbandits.analysis.stats import cluster_means, t_quantile
from risingbandits.modelselect.selector import DEFAULT_POLICY
from risingbandits.reproduce.deadlines import deadline_beds, load_deadlines
from risingbandits.reproduce.sections.deadlines import DeadlineRows
from risingbandits.reproduce.settings import FULL

WORLDS = ("as measured", "as good")


class BedGaps:
    """One bed's dev rows as an array (unit, cell, method) of gaps, each unit an (instance,
    draw) with its runs averaged, the default first among the methods; and each unit's task."""

    def __init__(self, rows: DeadlineRows) -> None:
        self.cells = rows.cells
        self.methods = [DEFAULT_POLICY] + [m for m in rows.methods if m != DEFAULT_POLICY]
        units = None
        per_cell = []
        for cell in self.cells:
            per_method = []
            for method in self.methods:
                a = rows.values[(*cell, method)]
                keys, means = cluster_means(a["final_gap"], a["instance"])
                if units is None:
                    units = keys
                if not np.array_equal(keys, units):
                    raise SystemExit(f"deadlines_chance: cell {cell}, {method}: other instances")
                per_method.append(means)
            per_cell.append(per_method)
        self.gaps = np.asarray(per_cell).transpose(2, 0, 1)
        assert units is not None
        tasks = [task_name(u) for u in units]
        self.task_names, self.task_of = np.unique(tasks, return_inverse=True)


def exchanged(gaps: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The gaps (sets, units, cells, methods) with each other method's paired difference given a
    random sign, unit by unit: every method exchangeable with the default (as good on every
    instance, on average), the same size of differences."""
    flip = rng.integers(2, size=gaps[..., 1:].shape) * 2 - 1
    return np.concatenate(
        (gaps[..., :1], gaps[..., :1] + flip * (gaps[..., 1:] - gaps[..., :1])), axis=-1
    )


def unit_sets(
    task_of: np.ndarray, rng: np.random.Generator, sets: int, size: int, together: int = 1
) -> np.ndarray:
    """``sets`` x ``together`` x ``size`` unit indices: ``size`` tasks drawn with replacement,
    each with ``together`` distinct units (its candidates of distinct draws), one per set: as
    the report's sets hold the same test tasks with the candidates of other draws."""
    order = np.argsort(task_of, kind="stable")
    count = np.bincount(task_of)
    start = np.concatenate(([0], np.cumsum(count)[:-1]))
    tasks = rng.integers(len(count), size=(sets, size))
    keys = rng.random((sets, size, count.max()))
    keys[np.arange(count.max()) >= count[tasks][..., None]] = np.inf  # not a unit of the task
    within = np.argsort(keys, axis=-1)[..., :together]
    return order[start[tasks][..., None] + within].transpose(0, 2, 1)


def judged(world: str, gaps: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The sets' gaps as ``world`` has them: as measured, or with the differences' signs drawn."""
    return gaps if world == WORLDS[0] else exchanged(gaps, rng)


def lost_cells(g: np.ndarray) -> np.ndarray:
    """(sets, cells) booleans from the gaps (sets, units, cells, methods; the default first): the
    goal fails in the cell on the set (the report's test: the default not lowest and some
    method's paired interval over instances below 0)."""
    n = g.shape[1]
    means = g.mean(axis=1)
    not_lowest = (means[:, :, 1:] < means[:, :, :1]).any(axis=2)
    diff = g[..., 1:] - g[..., :1]
    high = diff.mean(axis=1) + t_quantile(0.975, n - 1) * diff.std(axis=1, ddof=1) / np.sqrt(n)
    return not_lowest & (high < 0).any(axis=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", default="0", help="the draws deadlines_dev.py read: 0-31")
    parser.add_argument("--out", default="tuning-out")
    parser.add_argument("--sets", type=int, default=2000, help="test sets drawn per world")
    parser.add_argument(
        "--together", type=int, default=3, help="sets on the same tasks (the report shows 3)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for name in ("sets", "together"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} {getattr(args, name)}: must be at least 1")
    draws = draw_list(parser, args.draws)
    out = Path(args.out) / "deadlines-dev"
    kept = [pooled(t, d, len(draws)) for d in draws for t in load_deadlines(out, FULL, "dev", d)]
    test_sizes = {bed.name: bed.count for bed in deadline_beds(FULL, "test")}
    rng = np.random.default_rng(args.seed)
    lost: dict[str, list[np.ndarray]] = {world: [] for world in WORLDS}
    names = []
    for bed in test_sizes:
        tasks = [t for t in kept if t["bed"] and t["bed"][0] == bed]
        if not tasks:
            parser.error(f"--out {args.out}: no {bed} dev rows of draws {args.draws} kept there")
        rows = BedGaps(DeadlineRows(tasks))
        fewest = int(np.bincount(rows.task_of).min())
        if args.together > fewest:
            parser.error(f"--together {args.together}: a {bed} task has {fewest} draws kept")
        chosen = unit_sets(rows.task_of, rng, args.sets, test_sizes[bed], args.together)
        print(
            f"{bed}: {len(rows.gaps)} dev units of {len(rows.task_names)} tasks; sets of "
            f"{test_sizes[bed]} instances"
        )
        for world in WORLDS:
            lost[world].append(
                np.stack(
                    [lost_cells(judged(world, rows.gaps[c], rng)) for c in chosen.swapaxes(0, 1)], 1
                )
            )
        names += [f"{bed} W={w} m={m or 'full'}" for w, m in rows.cells]
    for world in WORLDS:
        cells = np.concatenate(lost[world], axis=2)  # reports, sets, cells
        per_set = cells.sum(axis=2).ravel()
        spread = Counter(int(k) for k in per_set)
        print(
            f"\n{world}: goal in every cell on {np.mean(per_set == 0):.1%} of "
            f"{per_set.size} sets, on all {args.together} sets of a report on "
            f"{np.mean(~cells.any(axis=(1, 2))):.1%} of {args.sets}; cells lost per set: mean "
            f"{per_set.mean():.2f}, "
            + ", ".join(f"{k}: {spread[k] / per_set.size:.1%}" for k in sorted(spread))
        )
        share = cells.mean(axis=(0, 1))
        for i in np.argsort(-share)[:6]:
            print(f"  {names[i]:24s} lost on {share[i]:.1%} of sets")


if __name__ == "__main__":
    main()
