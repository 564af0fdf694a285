"""Noise models of a rising instance (DECISIONS.md row 14)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from risingbandits.policies.machinery.checkpoint import number, shown
from risingbandits.rewards import NOISE_BERNOULLI, NOISE_CURVE_STD, NOISE_GAUSSIAN, NOISE_NONE

NoiseKind = Literal["gaussian", "bernoulli", "none", "curve-std"]
_CODES = {
    "none": NOISE_NONE,
    "gaussian": NOISE_GAUSSIAN,
    "bernoulli": NOISE_BERNOULLI,
    "curve-std": NOISE_CURVE_STD,
}
DEFAULT_SIGMA = 0.1
ALLOWED = "gaussian[:SIGMA], bernoulli, none or curve-std"


@dataclass(frozen=True)
class Noise:
    """How an observed reward scatters around its mean.

    ``gaussian`` (sigma, default 0.1 for synthetic instances), ``bernoulli`` (reward ~
    Bernoulli(mean)), ``none`` (the reward is the mean) or ``curve-std`` (Gaussian whose standard
    deviation on the n-th pull of arm i is ``noise_std[i, n - 1]`` of the instance, e.g. the
    spread of a learning curve across data splits; only for instances that carry that table).
    """

    kind: NoiseKind = "gaussian"
    sigma: float = DEFAULT_SIGMA

    def __post_init__(self) -> None:
        if self.kind not in _CODES:
            raise ValueError(f"noise kind={self.kind!r} is not allowed: use {ALLOWED}")
        if self.kind == "gaussian" and not (number(self.sigma) and self.sigma >= 0):
            raise ValueError(
                f"noise sigma={shown(self.sigma)} is not allowed: use a finite sigma >= 0"
            )
        if self.kind != "gaussian":
            object.__setattr__(self, "sigma", 0.0)

    @classmethod
    def parse(cls, text: str) -> Noise:
        """``"gaussian"``, ``"gaussian:0.2"``, ``"bernoulli"``, ``"none"`` or ``"curve-std"``."""
        kind, colon, arg = text.strip().partition(":")
        kind = kind.lower()
        if kind == "gaussian":
            if not colon:
                return cls("gaussian", DEFAULT_SIGMA)
            try:
                return cls("gaussian", float(arg))
            except ValueError:
                raise ValueError(
                    f"noise={text!r} is not allowed: the SIGMA of gaussian:SIGMA must be a finite "
                    "number >= 0 (or write gaussian for 0.1)"
                ) from None
        if kind in ("bernoulli", "none", "curve-std") and not colon:
            return cls(kind)  # type: ignore[arg-type]
        raise ValueError(f"noise={text!r} is not allowed: use {ALLOWED}")

    @property
    def code(self) -> int:
        """Integer code used by the compiled reward function."""
        return _CODES[self.kind]

    @property
    def proxy(self) -> float:
        """Sub-Gaussian proxy of the noise: sigma, 0.5 for Bernoulli rewards, 0 for none; for
        ``curve-std`` it depends on the table, see ``RisingInstance.noise_proxy``."""
        if self.kind == "gaussian":
            return self.sigma
        if self.kind == "curve-std":
            raise ValueError("noise curve-std has no fixed proxy: use instance.noise_proxy")
        return 0.5 if self.kind == "bernoulli" else 0.0

    def __str__(self) -> str:
        return f"gaussian:{self.sigma:g}" if self.kind == "gaussian" else self.kind
