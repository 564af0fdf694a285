"""What R-SR and R-UCBE share: their paper and the authors' window fraction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PAPER = (
    "Mussi, Montenegro, Trovò, Restelli, Metelli 2024, Best Arm Identification for Stochastic "
    "Rising Bandits (ICML)"
)
AUTHORS_EPS = 0.25
"""The window fraction of the authors' experiments (synthetic settings and IMDB;
MontenegroAlessandro/BestArmIdSRB, ``config/``)."""


def authors_presets(**extra: Any) -> Mapping[str, Mapping[str, Any]]:
    """The same preset for every setting: eps = 1/4 (plus ``extra``)."""
    return {name: {"eps": AUTHORS_EPS, **extra} for name in ("ltf", "concave", "imdb")}
