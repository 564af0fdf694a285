"""Carry a run state over to a new number of arms or a new horizon (a changing budget, an arm
added or retired) or a larger capacity (:mod:`~risingbandits.policies.machinery.capacity`),
generically for every policy.

A run state is sized by K and T (or an online run's capacity), and some of its parameters
derive from K and T (CURE-UCB's horizon, SW-UCB's window, Rexp3's restart period, Ser4's
confidence). :func:`transplant` takes a
fresh state built by the policy's ``init_state`` for the new (K, T) and fills it, field by field,
from the old one:

* scalars come from the fresh state: a kernel cannot change a scalar of its state, so scalars
  are parameters, re-derived for the new (K, T) (the horizon-aware policies replan);
* arrays are copied from the old state: on an *arm axis* (an axis of length K before and K'
  after, when K changes) row j of the new array is row ``keep[j]`` of the old one (a new arm
  keeps the fresh value); on any other axis of a different length, the overlap is copied (a
  prefix-sum table grown for a longer budget or a larger capacity, or cut for a shorter one);
* a piece whose arrays mean more than their shape says (arm indices as values, a ring buffer
  in time order) registers its own rule with :func:`register_transplant`, next to its
  definition: the round window (:mod:`~risingbandits.policies.machinery.round_window`) and Ser4's
  round order (:mod:`~risingbandits.policies.nonstationary.restarting`) do. A state array that
  stores arm indices needs such a rule (retiring an arm renumbers the others), and a checkpoint
  check (:func:`~risingbandits.policies.machinery.checkpoint.register_state_check`: kernels do not
  check bounds).

Arms are only ever appended (``keep[j] = -1`` at the end) or removed, never reordered, and K and
T do not change in the same call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np


class ArmPlan(NamedTuple):
    """How arms move: new arm j was old arm ``keep[j]`` (-1: a new arm); old arm i is now
    ``renumber[i]`` (-1: removed)."""

    keep: np.ndarray
    renumber: np.ndarray

    @property
    def resized(self) -> bool:
        """Whether the number of arms changes (then arm axes are recognised by their length)."""
        return self.keep.shape[0] != self.renumber.shape[0]


def arm_plan(old_arms: int, keep: Sequence[int]) -> ArmPlan:
    """The plan keeping old arms ``keep`` (in order; -1 for each new arm, at the end)."""
    kept = np.asarray(keep, np.int64)
    renumber = np.full(old_arms, -1, np.int64)
    real = kept[kept >= 0]
    if np.any(np.diff(real) <= 0) or (real.size and real[-1] >= old_arms):
        raise ValueError(f"keep={list(kept)} must list old arms in increasing order")
    if np.any(kept[real.size :] >= 0):
        raise ValueError(f"keep={list(kept)}: new arms (-1) come after the kept ones")
    renumber[real] = np.arange(real.size)
    return ArmPlan(kept, renumber)


Rule = Callable[[Any, Any, ArmPlan], Any]
_RULES: dict[type, Rule] = {}


def register_transplant(state_cls: type, rule: Rule) -> None:
    """Carry ``state_cls`` pieces over with ``rule(fresh, old, plan) -> new`` instead of the
    field-by-field default (:func:`carry` applies the default to the fields a rule leaves)."""
    _RULES[state_cls] = rule


def transplant(fresh: Any, old: Any, old_arms: int, keep: Sequence[int]) -> Any:
    """``fresh`` (a new state for the new K and T) filled from ``old``, a state over
    ``old_arms`` arms (module docstring); ``keep[j]`` is the old arm that becomes arm j (-1: a
    new arm)."""
    return carry(fresh, old, arm_plan(old_arms, keep))


def carry(fresh: Any, old: Any, plan: ArmPlan) -> Any:
    """The default carry-over of one value (a registered rule takes precedence)."""
    rule = _RULES.get(type(fresh))
    if rule is not None:
        return rule(fresh, old, plan)
    return carry_fields(fresh, old, plan)


def carry_fields(fresh: Any, old: Any, plan: ArmPlan) -> Any:
    """Field by field, ignoring any rule registered for ``fresh``'s own type (rules call it)."""
    if isinstance(fresh, np.ndarray):
        return _carry_array(fresh, old, plan)
    if isinstance(fresh, tuple):
        values = [carry(f, o, plan) for f, o in zip(fresh, old, strict=True)]
        return type(fresh)(*values) if hasattr(fresh, "_fields") else tuple(values)
    return fresh


def _carry_array(fresh: np.ndarray, old: np.ndarray, plan: ArmPlan) -> np.ndarray:
    if fresh.ndim != old.ndim or fresh.dtype != old.dtype:
        raise ValueError(
            f"cannot carry a {old.dtype}{old.shape} array into {fresh.dtype}{fresh.shape}"
        )
    if fresh.ndim == 0:
        fresh[()] = old[()]
        return fresh
    k_old, k_new = plan.renumber.shape[0], plan.keep.shape[0]
    src, dst = [], []
    for n_old, n_new in zip(old.shape, fresh.shape, strict=True):
        if plan.resized and n_old == k_old and n_new == k_new:
            rows = np.flatnonzero(plan.keep >= 0)
            src.append(plan.keep[rows])
            dst.append(rows)
        else:
            span = np.arange(min(n_old, n_new))
            src.append(span)
            dst.append(span)
    fresh[np.ix_(*dst)] = old[np.ix_(*src)]
    return fresh


def copy_state(state: Any) -> Any:
    """A deep copy of a run state (every array copied, scalars shared)."""
    if isinstance(state, np.ndarray):
        return state.copy()
    if isinstance(state, tuple):
        values = [copy_state(v) for v in state]
        return type(state)(*values) if hasattr(state, "_fields") else tuple(values)
    return state
