"""HACE-UCB on the development instances only: the numbers of docs/hace-ucb-tuning.md.

Usage:
    python tuning/hace_dev.py                                   # HACE-UCB's defaults
    python tuning/hace_dev.py --params '{"index_from": 32}'     # a variant
    python tuning/hace_dev.py --policy ace-ucb                  # another policy as candidate
    python tuning/hace_dev.py --out tuning-out                  # where the baselines are cached

Development sets (fixed before any tuning; the held-out sets of ``risingbandits reproduce
heldout`` - generator seed 1, the paper's 7 IMDB curves, the ``test`` halves of lcdb-v1 and
live-v1 - are never read here):

* live: ``live-v1`` split ``dev`` (20 instances: seeds 0-3 of its 5 data sets), 3 runs;
* lcdb: ``lcdb-v1`` split ``dev`` (71 instances), 3 runs;
* imdb: 20 instances of 7 arms drawn (generator 12345) from the 22 curves that are not among
  the paper's 7 arms, Bernoulli rewards, 3 runs;
* ltf, concave: ``ltf-v1`` / ``concave-v1`` generator seed 0, instances 0-29, 1 run.

Budgets: 4, 8, 16, 32, 64 and 128 pulls per candidate (T = K x m) everywhere, and 5, 10 and
20% of each full horizon on live and lcdb (larger shares give T / K >= 48 on every dev
instance, where no halving round runs). Score of a cell: the mean final-model gap
(the policy regret too on ltf and concave), against every other policy of the library with the
presets of the model-selection report (the paper's ten with the setting's preset, the rest with
their defaults); then, against each of Optuna's three pruners (trials of at most m steps), the
mean paired difference of the final-model gap with the candidate run at exactly the steps the
pruner used (< 0: the candidate deploys better models). Baselines are computed once and cached
in ``--out``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from operator import methodcaller
from pathlib import Path
from typing import Any

import numpy as np

import risingbandits as rb
from risingbandits.experiments.store import atomic_write
from risingbandits.instances.families import (
    IMDB_ARMS,
    default_curves_dir,
    family_instance,
    full_horizons,
    read_curves,
)
from risingbandits.integrations.optuna_pruners import PRUNERS, replay
from risingbandits.reproduce.settings import EXTRA_POLICIES, LCDB_PRESET, PAPER_POLICIES

PER_ARM = (4, 8, 16, 32, 64, 128)
PERCENTS = (5, 10, 20)
PRESETS = {"live": LCDB_PRESET, "lcdb": LCDB_PRESET, "imdb": "imdb", "ltf": "ltf"}
PRESETS["concave"] = "concave"
RUNS = {"live": 3, "lcdb": 3, "imdb": 3, "ltf": 1, "concave": 1}
SETTINGS = tuple(PRESETS)
Budget = tuple[str, int]  # ("m", pulls per candidate) or ("%", percent of the full horizon)


def instances(setting: str) -> Iterator[rb.RisingInstance]:
    if setting in ("live", "lcdb"):
        family = f"{setting}-v1"
        count = 20 if setting == "live" else 71
        fulls = full_horizons(family, count, 0, split="dev")
        assert fulls is not None
        for j, full in enumerate(fulls):
            yield family_instance(family, j, 0, full, split="dev")
    elif setting == "imdb":
        with np.load(default_curves_dir() / "curves.npz") as data:
            others = sorted(a for a in data.files if a not in IMDB_ARMS)
        rng = np.random.default_rng(12345)
        for j in range(20):
            names = tuple(sorted(rng.choice(others, 7, replace=False).tolist()))
            table, _ = read_curves(arms=names)
            yield rb.from_means(
                table, rb.Noise("bernoulli"), name=f"imdb-dev/{j}", require_rising=False
            )
    else:
        for j in range(30):
            yield family_instance(f"{setting}-v1", j, 0, 50_000)


def budgets(setting: str) -> list[Budget]:
    extra = [("%", p) for p in PERCENTS] if setting in ("live", "lcdb") else []
    return [("m", m) for m in PER_ARM] + extra


def horizon(instance: rb.RisingInstance, budget: Budget) -> int:
    kind, value = budget
    if kind == "m":
        return instance.n_arms * value
    return max(1, round(value * instance.max_horizon / 100))


def cell_key(budget: Budget) -> str:
    return f"{budget[1]}{'/arm' if budget[0] == 'm' else '%'}"


def evaluate(policy: rb.Policy, setting: str) -> dict[str, list[float]]:
    """{budget: [mean final gap, mean regret]} over the setting's instances and runs."""
    out: dict[str, list[list[float]]] = {cell_key(b): [[], []] for b in budgets(setting)}
    for instance in instances(setting):
        for budget in budgets(setting):
            res = rb.simulate(instance, policy, horizon(instance, budget), RUNS[setting])
            out[cell_key(budget)][0] += res.final_gap.tolist()
            out[cell_key(budget)][1] += res.regret.tolist()
    return {k: [float(np.mean(g)), float(np.mean(r))] for k, (g, r) in out.items()}


def evaluate_pruner(pruner: str, setting: str) -> dict[str, list[list[float]]]:
    """{budget per candidate: [final gaps, steps used]} of an Optuna pruner with trials of at
    most m steps, per unit (instance, run) in :func:`instances` order."""
    out: dict[str, list[list[float]]] = {f"{m}/arm": [[], []] for m in PER_ARM}
    for instance in instances(setting):
        oracle = instance.oracle
        for m in PER_ARM:
            for seed in range(RUNS[setting]):
                run = replay(instance, pruner, m, seed)
                out[f"{m}/arm"][0].append(float(oracle.final_gap(run.pulls, run.recommended)))
                out[f"{m}/arm"][1].append(run.used)
    return out


