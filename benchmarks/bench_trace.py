"""What index traces cost the compiled simulator: tracing off (against an older checkout without
traces), every round, and every 100th round.

Usage:
    python benchmarks/bench_trace.py                                  # cure-ucb, red-ucb, ucb1
    python benchmarks/bench_trace.py --policies all --rounds 5
    git worktree add /tmp/old bd03512                                 # a commit before traces
    python benchmarks/bench_trace.py --baseline /tmp/old              # ... compared with it

Each figure is steps per CPU second of ``simulate(instance, policy, T = 50,000, seeds = 20)``
on the LTF instance of ``bench_simulator.py`` at K = 5, one core: every measurement runs in a
fresh process (warm-up call, then the best of ``--inner`` timings on the process's CPU clock),
the variants take turns, and the best over ``--rounds`` turns is reported (the machine may be
shared: the best is the least disturbed run). ``--baseline DIR`` (repeatable) measures tracing
off with the sources in ``DIR/src`` as well (``PYTHONPATH``), so "off" can be compared with the
step loop before traces existed on the same machine, at the same moment.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_POLICIES = "cure-ucb,red-ucb,ucb1"
VARIANTS = {"off": {}, "every round": {"trace": True}, "every 100th": {"trace": True}}


def measure(policy: str, variant: str, arms: int, horizon: int, seeds: int, inner: int) -> float:
    """Steps per CPU second of one variant in this process (the ``--child`` mode): the best of
    ``inner`` timings after a warm-up call, timed with the process's CPU clock, which other
    jobs on a shared machine disturb far less than the wall clock."""
    from bench_simulator import bench_instance
    from risingbandits import simulate
    from risingbandits.policies import make_policy

    options: dict[str, object] = dict(VARIANTS[variant])
    if variant == "every 100th":
        options["trace_every"] = 100
    instance, pol = bench_instance(arms, horizon), make_policy(policy)
    simulate(instance, pol, min(horizon, 100), 1, **options)  # compile or cache load
    best = float("inf")
    for _ in range(inner):
        start = time.process_time()
        simulate(instance, pol, horizon, seeds, **options)
        best = min(best, time.process_time() - start)
    return seeds * horizon / best


def die_with_parent() -> None:
    """Linux: end this measuring process when the benchmark that started it ends, even by
    SIGKILL (prctl PR_SET_PDEATHSIG); elsewhere nothing."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


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
        check=False,
        timeout=600,
    )
    if out.returncode != 0:
        raise SystemExit(f"measuring {policy} ({variant}, src {src}) failed:\n{out.stderr}")
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
    parser.add_argument(
        "--baseline",
        type=Path,
        action="append",
        default=[],
        help="a checkout to measure tracing off with (its src/; repeatable)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        die_with_parent()
        print(measure(*json.loads(args.child)))
        return

    from risingbandits.policies import POLICIES

    names = list(POLICIES) if args.policies == "all" else args.policies.split(",")
    sources: dict[str, Path | None] = {"off": None}
    for base in args.baseline:
        sources[f"off, {base.name}"] = base.resolve() / "src"
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
