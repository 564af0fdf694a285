"""Policies of the rising family (being implemented; see the registry)."""

from __future__ import annotations

from risingbandits.policies.base import Policy

POLICY_CLASSES: tuple[type[Policy], ...] = ()
