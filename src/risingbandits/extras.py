"""Optional dependencies: one error type whose message says what to install."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError):
    """An optional dependency is not installed (the message says what to install)."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingExtra` saying ``pip install
    "risingbandits[extra]"``. A module that is present but fails to import raises as usual."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] != module.split(".")[0]:
            raise
        raise MissingExtra(
            f'{purpose} needs {module.split(".")[0]}: pip install "risingbandits[{extra}]"'
        ) from None
