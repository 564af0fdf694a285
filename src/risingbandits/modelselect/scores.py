"""What a model selector accepts as a score, and as extra metrics beside it.

Scores lie in [0, 1] (accuracies) unless a ``score_range=(low, high)`` is given; the policy sees
them rescaled linearly to [0, 1]. Anything else (NaN, infinities, values out of the range, a
bool) is refused with one line naming it, before anything is recorded. Metrics are any
JSON values (finite numbers, strings, lists, mappings; NumPy values are converted), kept with
the score in the history.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from risingbandits.policies.machinery.checkpoint import number, shown

UNIT = (0.0, 1.0)


def parse_score_range(value: Sequence[float] | None) -> tuple[float, float] | None:
    """``(low, high)``, numbers with low < high and a finite width, or None for [0, 1]."""
    if value is None:
        return None
    try:
        low, high = value
    except (TypeError, ValueError):
        raise ValueError(f"score_range={shown(value)} is not allowed: use (low, high)") from None
    if not (
        number(low) and number(high) and low < high and math.isfinite(float(high) - float(low))
    ):
        raise ValueError(
            f"score_range={shown(value)} is not allowed: use two finite numbers with low < high "
            "and a finite width high - low"
        )
    return float(low), float(high)


def unit_score(score: Any, given: tuple[float, float] | None, name: str) -> float:
    """``score`` of candidate ``name`` rescaled from its range to [0, 1] (refused outside)."""
    if isinstance(score, bool) or not isinstance(score, int | float | np.integer | np.floating):
        raise ValueError(f"score={shown(score)} of {name!r} is not allowed: use a number")
    low, high = given or UNIT
    if not low <= score <= high:  # also refuses NaN, and an integer too large for a float
        hint = "" if given else "; give score_range=(low, high) to rescale"
        raise ValueError(
            f"score={shown(score)} of {name!r} is not allowed: use a number in "
            f"[{low:g}, {high:g}]{hint}"
        )
    return rescale(float(score), given)


def rescale(value: float, given: tuple[float, float] | None) -> float:
    """A score in its range (``given``, or [0, 1] for None) on the policy's [0, 1] scale."""
    low, high = given or UNIT
    return (value - low) / (high - low)


def checked_metrics(metrics: Any, name: str) -> dict[str, Any]:
    """``metrics`` as a plain dict of JSON values (a copy), or one clear ValueError."""
    if not isinstance(metrics, Mapping) or not all(isinstance(k, str) for k in metrics):
        raise ValueError(
            f"metrics={metrics!r} of {name!r} is not allowed: use a mapping of names to values"
        )
    values = json_values(metrics)
    if values is None:
        raise ValueError(
            f"metrics={metrics!r} of {name!r} is not allowed: use JSON values "
            "(finite numbers, strings, lists, mappings)"
        )
    return values


def json_values(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``metrics`` as plain JSON values (NumPy values converted), or None if a value
    is not one (NaN and infinities are not)."""
    try:
        return dict(json.loads(json.dumps(dict(metrics), allow_nan=False, default=_numpy_value)))
    except (TypeError, ValueError, RecursionError):
        return None


def _numpy_value(value: Any) -> Any:
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(type(value).__name__)
