"""The policy registry: CLI names to policy classes, in the paper's order."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from risingbandits.policies import budget, rising
from risingbandits.policies.base import Policy
from risingbandits.policies.nonstationary import restarting, sliding_window
from risingbandits.policies.rising.ace import AceUCB
from risingbandits.policies.rising.cure import CureUCB, CureUCBDet
from risingbandits.policies.rising.hace import HaceUCB
from risingbandits.policies.stationary.classic import UCB1

_CLASSES: tuple[type[Policy], ...] = (
    CureUCB,
    *rising.POLICY_CLASSES,
    *sliding_window.POLICY_CLASSES,
    *restarting.POLICY_CLASSES,
    *budget.POLICY_CLASSES,
    AceUCB,
    HaceUCB,
    CureUCBDet,
    UCB1,
)
POLICIES: dict[str, type[Policy]] = {cls.name: cls for cls in _CLASSES}
"""Every policy class by its registry name (``cure-ucb``, ...), in the paper's order."""


def policy_class(name: str) -> type[Policy]:
    """The class registered under ``name`` (one clear ValueError otherwise)."""
    if not isinstance(name, str) or name not in POLICIES:
        raise ValueError(f"policy={name!r} is not allowed: use one of {', '.join(POLICIES)}")
    return POLICIES[name]


def make_policy(name: str, preset: str | None = None, **params: Any) -> Policy:
    """A configured policy from its registry name, an optional preset and overrides."""
    return policy_class(name)(preset=preset, **params)


def as_policy(policy: Policy | str) -> Policy:
    """``policy`` itself, or the registered policy of that name with its defaults (what the
    simulators and :func:`risingbandits.explain.explain` accept)."""
    if isinstance(policy, str):
        return make_policy(policy)
    if not isinstance(policy, Policy):
        raise ValueError(f"policy={policy!r} is not allowed: use a Policy or a policy name")
    return policy


def parse_params(name: str, assignments: list[str]) -> dict[str, Any]:
    """Parse ``["eps=0.25", "sigma=auto"]`` for policy ``name`` (values validated)."""
    cls = policy_class(name)
    spec = {p.name: p for p in cls.params_spec}
    out: dict[str, Any] = {}
    for item in assignments:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--param {item!r} is not allowed: use NAME=VALUE, e.g. eps=0.25")
        if key not in spec:
            allowed = ", ".join(spec) or "none"
            raise ValueError(f"{name}: unknown parameter {key!r}: allowed are {allowed}")
        out[key] = spec[key].parse(name, text)
    return out


def policy_from_dict(data: Mapping[str, Any]) -> Policy:
    """Inverse of :meth:`Policy.to_dict`."""
    if "policy" not in data:
        raise ValueError("policy dict needs a 'policy' key")
    return make_policy(str(data["policy"]), **dict(data.get("params", {})))
