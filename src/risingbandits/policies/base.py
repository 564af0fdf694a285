"""Policies: hyper-parameters, validation, presets and the online select/update object.

A :class:`Policy` holds only its hyper-parameters (like a scikit-learn estimator). Its
algorithm is a compiled kernel (see :mod:`risingbandits.policies.machinery.kernel`) over a run
state that
:meth:`Policy.init_state` builds; the simulator runs that kernel in a compiled loop and the
online methods (:meth:`Policy.reset`, :meth:`Policy.select`, :meth:`Policy.update`) call the very
same kernel one step at a time (:mod:`risingbandits.policies.machinery.online`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from risingbandits.policies.machinery.capacity import MAX_HORIZON
from risingbandits.policies.machinery.checkpoint import check_checkpoint, number, shown
from risingbandits.policies.machinery.noise_level import NoiseLevel, new_noise_level
from risingbandits.policies.machinery.online import OnlineRun
from risingbandits.policies.machinery.trace import Trace
from risingbandits.seeding import SeedLike, policy_rng


def _fmt(x: float) -> str:
    frac = Fraction(x).limit_denominator(1000)
    if frac.denominator > 1 and float(frac) == x:
        return f"{frac.numerator}/{frac.denominator}"
    return f"{x:g}"


INT_MAX = 2**63 - 1
"""The largest integer parameter (the kernels hold them as int64)."""


@dataclass(frozen=True)
class Param:
    """One hyper-parameter: default, type, allowed range, documentation."""

    name: str
    default: Any
    doc: str
    kind: type = float
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] = ()
    special: tuple[str, ...] = ()

    def allowed(self) -> str:
        """Human description of the allowed values, e.g. ``a number in (0, 1/2)``."""
        if self.choices:
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind is bool:
            base = "true or false"
        elif self.kind is int and self.high is None:  # (at most INT_MAX)
            low = "-2**63" if self.low is None else _fmt(self.low)
            base = f"an integer in [{low}, 2**63 - 1]"
        elif self.low is not None and self.high is not None:
            left = "(" if self.low_open else "["
            right = ")" if self.high_open else "]"
            noun = "an integer" if self.kind is int else "a number"
            base = f"{noun} in {left}{_fmt(self.low)}, {_fmt(self.high)}{right}"
        elif self.low is not None:
            base = f"a number {'>' if self.low_open else '>='} {_fmt(self.low)}"
        else:
            base = "a number"
        if self.special:
            names = [repr(s) for s in self.special]
            base += (", " + ", ".join(names[:-1]) if names[:-1] else "") + " or " + names[-1]
        return base

    def _error(self, owner: str, value: Any) -> ValueError:
        return ValueError(
            f"{owner}: {self.name}={shown(value)} is not allowed: use {self.allowed()}"
        )

    def validate(self, owner: str, value: Any) -> Any:
        """Return ``value`` coerced to the parameter's type, or raise a one-line ValueError."""
        if isinstance(value, str) and value in self.special:
            return value
        if self.choices:
            if value not in self.choices:
                raise self._error(owner, value)
            return value
        if self.kind is bool:
            if not isinstance(value, bool | np.bool_):
                raise self._error(owner, value)
            return bool(value)
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise self._error(owner, value)
        if self.kind is int:
            whole = not isinstance(value, float | np.floating) or float(value).is_integer()
            if not (whole and -INT_MAX - 1 <= int(value) <= INT_MAX):
                raise self._error(owner, value)
            value = int(value)
        else:
            if not number(value):
                raise self._error(owner, value)
            value = float(value)
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise self._error(owner, value)
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise self._error(owner, value)
        return value

    def parse(self, owner: str, text: str) -> Any:
        """Parse a command-line value (``0.25``, ``1/32``, ``true``, ``auto``) and validate it."""
        text = text.strip()
        if text in self.special or (self.choices and text in [str(c) for c in self.choices]):
            match = [c for c in self.choices if str(c) == text]
            return self.validate(owner, match[0] if match else text)
        value: Any
        try:
            if self.kind is bool:
                lowered = text.lower()
                if lowered not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value = lowered in ("true", "1", "yes")
            elif self.kind is int:
                value = int(text)
            else:
                value = float(Fraction(text)) if "/" in text else float(text)
        except (ValueError, ZeroDivisionError):
            raise self._error(owner, text) from None
        return self.validate(owner, value)


def sigma_param(doc: str, default: float | str = 0.1) -> Param:
    """The noise level of a policy's confidence terms: a number, ``auto`` (the instance's
    sub-Gaussian proxy) or ``estimate`` (online,
    :mod:`~risingbandits.policies.machinery.noise_level`)."""
    return Param("sigma", default, doc, low=0.0, special=("auto", "estimate"))


TIE_BREAK = Param(
    "tie_break",
    "random",
    "argmax ties: uniform with the run's generator (DECISIONS.md row 3), or the lowest index",
    kind=str,
    choices=("random", "first"),
)


