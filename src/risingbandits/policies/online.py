"""One online run of a policy: its kernel driven one ``select``/``update`` at a time.

The state, the generator and the kernels are the simulator's
(:mod:`~risingbandits.policies.kernel`); this module only adds the bookkeeping of a run driven
from Python (round counter, pulls, the arm awaiting its reward, the last reward of each arm) and
checkpoints.

Speed: an ``update`` is only recorded in Python; the next ``select`` runs it and the selection in
one compiled call (:func:`~risingbandits.policies.kernel.step_one`), entered without Numba's
dispatcher (:class:`~risingbandits.policies.kernel.EntryPoints`). Anything that reads the state
(a checkpoint, a recommendation, a trace) first applies the recorded update (:meth:`flush`), so
the order of kernel calls is exactly the simulator's.

Pulls in flight (a parallel model selector, :mod:`risingbandits.modelselect`): :meth:`select_with`
selects on a copy of the state to which the pulls in flight were applied with assumed rewards,
and :meth:`update_late` records a reward for a pull that the state's last ``select`` did not
choose: the kernel's ``select`` runs first (its choice dropped), so that what a kernel keeps
from its ``select`` for its ``update`` (Rexp3's distribution, Ser4's round) is current. Both
keep the kernel's contract (a ``select`` before each ``update``); sequential use never needs
them. :meth:`transplant` moves the run to another number of arms or horizon
(:mod:`~risingbandits.policies.transplant`).
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from risingbandits.policies.kernel import EntryPoints, recommend_one, update_one
from risingbandits.policies.trace import Trace
from risingbandits.policies.transplant import copy_state, transplant


class OnlineRun:
    """The run of ``policy`` (its registry name, for messages) over ``n_arms`` arms and
    ``horizon`` rounds, from a fresh ``state`` and generator ``rng``."""

    __slots__ = (
        "entry",
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
        state: Any,
        rng: np.ndarray,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None,
        trace: bool = False,
    ) -> None:
        self.owner = owner
        self.state = state
        self.rng = rng
        self.entry = EntryPoints(state, rng)
        self.n_arms = n_arms
        self.horizon = horizon
        self.noise_proxy = noise_proxy
        self.t = 0
        self.pending: int | None = None
        self.pulls = np.zeros(n_arms, np.int64)
        self.last = np.zeros(n_arms)
        self.queued_arm = -1  # an update recorded but not yet run by the kernel
        self.queued_reward = 0.0
        self.trace_log: list[tuple[int, int, np.ndarray, np.ndarray]] | None = None
        if trace:
            if not hasattr(state, "terms"):
                raise ValueError(f"trace=True is not allowed for {owner}: it exposes no index")
            self.trace_log = []

    def select(self) -> int:
        """The arm to play in round t + 1 (the same until :meth:`update`)."""
        if self.pending is not None:
            return self.pending
        self._check_rounds_left()
        if self.queued_arm >= 0:
            arm = self.entry.step(self.state, self.queued_arm, self.queued_reward, self.t, self.rng)
            self.queued_arm = -1
        else:
            arm = self.entry.select(self.state, self.t + 1, self.rng)
        if not 0 <= arm < self.n_arms:
            raise RuntimeError(f"{self.owner}: kernel returned invalid arm {arm}")
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
        reward = float(reward)
        if not math.isfinite(reward):
            raise ValueError(f"{self.owner}: reward={reward!r} is not allowed: use a finite number")
        self.t += 1
        self.pulls[arm] += 1
        self.last[arm] = reward
        self.pending = None
        self.queued_arm = arm
        self.queued_reward = reward

    def update_late(self, arm: int, reward: float) -> None:
        """Record the reward of a pull of ``arm`` that the state's last ``select`` did not
        choose: the ``select`` of round t + 1 runs first, its choice dropped."""
        if not 0 <= arm < self.n_arms:
            raise ValueError(f"{self.owner}: arm={arm!r} is not allowed: use 0..{self.n_arms - 1}")
        self._check_rounds_left()
        self.flush()
        self.entry.select(self.state, self.t + 1, self.rng)
        self._record(arm, reward)

    def select_with(self, pulls: Sequence[tuple[int, float]]) -> tuple[int, Any]:
        """The arm to play in round t + len(pulls) + 1 while ``pulls`` (arm, assumed reward) are
        in flight, and the state it was chosen on: a copy of this run's state to which each
        pull was applied as round t + 1, t + 2, ... (a ``select``, then the ``update``). This
        run's state is unchanged; its generator advances."""
        if self.t + len(pulls) >= self.horizon:
            raise RuntimeError(
                f"{self.owner}: {len(pulls)} pulls in flight use up the horizon of {self.horizon}"
            )
        self.flush()
        state = copy_state(self.state)
        arm = self.entry.select(state, self.t + 1, self.rng)
        for k, (played, reward) in enumerate(pulls):
            arm = self.entry.step(state, int(played), float(reward), self.t + k + 1, self.rng)
        if not 0 <= arm < self.n_arms:
            raise RuntimeError(f"{self.owner}: kernel returned invalid arm {arm}")
        return arm, state

    def transplant(self, fresh: Any, keep: Sequence[int], horizon: int) -> None:
        """Continue this run with ``fresh`` (a new state for ``len(keep)`` arms and
        ``horizon``) filled from the current one: arm j of the new run was arm ``keep[j]``
        (-1: a new arm). The selection awaiting its reward, if any, is dropped."""
        if self.trace_log is not None:
            raise ValueError(f"{self.owner}: a traced run cannot change size")
        if horizon < self.t:
            raise ValueError(f"horizon={horizon} is not allowed: {self.t} rounds are done")
        self.flush()
        self.state = transplant(fresh, self.state, self.n_arms, keep)
        kept = np.asarray(keep, np.int64)
        rows = np.flatnonzero(kept >= 0)
        pulls, last = np.zeros(kept.size, np.int64), np.zeros(kept.size)
        pulls[rows], last[rows] = self.pulls[kept[rows]], self.last[kept[rows]]
        self.pulls, self.last = pulls, last
        self.n_arms, self.horizon, self.pending = int(kept.size), int(horizon), None

    def _check_rounds_left(self) -> None:
        if self.t >= self.horizon:
            raise RuntimeError(
                f"{self.owner}: the horizon of {self.horizon} rounds is used up; call reset()"
            )

    def flush(self) -> None:
        """Run the recorded update, if any, so that the state is current."""
        if self.queued_arm >= 0:
            update_one(self.state, self.queued_arm, self.queued_reward, self.t, self.rng)
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

    def state_dict(self) -> dict[str, Any]:
        """The run as JSON-able data (arrays as base64 of zlib-compressed bytes)."""
        self.flush()
        return {
            "n_arms": self.n_arms,
            "horizon": self.horizon,
            "noise_proxy": self.noise_proxy,
            "t": self.t,
            "pending": self.pending,
            "pulls": self.pulls.tolist(),
            "last": self.last.tolist(),
            "rng": [int(x) for x in self.rng],
            "state": encode_state(self.state),
        }

    def load(self, data: Mapping[str, Any]) -> None:
        """Continue the run saved by :meth:`state_dict` (this run is fresh, of the same size)."""
        self.state = decode_state(self.state, data["state"])
        self.rng[:] = np.asarray(data["rng"], dtype=np.uint64)
        self.t = int(data["t"])
        self.pending = None if data["pending"] is None else int(data["pending"])
        self.pulls[:] = data["pulls"]
        self.last[:] = data["last"]


