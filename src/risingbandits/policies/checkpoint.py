"""Checking a saved online run before :meth:`Policy.load_state_dict` restores it.

A checkpoint comes from a file, so it is checked like any user input, and each mistake is one
``ValueError`` line naming the field: every field present; ``n_arms`` an integer >= 2,
``horizon`` >= 1, ``t`` in 0..horizon; ``pulls`` one non-negative integer per arm summing to
``t`` (each completed round pulled one arm); ``pending`` None or an arm index (and only while
rounds remain); ``last`` one finite reward per arm; ``noise_proxy`` None or a finite number >= 0;
``rng`` the policy's counter-based generator (two unsigned 64-bit integers, key and counter);
the run state shaped like a fresh run's: the same nesting, and every array of the same dtype
and shape with the matching number of bytes. The state's settings (scalars) are compared by
the loader itself.
"""

from __future__ import annotations

import base64
import binascii
import math
import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

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
    "state",
)
UINT64 = 2**64


def _integer(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return (
        isinstance(value, int | float | np.integer | np.floating)
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def _refuse(field: str, value: Any, allowed: str) -> ValueError:
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return ValueError(f"checkpoint {field}={shown} is not allowed: {allowed}")


def _check_counts(data: Mapping[str, Any]) -> None:
    n_arms, horizon, t, pulls, pending = (
        data[k] for k in ("n_arms", "horizon", "t", "pulls", "pending")
    )
    if not _integer(n_arms) or n_arms < 2:
        raise _refuse("n_arms", n_arms, "use an integer >= 2")
    if not _integer(horizon) or horizon < 1:
        raise _refuse("horizon", horizon, "use an integer >= 1")
    if not _integer(t) or not 0 <= t <= horizon:
        raise _refuse("t", t, f"use an integer in 0..{horizon} (the horizon)")
    if not isinstance(pulls, Sequence) or len(pulls) != n_arms:
        raise _refuse("pulls", pulls, f"use a list of {n_arms} counts (one per arm)")
    for arm, count in enumerate(pulls):
        if not _integer(count) or count < 0:
            raise _refuse(f"pulls[{arm}]", count, "use an integer >= 0")
    if sum(pulls) != t:
        raise _refuse("pulls", pulls, f"the counts must sum to t = {t} (they sum to {sum(pulls)})")
    if pending is not None and (not _integer(pending) or not 0 <= pending < n_arms):
        raise _refuse("pending", pending, f"use null or an arm index in 0..{n_arms - 1}")
    if pending is not None and t == horizon:
        raise _refuse("pending", pending, "use null: the horizon is used up")
    last = data["last"]
    if not isinstance(last, Sequence) or len(last) != n_arms:
        raise _refuse("last", last, f"use a list of {n_arms} rewards (one per arm)")
    for arm, reward in enumerate(last):
        if not _number(reward):
            raise _refuse(f"last[{arm}]", reward, "use a finite number")


def _check_array(field: str, template: np.ndarray, data: Any) -> None:
    if not isinstance(data, Mapping) or set(data) != {"dtype", "shape", "zlib_b64"}:
        raise _refuse(field, data, "use an encoded array (dtype, shape, zlib_b64)")
    shape = data["shape"]
    if data["dtype"] != template.dtype.str or list(shape) != list(template.shape):
        raise ValueError(
            f"checkpoint {field}: saved array {data['dtype']}{list(shape)} does not fit this run "
            f"({template.dtype.str}{list(template.shape)})"
        )
    try:
        raw = zlib.decompress(base64.b64decode(data["zlib_b64"], validate=True))
    except (binascii.Error, zlib.error, TypeError, ValueError):
        raise _refuse(field, "zlib_b64", "its bytes cannot be decoded") from None
    if len(raw) != template.nbytes:
        raise _refuse(field, f"{len(raw)} bytes", f"this run's array has {template.nbytes}")


def _check_state(field: str, template: Any, data: Any) -> None:
    if isinstance(template, np.ndarray):
        _check_array(field, template, data)
    elif isinstance(template, tuple):
        if not isinstance(data, Sequence) or len(data) != len(template):
            raise _refuse(field, data, f"use a list of {len(template)} items like a fresh run's")
        names = getattr(template, "_fields", range(len(template)))
        for name, sub_template, sub_data in zip(names, template, data, strict=True):
            sub = f"{field}.{name}" if isinstance(name, str) else f"{field}[{name}]"
            _check_state(sub, sub_template, sub_data)


def check_checkpoint(policy: Policy, data: Mapping[str, Any]) -> None:
    """Refuse (one ``ValueError`` line naming the field) a saved run that does not fit
    ``policy``; see the module docstring for what is checked."""
    if not isinstance(data, Mapping):
        raise ValueError(f"checkpoint must be a mapping of {', '.join(FIELDS)}")
    missing = [k for k in FIELDS if k not in data]
    if missing:
        raise ValueError(f"checkpoint has no {', '.join(missing)}: it is incomplete")
    _check_counts(data)
    proxy = data["noise_proxy"]
    if proxy is not None and (not _number(proxy) or proxy < 0):
        raise _refuse("noise_proxy", proxy, "use null or a finite number >= 0")
    rng = data["rng"]
    if (
        not isinstance(rng, Sequence)
        or len(rng) != 2
        or not all(_integer(x) and 0 <= x < UINT64 for x in rng)
    ):
        raise _refuse("rng", rng, "use [key, counter], two integers in 0..2**64-1")
    template = policy.init_state(int(data["n_arms"]), int(data["horizon"]), proxy)
    _check_state("state", template, data["state"])
