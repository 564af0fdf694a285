"""The experiment engine: sweep specs, plans, executors, a resumable Parquet store.

Data flow: a TOML spec (:mod:`.spec`) -> cells grouped into tasks (:mod:`.plan`) -> an
executor (:mod:`.executors`) runs each task (:mod:`.worker`) -> rows written as atomic Parquet
parts (:mod:`.store`) -> analysis (:mod:`risingbandits.analysis`).
"""

from risingbandits.experiments.executors import (
    EXECUTORS,
    DaskExecutor,
    MissingExtra,
    ProcessExecutor,
    SerialExecutor,
    make_executor,
)
from risingbandits.experiments.plan import Plan, Task, make_plan
from risingbandits.experiments.seeds import run_seed, stable_hash32
from risingbandits.experiments.spec import Spec, SpecError, load_spec, parse_spec
from risingbandits.experiments.store import Store, StoreError, StoreStatus
from risingbandits.experiments.sweep import SweepResult, resume_sweep, run_sweep

__all__ = [
    "EXECUTORS",
    "DaskExecutor",
    "MissingExtra",
    "Plan",
    "ProcessExecutor",
    "SerialExecutor",
    "Spec",
    "SpecError",
    "Store",
    "StoreError",
    "StoreStatus",
    "SweepResult",
    "Task",
    "load_spec",
    "make_executor",
    "make_plan",
    "parse_spec",
    "resume_sweep",
    "run_seed",
    "run_sweep",
    "stable_hash32",
]
