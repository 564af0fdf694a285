"""The kept rows of the Optuna comparison (``OUT/peers-<size>/<task>.json``): a file is used only
when every field has its type and its fingerprint is the task's; anything else is computed
again, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from risingbandits.reproduce.peers import COLUMNS, FORMAT, _read_task
from risingbandits.reproduce.sections.peers import BedRows, bed_table

PRINT = "f" * 64
ROW = {
    "bed": "lcdb",
    "instance": "lcdb-v1/0/3",
    "seed": 0,
    "budget": 8,
    "pruner": "optuna-sh",
    "method": "hace-ucb",
    "used": 31,
    "final_gap": 0.012,
    "regret": 3.5,
    "seconds": 0.0001,
}


def kept(rows: Any, **changes: Any) -> dict[str, Any]:
    return {"format": FORMAT, "task": "lcdb-3", "fingerprint": PRINT, "rows": rows, **changes}


def columns(**changes: Any) -> dict[str, list[Any]]:
    return {c: [ROW[c], ROW[c]] for c in COLUMNS} | changes


def test_a_whole_task_file_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "lcdb-3.json"
    path.write_text(json.dumps(kept(columns())))
    assert _read_task(path, "lcdb-3", PRINT) == columns()


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[" * 100_000,
        json.dumps(kept(columns(), format="other")),
        json.dumps(kept(columns(), task="lcdb-4")),
        json.dumps(kept(columns(), fingerprint="e" * 64)),  # other policies or instance
        json.dumps({k: v for k, v in kept(columns()).items() if k != "fingerprint"}),
        json.dumps(kept({c: v for c, v in columns().items() if c != "regret"})),
        json.dumps(kept(columns(used=[31]))),  # ragged
        json.dumps(kept(columns(final_gap=["0.1", 0.2]))),  # text where a number goes
        json.dumps(kept(columns(used=[True, 31]))),
        json.dumps(kept(columns(method=[1, 2]))),
        json.dumps(kept(columns(regret=[1e400, 1.0]))),  # inf
        json.dumps(kept(columns(seconds=None))),
    ],
)
def test_a_damaged_or_crafted_task_file_is_not_used(tmp_path: Path, content: str) -> None:
    path = tmp_path / "lcdb-3.json"
    path.write_text(content)
    assert _read_task(path, "lcdb-3", PRINT) is None


def _cell(gaps: dict[str, list[float]], instances: list[str]) -> dict[str, list[Any]]:
    """Rows of one cell (8 steps, Optuna's SH pruner): unit i of every method is on instance
    ``instances[i]``, run i."""
    rows: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    for method, values in gaps.items():
        for i, gap in enumerate(values):
            row = ROW | {"instance": instances[i], "seed": i, "method": method, "final_gap": gap}
            for c in COLUMNS:
                rows[c].append(row[c])
    return rows


def test_the_pruner_is_judged_over_instances_and_over_runs_on_one_instance() -> None:
    """Three instances with five runs each that repeat one another: over the 3 instances the
    default's lead is not significant; on one instance (IMDB) the same 15 runs are the units,
    and over them it is."""
    default, pruner = [0.02, 0.03, 0.01], [0.025, 0.03, 0.02]
    gaps = {"hace-ucb": list(np.repeat(default, 5)), "optuna-sh": list(np.repeat(pruner, 5))}
    rows = BedRows([_cell(gaps, [f"lcdb-v1/0/{i}" for i in range(3) for _ in range(5)])])
    diff = rows.paired((8, "optuna-sh"), "optuna-sh")
    assert diff.n == 3 and diff.mean == pytest.approx(0.005) and diff.low < 0
    assert (
        bed_table("toy", rows).caption
        == "toy: 3 instance(s) x 5 runs per row; intervals over instances"
    )
    one = BedRows([_cell(gaps, ["imdb"] * 15)])
    runs = one.paired((8, "optuna-sh"), "optuna-sh")
    assert runs.n == 15 and runs.low > 0
    assert (
        bed_table("toy", one).caption == "toy: 1 instance(s) x 15 runs per row; intervals over runs"
    )
