"""Helpers of the live-training tests: a task file as the builder writes it, with made-up
accuracies (so a test of the family need not spend minutes recording 1,024 real units)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from risingbandits.instances.live import BATCH, DATA_SHA256, pool_names
from risingbandits.instances.live_cache import Task, cache_folder, write_task

SIZES = {"train": 285, "validation": 142, "test": 142}


def made_up_task(dataset: str, seed: int, units: int, rng: np.random.Generator) -> Task:
    """A valid task of ``dataset``: accuracies k / n drawn at random, wall times in (0, 1)."""
    shape = (len(pool_names(dataset)), units)
    val = rng.integers(0, SIZES["validation"] + 1, shape) / SIZES["validation"]
    test = rng.integers(0, SIZES["test"] + 1, shape) / SIZES["test"]
    return Task(
        dataset,
        seed,
        units,
        BATCH,
        pool_names(dataset),
        val,
        test,
        rng.uniform(0.001, 1.0, shape),
        dict(SIZES),
        DATA_SHA256[dataset],
        {"scikit-learn": "0", "numpy": "0", "scipy": "0", "python": "3"},
    )


def write_made_up(dataset: str, seed: int, units: int, rng: np.random.Generator) -> Task:
    """Write :func:`made_up_task` into the current cache root (``$RISINGBANDITS_CACHE_DIR``)."""
    task = made_up_task(dataset, seed, units, rng)
    write_task(cache_folder(units), task)
    return task


def task_file(root: Path, dataset: str, seed: int, units: int = 1024) -> Path:
    key = "live-v1" if units == 1024 else f"live-v1-units{units}"
    return root / "live" / key / f"{dataset}-{seed}.npz"
