"""Constructors of rising instances: the paper's intro example, LTF, tables and functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from risingbandits.instances.base import RisingInstance, arm_name_tuple
from risingbandits.instances.memory import check_table_size
from risingbandits.instances.noise import Noise

INTRO_HORIZON = 50_000


def _check_horizon(T: Any, name: str = "T") -> int:
    if isinstance(T, bool) or not isinstance(T, int | np.integer) or T < 1:
        raise ValueError(f"{name}={T!r} is not allowed: use an integer >= 1")
    return int(T)


def intro(T: int = INTRO_HORIZON, noise: Noise | None = None) -> RisingInstance:
    """The paper's two-arm example (Section 3.1, Figure 1).

    Arm A (early peaker) has constant mean 0.4; arm B (late bloomer) has mean min(1, n/20000).
    The best fixed arm is A for T < 16,000 and B from T = 16,000 on.
    """
    T = _check_horizon(T)
    check_table_size(2, T)
    n = np.arange(1, T + 1, dtype=np.float64)
    means = np.vstack([np.full(T, 0.4), np.minimum(1.0, n / 20000.0)])
    return RisingInstance(
        means,
        noise or Noise(),
        name="intro",
        arm_names=("A (early peaker)", "B (late bloomer)"),
        meta={"family": "intro"},
    )


def ltf_means(
    b: Sequence[float] | np.ndarray, t_sat: Sequence[float] | np.ndarray, T: int
) -> np.ndarray:
    """Mean table of a Linear-Then-Flat instance: mu_i(n) = min(b_i, a_i n), a_i = b_i/t_sat_i."""
    b_arr = np.asarray(b, dtype=np.float64)
    t_arr = np.asarray(t_sat, dtype=np.float64)
    if b_arr.ndim != 1 or b_arr.shape != t_arr.shape:
        raise ValueError(
            f"b and t_sat must be two lists of the same length; got {b_arr.shape} and {t_arr.shape}"
        )
    for i, (bi, ti) in enumerate(zip(b_arr, t_arr, strict=True)):
        if not 0.0 < bi <= 1.0:
            raise ValueError(f"b[arm {i}] = {bi:g} is not allowed: use 0 < b <= 1")
        if not (ti > 0.0 and np.isfinite(ti)):
            raise ValueError(f"t_sat[arm {i}] = {ti:g} is not allowed: use a finite t_sat > 0")
    check_table_size(b_arr.shape[0], T)
    n = np.arange(1, T + 1, dtype=np.float64)
    a = b_arr / t_arr
    return np.minimum(b_arr[:, None], a[:, None] * n[None, :])


def ltf(
    b: Sequence[float], t_sat: Sequence[float], T: int, noise: Noise | None = None
) -> RisingInstance:
    """Linear-Then-Flat instance (paper Definition 5.1): mu_i(n) = min(b_i, (b_i/t_sat_i) n)."""
    T = _check_horizon(T)
    means = ltf_means(b, t_sat, T)
    return RisingInstance(
        means,
        noise or Noise(),
        name="ltf",
        meta={"family": "ltf", "b": [float(x) for x in b], "t_sat": [float(x) for x in t_sat]},
    )


def from_means(
    means: Any,
    noise: Noise | None = None,
    *,
    name: str = "custom",
    arm_names: Sequence[str] = (),
    require_rising: bool = True,
    costs: Any = None,
) -> RisingInstance:
    """An instance from a K x T table (``means[i, n - 1]`` = mean of the n-th pull of arm i).

    ``require_rising=False`` accepts tables that decrease somewhere (real learning curves).
    ``costs``: the cost of each pull, a K x T table or one cost per arm (positive; default 1
    per pull), spent by a budget in cost (:func:`risingbandits.simulate_budget`).
    """
    return RisingInstance(
        means,
        noise or Noise(),
        name=name,
        arm_names=arm_name_tuple(arm_names),
        meta={"family": "table"},
        require_rising=require_rising,
        costs=costs,
    )


def from_functions(
    fns: Sequence[Callable[[Any], Any]],
    T: int,
    noise: Noise | None = None,
    *,
    name: str = "functions",
    arm_names: Sequence[str] = (),
) -> RisingInstance:
    """An instance from one mean function per arm, evaluated at n = 1..T.

    Each function gets the array of pull numbers; one that only takes scalars is called per n.
    """
    T = _check_horizon(T)
    names = arm_name_tuple(arm_names)
    check_table_size(len(fns), T)
    n = np.arange(1, T + 1, dtype=np.float64)
    rows = []
    for i, fn in enumerate(fns):
        try:
            row = np.broadcast_to(np.asarray(fn(n), dtype=np.float64), (T,))
        except (TypeError, ValueError):
            row = np.array([fn(float(k)) for k in n], dtype=np.float64)
        if row.shape != (T,):
            raise ValueError(f"function of arm {i} returned shape {row.shape}, expected ({T},)")
        rows.append(row)
    return RisingInstance(
        np.vstack(rows) if rows else np.zeros((0, T)),
        noise or Noise(),
        name=name,
        arm_names=names,
        meta={"family": "functions"},
    )
