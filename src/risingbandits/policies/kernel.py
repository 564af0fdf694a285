"""The one place where a policy's algorithm runs: compiled kernels dispatched on state type.

A policy's algorithm is a state (a ``NamedTuple`` of arrays and scalars) and two functions,
``select(state, t, rng) -> arm`` and ``update(state, arm, reward, t, rng)``, registered here
with :func:`register_kernel`. The compiled simulator and the online object both call them
through :func:`policy_select` / :func:`policy_update`, which Numba resolves at compile time from
the state's class, so each policy has one implementation that serves both.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba.core import types
from numba.extending import overload

from risingbandits._jit import helper, jit

SelectFn = Callable[[Any, int, np.random.Generator], int]
UpdateFn = Callable[[Any, int, float, int, np.random.Generator], None]

_KERNELS: dict[type, tuple[SelectFn, UpdateFn]] = {}


def register_kernel(state_cls: type, select: SelectFn, update: UpdateFn) -> None:
    """Declare the algorithm of the policies whose run state is a ``state_cls``."""
    _KERNELS[state_cls] = (helper(select), helper(update))


def policy_select(state: Any, t: int, rng: np.random.Generator) -> int:
    """The arm the policy plays in round ``t`` (1-based)."""
    return _KERNELS[type(state)][0](state, t, rng)


def policy_update(state: Any, arm: int, reward: float, t: int, rng: np.random.Generator) -> None:
    """Record the reward of ``arm`` observed in round ``t``."""
    _KERNELS[type(state)][1](state, arm, reward, t, rng)


def _kernel_for(state: types.Type) -> tuple[SelectFn, UpdateFn] | None:
    if isinstance(state, types.BaseNamedTuple):
        return _KERNELS.get(getattr(state, "instance_class", None))  # type: ignore[arg-type]
    return None


# Numba compares the overload's parameters with the implementation's, annotations included:
# both are left unannotated.
@overload(policy_select, inline="always")
def _select_overload(state, t, rng):
    kernel = _kernel_for(state)
    if kernel is None:
        return None
    select = kernel[0]
    return lambda state, t, rng: select(state, t, rng)


@overload(policy_update, inline="always")
def _update_overload(state, arm, reward, t, rng):
    kernel = _kernel_for(state)
    if kernel is None:
        return None
    update = kernel[1]
    return lambda state, arm, reward, t, rng: update(state, arm, reward, t, rng)


@jit
def select_one(state: Any, t: int, rng: np.random.Generator) -> int:
    """One compiled ``select`` call (the online object's entry point)."""
    return policy_select(state, t, rng)


@jit
def update_one(state: Any, arm: int, reward: float, t: int, rng: np.random.Generator) -> None:
    """One compiled ``update`` call (the online object's entry point)."""
    policy_update(state, arm, reward, t, rng)
