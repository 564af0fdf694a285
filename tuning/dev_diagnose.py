"""Diagnoses on the development instances of ``tuning/hace_dev.py`` (never the held-out ones).

Usage:
    python tuning/dev_diagnose.py paired live hace-ucb,r-sr --runs 10
        # mean final-model gap per budget, and each other policy minus the first, paired per
        # (instance, run), with the half-width of its 95% t-interval
    python tuning/dev_diagnose.py split imdb hace-ucb,r-ucbe --per-arm 64
        # the gap in two parts: the wrong arm (best value at T minus the deployed arm's value
        # at T) and under-training (the deployed arm's value at T minus at its pulls), with the
        # share of the budget the deployed arm got and how often it is the best arm at T
    python tuning/dev_diagnose.py paired imdb hace-ucb,successive-halving \
        --params '{"successive-halving": {"eta": 3}}'     # a policy's parameters
    python tuning/dev_diagnose.py instances concave-v2 hace-ucb,ti-ucb --percent 20 --runs 1
        # per instance: the best arm at T (largest sum of means up to T), each policy's
        # regret and its pulls of each arm in the first run

The numbers of ``docs/hace-ucb.md`` ("Where it falls short") come from these commands. Budgets:
4 to 128 pulls per candidate and 5, 10, 20% of the full horizon on live and lcdb, as in
``hace_dev.py``; ``--per-arm`` keeps one, ``--percent P`` runs P% of the full horizon instead
(any setting: ``split imdb hace-ucb,ucb1 --percent 40``). The instances are those of
``tuning/criteria_dev.py`` (the same as ``hace_dev.py``'s, and concave-v2 generator seed 0).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from criteria_dev import PRESET
from criteria_dev import dev_instances as instances
from hace_dev import budgets, cell_key, horizon

import risingbandits as rb
from risingbandits.analysis.stats import mean_ci
from risingbandits.reproduce.settings import PAPER_POLICIES


def policies(names: str, params: str, setting: str) -> dict[str, rb.Policy]:
    """The named policies, the paper's ten with the setting's preset (as in ``hace_dev.py``)."""
    extra = json.loads(params)
    out = {}
    for name in names.split(","):
        preset = PRESET[setting] if name in PAPER_POLICIES else None
        out[name] = rb.make_policy(name, preset=preset, **extra.get(name, {}))
    return out


def paired(setting: str, pols: dict[str, rb.Policy], runs: int, cells: list) -> None:
    gaps: dict[str, dict[str, list[float]]] = {n: {cell_key(b): [] for b in cells} for n in pols}
    for instance in instances(setting):
        for budget in cells:
            for name, policy in pols.items():
                res = rb.simulate(instance, policy, horizon(instance, budget), runs)
                gaps[name][cell_key(budget)] += res.final_gap.tolist()
    first = next(iter(pols))
    for budget in cells:
        key = cell_key(budget)
        line = f"{setting:8s} {key:8s} " + " ".join(
            f"{n} {np.mean(gaps[n][key]):.4f}" for n in pols
        )
        for name in list(pols)[1:]:
            ci = mean_ci(np.asarray(gaps[name][key]) - np.asarray(gaps[first][key]))
            line += f" | {name} - {first} {ci.mean:+.4f} ± {(ci.high - ci.low) / 2:.4f}"
        print(line)


def split(setting: str, pols: dict[str, rb.Policy], runs: int, cells: list) -> None:
    for budget in cells:
        parts: dict[str, list[tuple[float, ...]]] = {n: [] for n in pols}
        for instance in instances(setting):
            t = horizon(instance, budget)
            at_t = instance.means[:, t - 1]
            best = int(np.argmax(at_t))
            for name, policy in pols.items():
                res = rb.simulate(instance, policy, t, runs)
                for s in range(runs):
                    rec, pulls = int(res.recommended[s]), res.pulls[s]
                    got = instance.means[rec, pulls[rec] - 1]
                    parts[name].append(
                        (at_t[best] - at_t[rec], at_t[rec] - got, pulls[rec] / t, rec == best)
                    )
        for name, rows in parts.items():
            a = np.asarray(rows, dtype=float)
            print(
                f"{setting:8s} {cell_key(budget):8s} {name:20s} wrong arm {a[:, 0].mean():.4f}"
                f"  under-training {a[:, 1].mean():.4f}  deployed arm's share "
                f"{a[:, 2].mean():.2f}  deployed the best {a[:, 3].mean():.2f}"
            )


def per_instance(setting: str, pols: dict[str, rb.Policy], runs: int, cells: list) -> None:
    for budget in cells:
        mean: dict[str, list[float]] = {name: [] for name in pols}
        for j, instance in enumerate(instances(setting)):
            t = horizon(instance, budget)
            value = instance.means[:, :t].sum(axis=1) / t
            line = f"{cell_key(budget)} {j:3d} best {int(np.argmax(value))} of {instance.n_arms}"
            for name, policy in pols.items():
                res = rb.simulate(instance, policy, t, runs)
                mean[name].append(float(res.regret.mean()))
                line += f" | {name} {mean[name][-1]:8.1f} pulls {res.pulls[0].tolist()}"
            print(line)
        print(" ".join(f"{name} mean {np.mean(m):.1f}" for name, m in mean.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("paired", "split", "instances"))
    parser.add_argument("setting", choices=tuple(PRESET))
    parser.add_argument("policies", help="comma-separated names; the first is the reference")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--per-arm", type=int, default=None, help="one budget per candidate")
    parser.add_argument("--percent", type=int, default=None, help="one budget: % of the full T")
    parser.add_argument("--params", default="{}", help='{"policy": {"name": value}} (JSON)')
    args = parser.parse_args()
    cells = budgets(args.setting) if args.per_arm is None else [("m", args.per_arm)]
    cells = cells if args.percent is None else [("%", args.percent)]
    pols = policies(args.policies, args.params, args.setting)
    what = {"paired": paired, "split": split, "instances": per_instance}[args.what]
    what(args.setting, pols, args.runs, cells)


if __name__ == "__main__":
    main()
