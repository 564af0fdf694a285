"""Does this Ray keep the CPU of a placement group removed right after it was requested?

Not a use of risingbandits: a check of Ray itself, because Tune's actor reuse does exactly this.
With ``reuse_actors=True`` a trial picked to run gets a placement group requested for it, and
when the paused trial's actor becomes free a moment later Tune gives that actor to it and removes
the group it had just requested. Ray 2.60 sometimes keeps such a group's CPU for the rest of the
session (no actor alive, every group REMOVED), and a later trial needing every CPU waits until
Tune's time limit (README, Ray section).

Each round requests three 1-CPU groups on a local 2-CPU instance, removing each at once, then
waits up to 10 s for both CPUs to be available again. Exit code 0: every round got them back;
1: one did not (and whether a task needing both CPUs could still start is printed).

    python examples/ray_placement_group_leak.py --rounds 500
"""

from __future__ import annotations

import argparse
import sys
import time

import ray
from ray.util.placement_group import placement_group, remove_placement_group

from risingbandits.integrations.ray_tune import local_ray

CPUS = 2


def free_cpus(wait: float) -> float:
    """The CPUs available, waiting up to ``wait`` seconds for all of them."""
    deadline = time.monotonic() + wait
    while ray.available_resources().get("CPU", 0) < CPUS and time.monotonic() < deadline:
        time.sleep(0.1)
    return ray.available_resources().get("CPU", 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=500, help="rounds of three groups")
    rounds = parser.parse_args(argv).rounds
    if rounds < 1:
        parser.error(f"--rounds {rounds} is not allowed: use an integer >= 1")
    with local_ray(num_cpus=CPUS):
        for i in range(1, rounds + 1):
            for _ in range(3):
                remove_placement_group(placement_group([{"CPU": 1}]))
            cpus = free_cpus(wait=10.0)
            if cpus < CPUS:
                both = ray.remote(num_cpus=CPUS)(lambda: None).remote()
                ready, _ = ray.wait([both], timeout=30)
                started = "started" if ready else "did not start within 30 s"
                print(
                    f"round {i}: {cpus:g} of {CPUS} CPUs available 10 s after every placement "
                    f"group was removed; a task needing {CPUS} CPUs {started}"
                )
                return 1
    print(f"{rounds} rounds: every CPU came back each time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