def encode_state(value: Any) -> Any:
    """A run state (NamedTuple of arrays, scalars, nested tuples) as JSON-able data."""
    if isinstance(value, np.ndarray):
        raw = base64.b64encode(zlib.compress(np.ascontiguousarray(value).tobytes())).decode()
        return {"dtype": value.dtype.str, "shape": list(value.shape), "zlib_b64": raw}
    if isinstance(value, tuple):
        return [encode_state(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


def decode_state(template: Any, data: Any) -> Any:
    """Inverse of :func:`encode_state`, checked against a fresh state of the same policy."""
    if isinstance(template, np.ndarray):
        shape = tuple(data["shape"])
        if data["dtype"] != template.dtype.str or shape != template.shape:
            raise ValueError(
                f"saved array {data['dtype']}{list(shape)} does not fit this run "
                f"({template.dtype.str}{list(template.shape)})"
            )
        raw = zlib.decompress(base64.b64decode(data["zlib_b64"]))
        return np.frombuffer(raw, dtype=template.dtype).reshape(shape).copy()
    if isinstance(template, tuple):
        if len(data) != len(template):
            raise ValueError("saved run state does not fit this policy's state")
        values = [decode_state(t, d) for t, d in zip(template, data, strict=True)]
        return type(template)(*values) if hasattr(template, "_fields") else tuple(values)
    if json.dumps(data) != json.dumps(encode_state(template)):
        raise ValueError(f"saved setting {data!r} differs from this run's {template!r}")
    return template
