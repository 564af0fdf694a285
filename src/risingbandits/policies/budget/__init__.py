"""Fixed-budget best-arm identification methods that know the budget T and end with the arm
to deploy: Successive Halving, Successive Rejects, and the rising-bandit methods R-SR and
R-UCBE of Mussi et al. (ICML 2024). Specified in ../shared/specs/budget-baselines.md; the
phase machinery of the first three is shared (:mod:`~risingbandits.policies.budget.phases`).
Hyperband and ASHA, with resource measured in cost, share theirs
(:mod:`~risingbandits.policies.budget.rungs`)."""

from __future__ import annotations

from risingbandits.policies.base import Policy
from risingbandits.policies.budget.r_sr import RisingSR
from risingbandits.policies.budget.r_ucbe import RisingUCBE, oracle_exploration
from risingbandits.policies.budget.rungs import Asha, Hyperband
from risingbandits.policies.budget.successive_halving import SuccessiveHalving
from risingbandits.policies.budget.successive_rejects import SuccessiveRejects

POLICY_CLASSES: tuple[type[Policy], ...] = (
    SuccessiveHalving,
    SuccessiveRejects,
    RisingSR,
    RisingUCBE,
    Hyperband,
    Asha,
)

__all__ = [
    "POLICY_CLASSES",
    "Asha",
    "Hyperband",
    "RisingSR",
    "RisingUCBE",
    "SuccessiveHalving",
    "SuccessiveRejects",
    "oracle_exploration",
]
