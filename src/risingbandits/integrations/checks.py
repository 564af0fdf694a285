"""Argument checks the integrations share (one line naming the argument, its value and what is
allowed)."""

from __future__ import annotations

from typing import Any

from risingbandits.policies.machinery.checkpoint import number, shown


def check_seconds(name: str, value: Any, *, zero: bool = False) -> float:
    """``value`` as finite seconds > 0 (>= 0 if ``zero``); else one line."""
    if not number(value) or not (value >= 0 if zero else value > 0):
        least = ">= 0" if zero else "> 0"
        raise ValueError(
            f"{name}={shown(value)} is not allowed: use a finite number of seconds {least}"
        )
    return float(value)
