"""Noise models of a rising instance (DECISIONS.md row 14)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from risingbandits.rewards import NOISE_BERNOULLI, NOISE_GAUSSIAN, NOISE_NONE

NoiseKind = Literal["gaussian", "bernoulli", "none"]
_CODES = {"none": NOISE_NONE, "gaussian": NOISE_GAUSSIAN, "bernoulli": NOISE_BERNOULLI}
DEFAULT_SIGMA = 0.1


@dataclass(frozen=True)
class Noise:
    """How an observed reward scatters around its mean.

    ``gaussian`` (sigma, default 0.1 for synthetic instances), ``bernoulli`` (reward ~
    Bernoulli(mean)) or ``none`` (the reward is the mean).
    """

    kind: NoiseKind = "gaussian"
    sigma: float = DEFAULT_SIGMA

    def __post_init__(self) -> None:
        if self.kind not in _CODES:
            raise ValueError(
                f"noise kind={self.kind!r} is not allowed: use gaussian[:SIGMA], bernoulli or none"
            )
        if self.kind == "gaussian" and not (self.sigma >= 0 and self.sigma < float("inf")):
            raise ValueError(f"noise sigma={self.sigma!r} is not allowed: use a finite sigma >= 0")
        if self.kind != "gaussian":
            object.__setattr__(self, "sigma", 0.0)

    @classmethod
    def parse(cls, text: str) -> Noise:
        """``"gaussian"``, ``"gaussian:0.2"``, ``"bernoulli"`` or ``"none"``."""
        kind, _, arg = text.strip().partition(":")
        kind = kind.lower()
        if kind == "gaussian":
            if not arg:
                return cls("gaussian", DEFAULT_SIGMA)
            try:
                sigma = float(arg)
            except ValueError:
                raise ValueError(
                    f"noise={text!r} is not allowed: the sigma of gaussian:SIGMA must be a number"
                ) from None
            return cls("gaussian", sigma)
        if kind in ("bernoulli", "none") and not arg:
            return cls(kind)  # type: ignore[arg-type]
        raise ValueError(f"noise={text!r} is not allowed: use gaussian[:SIGMA], bernoulli or none")

    @property
    def code(self) -> int:
        """Integer code used by the compiled reward function."""
        return _CODES[self.kind]

    @property
    def proxy(self) -> float:
        """Sub-Gaussian proxy of the noise: sigma, 0.5 for Bernoulli rewards, 0 for none."""
        if self.kind == "gaussian":
            return self.sigma
        return 0.5 if self.kind == "bernoulli" else 0.0

    def __str__(self) -> str:
        return f"gaussian:{self.sigma:g}" if self.kind == "gaussian" else self.kind
