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
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from risingbandits.policies.kernel import EntryPoints, recommend_one, update_one
from risingbandits.policies.trace import Trace


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
        if self.t >= self.horizon:
            raise RuntimeError(
                f"{self.owner}: the horizon of {self.horizon} rounds is used up; call reset()"
            )
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
        reward = float(reward)
        if not math.isfinite(reward):
            raise ValueError(f"{self.owner}: reward={reward!r} is not allowed: use a finite number")
        self.t += 1
        self.pulls[arm] += 1
        self.last[arm] = reward
        self.pending = None
        self.queued_arm = arm
        self.queued_reward = reward

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