def paired_with_pruner(
    policy: rb.Policy, setting: str, units: dict[str, list[list[float]]]
) -> dict[str, float]:
    """{budget: mean of (policy's gap - the pruner's)} with the policy run, unit by unit, at
    exactly the steps the pruner used (same rewards: same seed)."""
    out: dict[str, list[float]] = {key: [] for key in units}
    for j, instance in enumerate(instances(setting)):
        for key, (gaps, used) in units.items():
            for seed in range(RUNS[setting]):
                k = j * RUNS[setting] + seed
                res = rb.simulate(instance, policy, int(used[k]), [seed])
                out[key].append(float(res.final_gap[0]) - gaps[k])
    return {key: float(np.mean(d)) for key, d in out.items()}


def baseline_policies(preset: str, candidate: str) -> dict[str, rb.Policy]:
    """Every policy of the report but ``candidate``, the paper's ten with ``preset``."""
    every = {n: rb.make_policy(n, preset=preset) for n in PAPER_POLICIES}
    every |= {n: rb.make_policy(n) for n in EXTRA_POLICIES}
    return {n: p for n, p in every.items() if n != candidate}


Table = dict[str, dict[str, dict[str, Any]]]  # setting -> policy or pruner -> budget -> numbers


def checked(table: object) -> Table:
    """The kept baselines, every field checked (they are read back from ``--out``): settings
    known; per policy, each of the setting's budgets with [mean gap, mean regret]; per pruner,
    each budget per candidate with two equal-length lists (gaps, steps used); finite numbers."""
    if not isinstance(table, dict) or not set(table) <= set(SETTINGS):
        raise SystemExit("hace-dev-baselines.json: unknown settings; delete it to rebuild")
    for setting, named in table.items():
        keys = {cell_key(b) for b in budgets(setting)}
        ok = isinstance(named, dict)
        for name, cells in named.items() if ok else ():
            pruner = name in PRUNERS
            want = {f"{m}/arm" for m in PER_ARM} if pruner else keys
            ok = ok and isinstance(cells, dict) and set(cells) == want
            for pair in cells.values() if ok else ():
                ok = ok and isinstance(pair, list) and len(pair) == 2
                ok = ok and (len(pair[0]) == len(pair[1]) if pruner else True)
                ok = ok and bool(np.isfinite(np.asarray(pair, dtype=float)).all())
        if not ok:
            raise SystemExit(f"hace-dev-baselines.json: {setting} is damaged; delete it")
    return table


def baselines(out: Path, candidate: str) -> Table:
    path = out / "hace-dev-baselines.json"
    table = checked(json.loads(path.read_text())) if path.is_file() else {}
    for setting in SETTINGS:
        mine = table.setdefault(setting, {})
        for name, policy in baseline_policies(PRESETS[setting], candidate).items():
            if name not in mine:
                mine[name] = evaluate(policy, setting)
        for pruner in PRUNERS:
            if pruner not in mine:
                mine[pruner] = evaluate_pruner(pruner, setting)
        out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(table, indent=1).encode()
        atomic_write(path, methodcaller("write", text))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--policy", default="hace-ucb")
    parser.add_argument("--params", default="{}", help="the candidate's parameters (JSON)")
    parser.add_argument("--out", type=Path, default=Path("tuning-out"))
    parser.add_argument("--settings", default=",".join(SETTINGS))
    args = parser.parse_args()
    base = baselines(args.out, args.policy)
    policy = rb.make_policy(args.policy, **json.loads(args.params))
    print(repr(policy))
    print("setting  budget   gap (best other)                     ratio | regret ratio")
    wins, cells, ratios = 0, 0, []
    for setting in args.settings.split(","):
        ours = evaluate(policy, setting)
        for key, (gap, regret) in ours.items():
            others = {
                n: v[key]
                for n, v in base[setting].items()
                if key in v and not n.startswith("optuna")
            }
            rival, best = min(((n, v[0]) for n, v in others.items()), key=lambda x: x[1])
            ratio = gap / best if best > 0 else float("inf") if gap > 0 else 1.0
            ratios.append(ratio)
            cells += 1
            wins += gap <= best
            reg = ""
            if setting in ("ltf", "concave"):
                r_name, r_best = min(((n, v[1]) for n, v in others.items()), key=lambda x: x[1])
                reg = f"| {regret:8.1f} ({r_name} {r_best:.1f}) {regret / r_best:.2f}"
            print(
                f"{setting:8s} {key:8s} {gap:.4f} ({rival} {best:.4f})"
                f"{'':>{max(0, 24 - len(rival))}} {ratio:5.2f} {reg}"
            )
    print(
        f"lowest mean gap in {wins} of {cells} cells; mean ratio {np.mean(ratios):.3f}, "
        f"max {max(ratios):.2f}"
    )
    print("paired with Optuna's pruners at the steps each used: mean (candidate - pruner) gap")
    for setting in args.settings.split(","):
        for pruner in PRUNERS:
            diffs = paired_with_pruner(policy, setting, base[setting][pruner])
            cells_text = " ".join(f"{k} {v:+.4f}" for k, v in diffs.items())
            print(f"{setting:8s} {pruner:17s} {cells_text}")


if __name__ == "__main__":
    main()
