"""Checking a saved online run before :meth:`Policy.load_state_dict` restores it.

A checkpoint comes from a file, so it is checked like any user input, and each mistake is one
``ValueError`` line naming the field: every field present; ``n_arms`` an integer >= 2,
``horizon`` in 1..:data:`~risingbandits.policies.machinery.capacity.MAX_HORIZON`, ``t`` in
0..horizon; ``pulls`` one non-negative integer per arm summing to at most ``t`` (each completed
round pulled one arm; rounds of arms since retired count in t only); ``pending`` None or an arm
index (and only while rounds remain); ``last`` one reward per arm (a number in [-1, 2], the online
rule); ``noise_proxy`` None or a finite number >= 0; ``rng`` the policy's counter-based generator
(two unsigned 64-bit integers, key and counter); ``capacity`` the one a run of t rounds can have
(:mod:`~risingbandits.policies.machinery.capacity`: 64 x 2^k or the horizon, at most
``capacity_for(t)``), so the fresh state the saved one is compared with is never larger than the
run it claims to be.

The run state must be shaped like that fresh state: the same nesting, the same settings
(scalars), every array of the same dtype and shape, its bytes inflated with a bound (a
compressed array that inflates beyond its shape is refused before it is inflated further), and
the values that kernels use as indices in range (rules registered with
:func:`register_state_check` next to the pieces that hold them: compiled kernels do not check
bounds, so an arm index out of range would read or write outside an array).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from risingbandits.policies.machinery.capacity import (
    INITIAL_CAPACITY,
    MAX_HORIZON,
    bounds,
    capacity_for,
    need,
)
from risingbandits.policies.machinery.online import REWARD_HIGH, REWARD_LOW
from risingbandits.policies.machinery.round_window import RoundWindow
from risingbandits.policies.machinery.windows import ArmHistory

if TYPE_CHECKING:
    from risingbandits.policies.base import Policy

FIELDS = (
    "policy",
    "n_arms",
    "horizon",
    "noise_proxy",
    "t",
    "pending",
    "pulls",
    "last",
    "rng",
    "capacity",
    "state",
)
UINT64 = 2**64


class RunFacts(NamedTuple):
    """What a state check may compare a run state with: its arms, rounds and pulls per arm."""

    n_arms: int
    t: int
    pulls: np.ndarray


StateCheck = Callable[[str, Any, RunFacts], None]
_CHECKS: dict[type, StateCheck] = {}


def register_state_check(piece_cls: type, check: StateCheck) -> None:
    """Check every ``piece_cls`` piece of a saved run state with ``check(field, piece,
    facts)``, which raises :func:`refuse`'s ValueError for a value out of range."""
    _CHECKS[piece_cls] = check


