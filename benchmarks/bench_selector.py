"""Speed of the model selector's select()+update() from Python, with a scorer that costs nothing.

Usage:
    python benchmarks/bench_selector.py [--policies cure-ucb,ucb1] [--arms 5] [--steps 100000]

1. Sequential: ``select()`` then ``update(arm, score)`` (scores read from a precomputed table),
   pairs per second, best of 3, beside the bare online policy (``Policy.select/update``) on the
   same scores: the selector's own overhead is the difference. Target: >= 200 k/s.
2. Parallel: 4 pulls kept in flight (each update followed by a select), pairs per second.
3. Checkpoint: ``save`` and ``load`` after a whole run of ``--steps`` pulls.

Kernels are compiled (or loaded from the disk cache) before timing.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from risingbandits.modelselect import ModelSelector
from risingbandits.policies import make_policy

REPEATS = 3


def best_rate(run: Callable[[], int]) -> float:
    """Best pairs per second over ``REPEATS`` runs of ``run`` (which returns its pair count)."""
    rates = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        pairs = run()
        rates.append(pairs / (time.perf_counter() - start))
    return max(rates)


def drive(
    select: Callable[[], int],
    update: Callable[[int, float], None],
    steps: int,
    table: list[list[float]],
) -> int:
    """``steps`` sequential select/update pairs on the scores of ``table``."""
    pulls = [0] * len(table)
    for _ in range(steps):
        arm = select()
        update(arm, table[arm][pulls[arm]])
        pulls[arm] += 1
    return steps


def sequential(name: str, k: int, steps: int, table: list[list[float]]) -> tuple[float, float]:
    """(selector pairs/s, bare policy pairs/s)."""

    def selector_run() -> int:
        sel = ModelSelector(k, steps, name, seed=0)
        return drive(sel.select, sel.update, steps, table)

    policy = ModelSelector(k, steps, name).policy
    bare = make_policy(policy["policy"], **policy["params"])

    def policy_run() -> int:
        bare.reset(k, steps, seed=0, noise_proxy=0.5)
        return drive(bare.select, bare.update, steps, table)

    return best_rate(selector_run), best_rate(policy_run)


def parallel(name: str, k: int, steps: int, table: list[list[float]], in_flight: int = 4) -> float:
    def run() -> int:
        sel = ModelSelector(k, steps, name, seed=0, max_pending=in_flight)
        pulls = [0] * k
        for _ in range(in_flight):
            sel.select()
        for _ in range(steps - in_flight):
            arm = sel.in_flight[0]
            sel.update(arm, table[arm][pulls[arm]])
            pulls[arm] += 1
            sel.select()
        return steps - in_flight

    return best_rate(run)


def checkpoint(name: str, k: int, steps: int, table: list[list[float]]) -> tuple[float, float, int]:
    """(save s, load s, file bytes) after a whole run."""
    sel = ModelSelector(k, steps, name, seed=0)
    pulls = [0] * k
    while not sel.done:
        arm = sel.select()
        sel.update(arm, table[arm][pulls[arm]], metrics={"loss": 1.0 - table[arm][pulls[arm]]})
        pulls[arm] += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sel.json"
        start = time.perf_counter()
        sel.save(path)
        saved = time.perf_counter() - start
        start = time.perf_counter()
        ModelSelector.load(path)
        return saved, time.perf_counter() - start, path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="cure-ucb,red-ucb,sw-ucb,ucb1")
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100_000)
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, {platform.processor()}")
    k, steps = args.arms, args.steps
    rng = np.random.default_rng(0)
    curves = 0.9 * (1 - np.exp(-np.arange(1, steps + 1) / rng.uniform(50, 5_000, (k, 1))))
    table = np.clip(curves + rng.normal(0, 0.02, (k, steps)), 0, 1).tolist()
    for name in args.policies.split(","):
        sequential(name, k, 2_000, table)  # compile or load the kernels
        parallel(name, k, 200, table)
        own, bare = sequential(name, k, steps, table)
        flight = parallel(name, k, steps, table)
        saved, loaded, size = checkpoint(name, k, steps, table)
        print(
            f"{name:<10} K={k}  sequential {own / 1e3:6.0f} k/s (bare policy {bare / 1e3:4.0f} "
            f"k/s)   4 in flight {flight / 1e3:5.1f} k/s   checkpoint of {steps:,} steps: "
            f"save {saved:.2f} s, load {loaded:.2f} s, {size / 1e6:.1f} MB"
        )


if __name__ == "__main__":
    main()
