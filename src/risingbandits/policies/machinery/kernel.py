"""The one place where a policy's algorithm runs: compiled kernels dispatched on state type.

A policy's algorithm is a state (a ``NamedTuple`` of arrays and scalars) and compiled functions
registered here with :func:`register_kernel`:

* ``select(state, t, rng) -> arm``: the arm to play in round ``t`` (1-based);
* ``update(state, arm, reward, t, rng)``: record the reward observed in round ``t``;
* ``recommend(state, counts, last) -> arm`` (optional): the arm the policy would deploy if the
  budget ended now; the default is :func:`most_pulled` (called, not inlined: it runs only at
  checkpoints and at the end).
* ``plan(state, allowed, left, spent, unit, lanes)`` (optional, :func:`register_plan`): a budget
  in cost (the event-driven simulator :mod:`risingbandits.simulate_budget`, a model selector
  with ``cost=``) calls it before every ``select`` with what a pull count cannot say:
  ``allowed`` (bool per arm: free, and its next pull fits in the budget left), ``left`` (the
  pulls each arm could still make with the budget left at its own cost per pull), ``spent``
  (the cost spent on each arm's finished pulls), ``unit`` (the cost one pull of the policy's
  horizon stands for) and ``lanes`` (how many arms can spend the budget left at once: the W
  workers under a deadline, 1 for a total budget, one pot however many workers draw on it). A
  policy that plans in cost registers it and may then return -1 from ``select`` (leave the
  worker idle until the next result), and may register the ``select`` it makes without a plan
  for the pull simulator's loop, which never plans; every other policy keeps its published
  definition, run in pulls (the default ``plan`` does nothing).

``select``, ``update`` and ``plan`` name their parameters exactly as above (Numba inlines each in
its entry point's place; registration refuses other names).

A kernel must accept, at any round, an arm with no pulls yet (an arm added to a running model
selector, :mod:`~risingbandits.policies.machinery.transplant`): rank it as in the policy's start,
never divide by its count.

``rng`` is the policy's own generator (:mod:`risingbandits.policies.machinery.rng`). The compiled
simulator and the online object both call the kernels through :func:`policy_select`,
:func:`policy_update` and :func:`policy_recommend`, which Numba resolves at compile time from
the state's class, so each policy has one implementation that serves both.

Index policies also keep, in their state, ``scores`` (K: the value each arm was ranked by in the
last ``select``) and ``terms`` (K x n: the named terms of that value, which add up to it); the
simulator's trace copies both after every ``select`` (:func:`trace_view`).

Speed: the step loop is one compiled function (``simulate._steps``) that runs on *borrowed*
state (:func:`risingbandits._jit.borrow`: arrays without an owner), so Numba's reference
counting of the state's arrays, which it keeps around every branch, loop and inlined helper,
is a null check instead of an atomic operation (measured at K = 5, 2-core VM, Numba 0.68: SW-TS
1.6 -> 2.0, ET-SWGTS 1.3 -> 2.5, Ser4 4.1 -> 9.0 M steps/s, same arms), and that loop is
compiled without Numba's runtime (:func:`risingbandits._jit.runtime_free`), so the kernels
inlined into it count no references at all: even a null check is a call, once per array of
the state wherever an inlined helper uses the state (HACE-UCB, 16 arrays: 4.3 -> 6.1 M
steps/s). A kernel inlined there must not allocate (``np.zeros``, ``a.max()``: a compile
error). Small helpers are inlined at Numba-IR level (:func:`risingbandits._jit.helper`: with
every helper a plain call CURE-UCB ran at 6 instead of 11 M steps/s); helpers with loops of
their own and the random draws are calls (:func:`risingbandits._jit.called_helper`),
compiled once per process. Keep per-arm statistics in one 2-D array and ``update``
branch-free where it is natural (conditional expressions compile to selects); measure with
``benchmarks/bench_simulator.py`` after changing a kernel.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import FunctionType
from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.extending import overload

from risingbandits._jit import COMPILING, called_helper, helper, jit, will_compile
from risingbandits.user_cache import notice_once

SelectFn = Callable[[Any, int, np.ndarray], int]
UpdateFn = Callable[[Any, int, float, int, np.ndarray], None]
RecommendFn = Callable[[Any, np.ndarray, np.ndarray], int]
PlanFn = Callable[[Any, np.ndarray, np.ndarray, np.ndarray, float, int], None]


@helper
def most_pulled(counts: np.ndarray, last: np.ndarray) -> int:
    """The most-pulled arm; ties to the higher last observed reward, then the lowest index.

    The default recommendation: the candidate that received most of the budget is the one the
    policy came to trust; ``last[i]`` (the arm's latest reward) is the one estimate of its
    current value that every policy has.
    """
    best, top, top_last = 0, counts[0], last[0]
    for i in range(1, counts.shape[0]):
        if counts[i] > top or (counts[i] == top and last[i] > top_last):
            best, top, top_last = i, counts[i], last[i]
    return best


def _default_recommend(state: Any, counts: np.ndarray, last: np.ndarray) -> int:
    return most_pulled(counts, last)


_KERNELS: dict[type, tuple[SelectFn, UpdateFn, RecommendFn]] = {}
_PLANS: dict[type, PlanFn] = {}
_UNPLANNED: dict[type, SelectFn] = {}


def register_kernel(
    state_cls: type,
    select: SelectFn,
    update: UpdateFn,
    recommend: RecommendFn | None = None,
) -> None:
    """Declare the algorithm of the policies whose run state is a ``state_cls``."""
    _check_parameters(select, policy_select)
    _check_parameters(update, policy_update)
    _KERNELS[state_cls] = (
        helper(select),
        helper(update),
        called_helper(recommend if recommend is not None else _default_recommend),
    )


def register_plan(state_cls: type, plan: PlanFn, unplanned: SelectFn | None = None) -> None:
    """Declare that the policies whose run state is a ``state_cls`` plan in cost (``plan``:
    module docstring). ``unplanned`` (optional, a :func:`~risingbandits._jit.helper`): their
    ``select`` in a run that never plans (the pull simulator), making the choices ``select``
    makes without a plan, without the code that reads one: the step loop then neither
    compiles nor carries it (:func:`policy_select_unplanned`)."""
    _check_parameters(plan, policy_plan)
    _PLANS[state_cls] = helper(plan)
    if unplanned is not None:
        _check_parameters(unplanned, policy_select)
        _UNPLANNED[state_cls] = unplanned


def _check_parameters(kernel: Callable[..., Any], stub: Callable[..., Any]) -> None:
    """A kernel's parameters are named as its entry point's (Numba inlines it in the entry
    point's place, :func:`_implementation`); one clear line at registration otherwise."""
    py_func = getattr(kernel, "py_func", kernel)
    names, wanted = (list(inspect.signature(f).parameters) for f in (py_func, stub))
    if names != wanted:
        raise TypeError(
            f"{py_func.__qualname__}{tuple(names)} is not allowed as a {stub.__name__} kernel: "
            f"name its parameters {tuple(wanted)}"
        )


def plans_in_cost(state: Any) -> bool:
    """Whether the policy of this run state plans in cost (registered a ``plan``)."""
    return type(state) in _PLANS


def policy_plan(
    state: Any, allowed: np.ndarray, left: np.ndarray, spent: np.ndarray, unit: float, lanes: int
) -> None:
    """Tell a policy that plans in cost what the budget allows before its next ``select``."""
    plan = _PLANS.get(type(state))
    if plan is not None:
        plan(state, allowed, left, spent, unit, lanes)


def policy_select(state: Any, t: int, rng: np.ndarray) -> int:
    """The arm the policy plays in round ``t`` (1-based)."""
    return _KERNELS[type(state)][0](state, t, rng)


def policy_select_unplanned(state: Any, t: int, rng: np.ndarray) -> int:
    """The arm the policy plays in round ``t`` of a run that never plans in cost (the pull
    simulator's loop): its ``unplanned`` select if it registered one, else its ``select``."""
    return _UNPLANNED.get(type(state), _KERNELS[type(state)][0])(state, t, rng)


def policy_update(state: Any, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    """Record the reward of ``arm`` observed in round ``t``."""
    _KERNELS[type(state)][1](state, arm, reward, t, rng)


def policy_recommend(state: Any, counts: np.ndarray, last: np.ndarray) -> int:
    """The arm the policy would deploy now (``counts``: pulls per arm, ``last``: last rewards)."""
    return _KERNELS[type(state)][2](state, counts, last)


def trace_view(state: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, terms)`` of an index policy's last ``select``; empty arrays otherwise."""
    raise NotImplementedError("trace_view is compiled only")


def _implementation(kernel: Any) -> Callable[..., Any]:
    """The Python function of a kernel (a :func:`~risingbandits._jit.helper`), without its
    annotations, as an ``@overload``'s implementation.

    Not a lambda that calls the kernel: Numba compiles an ``inline="always"`` overload's
    implementation on its own before it inlines it, and a wrapper would first inline the whole
    kernel into itself, one more copy of its IR (HACE-UCB's select is thousands of statements
    after its helpers are inlined; that copy was a fifth of its loop's compilation). Numba
    requires the implementation's parameters (names and annotations) to be the overload's."""
    py_func = kernel.py_func
    return FunctionType(
        py_func.__code__,
        py_func.__globals__,
        py_func.__name__,
        py_func.__defaults__,
        py_func.__closure__,
    )


def _kernel_for(state: types.Type) -> tuple[SelectFn, UpdateFn, RecommendFn] | None:
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
    return _implementation(kernel[0])


@overload(policy_select_unplanned, inline="always")
def _select_unplanned_overload(state, t, rng):
    kernel = _kernel_for(state)
    if kernel is None:
        return None
    select = _UNPLANNED.get(getattr(state, "instance_class", None), kernel[0])  # type: ignore[arg-type]
    return _implementation(select)


@overload(policy_update, inline="always")
def _update_overload(state, arm, reward, t, rng):
    kernel = _kernel_for(state)
    if kernel is None:
        return None
    return _implementation(kernel[1])


@overload(policy_recommend, inline="always")
def _recommend_overload(state, counts, last):
    kernel = _kernel_for(state)
    if kernel is None:
        return None
    recommend = kernel[2]
    return lambda state, counts, last: recommend(state, counts, last)


def _no_plan(state, allowed, left, spent, unit, lanes):
    pass


@overload(policy_plan, inline="always")
def _plan_overload(state, allowed, left, spent, unit, lanes):
    if not isinstance(state, types.BaseNamedTuple):
        return None
    plan = _PLANS.get(getattr(state, "instance_class", None))  # type: ignore[arg-type]
    if plan is None:
        return _no_plan
    return _implementation(plan)


@overload(trace_view, inline="always")
def _trace_view_overload(state):
    if not isinstance(state, types.BaseNamedTuple):
        return None
    fields = getattr(state, "fields", ())
    if "scores" in fields and "terms" in fields:
        return lambda state: (state.scores, state.terms)
    return lambda state: (np.empty(0), np.empty((0, 0)))


@jit
def kernel_call(
    state: Any, arm: int, reward: float, t: int, rng: np.ndarray, then_select: bool
) -> int:
    """The online object's one compiled call: ``update`` with the reward of round ``t`` (if
    ``arm`` >= 0), then ``select`` for round ``t + 1`` (if ``then_select``; else -1). One
    entry point, not one per kind of call: each inlines the policy's kernels again, and
    Numba's inlining takes most of a kernel's compile time (HACE-UCB's online calls compiled
    in 64 s as three entry points)."""
    if arm >= 0:
        policy_update(state, arm, reward, t, rng)
    return policy_select(state, t + 1, rng) if then_select else -1


def select_one(state: Any, t: int, rng: np.ndarray) -> int:
    """One compiled ``select`` for round ``t``."""
    return int(kernel_call(state, -1, 0.0, t - 1, rng, True))


def update_one(state: Any, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    """One compiled ``update`` with the reward of round ``t``."""
    kernel_call(state, arm, reward, t, rng, False)


@jit
def plan_one(
    state: Any,
    allowed: np.ndarray,
    left: np.ndarray,
    spent: np.ndarray,
    unit: float,
    lanes: int = 1,
) -> None:
    """One compiled ``plan`` call (an online run with a budget in cost; ``lanes`` 1: one pot)."""
    policy_plan(state, allowed, left, spent, unit, lanes)


@jit
def recommend_one(state: Any, counts: np.ndarray, last: np.ndarray) -> int:
    """One compiled ``recommend`` call."""
    return policy_recommend(state, counts, last)


def entry_point(state: Any, rng: np.ndarray) -> Callable[..., int]:
    """The compiled :func:`kernel_call` of this state's type, called without Numba's
    dispatcher: the dispatcher types every argument on every call (a few microseconds for a
    nested state), which would dominate the online object's select and update. Looked up once
    per run (compiling on first use); arguments must then have exactly the compiled types
    (``int`` rounds and arms, ``float`` rewards, ``bool``), which the online object
    guarantees."""
    return _entry_point(kernel_call, (state, 0, 0.0, 1, rng, True))


def _entry_point(dispatcher: Any, args: tuple[Any, ...]) -> Callable[..., Any]:
    """The compiled entry point for ``args``; a real compilation (not a load from the disk
    cache) is announced once per process on standard error (a selector's first run pauses)."""
    sig = tuple(numba.typeof(a) for a in args)
    if sig not in dispatcher.overloads:
        if will_compile(dispatcher, sig):
            notice_once("compiling", COMPILING)
        dispatcher.compile(sig)
    return dispatcher.overloads[sig].entry_point
