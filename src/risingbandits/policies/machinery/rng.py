"""The policies' own random numbers: a counter-based generator in a two-word array.

A policy's randomness (argmax ties, posterior samples, random orders and restarts) comes from a
``PolicyRng``: a ``uint64`` array ``[key, counter]``. Draw number c is the splitmix64 hash of
(key, c), the same construction as the rewards (:mod:`risingbandits.rewards`). Being a plain
array, it crosses from Python into a compiled kernel in a fraction of a microsecond (a NumPy
``Generator`` costs about 4 us per call), which is what lets the online object run a select and
an update in a few microseconds; the compiled simulator uses the very same draws, so a seed gives
the same run online and compiled. Its whole state is two integers (checkpoints store them).

Draws (compiled helpers, inlined into the kernels):

* :func:`rng_uniform`: a float in [0, 1) with 53 random bits;
* :func:`rng_below`: an integer in [0, n), unbiased (rejection of the short last bucket);
* :func:`rng_normal`: N(mean, sd^2) by Box-Muller (two uniforms per draw, none kept);
* :func:`rng_gamma` and :func:`rng_beta`: Marsaglia & Tsang's (2000) gamma sampler, with
  Gamma(a) = Gamma(a + 1) U^(1/a) for a < 1, and Beta(a, b) = X / (X + Y) from two gammas.
"""

from __future__ import annotations

import math

import numpy as np

from risingbandits._jit import called_helper
from risingbandits.rewards import mix64

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_TWO_POW_M53 = 2.0**-53


@called_helper
def rng_next(rng: np.ndarray) -> np.uint64:
    """The next 64 random bits (advances the counter)."""
    counter = rng[1]
    rng[1] = counter + np.uint64(1)
    return mix64(rng[0] + mix64(counter + _GOLDEN))


@called_helper
def rng_uniform(rng: np.ndarray) -> float:
    """A uniform float in [0, 1)."""
    return float(rng_next(rng) >> np.uint64(11)) * _TWO_POW_M53


@called_helper
def rng_below(rng: np.ndarray, n: int) -> int:
    """A uniform integer in [0, n) for n >= 1."""
    bound = np.uint64(n)
    threshold = (np.uint64(0) - bound) % bound  # 2^64 mod n: the short last bucket
    r = rng_next(rng)
    while r < threshold:
        r = rng_next(rng)
    return int(r % bound)


@called_helper
def rng_normal(rng: np.ndarray, mean: float, sd: float) -> float:
    """A draw of N(mean, sd^2) (Box-Muller on two uniforms)."""
    u1 = 1.0 - rng_uniform(rng)  # in (0, 1]
    u2 = rng_uniform(rng)
    return mean + sd * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@called_helper
def rng_gamma(rng: np.ndarray, shape: float) -> float:
    """A draw of Gamma(shape, 1), shape > 0 (Marsaglia & Tsang 2000)."""
    boost = 1.0
    if shape < 1.0:
        boost = (1.0 - rng_uniform(rng)) ** (1.0 / shape)
        shape += 1.0
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = rng_normal(rng, 0.0, 1.0)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = 1.0 - rng_uniform(rng)
        if u < 1.0 - 0.0331 * x**4 or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return boost * d * v


@called_helper
def rng_beta(rng: np.ndarray, a: float, b: float) -> float:
    """A draw of Beta(a, b), a, b > 0."""
    x = rng_gamma(rng, a)
    y = rng_gamma(rng, b)
    return x / (x + y)
