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

UNIT = (0.0, 1.0)


def parse_score_range(value: Sequence[float] | None) -> tuple[float, float] | None:
    """``(low, high)`` with finite low < high, or None for [0, 1]."""
    if value is None:
        return None
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"score_range={value!r} is not allowed: use (low, high)") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(
            f"score_range={value!r} is not allowed: use two finite numbers with low < high"
        )
    return low, high


def unit_score(score: Any, given: tuple[float, float] | None, name: str) -> float:
    """``score`` of candidate ``name`` rescaled from its range to [0, 1] (refused outside)."""
    if isinstance(score, bool) or not isinstance(score, int | float | np.integer | np.floating):
        raise ValueError(f"score={score!r} of {name!r} is not allowed: use a number")
    low, high = given or UNIT
    value = float(score)
    if not low <= value <= high:  # also refuses NaN
        hint = "" if given else "; give score_range=(low, high) to rescale"
        raise ValueError(
            f"score={score!r} of {name!r} is not allowed: use a number in [{low:g}, {high:g}]{hint}"
        )
    return rescale(value, given)


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
    try:
        return dict(json.loads(json.dumps(dict(metrics), allow_nan=False, default=_numpy_value)))
    except (TypeError, ValueError, RecursionError):
        raise ValueError(
            f"metrics={metrics!r} of {name!r} is not allowed: use JSON values "
            "(finite numbers, strings, lists, mappings)"
        ) from None


def _numpy_value(value: Any) -> Any:
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(type(value).__name__)
