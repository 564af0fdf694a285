"""Speed of the IMDB model-selection pieces: learner steps, a live run, curve regeneration.

Usage:
    python benchmarks/bench_learners.py                 # everything
    python benchmarks/bench_learners.py --runs 4 --skip-live

Needs the reviews in the cache (``risingbandits data imdb``). Every compiled function is
warmed up first, so the figures exclude Numba compile time (reported separately).

1. One predict+train step of each learner: ``--runs`` runs of 50,000 pulls in the compiled
   stream loop, mean microseconds per step; and the cost of one ``pull_one`` call from Python.
2. A 50,000-pull live run of CURE-UCB (IMDB preset) over the 7 learners, after featurisation.
3. Curve regeneration: ``--runs`` runs of every learner with 2 worker threads (the command
   ``risingbandits data curves imdb``), projected to 7 curves x 100 runs.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from risingbandits.instances.families import IMDB_ARMS
from risingbandits.modelselect.curves import regenerate_curves
from risingbandits.modelselect.imdb_data import load_features
from risingbandits.modelselect.learners import new_state, parse_learners, pull_one, run_stream
from risingbandits.modelselect.live import run_live

PULLS = 50_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4, help="runs per learner for 1. and 3.")
    parser.add_argument("--skip-live", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, {platform.processor()}")

    start = time.perf_counter()
    bow = load_features()
    print(f"features loaded (cached) in {time.perf_counter() - start:.2f} s")
    arrays = bow.arrays()
    specs = parse_learners(list(IMDB_ARMS))
    rng = np.random.default_rng(0)

    start = time.perf_counter()
    for spec in specs:
        state = new_state(spec, bow.n_features, rng)
        run_stream(state, *arrays, np.arange(100), np.zeros(100))
        pull_one(state, *arrays, 0)
    print(f"compile (or load from cache) the learners: {time.perf_counter() - start:.1f} s")

    print(f"\n1. one predict+train step (mean over {args.runs} x {PULLS:,} pulls)")
    for spec in specs:
        total = 0.0
        for _ in range(args.runs):
            state = new_state(spec, bow.n_features, rng)
            order = rng.permutation(bow.n_docs)
            begin = time.perf_counter()
            run_stream(state, *arrays, order, np.zeros(PULLS))
            total += time.perf_counter() - begin
        calls = 20_000
        state = new_state(spec, bow.n_features, rng)
        begin = time.perf_counter()
        for j in range(calls):
            pull_one(state, *arrays, j)
        from_python = (time.perf_counter() - begin) / calls
        print(
            f"   {spec.name:<10} {total / (args.runs * PULLS) * 1e6:6.2f} us/step compiled   "
            f"{from_python * 1e6:6.2f} us per pull_one call from Python"
        )

    if not args.skip_live:
        start = time.perf_counter()
        run_live(bow, specs, "cure-ucb", 200, seed=0)
        print(
            f"\n2. live run: warm-up (compile policy, selector) {time.perf_counter() - start:.1f} s"
        )
        start = time.perf_counter()
        result = run_live(bow, specs, "cure-ucb", PULLS, seed=0)
        elapsed = time.perf_counter() - start
        print(
            f"   cure-ucb (imdb preset), 7 learners, {PULLS:,} pulls: {elapsed:.2f} s "
            f"({elapsed / PULLS * 1e6:.1f} us per pull); pulls {result.pulls.tolist()}"
        )

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        regenerate_curves(bow, specs, args.runs, Path(tmp) / "c.npz", workers=2)
        elapsed = time.perf_counter() - start
    projected = elapsed * 100 / args.runs
    print(
        f"\n3. curves: 7 learners x {args.runs} runs x {PULLS:,} pulls, 2 workers: {elapsed:.1f} s "
        f"({7 * args.runs / elapsed:.2f} runs/s); projected 7 x 100 runs: "
        f"{projected:.0f} s = {projected / 60:.1f} min"
    )


if __name__ == "__main__":
    main()
