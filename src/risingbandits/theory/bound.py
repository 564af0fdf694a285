"""The regret upper bound of CURE-UCB (paper Thm. 5.4 "Regret upper bound for general case",
proof in Appendix C) and the cumulative increment Upsilon it is stated with.

    Upsilon(M, q) = sum_{n=1..M} gamma_max(n)^q,  gamma_max(n) = max_i (mu_i(n+1) - mu_i(n)),

    Reg(T) <= (4 + ceil(1/eps)) K                                   [constant terms, App. C]
            + (1 + 2^(1+q)) K T^q / 2 x Upsilon(ceil((1 - 2 eps) T / K), q)
            + 3K/eps (sigma T)^(2/3) (ln T)^(1/3) (18 + 48 eps^2)^(1/3),

for q in [0, 1] and eps in (0, 1/2). The O(1) of the main text is the appendix's
(4 + ceil(1/eps)) K. Choices: 0^0 = 1 in Upsilon (so Upsilon(M, 0) = M); increments of a
table that decreases somewhere count as 0; the theorem's concavity assumption (Assumption 3.1)
is not checked here: the bound is evaluated on any table, and ``risingbandits theory bound``
reports whether the instance is concave.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from risingbandits.instances import RisingInstance

DEFAULT_QS: tuple[float, ...] = tuple(np.round(np.linspace(0.0, 1.0, 21), 2).tolist())


def _check_q(q: float) -> float:
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q={q!r} is not allowed: use a number in [0, 1]")
    return float(q)


def _check_eps(eps: float) -> float:
    if not 0.0 < eps < 0.5:
        raise ValueError(f"eps={eps!r} is not allowed: use a number in (0, 1/2)")
    return float(eps)


def max_increments(means: np.ndarray, count: int) -> np.ndarray:
    """gamma_max(n) for n = 1..count (needs the table to reach pull count + 1)."""
    table = np.asarray(means, dtype=np.float64)
    if count + 1 > table.shape[1]:
        raise ValueError(
            f"Upsilon over M={count} pulls needs mu(M + 1): the table has only "
            f"{table.shape[1]} pulls per arm"
        )
    return np.asarray(np.diff(table[:, : count + 1], axis=1).max(axis=0))


def upsilon(means: np.ndarray, count: int, q: float) -> float:
    """Cumulative increment Upsilon(M, q) of a mean table ``means[i, n - 1] = mu_i(n)``."""
    q = _check_q(q)
    if count < 0:
        raise ValueError(f"M={count} is not allowed: use an integer >= 0")
    return _upsilon(_increments(means, count), q)


def _increments(means: np.ndarray, count: int) -> np.ndarray:
    """gamma_max(n) for n = 1..count, negative ones as 0."""
    return np.maximum(max_increments(means, count), 0.0)


def _upsilon(gamma: np.ndarray, q: float) -> float:
    return float(np.sum(gamma**q))  # numpy: 0.0 ** 0 = 1


@dataclass(frozen=True)
class RegretBound:
    """The three terms of Thm. 5.4 at one (T, eps, q, sigma)."""

    horizon: int
    eps: float
    q: float
    sigma: float
    upsilon: float
    increment_term: float
    noise_term: float
    constant_term: float

    @property
    def total(self) -> float:
        return self.increment_term + self.noise_term + self.constant_term

    @property
    def vacuous(self) -> bool:
        """Whether the bound is no better than the trivial Reg(T) <= T (means in [0, 1])."""
        return self.total >= self.horizon


def regret_bound(
    instance: RisingInstance | np.ndarray, horizon: int, eps: float, q: float, sigma: float
) -> RegretBound:
    """The bound of Thm. 5.4 for ``instance`` (or a mean table) at horizon T."""
    return best_bound(instance, horizon, eps, sigma, (q,))


def best_bound(
    instance: RisingInstance | np.ndarray,
    horizon: int,
    eps: float,
    sigma: float,
    qs: Iterable[float] = DEFAULT_QS,
) -> RegretBound:
    """The smallest bound over the grid ``qs`` (the theorem holds for every q in [0, 1])."""
    grid = [_check_q(q) for q in qs]
    if not grid:
        raise ValueError("q grid is empty: give at least one q in [0, 1]")
    means = instance.means if isinstance(instance, RisingInstance) else np.asarray(instance)
    eps = _check_eps(eps)
    if horizon < 1:
        raise ValueError(f"horizon={horizon} is not allowed: use an integer >= 1")
    if not sigma >= 0:
        raise ValueError(f"sigma={sigma!r} is not allowed: use a number >= 0")
    k = int(means.shape[0])
    gamma = _increments(means, math.ceil((1.0 - 2.0 * eps) * horizon / k))  # once for all q
    noise = (
        3.0
        * k
        / eps
        * (sigma * horizon) ** (2.0 / 3.0)
        * math.log(horizon) ** (1.0 / 3.0)
        * (18.0 + 48.0 * eps * eps) ** (1.0 / 3.0)
    )
    constant = (4.0 + math.ceil(1.0 / eps)) * k
    bounds = []
    for q in grid:
        ups = _upsilon(gamma, q)
        increment = (1.0 + 2.0 ** (1.0 + q)) * k * float(horizon) ** q / 2.0 * ups
        bounds.append(RegretBound(horizon, eps, q, float(sigma), ups, increment, noise, constant))
    return min(bounds, key=lambda b: b.total)


def bound_curve(
    instance: RisingInstance, horizons: Sequence[int], eps: float, sigma: float, qs: Sequence[float]
) -> list[RegretBound]:
    """:func:`best_bound` at each horizon."""
    return [best_bound(instance, h, eps, sigma, qs) for h in horizons]
