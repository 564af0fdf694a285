"""Engine speed: (a) overhead of a sweep over bare ``simulate`` calls, (b) summary of a big store.

Usage:
    python benchmarks/bench_engine.py                 # both parts
    python benchmarks/bench_engine.py --part overhead --repeats 5
    python benchmarks/bench_engine.py --part summary --rows 600000

(a) A 1,000-cell sweep (10 ltf-v1 instances x 4 policies x 5 horizons T = 10,000..50,000 x 5
seeds) run by ``run_sweep(..., executor="serial")`` (plan, instance rebuild, Parquet parts with
fsync, manifest) against the same simulations done by bare ``simulate_horizons`` calls with the
same run seeds, both after a warm-up that compiles every kernel. Best of ``--repeats``.
(b) A synthetic store of ``--rows`` rows (100 instances x 10 policies x 10 horizons x seeds; the
paper's LTF spec with more seeds; random regrets, nothing simulated) summarised by
``summarize`` (t-intervals, average ranks at every horizon, win rates at the largest) and by
the ``risingbandits sweep summary`` command in a fresh process.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from risingbandits.analysis.summary import summarize
from risingbandits.experiments import Store, make_plan, parse_spec, run_seed, run_sweep
from risingbandits.experiments.worker import ROW_SCHEMA, load_instance
from risingbandits.reproduce.settings import PAPER_POLICIES
from risingbandits.simulate import simulate_horizons

OVERHEAD_SPEC = """
description = "engine overhead benchmark: 1,000 cells"
sweep_seed = 0
seeds = 5
horizons = [10000, 20000, 30000, 40000, 50000]

[[instances]]
family = "ltf-v1"
count = 10
generator_seed = 0

[[policies]]
name = "cure-ucb"
preset = "ltf"

[[policies]]
name = "red-ucb"
preset = "ltf"

[[policies]]
name = "sw-ucb"
preset = "ltf"

[[policies]]
name = "ucb1"
"""

CLI = "from risingbandits.cli import main; main()"


def bare(spec_text: str) -> float:
    """Seconds of the same simulations as the sweep, by direct calls."""
    spec = parse_spec(spec_text)
    start = time.perf_counter()
    for ref in spec.instances:
        instance = ref.build(max(spec.horizons))
        for pol in spec.policies:
            seeds = [run_seed(spec.sweep_seed, ref.id, s) for s in range(spec.seeds)]
            simulate_horizons(instance, pol.build(), spec.horizons, seeds)
    return time.perf_counter() - start


def engine(spec_text: str, out: Path) -> float:
    start = time.perf_counter()
    run_sweep(parse_spec(spec_text), out, executor="serial")
    return time.perf_counter() - start


def overhead(repeats: int) -> None:
    spec = parse_spec(OVERHEAD_SPEC)
    plan = make_plan(spec)
    # warm-up: compile (or load) every kernel at a tiny horizon
    for pol in spec.policies:
        simulate_horizons(spec.instances[0].build(100), pol.build(), [100], 1)
    best_bare, best_engine = float("inf"), float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(repeats):
            load_instance.cache_clear()
            best_engine = min(best_engine, engine(OVERHEAD_SPEC, Path(tmp) / f"run{k}"))
            best_bare = min(best_bare, bare(OVERHEAD_SPEC))
    print(f"(a) sweep of {plan.n_cells:,} cells in {len(plan.tasks)} tasks (serial, 1 core)")
    print(f"    bare simulate calls : {best_bare:8.3f} s")
    print(f"    engine (run_sweep)  : {best_engine:8.3f} s")
    print(f"    overhead            : {100 * (best_engine / best_bare - 1):+7.1f} %")


def synthetic_store(path: Path, n_rows: int) -> int:
    """The paper's LTF spec with enough seeds for ``n_rows`` rows; random regrets."""
    cells_per_seed = 100 * len(PAPER_POLICIES) * 10
    seeds = max(1, n_rows // cells_per_seed)
    text = (Path(__file__).resolve().parents[1] / "examples" / "ltf-paper.toml").read_text()
    spec = parse_spec(text.replace("seeds = 1\n", f"seeds = {seeds}\n", 1))
    plan = make_plan(spec)
    store = Store(path)
    store.create(spec, plan)
    rng = np.random.default_rng(0)
    for task in plan.tasks:
        hs = np.repeat(task.horizons, len(task.seeds))
        n = hs.size
        columns = {
            "instance": [task.instance.id] * n,
            "family": ["ltf-v1"] * n,
            "n_arms": np.full(n, 3, np.int32),
            "noise": ["gaussian:0.1"] * n,
            "policy": [task.policy.label] * n,
            "policy_name": [task.policy.name] * n,
            "params": [task.policy.params_json] * n,
            "reconstruction": [task.policy.reconstruction] * n,
            "horizon": hs,
            "seed": np.tile(task.seeds, len(task.horizons)),
            "regret": rng.gamma(2.0, 500.0, n) * hs / 50_000,
            "final_gap": rng.uniform(0, 0.1, n),
            "recommended": np.zeros(n, np.int32),
            "reward": rng.uniform(0, 1, n) * hs,
            "pulls": [[int(h) // 3, int(h) // 3, int(h) - 2 * (int(h) // 3)] for h in hs],
            "optimal_arm": np.zeros(n, np.int32),
            "optimal_value": hs * 0.9,
            "wall_time": np.full(n, 0.01),
        }
        store.write_part(task.id, pa.table(columns, schema=ROW_SCHEMA))
    return plan.n_cells


def summary(n_rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store"
        start = time.perf_counter()
        rows = synthetic_store(path, n_rows)
        written = time.perf_counter() - start
        n_parts = len(Store(path).part_files())
        start = time.perf_counter()
        s = summarize(path)
        library = time.perf_counter() - start
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", CLI, "sweep", "summary", str(path), "--format", "csv"],
            check=True,
            capture_output=True,
        )
        command = time.perf_counter() - start
    print(f"(b) store of {rows:,} rows in {n_parts:,} parts (written in {written:.1f} s)")
    print(f"    summarize()                         : {library:6.2f} s")
    print(f"    `risingbandits sweep summary` (CLI) : {command:6.2f} s (fresh process)")
    print(f"    {len(s.regret)} regret cells, {len(s.ranks)} rank cells, win rates at T=50,000")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("overhead", "summary", "both"), default="both")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=600_000)
    args = parser.parse_args()
    python = platform.python_version()
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores, Python {python}")
    if args.part in ("overhead", "both"):
        overhead(args.repeats)
    if args.part in ("summary", "both"):
        summary(args.rows)


if __name__ == "__main__":
    main()
