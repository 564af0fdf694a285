"""Pulls per second of the event-driven simulator (a budget in cost, W workers; issue 22).

Usage:
    python benchmarks/bench_budget.py                              # the default, K = 5, W = 4
    python benchmarks/bench_budget.py --policies hace-ucb,asha,hyperband,ucb1 --workers 1,4,16

Each figure is the best of ``--repeats`` timings of ``simulate_budget(instance, policy, budget,
seeds=20, workers=W)`` after a warm-up call, on one core: the pulls made (finished) divided by
the time. The instance is the LTF instance of ``bench_simulator.py`` (K arms, T = 50,000,
Gaussian noise 0.1) with one cost per arm drawn log-uniformly in [0.5, 2] (seeded), and a
deadline at which the W workers could give every arm 10,000 pulls; ``--kind total`` takes a
total budget of the same capacity. Target (issue 22): >= 2 M pulls/s at K = 5, W = 4.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import risingbandits as rb
from risingbandits.simulate_budget import simulate_budget


def costly_instance(n_arms: int, horizon: int) -> rb.RisingInstance:
    rng = np.random.default_rng(12345 + n_arms)
    b = rng.uniform(0.1, 1.0, n_arms)
    t_sat = rng.uniform(0.05 * horizon, horizon, n_arms)
    costs = np.exp(rng.uniform(np.log(0.5), np.log(2.0), n_arms))
    base = rb.ltf(b, t_sat, horizon, rb.Noise("gaussian", 0.1))
    return rb.from_means(base.means, base.noise, name="ltf-costly", costs=costs)


def rate(policy: str, instance: rb.RisingInstance, workers: int, kind: str, repeats: int) -> float:
    pulls = 10_000
    capacity = float(instance.pull_costs[:, :pulls].sum())
    budget = capacity if kind == "total" else capacity / min(workers, instance.n_arms)
    simulate_budget(instance, policy, budget / 100, 1, workers=workers, budget_kind=kind)
    best, made = float("inf"), 0
    for _ in range(repeats):
        start = time.perf_counter()
        res = simulate_budget(instance, policy, budget, 20, workers=workers, budget_kind=kind)
        best = min(best, time.perf_counter() - start)
        made = int(res.pulls.sum())
    return made / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="hace-ucb")
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--workers", default="4")
    parser.add_argument("--kind", default="deadline", choices=("deadline", "total"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    instance = costly_instance(args.arms, 50_000)
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"| policy | K | W | {args.kind} | M pulls/s |")
    print("|---|---|---|---|---|")
    for name in args.policies.split(","):
        for workers in (int(w) for w in args.workers.split(",")):
            value = rate(name, instance, workers, args.kind, args.repeats)
            print(f"| {name} | {args.arms} | {workers} | {args.kind} | {value / 1e6:.2f} |")


if __name__ == "__main__":
    main()
