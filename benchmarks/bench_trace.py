"""What index traces cost the compiled simulator: tracing off (against an older checkout without
traces), every round, and every 100th round.

Usage:
    python benchmarks/bench_trace.py                                  # cure-ucb, red-ucb, ucb1
    python benchmarks/bench_trace.py --policies all --rounds 5
    git worktree add /tmp/old bd03512                                 # a commit before traces
    python benchmarks/bench_trace.py --baseline /tmp/old              # ... compared with it

Each figure is steps/s of ``simulate(instance, policy, T = 50,000, seeds = 20)`` on the LTF
instance of ``bench_simulator.py`` at K = 5, one core: every measurement runs in a fresh process
(warm-up call, then the best of ``--inner`` timings), the variants take turns, and the best over
``--rounds`` turns is reported (the machine may be shared: the best is the least disturbed run).
``--baseline DIR`` measures tracing off with the sources in ``DIR/src`` as well (``PYTHONPATH``),
so "off" can be compared with the step loop before traces existed on the same machine, at the
same moment.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_POLICIES = "cure-ucb,red-ucb,ucb1"
VARIANTS = {"off": {}, "every round": {"trace": True}, "every 100th": {"trace": True}}


def measure(policy: str, variant: str, arms: int, horizon: int, seeds: int, inner: int) -> float:
    """Steps/s of one variant in this process (the ``--child`` mode)."""
    from bench_simulator import bench_instance, compiled_rate
    from risingbandits.policies import make_policy

    options: dict[str, object] = dict(VARIANTS[variant])
    if variant == "every 100th":
        options["trace_every"] = 100
    instance = bench_instance(arms, horizon)
    return compiled_rate(make_policy(policy), instance, horizon, seeds, inner, **options)


def in_fresh_process(
    args: argparse.Namespace, policy: str, variant: str, src: Path | None
) -> float:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    child = json.dumps([policy, variant, args.arms, args.horizon, args.seeds, args.inner])
    out = subprocess.run(
        [sys.executable, __file__, "--child", child],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return float(out.stdout.strip().splitlines()[-1])


def trace_mib(arms: int, horizon: int, seeds: int, terms: int) -> float:
    """Size of a trace of every round: seeds x T x K x (1 + terms) float64 numbers."""
    return seeds * horizon * arms * (1 + terms) * 8 / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default=DEFAULT_POLICIES, help="comma-separated, or 'all'")
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=50_000)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--inner", type=int, default=3, help="timings per process")
    parser.add_argument("--rounds", type=int, default=3, help="turns of fresh processes")
    parser.add_argument("--baseline", type=Path, help="a checkout without traces (its src/)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(measure(*json.loads(args.child)))
        return

    from risingbandits.policies import POLICIES

    names = list(POLICIES) if args.policies == "all" else args.policies.split(",")
    sources: dict[str, Path | None] = {"off": None}
    if args.baseline is not None:
        sources["off, baseline"] = args.baseline.resolve() / "src"
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}, "
        f"Python {platform.python_version()}; load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"date: {time.strftime('%Y-%m-%d')}; K = {args.arms}, T = {args.horizon:,}, "
        f"{args.seeds} seeds; best of {args.rounds} x {args.inner}\n"
    )
    columns = [*sources, "every round", "every 100th"]
    print(
        "| policy | "
        + " | ".join(f"{c} (M steps/s)" for c in columns)
        + " | trace MiB (every round) |"
    )
    print("|---" * (len(columns) + 2) + "|")
    for name in names:
        best = dict.fromkeys(columns, 0.0)
        for _ in range(args.rounds):
            for column in columns:
                variant = "off" if column.startswith("off") else column
                src = sources.get(column)
                rate = in_fresh_process(args, name, variant, src)
                best[column] = max(best[column], rate)
        terms = len(POLICIES[name].trace_terms)
        mib = trace_mib(args.arms, args.horizon, args.seeds, terms)
        cells = " | ".join(f"{best[c] / 1e6:.2f}" for c in columns)
        print(f"| {name} | {cells} | {mib:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
