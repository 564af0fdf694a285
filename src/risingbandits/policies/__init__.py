"""Bandit policies: CURE-UCB, its deterministic variant and reference policies."""

from risingbandits.policies.base import Param, Policy
from risingbandits.policies.registry import (
    POLICIES,
    make_policy,
    parse_params,
    policy_class,
    policy_from_dict,
)
from risingbandits.policies.rising.cure import CureUCB, CureUCBDet
from risingbandits.policies.stationary.classic import UCB1

__all__ = [
    "POLICIES",
    "UCB1",
    "CureUCB",
    "CureUCBDet",
    "Param",
    "Policy",
    "make_policy",
    "parse_params",
    "policy_class",
    "policy_from_dict",
]