def integer(value: Any) -> bool:
    """An integer that is not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def number(value: Any) -> bool:
    """A finite number that is not a bool (nor an integer too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def shown(value: Any) -> str:
    """``repr(value)`` cut to 60 characters (an integer too long to print: its size)."""
    try:
        text = repr(value)
    except ValueError:  # Python prints integers of at most 4300 digits
        text = f"<an integer of about {int(value.bit_length() * math.log10(2)):,} digits>"
    return text if len(text) <= 60 else text[:57] + "..."


def refuse(field: str, value: Any, allowed: str) -> ValueError:
    """The one line refusing ``field=value``; ``allowed`` says what to use."""
    return ValueError(f"checkpoint {field}={shown(value)} is not allowed: {allowed}")


def check_within(field: str, values: np.ndarray, low: int, high: np.ndarray | int) -> None:
    """Every value in ``low..high`` (inclusive; ``high`` per element or one bound)."""
    bad = np.flatnonzero((values < low) | (values > high))
    if bad.size:
        i = int(bad[0])
        top = high if isinstance(high, int) else int(np.broadcast_to(high, values.shape)[i])
        raise refuse(f"{field}[{i}]", values.flat[i].item(), f"use {low}..{top}")


def _check_counts(data: Mapping[str, Any]) -> None:
    n_arms, horizon, t, pulls, pending = (
        data[k] for k in ("n_arms", "horizon", "t", "pulls", "pending")
    )
    if not integer(n_arms) or n_arms < 2:
        raise refuse("n_arms", n_arms, "use an integer >= 2")
    if not integer(horizon) or not 1 <= horizon <= MAX_HORIZON:
        raise refuse("horizon", horizon, f"use an integer in 1..{MAX_HORIZON}")
    if not integer(t) or not 0 <= t <= horizon:
        raise refuse("t", t, f"use an integer in 0..{horizon} (the horizon)")
    if not isinstance(pulls, Sequence) or len(pulls) != n_arms:
        raise refuse("pulls", pulls, f"use a list of {n_arms} counts (one per arm)")
    for arm, count in enumerate(pulls):
        if not integer(count) or count < 0:
            raise refuse(f"pulls[{arm}]", count, "use an integer >= 0")
    if sum(pulls) > t:  # rounds spent on arms since retired count in t, not in pulls
        raise refuse("pulls", pulls, f"the counts must sum to at most t = {t} ({sum(pulls)})")
    if pending is not None and (not integer(pending) or not 0 <= pending < n_arms):
        raise refuse("pending", pending, f"use null or an arm index in 0..{n_arms - 1}")
    if pending is not None and t == horizon:
        raise refuse("pending", pending, "use null: the horizon is used up")
    last = data["last"]
    if not isinstance(last, Sequence) or len(last) != n_arms:
        raise refuse("last", last, f"use a list of {n_arms} rewards (one per arm)")
    for arm, reward in enumerate(last):
        if not number(reward) or not REWARD_LOW <= reward <= REWARD_HIGH:
            raise refuse(
                f"last[{arm}]", reward, f"use a number in [{REWARD_LOW:g}, {REWARD_HIGH:g}]"
            )


def _check_capacity(data: Mapping[str, Any]) -> None:
    capacity, t, horizon = data["capacity"], data["t"], data["horizon"]
    top = capacity_for(t, horizon)
    doubled = (
        integer(capacity)
        and capacity % INITIAL_CAPACITY == 0
        and _power_of_two(capacity // INITIAL_CAPACITY)
    )
    if not integer(capacity) or not (doubled or capacity == horizon) or capacity > top:
        raise refuse(
            "capacity",
            capacity,
            f"use {INITIAL_CAPACITY} x 2^k or the horizon, at most {top} (a run of t = {t} "
            "rounds never holds more)",
        )


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def inflate(field: str, data: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """The array encoded in ``data`` (dtype, shape, zlib_b64), which must be of ``dtype`` and
    ``shape``: its bytes are inflated to at most the size of that shape, so a compressed
    array that would inflate further (a zip bomb) is refused without being inflated."""
    if not isinstance(data, Mapping) or set(data) != {"dtype", "shape", "zlib_b64"}:
        raise refuse(field, data, "use an encoded array (dtype, shape, zlib_b64)")
    saved, text = data["shape"], data["zlib_b64"]
    if (
        data["dtype"] != dtype.str
        or not isinstance(saved, list)
        or [int(n) if integer(n) else n for n in saved] != list(shape)
    ):
        found = f"{data['dtype']}{saved}" if isinstance(saved, list) else repr(data)
        raise ValueError(
            f"checkpoint {field}: saved array {found[:60]} does not fit this run "
            f"({dtype.str}{list(shape)})"
        )
    nbytes = math.prod(shape) * dtype.itemsize
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(base64.b64decode(text, validate=True), nbytes + 1)
    except (binascii.Error, zlib.error, TypeError, ValueError):
        raise refuse(field, "zlib_b64", "its bytes cannot be decoded") from None
    if len(raw) > nbytes or inflater.unconsumed_tail:
        raise refuse(field, "zlib_b64", f"it inflates beyond the {nbytes:,} bytes of its shape")
    if len(raw) != nbytes or not inflater.eof:
        raise refuse(field, f"{len(raw)} bytes", f"this run's array has {nbytes:,}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def decode_state(field: str, template: Any, data: Any) -> Any:
    """The run state encoded in ``data`` (by :func:`~risingbandits.policies.machinery.online.
    encode_state`), shaped and set like ``template``, a fresh state of the same run."""
    if isinstance(template, np.ndarray):
        return inflate(field, data, template.dtype, template.shape)
    if isinstance(template, tuple):
        if not isinstance(data, list) or len(data) != len(template):
            raise refuse(field, data, f"use a list of {len(template)} items like a fresh run's")
        names = getattr(template, "_fields", range(len(template)))
        values = [
            decode_state(f"{field}.{n}" if isinstance(n, str) else f"{field}[{n}]", t, d)
            for n, t, d in zip(names, template, data, strict=True)
        ]
        return type(template)(*values) if hasattr(template, "_fields") else tuple(values)
    setting = template.item() if isinstance(template, np.generic) else template
    if type(data) is not type(setting) or json.dumps(data) != json.dumps(setting):
        raise refuse(field, data, f"this run's setting is {setting!r}")
    return template


def check_values(field: str, state: Any, facts: RunFacts) -> None:
    """Apply the registered checks to every piece of ``state``."""
    check = _CHECKS.get(type(state))
    if check is not None:
        check(field, state, facts)
    if isinstance(state, tuple):
        names = getattr(state, "_fields", range(len(state)))
        for name, value in zip(names, state, strict=True):
            check_values(
                f"{field}.{name}" if isinstance(name, str) else f"{field}[{name}]", value, facts
            )


def _check_history(field: str, hist: ArmHistory, facts: RunFacts) -> None:
    """An arm's count indexes its prefix sums: at most its pulls and the table's room."""
    room = hist.prefix.shape[1] - 1
    check_within(f"{field}.counts", hist.counts, 0, np.minimum(facts.pulls, room))


def _check_window(field: str, win: RoundWindow, facts: RunFacts) -> None:
    """The round window's slots hold arm indices (-1: unused); it was pushed once per round."""
    check_within(f"{field}.arms", win.arms, -1, facts.n_arms - 1)
    check_within(f"{field}.pushes", win.pushes, 0, facts.t)


register_state_check(ArmHistory, _check_history)
register_state_check(RoundWindow, _check_window)


def check_fields(data: Any) -> None:
    """Every field of a saved run but its state (module docstring): nothing is allocated."""
    if not isinstance(data, Mapping):
        raise ValueError(f"checkpoint must be a mapping of {', '.join(FIELDS)}")
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise ValueError(f"checkpoint has no {', '.join(missing)}: it is incomplete")
    _check_counts(data)
    proxy = data["noise_proxy"]
    if proxy is not None and (not number(proxy) or proxy < 0):
        raise refuse("noise_proxy", proxy, "use null or a finite number >= 0")
    rng = data["rng"]
    if (
        not isinstance(rng, Sequence)
        or len(rng) != 2
        or not all(integer(x) and 0 <= x < UINT64 for x in rng)
    ):
        raise refuse("rng", rng, "use [key, counter], two integers in 0..2**64-1")
    _check_capacity(data)


def check_checkpoint(policy: Policy, data: Mapping[str, Any]) -> Any:
    """The run state of a saved run that fits ``policy``, decoded; one ``ValueError`` line
    naming the field otherwise (module docstring)."""
    check_fields(data)
    proxy, capacity = data["noise_proxy"], int(data["capacity"])
    n_arms, horizon, t = int(data["n_arms"]), int(data["horizon"]), int(data["t"])
    try:
        template = policy.init_state(n_arms, horizon, proxy, capacity)
    except MemoryError:
        raise refuse(
            "capacity", capacity, f"a run state of {n_arms} x {capacity:,} does not fit in memory"
        ) from None
    pulls = np.asarray(data["pulls"], np.int64)
    needed = need(bounds(template, capacity, horizon), pulls, t)
    if needed > capacity:
        raise refuse(
            "capacity", capacity, f"the run needs room for {needed:,} (its pulls and rounds)"
        )
    state = decode_state("state", template, data["state"])
    check_values("state", state, RunFacts(n_arms, t, pulls))
    return state