class Policy:
    """A bandit policy: hyper-parameters, plus an online ``reset/select/update`` interface.

    Subclasses set the class attributes and implement :meth:`init_state`; their algorithm is
    the kernel registered for the state class they return.
    """

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    params_spec: ClassVar[tuple[Param, ...]] = ()
    # Every policy accepts the three settings of the paper's experiments; a preset lists the
    # parameters the CURE-UCB paper sets for that setting (empty: the defaults).
    presets: ClassVar[Mapping[str, Mapping[str, Any]]] = {"ltf": {}, "concave": {}, "imdb": {}}
    reconstruction: ClassVar[bool] = False
    trace_terms: ClassVar[tuple[str, ...]] = ()
    """Names of the terms of the value each arm is ranked by (``state.terms`` columns)."""
    trace_kind: ClassVar[str] = "index"
    """How the choice follows from the trace: a key of
    :data:`~risingbandits.policies.machinery.trace.TRACE_KINDS` (sampling and elimination policies
    must say so; the trace tests check the rule of each kind)."""

    def __init__(self, preset: str | None = None, **params: Any) -> None:
        spec = {p.name: p for p in self.params_spec}
        values = {p.name: p.default for p in self.params_spec}
        if preset is not None:
            if not isinstance(preset, str) or preset not in self.presets:
                allowed = ", ".join(sorted(self.presets)) or "none"
                raise ValueError(f"{self.name}: preset={preset!r} is not allowed: use {allowed}")
            values.update(self.presets[preset])
        for key, value in params.items():
            if key not in spec:
                allowed = ", ".join(spec) or "none"
                raise ValueError(f"{self.name}: unknown parameter {key!r}: allowed are {allowed}")
            values[key] = value
        self._params = {k: spec[k].validate(self.name, v) for k, v in values.items()}
        self._preset = preset
        self._check_params()
        self._run: OnlineRun | None = None

    def _check_params(self) -> None:
        """Cross-parameter checks (override where parameters constrain each other)."""

    # -- description -------------------------------------------------------------------------

    @property
    def params(self) -> dict[str, Any]:
        """The resolved hyper-parameters (a copy)."""
        return dict(self._params)

    @property
    def preset(self) -> str | None:
        return self._preset

    @property
    def uses_horizon(self) -> bool:
        """Whether the configured policy reads the horizon T (it must then be re-run per T)."""
        return False

    def info(self) -> dict[str, Any]:
        """Name, summary, paper, parameters, presets and whether it is a reconstruction."""
        return {
            "name": self.name,
            "summary": self.summary,
            "paper": self.paper,
            "params": self.params,
            "uses_horizon": self.uses_horizon,
            "reconstruction": self.reconstruction,
            "presets": {k: dict(v) for k, v in self.presets.items()},
        }

    def to_dict(self) -> dict[str, Any]:
        """``{"policy": name, "params": {...}}``; :func:`policy_from_dict` inverts it."""
        return {"policy": self.name, "params": self.params}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Policy) and type(other) is type(self) and other.params == self.params
        )

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted((k, repr(v)) for k, v in self._params.items()))))

    # -- the algorithm -----------------------------------------------------------------------

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        """Fresh run state (a NamedTuple registered with a kernel) for K arms and horizon T.

        ``noise_proxy`` is the instance's sub-Gaussian proxy, used by ``sigma="auto"``.
        ``capacity``: the pulls per arm (and rounds of a round window) the state holds, at most
        T (None: T, the simulator's whole run; an online run grows it,
        :mod:`~risingbandits.policies.machinery.capacity`). Only arrays whose size would follow T
        may follow the capacity; parameters derived from T (a window tau, a schedule) do not.
        """
        raise NotImplementedError

    def target_point(
        self, pulls: int, t: int, horizon: int, terms: np.ndarray
    ) -> tuple[float, float] | None:
        """Where this policy's estimate of an arm aims at round ``t`` (Figure 3 of the CURE-UCB
        paper): ``(pull number, estimated mean reward there)``, from the arm's ``pulls`` before
        round t and its traced ``terms`` at round t; None for a policy without such a point."""
        return None

    def _noise_level(self, noise_proxy: float | None) -> NoiseLevel:
        """The ``sigma`` parameter as a :class:`NoiseLevel`: a number, ``"auto"`` (the
        instance's proxy) or ``"estimate"`` (estimated online from the rewards)."""
        sigma = self._params["sigma"]
        if sigma == "estimate":
            return new_noise_level(None)
        if sigma == "auto":
            if noise_proxy is None:
                raise ValueError(
                    f"{self.name}: sigma='auto' needs the noise proxy: pass noise_proxy= "
                    "(e.g. 0.5 for Bernoulli rewards) or give sigma a number or 'estimate'"
                )
            return new_noise_level(float(noise_proxy))
        return new_noise_level(float(sigma))

    # -- online use --------------------------------------------------------------------------

    def reset(
        self,
        n_arms: int,
        horizon: int,
        seed: SeedLike = 0,
        noise_proxy: float | None = None,
        *,
        trace: bool = False,
    ) -> Policy:
        """Start a run of ``horizon`` rounds over ``n_arms`` arms; returns ``self``.

        The seed is derived exactly as in :func:`risingbandits.simulate`, so the same seed
        gives the same arm sequence online and in the compiled simulator. ``trace`` records what
        each ``select`` ranked the arms by (:meth:`trace`).
        """
        check_run_size(n_arms, horizon)

        def build(k: int, t: int, capacity: int | None) -> Any:
            return self.init_state(k, t, noise_proxy, capacity)

        self._run = OnlineRun(
            self.name, build, policy_rng(seed), int(n_arms), int(horizon), noise_proxy, trace
        )
        return self

    def _online(self) -> OnlineRun:
        if self._run is None:
            raise RuntimeError(f"{self.name}: call reset(n_arms, horizon, seed) before select()")
        return self._run

    @property
    def run(self) -> OnlineRun:
        """The current online run, the object behind select/update (after :meth:`reset`)."""
        return self._online()

    def select(self) -> int:
        """The arm to play next (calling it twice without ``update`` returns the same arm)."""
        return self._online().select()

    def update(self, arm: int, reward: float) -> None:
        """Record the reward of the arm returned by the last :meth:`select`: a score in [0, 1]
        plus noise, so a number in [-1, 2] (anything else is refused: for scores on another
        scale, :class:`~risingbandits.modelselect.ModelSelector` takes a ``score_range``)."""
        self._online().update(arm, reward)

    def recommend(self) -> int:
        """The arm this policy would deploy if the budget ended now (see
        :func:`~risingbandits.policies.machinery.kernel.most_pulled` for the default rule)."""
        return self._online().recommend()

    def trace(self) -> Trace:
        """What each ``select`` of this run ranked the arms by (a one-seed
        :class:`~risingbandits.policies.machinery.trace.Trace`; needs ``reset(...,
        trace=True)``)."""
        return self._online().trace(self.trace_terms)

    def state_dict(self) -> dict[str, Any]:
        """The current online run as JSON-able data: parameters, run state, generator state.

        :meth:`load_state_dict` restores it exactly, so a resumed run makes the same
        selections as one never interrupted.
        """
        return {"policy": self.to_dict(), **self._online().state_dict()}

    def load_state_dict(self, data: Mapping[str, Any]) -> Policy:
        """Restore an online run saved by :meth:`state_dict` (same policy and parameters); a
        checkpoint that does not fit is refused with one line
        (:func:`~risingbandits.policies.machinery.checkpoint.check_checkpoint`)."""
        saved = data.get("policy") if isinstance(data, Mapping) else None
        current = json.loads(json.dumps(self.to_dict()))
        if saved != current:
            raise ValueError(
                f"{self.name}: the saved run is of another policy: {differs(saved, current)}"
            )
        state = check_checkpoint(self, data)
        self.reset(int(data["n_arms"]), int(data["horizon"]), 0, data["noise_proxy"])
        self._online().load(data, state)
        return self

    @property
    def t(self) -> int:
        """Rounds completed in the current online run."""
        return self._online().t

    @property
    def pulls(self) -> np.ndarray:
        """Pulls per arm in the current online run (a copy)."""
        return self._online().pulls.copy()


