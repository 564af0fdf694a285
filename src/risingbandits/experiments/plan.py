"""The plan of a sweep: cells (instance, policy, horizon, seed) grouped into tasks.

A task is one (instance, policy) pair, a contiguous chunk of seed indices and every horizon of
the sweep. A policy that uses the horizon is simulated once per horizon; one that does not is
simulated once to the largest horizon and read at every horizon. Chunks are sized so that a task
simulates about ``target_steps`` rounds (about 0.5-5 s on one core; the number of arms is not
counted). Task ids are a pure function of the spec and ``target_steps``: the store names a part
file by its task id, so resuming means running the tasks whose part is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from risingbandits.experiments.spec import InstanceRef, PolicyRef, Spec

TARGET_STEPS = 8_000_000


@dataclass(frozen=True)
class Task:
    """One unit of work: all horizons of one (instance, policy) pair for a chunk of seeds (the
    instance's own horizons when the spec gives percents of full horizons)."""

    id: str
    instance: InstanceRef
    policy: PolicyRef
    horizons: tuple[int, ...]
    seeds: range
    """Seed indices, a contiguous range (small whatever the number of seeds)."""
    sweep_seed: int

    @property
    def n_cells(self) -> int:
        return len(self.horizons) * len(self.seeds)


@dataclass(frozen=True)
class Plan:
    """Every task of a sweep, in a deterministic order: instance-major; within an instance,
    the first seed chunk of every policy, then the second ones, and so on (workers that start
    together then compile different kernels rather than the same one twice)."""

    tasks: tuple[Task, ...]
    target_steps: int

    @property
    def n_cells(self) -> int:
        return sum(t.n_cells for t in self.tasks)

    def cells_by_policy(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.tasks:
            out[t.policy.label] = out.get(t.policy.label, 0) + t.n_cells
        return out


def steps_per_seed(policy: PolicyRef, horizons: tuple[int, ...]) -> int:
    """Rounds simulated for one seed: every horizon, or only the largest for a horizon-free
    policy (its single run is read at every horizon)."""
    return sum(horizons) if policy.uses_horizon else max(horizons)


def seed_chunks(n_seeds: int, per_seed: int, target_steps: int) -> list[range]:
    """Seed indices 0..n_seeds-1 in contiguous chunks of about ``target_steps`` rounds each,
    as equal in size as possible."""
    per_task = max(1, min(n_seeds, target_steps // max(1, per_seed)))
    n_chunks = -(-n_seeds // per_task)
    bounds = [round(k * n_seeds / n_chunks) for k in range(n_chunks + 1)]
    return [range(bounds[k], bounds[k + 1]) for k in range(n_chunks)]


def make_plan(spec: Spec, target_steps: int = TARGET_STEPS) -> Plan:
    """The tasks of ``spec``; ids look like ``i00012-p003-s00040`` (instance, policy and first
    seed index)."""
    if target_steps < 1:
        raise ValueError(f"target_steps={target_steps} is not allowed: use an integer >= 1")
    tasks = []
    for i, inst in enumerate(spec.instances):
        horizons = spec.horizons_of(inst)
        chunks = [
            seed_chunks(spec.seeds, steps_per_seed(pol, horizons), target_steps)
            for pol in spec.policies
        ]
        for k in range(max(len(c) for c in chunks)):
            for p, pol in enumerate(spec.policies):
                if k < len(chunks[p]):
                    chunk = chunks[p][k]
                    task_id = f"i{i:05d}-p{p:03d}-s{chunk.start:05d}"
                    tasks.append(Task(task_id, inst, pol, horizons, chunk, spec.sweep_seed))
    return Plan(tuple(tasks), target_steps)
