"""Issue 21's two criteria on the development instances, at every budget of the held-out sets.

Usage:
    python tuning/criteria_dev.py                                  # HACE-UCB's defaults
    python tuning/criteria_dev.py --params '{"clear_by": 3}'       # a variant
    python tuning/criteria_dev.py --out tuning-out --settings imdb # baselines kept in --out

The report's held-out sections judge the default policy cell by cell: (a) its final-model gap is
the lowest, or no other policy's is significantly lower (paired 95% interval); (b) on the
synthetic families its mean regret is the lowest. ``tuning/hace_dev.py`` scores the lowest mean
gap at 4-128 pulls per candidate and 5-20% of the full horizon, and ``tuning/long_dev.py``
compares with ACE-UCB alone at long budgets; two rules that looked better there lost held-out
cells at long budgets, by about one percent against ACE-UCB (``docs/hace-ucb-tuning.md``, steps
11 and 13). This checks the same criteria, computed by the report's own code
(:func:`risingbandits.reproduce.leads.heldout_cells`), on development instances only, at the
held-out sets' budgets:

* ltf, concave, concave-v2: generator seed 0, instances 0-29, one run; 4 to 128 pulls per
  candidate and T = 10,000, 30,000, 50,000 (20, 60, 100% of 50,000); (a) and (b);
* imdb: the 20 seven-learner instances of ``tuning/hace_dev.py`` (drawn from the 22 curves
  outside the paper's 7), 3 runs; 4 to 128 per candidate and 5, 10, 20, 40, 60, 100% of
  50,000; (a);
* lcdb, live: the ``dev`` splits of lcdb-v1 (71) and live-v1 (20), 3 runs; 4 to 128 per
  candidate and 5-100% of each instance's full horizon; (a).

Every policy of the report runs with the report's presets; the candidate (HACE-UCB with
``--params``) stands in for HACE-UCB. Per-unit results of the other 16 are computed once and
kept in ``--out`` (``criteria-dev-<setting>.json``), the candidate's every time. Same seeds for
every policy (a unit is an (instance, run) pair): paired differences, as in the report.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from operator import methodcaller
from pathlib import Path

import numpy as np
from hace_dev import PRESETS, Budget, baseline_policies, cell_key, horizon, instances

import risingbandits as rb
from risingbandits.experiments.store import atomic_write
from risingbandits.instances.families import PAPER_HORIZON, family_instance
from risingbandits.reproduce.data import Results
from risingbandits.reproduce.leads import heldout_cells
from risingbandits.reproduce.settings import (
    BUDGET_PERCENTS,
    HELDOUT_PERCENTS,
    HELDOUT_POLICY,
    PER_ARM_BUDGETS,
)

SYNTHETIC = {"ltf": "ltf-v1", "concave": "concave-v1", "concave-v2": "concave-v2"}
PRESET = {**PRESETS, "concave-v2": "concave"}
RUNS = {"live": 3, "lcdb": 3, "imdb": 3, "ltf": 1, "concave": 1, "concave-v2": 1}
SETTINGS = ("ltf", "concave", "concave-v2", "imdb", "lcdb", "live")


def dev_instances(setting: str) -> Iterator[rb.RisingInstance]:
    if setting in SYNTHETIC:
        for j in range(30):
            yield family_instance(SYNTHETIC[setting], j, 0, PAPER_HORIZON)
    else:
        yield from instances(setting)


def budgets(setting: str) -> list[Budget]:
    shares = HELDOUT_PERCENTS if setting in SYNTHETIC else BUDGET_PERCENTS
    return [("m", m) for m in PER_ARM_BUDGETS] + [("%", p) for p in shares]


def run_units(policy: rb.Policy, setting: str) -> dict[str, list[list[float]]]:
    """``{budget: [final gaps, regrets]}`` per unit, in (instance, run) order."""
    out: dict[str, list[list[float]]] = {cell_key(b): [[], []] for b in budgets(setting)}
    for instance in dev_instances(setting):
        for budget in budgets(setting):
            res = rb.simulate(instance, policy, horizon(instance, budget), RUNS[setting])
            out[cell_key(budget)][0] += res.final_gap.tolist()
            out[cell_key(budget)][1] += res.regret.tolist()
    return out


def others(setting: str) -> dict[str, rb.Policy]:
    return baseline_policies(PRESET[setting], HELDOUT_POLICY)


def checked(table: object, setting: str) -> dict[str, dict[str, list[list[float]]]]:
    """A kept table, every field checked (it is read back from ``--out``): policies known,
    budgets this setting's, two equal-length lists of finite numbers per budget."""
    keys = {cell_key(b) for b in budgets(setting)}
    if not isinstance(table, dict) or not set(table) <= set(others(setting)):
        raise SystemExit(f"criteria-dev-{setting}.json: unknown policies; delete it to rebuild")
    for name, cells in table.items():
        ok = isinstance(cells, dict) and set(cells) == keys
        for pair in cells.values() if ok else ():
            ok = ok and isinstance(pair, list) and len(pair) == 2
            ok = ok and len(pair[0]) == len(pair[1]) and bool(np.isfinite(np.asarray(pair)).all())
        if not ok:
            raise SystemExit(f"criteria-dev-{setting}.json: {name} is damaged; delete it")
    return table