def differs(saved: Any, current: dict[str, Any]) -> str:
    """How a checkpoint's policy differs from ``current`` (:meth:`Policy.to_dict`), for one
    line: the parameters that differ when the policy is the same (a library that added a
    parameter or changed a default says so), else the saved policy, shortened."""
    params = saved.get("params") if isinstance(saved, Mapping) else None
    if not isinstance(params, Mapping) or saved.get("policy") != current["policy"]:
        return _shortened(repr(saved))
    here = current["params"]
    parts = [
        f"{k}={params[k]!r} saved, {v!r} here" for k, v in here.items() if params.get(k, v) != v
    ]
    parts += [f"{k} saved, no such parameter here" for k in params if k not in here]
    parts += [
        f"{k} not in the saved run ({v!r} here: added by a later version?)"
        for k, v in here.items()
        if k not in params
    ]
    more = f" and {len(parts) - 3} more" if len(parts) > 3 else ""
    return "its parameters differ: " + "; ".join(_shortened(p) for p in parts[:3]) + more


def _shortened(text: str) -> str:
    """At most 80 characters of ``text`` (a checkpoint is user input: its values can be long)."""
    return text if len(text) <= 80 else text[:77] + "..."


def check_run_size(n_arms: Any, horizon: Any) -> None:
    """K >= 2 arms and a horizon T in
    1..:data:`~risingbandits.policies.machinery.capacity.MAX_HORIZON` (one clear line otherwise)."""
    if isinstance(n_arms, bool) or not isinstance(n_arms, int | np.integer) or n_arms < 2:
        raise ValueError(f"n_arms={n_arms!r} is not allowed: use an integer >= 2")
    if (
        isinstance(horizon, bool)
        or not isinstance(horizon, int | np.integer)
        or not 1 <= horizon <= MAX_HORIZON
    ):
        raise ValueError(
            f"horizon={horizon!r} is not allowed: use an integer in 1..2**53 (rounds are "
            "counted exactly in floating point up to there)"
        )
