"""Optional dependencies: one error type whose message says what to install."""

from __future__ import annotations


class MissingExtra(ImportError):
    """An optional dependency is not installed (the message says what to install)."""