def baselines(out: Path, setting: str) -> dict[str, dict[str, list[list[float]]]]:
    path = out / f"criteria-dev-{setting}.json"
    table = checked(json.loads(path.read_text()), setting) if path.is_file() else {}
    for name, policy in others(setting).items():
        if name not in table:
            print(f"{setting}: {name}", file=sys.stderr, flush=True)
            table[name] = run_units(policy, setting)
            out.mkdir(parents=True, exist_ok=True)
            text = json.dumps(table).encode()
            atomic_write(path, methodcaller("write", text))
    return table


def results(units: dict[str, dict[str, list[list[float]]]], setting: str) -> Results:
    """The units as the report's :class:`Results`, budget j of :func:`budgets` as horizon j."""
    keys = [cell_key(b) for b in budgets(setting)]
    gap = {(p, j): np.asarray(units[p][k][0]) for p in units for j, k in enumerate(keys)}
    regret = {(p, j): np.asarray(units[p][k][1]) for p in units for j, k in enumerate(keys)}
    empty = frozenset[str]()
    return Results(tuple(units), empty, empty, tuple(range(len(keys))), regret, {}, {}, {}, gap, {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", default="{}", help="HACE-UCB's parameters (JSON)")
    parser.add_argument("--out", type=Path, default=Path("tuning-out"))
    parser.add_argument("--settings", default=",".join(SETTINGS))
    args = parser.parse_args()
    candidate = rb.make_policy(HELDOUT_POLICY, **json.loads(args.params))
    print(repr(candidate))
    print("setting     budget | gap, best other, paired difference (a) | regret, best other (b)")
    count = {"a": [0, 0], "b": [0, 0]}
    for setting in args.settings.split(","):
        units = {HELDOUT_POLICY: run_units(candidate, setting), **baselines(args.out, setting)}
        r = results(units, setting)
        for j, c in enumerate(heldout_cells(setting, r, list(r.horizons), setting in SYNTHETIC)):
            d = c.gap_rival.margin
            text = (
                f"{setting:10s} {cell_key(budgets(setting)[j]):>7s} | {c.own_gap.mean:.4f}, "
                f"{c.gap_rival.best} {c.gap_rival.best_ci.mean:.4f}, "
                f"{d.mean:+.4f} [{d.low:+.4f}, {d.high:+.4f}] {'yes' if c.gap_no_worse else 'NO'}"
            )
            count["a"][0] += c.gap_no_worse
            count["a"][1] += 1
            if c.lowest_regret is not None:
                text += (
                    f" | {c.own_regret.mean:.1f}, {c.regret_rival.best} "
                    f"{c.regret_rival.best_ci.mean:.1f} {'yes' if c.lowest_regret else 'NO'}"
                )
                count["b"][0] += c.lowest_regret
                count["b"][1] += 1
            print(text)
    (a, na), (b, nb) = count["a"], count["b"]
    print(f"(a) holds in {a} of {na} cells, (b) in {b} of {nb} synthetic cells")


if __name__ == "__main__":
    main()
