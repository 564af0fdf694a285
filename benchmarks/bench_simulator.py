"""Steps per second of the compiled simulator and of the online object, per policy.

Usage:
    python benchmarks/bench_simulator.py                       # CURE-UCB at K = 2, 5, 10
    python benchmarks/bench_simulator.py --policies all --arms 5
    python benchmarks/bench_simulator.py --policies red-ucb,sw-ucb --arms 5 --markdown

Each figure is the best of ``--repeats`` timings of ``simulate(instance, policy, T=50,000,
seeds=20)`` on an LTF instance (Gaussian noise 0.1), after a warm-up call, on one core. The
online figure drives the same policy through ``reset/select/update`` in a Python loop. Compile
time is measured apart, in fresh processes: cold (no disk cache) and warm (kernels loaded from
the on-disk cache). ``--clock cpu`` times the compiled runs by the process's CPU time instead of
the wall clock: on a machine shared with other jobs it counts only the time the simulation ran.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time

import numpy as np

import risingbandits as rb
from risingbandits.policies import POLICIES, make_policy
from risingbandits.seeding import reward_key


def bench_instance(n_arms: int, horizon: int) -> rb.RisingInstance:
    rng = np.random.default_rng(12345 + n_arms)
    b = rng.uniform(0.1, 1.0, n_arms)
    t_sat = rng.uniform(0.05 * horizon, horizon, n_arms)
    return rb.ltf(b, t_sat, horizon, rb.Noise("gaussian", 0.1))


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def compiled_rate(
    policy: rb.Policy,
    instance: rb.RisingInstance,
    horizon: int,
    seeds: int,
    repeats: int,
    clock: str = "wall",
) -> float:
    now = CLOCKS[clock]
    rb.simulate(instance, policy, min(horizon, 100), 1)  # warm-up (compile or cache load)
    best = float("inf")
    for _ in range(repeats):
        start = now()
        rb.simulate(instance, policy, horizon, seeds)
        best = min(best, now() - start)
    return seeds * horizon / best


def online_rate(policy: rb.Policy, instance: rb.RisingInstance, horizon: int) -> float:
    key = reward_key(0)
    counts = np.zeros(instance.n_arms, np.int64)
    policy.reset(instance.n_arms, horizon, seed=0, noise_proxy=instance.noise_proxy)
    policy.update(policy.select(), 0.5)  # warm-up of the compiled entry points
    policy.reset(instance.n_arms, horizon, seed=0, noise_proxy=instance.noise_proxy)
    start = time.perf_counter()
    for _ in range(horizon):
        arm = policy.select()
        counts[arm] += 1
        policy.update(arm, instance.reward(key, arm, int(counts[arm])))
    return horizon / (time.perf_counter() - start)


FIRST_SIMULATION = "rb.simulate(rb.intro(200), make_policy(POLICY), 100, 1)"


def compile_seconds(policy_name: str, cold: bool, first_call: str = FIRST_SIMULATION) -> float:
    """Wall time of ``first_call`` (code using ``rb``, ``make_policy`` and ``POLICY``, default a
    first small simulate()) in a fresh process; ``cold``: without the disk cache."""
    code = (
        "import time, risingbandits as rb\n"
        "from risingbandits.policies import make_policy\n"
        f"POLICY = {policy_name!r}\n"
        "t0 = time.perf_counter()\n"
        f"{first_call}\n"
        "print(time.perf_counter() - t0)\n"
    )
    env = dict(os.environ)
    if cold:
        env["RISINGBANDITS_NO_JIT_CACHE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--policies", default="cure-ucb", help="comma-separated registry names, or 'all'"
    )
    parser.add_argument("--arms", default="2,5,10", help="comma-separated K values")
    parser.add_argument("--horizon", type=int, default=50_000)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--online-horizon", type=int, default=20_000)
    parser.add_argument("--no-compile", action="store_true", help="skip compile-time runs")
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall", help="time compiled runs by wall or CPU"
    )
    args = parser.parse_args()
    names = list(POLICIES) if args.policies == "all" else args.policies.split(",")
    arms = [int(k) for k in args.arms.split(",")]

    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}, "
        f"Python {platform.python_version()}, numba {__import__('numba').__version__}"
    )
    print(
        f"date: {time.strftime('%Y-%m-%d')}; T = {args.horizon:,}, {args.seeds} seeds, "
        f"best of {args.repeats}, {args.clock} clock; load average {os.getloadavg()[0]:.1f}\n"
    )
    print("| policy | K | compiled steps/s | online steps/s |")
    print("|---|---|---|---|")
    for name in names:
        policy = make_policy(name)
        for k in arms:
            inst = bench_instance(k, args.horizon)
            rate = compiled_rate(policy, inst, args.horizon, args.seeds, args.repeats, args.clock)
            online = online_rate(policy, inst, min(args.online_horizon, args.horizon))
            print(f"| {name} | {k} | {rate / 1e6:.2f} M | {online / 1e3:.1f} k |", flush=True)
    if not args.no_compile:
        print("\n| policy | cold compile (s) | warm start from disk cache (s) |")
        print("|---|---|---|")
        for name in names:
            cold = compile_seconds(name, cold=True)
            warm = compile_seconds(name, cold=False)
            print(f"| {name} | {cold:.2f} | {warm:.2f} |", flush=True)


if __name__ == "__main__":
    main()
