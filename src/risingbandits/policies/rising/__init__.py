"""Policies of the rising family, one module per algorithm: CURE-UCB (and its deterministic
version), this library's ACE-UCB and HACE-UCB (modules ``cure``, ``ace``, ``hace``, registered
by the registry in the paper's order), R-ed-UCB (and its deterministic version), ET-SWGTS, and
the reconstructions of TI-UCB and R-ed-AE."""

from __future__ import annotations

from risingbandits.policies.base import Policy
from risingbandits.policies.rising.et_swgts import EtSwgts
from risingbandits.policies.rising.red_ae import RedAE
from risingbandits.policies.rising.red_ucb import RedUCB, RedUCBDet
from risingbandits.policies.rising.ti_ucb import TiUCB

POLICY_CLASSES: tuple[type[Policy], ...] = (RedUCB, EtSwgts, TiUCB, RedAE, RedUCBDet)

__all__ = ["POLICY_CLASSES", "EtSwgts", "RedAE", "RedUCB", "RedUCBDet", "TiUCB"]
