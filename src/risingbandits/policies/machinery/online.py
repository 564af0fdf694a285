"""One online run of a policy: its kernel driven one ``select``/``update`` at a time.

The state, the generator and the kernels are the simulator's
(:mod:`~risingbandits.policies.machinery.kernel`); this module only adds the bookkeeping of a run
driven from Python (round counter, pulls, the arm awaiting its reward, the last reward of each arm)
and checkpoints.

Speed: an ``update`` is only recorded in Python; the next ``select`` runs it and the selection in
one compiled call (:func:`~risingbandits.policies.machinery.kernel.kernel_call`), entered without
Numba's dispatcher (:func:`~risingbandits.policies.machinery.kernel.entry_point`). Anything that
reads the state (a checkpoint, a recommendation, a trace) first applies the recorded update
(:meth:`flush`), so the order of kernel calls is exactly the simulator's.

Pulls in flight (a parallel model selector, :mod:`risingbandits.modelselect`): :meth:`select_with`
selects on a copy of the state to which the pulls in flight were applied with assumed rewards,
and :meth:`update_late` records a reward for a pull that the state's last ``select`` did not
choose: the kernel's ``select`` runs first (its choice dropped), so that what a kernel keeps
from its ``select`` for its ``update`` (Rexp3's distribution, Ser4's round) is current. Both
keep the kernel's contract (a ``select`` before each ``update``); sequential use never needs
them. A budget in cost (``ModelSelector(..., cost=...)``) tells a policy that plans in cost what
the budget allows before a select (:meth:`plan`); such a policy may then select -1, "nothing
worth starting until a result arrives", which :meth:`select` and :meth:`select_with` return as
it is (nothing awaits a reward). :meth:`transplant` and :meth:`resize` move the run to another
number of arms or horizon (:mod:`~risingbandits.policies.machinery.transplant`).

Memory: the run state holds the pulls made, not the horizon (:mod:`~risingbandits.policies.
capacity`): it starts at a small capacity and, when an update could need more room, is moved
into a fresh state of twice the capacity, built by the policy (``build``). Finding out costs one
comparison per update (``t >= check_at``); the O(K) look at the pulls runs at most once every
C/2 rounds.

Rewards: a reward is a score in [0, 1] plus noise (the simulator's rewards are its [0, 1] means
plus unclipped Gaussian noise), so any number in [:data:`REWARD_LOW`, :data:`REWARD_HIGH`] is
accepted and anything else (a percentage, a loss, NaN) is refused: fed percentages, a policy
would silently allocate differently and recommend a worse arm.
"""

from __future__ import annotations

import base64
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from risingbandits.policies.machinery.capacity import bounds, capacity_for, need, state_bytes
from risingbandits.policies.machinery.kernel import (
    entry_point,
    plan_one,
    plans_in_cost,
    recommend_one,
)
from risingbandits.policies.machinery.trace import Trace
from risingbandits.policies.machinery.transplant import copy_state, transplant

Build = Callable[[int, int, int | None], Any]
"""``build(n_arms, horizon, capacity)``: a fresh run state of the policy (its ``init_state``)."""
REWARD_LOW, REWARD_HIGH = -1.0, 2.0
"""Rewards accepted online: a [0, 1] score plus noise (module docstring)."""
NEVER = 2**63
"""``check_at`` of a run whose state holds its whole horizon."""


def reward_error(owner: str, reward: Any) -> ValueError:
    """The one line refusing a value that cannot be a reward."""
    return ValueError(
        f"{owner}: reward={reward!r} is not allowed: a reward is a score in [0, 1] plus noise, "
        f"so use a finite number in [{REWARD_LOW:g}, {REWARD_HIGH:g}] (for scores on another "
        "scale, e.g. percentages, use ModelSelector(..., score_range=(0, 100)))"
    )


