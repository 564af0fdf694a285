"""A screen of the deployed statistic with as many workers as candidates, on the development
instances only (issue 22; the threshold of docs/deadlines-tuning.md, "The longer mean when the
rewards are very noisy").

Usage:
    python tuning/deploy_noise_screen.py --draws 0-7

With W >= K every candidate trains on its own worker, so a policy's pulls are the most each can
make by the deadline at its own cost and only the deployed model differs. Per (bed, deadline of m
steps per candidate), this draws each run's rewards (the instance's noise; live-v1 has none),
deploys the best mean of the last quarter of the rewards (the default's statistic) or, when the
pooled noise estimate exceeds a threshold, the best mean of the last half (a stand-in for
ACE-UCB's level), and prints the paired change in the final-model gap on the test curves, mean
and 95% half-width over runs. A second table keeps the 0.06 switch and shrinks the deployed
statistic toward the candidates' mean by its own noise when the estimate exceeds a threshold
(:func:`~risingbandits.policies.machinery.common.shrunk_best`, the policy's
``SHRINK_NOISE``). A third compares the policy as it is (shrunk above ``SHRINK_NOISE``, the
0.06 switch kept) with the longer mean shrunk whenever the estimate exceeds a threshold. The
statistics and the noise estimate are the policy's own
(:func:`~risingbandits.policies.budget.phases.recent_mean`,
:func:`~risingbandits.policies.machinery.noise_level.noise_sigma_residuals`: second differences
of each candidate's rewards, r^2 / 6 pooled over candidates). A screen, not the judge:
the threshold it suggests is then read with ``tuning/deadlines_dev.py``.
"""

from __future__ import annotations

import argparse

import numpy as np
from deadlines_dev import draw_list

from risingbandits.policies.budget.phases import recent_mean
from risingbandits.policies.machinery.common import shrunk_best
from risingbandits.policies.machinery.noise_level import (
    new_noise_level,
    noise_observe,
    noise_sigma_residuals,
)
from risingbandits.policies.machinery.windows import fraction_window
from risingbandits.policies.rising.hace import DEPLOY_NOISE, SHRINK_NOISE
from risingbandits.reproduce.deadlines import deadline_beds, deadline_for
from risingbandits.reproduce.settings import FULL
from risingbandits.reproduce.task_rows import beds_not_run, missing_beds
from risingbandits.simulate_budget import cumulative_costs

THRESHOLDS = (0.0, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08)
STEPS = (4, 16, 64, 256)


def prefix_sums(rewards: np.ndarray) -> np.ndarray:
    """Each candidate's prefix sums with a leading 0, as an ArmHistory keeps them."""
    return np.concatenate([np.zeros((len(rewards), 1)), np.cumsum(rewards, axis=1)], axis=1)


def recent(prefix: np.ndarray, pulls: np.ndarray, share: float) -> np.ndarray:
    """Each candidate's mean of its last max(1, floor(share x n)) rewards (the policy's
    :func:`~risingbandits.policies.budget.phases.recent_mean`)."""
    return np.array([recent_mean(prefix, i, int(n), share, 1) for i, n in enumerate(pulls)])


def shrunk(prefix: np.ndarray, pulls: np.ndarray, share: float, sigma: float) -> int:
    """The candidate :func:`shrunk_best` deploys by the mean of the last ``share`` of the
    rewards (each averaging max(1, floor(share x n)) of them)."""
    averaged = np.array([fraction_window(int(n), share) for n in pulls], float)
    mask = np.ones(len(pulls), np.bool_)
    return int(shrunk_best(recent(prefix, pulls, share), averaged, mask, sigma))


def noise(prefix: np.ndarray, pulls: np.ndarray) -> float:
    """The residuals' own noise estimate of the policy's noise level
    (:func:`~risingbandits.policies.machinery.noise_level.noise_sigma_residuals`) after each
    candidate's rewards, one candidate after another."""
    level = new_noise_level(None)
    for i, n in enumerate(pulls):
        for m in range(1, int(n) + 1):
            noise_observe(level, prefix, i, m)
    return noise_sigma_residuals(level)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", default="0-7", help="generator seeds of the candidates")
    draws = draw_list(parser, parser.parse_args().draws)
    changes: dict[tuple[str, int], list[list[float]]] = {}
    shrinks: dict[tuple[str, int], list[list[float]]] = {}
    longer: dict[tuple[str, int], list[list[float]]] = {}
    for title, why in beds_not_run(deadline_beds(FULL, "dev")):
        print(f"not read: {title}: {why}")
    for draw in draws:
        beds = deadline_beds(FULL, "dev", draw)
        missing = missing_beds(beds)
        for bed in (b for b in beds if b not in missing):
            for index in range(bed.count):
                instance = bed.instance(index)
                cum = cumulative_costs(instance)
                judged = instance.means if instance.test_means is None else instance.test_means
                for steps in STEPS:
                    deadline = deadline_for(instance, steps, instance.n_arms)
                    pulls = np.array([np.searchsorted(row, deadline, "right") - 1 for row in cum])
                    pulls = np.clip(pulls, 1, instance.max_horizon)
                    rng = np.random.default_rng([draw, index, steps])
                    for _ in range(bed.seeds):
                        rewards = instance.means[:, : pulls.max()]
                        if instance.noise_std is not None:
                            std = instance.noise_std[:, : pulls.max()]
                            rewards = rewards + std * rng.standard_normal(std.shape)
                        prefix = prefix_sums(rewards)
                        value = judged[np.arange(len(pulls)), pulls - 1]
                        short = value[recent(prefix, pulls, 0.25).argmax()]
                        long = value[recent(prefix, pulls, 0.5).argmax()]
                        sigma = noise(prefix, pulls)
                        key = (bed.name, steps)
                        record(changes, key, short - long, sigma)
                        share = 0.5 if sigma > DEPLOY_NOISE else 0.25
                        switch = long if sigma > DEPLOY_NOISE else short
                        kept = value[shrunk(prefix, pulls, share, sigma)]
                        record(shrinks, key, switch - kept, sigma)
                        policy = kept if sigma > SHRINK_NOISE else short
                        half = value[shrunk(prefix, pulls, 0.5, sigma)]
                        record(longer, key, policy - half, sigma)
    show(changes, "longer mean above the threshold - best mean of the last quarter")
    show(shrinks, f"shrunk above the threshold - the longer mean above {DEPLOY_NOISE}")
    show(longer, "the longer mean shrunk above the threshold - the policy")


def record(
    table: dict[tuple[str, int], list[list[float]]],
    key: tuple[str, int],
    change: float,
    sigma: float,
) -> None:
    """One run's row: the paired change where the noise estimate exceeds each threshold."""
    table.setdefault(key, []).append([change if sigma > tau else 0.0 for tau in THRESHOLDS])


def show(changes: dict[tuple[str, int], list[list[float]]], title: str) -> None:
    """Paired change in the final-model gap per (bed, steps) and threshold: mean ± 95%."""
    print(f"paired change in the final-model gap ({title})")
    print("bed   m  | " + " | ".join(f"> {tau:.2f}" for tau in THRESHOLDS))
    for (name, steps), rows in changes.items():
        table = np.asarray(rows)
        half = 1.96 * table.std(axis=0) / np.sqrt(len(table))
        cells = (f"{m:+.4f}±{h:.4f}" for m, h in zip(table.mean(axis=0), half, strict=True))
        print(f"{name:5} {steps:2d} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
