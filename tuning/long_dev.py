"""HACE-UCB against ACE-UCB at the long budgets of ``tuning/ace_dev.py`` (development only).

Usage:
    python tuning/long_dev.py                                  # HACE-UCB's defaults
    python tuning/long_dev.py --params '{"index_from": 64}'    # a variant

HACE-UCB was tuned on ``tuning/hace_dev.py``'s budgets (4 to 128 pulls per candidate, 5-20% of
the full horizon); where a rule also changes its choices at longer budgets, this checks that it
keeps what ACE-UCB does there. Same instances, budgets and seeds as ``ace_dev.py`` (LTF and
concave-v1 generator seed 0, the 20 IMDB development instances, lcdb-v1 ``dev``; 20, 60 and 100%
of the full horizon; the held-out sets are never read). Prints, per setting and budget,
ACE-UCB's mean regret per 10,000 pulls and final-model gap, and HACE-UCB minus ACE-UCB paired
per (instance, run) with the half-width of its 95% t-interval.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from ace_dev import SEEDS, SETTINGS, cells

import risingbandits as rb
from risingbandits.analysis.stats import mean_ci


def paired(a: list[float], b: list[float]) -> str:
    ci = mean_ci(np.asarray(b) - np.asarray(a))
    return f"{ci.mean:+.4f} ± {(ci.high - ci.low) / 2:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--params", default="{}", help="HACE-UCB parameters (JSON)")
    args = parser.parse_args()
    pols = {
        "ace": rb.make_policy("ace-ucb"),
        "hace": rb.make_policy("hace-ucb", **json.loads(args.params)),
    }
    print(pols["hace"])
    for setting in SETTINGS:
        regret: dict[str, list[list[float]]] = {n: [[], [], []] for n in pols}
        gap: dict[str, list[list[float]]] = {n: [[], [], []] for n in pols}
        for instance, horizons in cells(setting):
            for k, horizon in enumerate(horizons):
                for name, policy in pols.items():
                    res = rb.simulate(instance, policy, horizon, SEEDS[setting])
                    regret[name][k] += (res.regret / horizon * 1e4).tolist()
                    gap[name][k] += res.final_gap.tolist()
        for k, share in enumerate(("20%", "60%", "100%")):
            print(
                f"{setting:8s} {share:5s} ace-ucb regret {np.mean(regret['ace'][k]):6.1f} gap "
                f"{np.mean(gap['ace'][k]):.4f} | hace-ucb - ace-ucb: regret "
                f"{paired(regret['ace'][k], regret['hace'][k])}, gap "
                f"{paired(gap['ace'][k], gap['hace'][k])}"
            )


if __name__ == "__main__":
    main()