class OnlineRun:
    """The run of ``policy`` (its registry name, for messages) over ``n_arms`` arms and
    ``horizon`` rounds, on states made by ``build`` and the generator ``rng``."""

    __slots__ = (
        "bound",
        "build",
        "capacity",
        "check_at",
        "entry",
        "flushing",
        "horizon",
        "last",
        "n_arms",
        "noise_proxy",
        "owner",
        "pending",
        "pulls",
        "queued_arm",
        "queued_reward",
        "rng",
        "state",
        "t",
        "trace_log",
    )

    def __init__(
        self,
        owner: str,
        build: Build,
        rng: np.ndarray,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None,
        trace: bool = False,
    ) -> None:
        self.owner = owner
        self.build = build
        self.rng = rng
        self.n_arms = n_arms
        self.horizon = horizon
        self.noise_proxy = noise_proxy
        self.t = 0
        self.pending: int | None = None
        self.pulls = np.zeros(n_arms, np.int64)
        self.last = np.zeros(n_arms)
        self.queued_arm = -1  # an update recorded but not yet run by the kernel
        self.queued_reward = 0.0
        self.flushing = threading.Lock()
        capacity = capacity_for(0, horizon)
        self._hold(self._fresh(n_arms, horizon, capacity), capacity)
        self.entry: Callable[..., int] = self._first_entry  # compiled on first use
        self.trace_log: list[tuple[int, int, np.ndarray, np.ndarray]] | None = None
        if trace:
            if not hasattr(self.state, "terms"):
                raise ValueError(f"trace=True is not allowed for {owner}: it exposes no index")
            self.trace_log = []

    def _first_entry(self, *args: Any) -> int:
        """The first kernel call: looks up (compiling, on a machine's first run) the compiled
        entry point, which serves every later call. Not at construction: a selector built to
        read its settings or a checkpoint never compiles (HACE-UCB's kernel takes about 40 s)."""
        self.entry = entry_point(self.state, self.rng)
        return self.entry(*args)

    def select(self) -> int:
        """The arm to play in round t + 1 (the same until :meth:`update`)."""
        if self.pending is not None:
            return self.pending
        self._check_rounds_left()
        # the recorded update (none when queued_arm is -1), then the select of round t + 1
        arm = self.entry(self.state, self.queued_arm, self.queued_reward, self.t, self.rng, True)
        self.queued_arm = -1
        if not 0 <= arm < self.n_arms:
            return self._waits(arm)
        if self.trace_log is not None:
            self.trace_log.append(
                (self.t + 1, arm, self.state.scores.copy(), self.state.terms.copy())
            )
        self.pending = arm
        return arm

    def update(self, arm: int, reward: float) -> None:
        """Record the reward of the arm returned by :meth:`select`."""
        if self.pending is None:
            raise RuntimeError(f"{self.owner}: call select() before update()")
        if arm != self.pending:
            raise ValueError(
                f"{self.owner}: update(arm={arm!r}) does not match the selected arm {self.pending}"
            )
        self._record(arm, reward)

    def _record(self, arm: int, reward: float) -> None:
        try:  # True, "0.5": float() would take them; None, "x": float() raised its own error
            refused = isinstance(reward, bool | np.bool_ | str | bytes)
            value = float("nan") if refused else float(reward)
        except (TypeError, ValueError):
            value = float("nan")
        if not REWARD_LOW <= value <= REWARD_HIGH:  # also refuses NaN
            raise reward_error(self.owner, reward)
        self.t += 1
        self.pulls[arm] += 1
        self.last[arm] = value
        self.pending = None
        self.queued_arm = arm
        self.queued_reward = value
        if self.t >= self.check_at:  # the queued update might not fit: look (module docstring)
            self._make_room()

    def update_late(self, arm: int, reward: float) -> None:
        """Record the reward of a pull of ``arm`` that the state's last ``select`` did not
        choose: the ``select`` of round t + 1 runs first, its choice dropped."""
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"{self.owner}: arm={arm!r} is not allowed: use 0..{self.n_arms - 1}")
        self._check_rounds_left()
        self.flush()
        self.entry(self.state, -1, 0.0, self.t, self.rng, True)
        self._record(arm, reward)

    def select_with(self, pulls: Sequence[tuple[int, float]]) -> tuple[int, Any]:
        """The arm to play in round t + len(pulls) + 1 while ``pulls`` (arm, assumed reward) are
        in flight, and the state it was chosen on: a copy of this run's state (of a larger
        capacity if the pulls need it) to which each pull was applied as round t + 1, t + 2,
        ... (a ``select``, then the ``update``). This run's state is unchanged; its generator
        advances."""
        if self.t + len(pulls) >= self.horizon:
            raise RuntimeError(
                f"{self.owner}: {len(pulls)} pulls in flight use up the horizon of {self.horizon}"
            )
        self.flush()
        state = None
        if self.t + len(pulls) >= self.check_at:
            needed = need(self.bound, self.pulls, self.t) + len(pulls)
            if needed > self.capacity:
                state = self._moved(capacity_for(needed, self.horizon))
        state = copy_state(self.state) if state is None else state
        arm = self.entry(state, -1, 0.0, self.t, self.rng, True)
        for k, (played, reward) in enumerate(pulls):
            arm = self.entry(state, int(played), float(reward), self.t + k + 1, self.rng, True)
        if not 0 <= arm < self.n_arms:
            self._waits(arm)
        return arm, state

    def plan(self, allowed: np.ndarray, left: np.ndarray, spent: np.ndarray, unit: float) -> None:
        """Tell the policy what a budget in cost allows before its next select (its ``plan``,
        :mod:`~risingbandits.policies.machinery.kernel`): the recorded update runs first, so
        the kernel sees update, plan, select in that order."""
        self.flush()
        plan_one(self.state, allowed, left, spent, float(unit))

    def _waits(self, arm: int) -> int:
        """-1 (the policy waits) from a policy that plans in cost; any other arm out of range
        is a kernel's mistake."""
        if arm == -1 and plans_in_cost(self.state):
            return arm
        raise RuntimeError(f"{self.owner}: kernel returned invalid arm {arm}")

    def transplant(self, fresh: Any, keep: Sequence[int], horizon: int) -> None:
        """Continue this run with ``fresh`` (a new state for ``len(keep)`` arms and
        ``horizon``, holding the whole horizon: the policy's ``init_state`` without a capacity)
        filled from the current one: arm j of the new run was arm ``keep[j]`` (-1: a new arm).
        The selection awaiting its reward, if any, is dropped."""
        self._move(lambda: fresh, keep, horizon, horizon)

    def resize(self, keep: Sequence[int], horizon: int) -> None:
        """:meth:`transplant` to ``len(keep)`` arms and ``horizon`` on a state built by the
        policy at this run's capacity (one of the capacities a run has: a capacity cut at a
        smaller horizon is rounded up for a larger one)."""
        capacity = capacity_for((self.capacity + 1) // 2, horizon)
        self._move(lambda: self._fresh(len(keep), horizon, capacity), keep, horizon, capacity)

    def _move(
        self, make: Callable[[], Any], keep: Sequence[int], horizon: int, capacity: int
    ) -> None:
        if self.trace_log is not None:
            raise ValueError(f"{self.owner}: a traced run cannot change size")
        if horizon < self.t:
            raise ValueError(f"horizon={horizon} is not allowed: {self.t} rounds are done")
        self.flush()
        state = transplant(make(), self.state, self.n_arms, keep)
        kept = np.asarray(keep, np.int64)
        rows = np.flatnonzero(kept >= 0)
        pulls, last = np.zeros(kept.size, np.int64), np.zeros(kept.size)
        pulls[rows], last[rows] = self.pulls[kept[rows]], self.last[kept[rows]]
        self.pulls, self.last = pulls, last
        self.n_arms, self.horizon, self.pending = int(kept.size), int(horizon), None
        self._hold(state, capacity)

    # -- capacity ----------------------------------------------------------------------------

    def _fresh(self, n_arms: int, horizon: int, capacity: int) -> Any:
        """A fresh state from the policy; one line if the memory for it is not there."""
        try:
            return self.build(n_arms, horizon, capacity)
        except MemoryError:
            raise MemoryError(
                f"{self.owner}: the run state for {n_arms} arms and {capacity:,} pulls per arm "
                "does not fit in memory"
            ) from None

    def _moved(self, capacity: int) -> Any:
        """This run's state (as it is: a queued update stays queued) in a fresh state of
        ``capacity``; this run's state is not changed."""
        fresh = self._fresh(self.n_arms, self.horizon, capacity)
        return transplant(fresh, self.state, self.n_arms, range(self.n_arms))

    def _hold(self, state: Any, capacity: int) -> None:
        """Make ``state`` (built with ``capacity`` for this run's size) the run's state, and
        look at the room it has left."""
        self.state, self.capacity = state, int(capacity)
        self.bound = bounds(state, self.capacity, self.horizon)
        self._make_room()

    def _make_room(self) -> None:
        """Grow the state when the pulls recorded fill more than half of it (so the next look
        is at least C/2 rounds away), then note the first round at which it could run out."""
        needed = need(self.bound, self.pulls, self.t)
        if 2 * needed > self.capacity and self.capacity < self.horizon:
            capacity = capacity_for(needed, self.horizon)
            self._hold(self._moved(capacity), capacity)
            return
        at = NEVER
        if self.bound.pulls:  # a round adds at most one pull to the most-pulled arm
            at = self.t + 1 + self.capacity - int(self.pulls.max())
        if self.bound.rounds:
            at = min(at, self.capacity + 1)
        self.check_at = at

    def _check_rounds_left(self) -> None:
        if self.t >= self.horizon:
            raise RuntimeError(
                f"{self.owner}: the horizon of {self.horizon} rounds is used up; call reset()"
            )

    def flush(self) -> None:
        """Run the recorded update, if any, so that the state is current (once, even when
        readers such as checkpoints saved from several threads flush at the same time)."""
        with self.flushing:
            if self.queued_arm >= 0:
                self.entry(self.state, self.queued_arm, self.queued_reward, self.t, self.rng, False)
                self.queued_arm = -1

    def recommend(self) -> int:
        """The arm the policy would deploy if the run ended now."""
        self.flush()
        return int(recommend_one(self.state, self.pulls, self.last))

    def trace(self, term_names: tuple[str, ...]) -> Trace:
        """The trace of the rounds selected so far (one seed; ``reset(trace=True)``)."""
        if self.trace_log is None:
            raise ValueError(f"{self.owner}: no trace was recorded: use reset(..., trace=True)")
        k, n = self.n_arms, len(term_names)
        log = self.trace_log
        return Trace(
            np.array([r[0] for r in log], np.int64),
            np.array([r[2] for r in log]).reshape(1, len(log), k),
            np.array([r[3] for r in log]).reshape(1, len(log), k, n),
            term_names,
            np.array([r[1] for r in log], np.int32).reshape(1, len(log)),
        )

    @property
    def nbytes(self) -> int:
        """Bytes of the run state's arrays (they follow the pulls made: module docstring)."""
        return state_bytes(self.state)

    def state_dict(self) -> dict[str, Any]:
        """The run as JSON-able data (arrays as base64 of zlib-compressed bytes), its state at
        the capacity a run of t rounds would have at most (:func:`saved_capacity`)."""
        self.flush()
        capacity = saved_capacity(self.capacity, self.t, self.horizon)
        return {
            "n_arms": self.n_arms,
            "horizon": self.horizon,
            "noise_proxy": self.noise_proxy,
            "t": self.t,
            "pending": self.pending,
            "pulls": self.pulls.tolist(),
            "last": self.last.tolist(),
            "rng": [int(x) for x in self.rng],
            "capacity": capacity,
            "state": encode_state(
                self.state if capacity == self.capacity else self._moved(capacity)
            ),
        }

    def load(self, data: Mapping[str, Any], state: Any) -> None:
        """Continue the run saved by :meth:`state_dict` (this run is fresh, of the same size),
        with ``state``, its run state as checked and decoded
        (:func:`~risingbandits.policies.machinery.checkpoint.check_checkpoint`)."""
        self.rng[:] = np.asarray(data["rng"], dtype=np.uint64)
        self.t = int(data["t"])
        self.pending = None if data["pending"] is None else int(data["pending"])
        self.pulls[:] = data["pulls"]
        self.last[:] = data["last"]
        self._hold(state, int(data["capacity"]))


def saved_capacity(capacity: int, t: int, horizon: int) -> int:
    """The capacity a checkpoint of a run after ``t`` rounds holds: the run's own, or the
    capacity of t rounds if that is smaller (after a transplant onto a whole-horizon state).
    A run never grows beyond :func:`~risingbandits.policies.machinery.capacity.capacity_for` of its
    rounds, so a checkpoint that claims more is refused before anything is allocated."""
    return min(capacity, capacity_for(t, horizon))


def encode_state(value: Any) -> Any:
    """A run state (NamedTuple of arrays, scalars, nested tuples) as JSON-able data."""
    if isinstance(value, np.ndarray):
        raw = base64.b64encode(zlib.compress(np.ascontiguousarray(value).tobytes())).decode()
        return {"dtype": value.dtype.str, "shape": list(value.shape), "zlib_b64": raw}
    if isinstance(value, tuple):
        return [encode_state(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value
