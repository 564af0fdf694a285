"""Cold compile time of each compiled entry point of a policy, each in a fresh process.

Usage:
    python benchmarks/bench_compile.py                         # HACE-UCB, the default
    python benchmarks/bench_compile.py --policies hace-ucb,asha

Each figure is the wall time of a fresh process's first call with ``RISINGBANDITS_NO_JIT_CACHE=1``
(no disk cache): ``simulate`` (the pull simulator, 200 rounds of the intro instance), ``budget``
(the event loop, ``simulate(..., budget=50, workers=2)`` on three arms with costs) and ``online``
(five ``select`` + ``update`` of a ``ModelSelector`` with a budget of 60 pulls). Compare two
versions by putting each one's ``src`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse

from bench_simulator import compile_seconds

FIRST_CALLS = {
    "simulate": "rb.simulate(rb.intro(1000), POLICY, horizon=200, seeds=1)",
    "budget": (
        "costly = rb.from_means([[0.1] * 100, [0.2] * 100, [0.3] * 100], costs=[1.0, 2.0, 0.5])\n"
        "rb.simulate(costly, POLICY, budget=50.0, workers=2, seeds=1)"
    ),
    "online": (
        "from risingbandits.modelselect import ModelSelector\n"
        "selector = ModelSelector(['a', 'b', 'c'], budget=60, policy=POLICY)\n"
        "for i in range(5):\n"
        "    selector.update(selector.select(), 0.1 * i)"
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="hace-ucb")
    parser.add_argument("--kinds", default=",".join(FIRST_CALLS))
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    unknown = [k for k in kinds if k not in FIRST_CALLS]
    if unknown:
        parser.error(f"--kinds={args.kinds} is not allowed: use some of {', '.join(FIRST_CALLS)}")
    print(f"| policy | {' | '.join(f'{k} (s)' for k in kinds)} |")
    print(f"|---|{'---|' * len(kinds)}")
    for policy in args.policies.split(","):
        seconds = [compile_seconds(policy, True, FIRST_CALLS[kind]) for kind in kinds]
        print(f"| {policy} | {' | '.join(f'{x:.2f}' for x in seconds)} |", flush=True)


if __name__ == "__main__":
    main()
