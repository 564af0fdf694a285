"""A small LCDB folder with LCDB's columns and known curves (used instead of the 459 MB package).

Every (data set, learner) curve has 3 splits per anchor with scores mu - d, mu, mu + d, so its
mean is mu and its sample standard deviation (ddof = 1) is d, exactly:

    mu_valid(a) = 0.3 + 0.05 j + 0.02 log2(a / 16),  mu_test = mu_valid - 0.01,
    d(a) = 0.01 + 0.005 j + 0.002 log2(a / 16)

for the j-th learner of ``LEARNERS`` at training-set size a. Both are linear in log(size), so an
interpolation linear in log size between anchors reproduces them exactly at every size.
"""

from __future__ import annotations

import csv
import importlib.metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

LEARNERS = (
    "SVC_linear",
    "SVC_rbf",
    "sklearn.linear_model.LogisticRegression",
    "sklearn.ensemble.RandomForestClassifier",
    "sklearn.tree.DecisionTreeClassifier",
    "sklearn.naive_bayes.BernoulliNB",
    "sklearn.neighbors.KNeighborsClassifier",
)
HEADER = ("openmlid", "learner", "size_train", "size_test", "outer_seed", "inner_seed")
HEADER += ("traintime", "score_train", "score_valid", "score_test")
TO_4096 = (16, 64, 256, 1024, 4096)
TO_2048 = (16, 64, 256, 1024, 2048)
TO_1024 = (16, 64, 256, 1024)
TO_256 = (16, 64, 256)
TO_65536 = (16, 64, 256, 1024, 4096, 16384, 65536)

# data set -> (name, {learner index: anchors})
DATASETS: dict[int, tuple[str, dict[int, tuple[int, ...]]]] = {
    11: (
        "alpha",
        {0: TO_4096, 1: TO_4096, 2: TO_4096, 3: TO_4096, 4: TO_4096, 5: TO_4096, 6: TO_256},
    ),
    12: ("beta", {j: TO_4096 for j in range(6)}),
    13: ("gamma", {0: TO_4096, 1: TO_4096, 2: TO_4096, 3: TO_4096, 4: TO_1024, 5: TO_1024}),
    14: ("delta", {0: TO_4096, 1: TO_4096, 2: TO_2048, 3: TO_4096, 4: TO_4096}),
    15: ("epsilon", {j: TO_2048 for j in range(5)}),
    16: ("zeta", {j: TO_4096 for j in range(1, 7)}),
    17: ("eta", {j: TO_65536 for j in range(5)}),
}
ELIGIBLE = (11, 12, 14, 15, 16, 17)
"""Data sets with at least 5 learners reaching 2,048 samples (lcdb-v1's rule)."""


def mu_valid(j: int, size: Any) -> Any:
    """The mean validation accuracy (a number, or an array for an array of sizes)."""
    return 0.3 + 0.05 * j + 0.02 * np.log2(np.asarray(size, dtype=np.float64) / 16)


def spread(j: int, size: Any) -> Any:
    """The standard deviation across splits (a number, or an array)."""
    return 0.01 + 0.005 * j + 0.002 * np.log2(np.asarray(size, dtype=np.float64) / 16)


def write_lcdb(folder: Path) -> Path:
    """Write ``database-accuracy.csv`` and ``datasets.csv`` into ``folder``; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "database-accuracy.csv").open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(HEADER)
        for openml_id, (_, curves) in DATASETS.items():
            for j, anchors in curves.items():
                for a in anchors:
                    mu, d = float(mu_valid(j, a)), float(spread(j, a))
                    for split, offset in enumerate((-d, 0.0, d)):
                        scores = (repr(mu + offset), repr(mu - 0.01 + offset))
                        out.writerow((openml_id, LEARNERS[j], a, 100, 0, split, 0.01, 1.0, *scores))
    with (folder / "datasets.csv").open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["openmlid", "Name", "NumberOfInstances"])
        for openml_id, (name, _) in DATASETS.items():
            out.writerow([openml_id, name, 5000])
    return folder


def _lcdb_installed() -> bool:
    try:
        importlib.metadata.distribution("lcdb")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


needs_lcdb = pytest.mark.skipif(
    not _lcdb_installed(), reason='lcdb is not installed: pip install -e ".[dev]"'
)
"""Skip a test that reads the real LCDB package when it is not installed (it is in dev)."""
