"""Counter-based rewards: common random numbers for every policy.

The reward of the n-th pull of arm i in a run is a pure function of (run key, i, n): the
noise is a splitmix64 hash of those three numbers, so every policy run with the same seed sees
exactly the same reward sequence on each arm (paired comparisons), whatever the order of its
pulls, in any process. Noise models (DECISIONS.md row 14):

* ``none``: the reward is the mean itself;
* ``gaussian``: mean + sigma * N(0, 1) (Box-Muller on two hashed uniforms), not clipped;
* ``bernoulli``: 1 with probability mean, else 0;
* ``curve-std``: mean + noise_std[arm, pull - 1] * N(0, 1) (a standard deviation per pull).
"""

from __future__ import annotations

import math

import numpy as np

from risingbandits._jit import jit

NOISE_NONE = 0
NOISE_GAUSSIAN = 1
NOISE_BERNOULLI = 2
NOISE_CURVE_STD = 3

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TWO_POW_M53 = 2.0**-53


@jit
def mix64(z: np.uint64) -> np.uint64:
    """The splitmix64 finaliser (a bijection of 64-bit integers)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@jit
def hashed_uniform(key: np.uint64, arm: int, pull: int, sub: int) -> float:
    """A uniform number in (0, 1] for (key, arm, pull, sub-stream)."""
    counter = (np.uint64(arm) << np.uint64(42)) ^ (np.uint64(pull) << np.uint64(1)) ^ np.uint64(sub)
    z = mix64(key + mix64(counter + _GOLDEN))
    return (float(z >> np.uint64(11)) + 1.0) * _TWO_POW_M53


@jit
def draw_reward(
    means: np.ndarray,
    noise_kind: int,
    noise_sigma: float,
    noise_std: np.ndarray,
    key: np.uint64,
    arm: int,
    pull: int,
) -> float:
    """Reward of the ``pull``-th pull (1-based) of ``arm``: mean ``means[arm, pull - 1]``.

    ``noise_std`` is the instance's table of standard deviations (read by ``curve-std`` only).
    """
    mu = means[arm, pull - 1]
    if noise_kind in (NOISE_GAUSSIAN, NOISE_CURVE_STD):
        sd = noise_sigma if noise_kind == NOISE_GAUSSIAN else noise_std[arm, pull - 1]
        u1 = hashed_uniform(key, arm, pull, 0)
        u2 = hashed_uniform(key, arm, pull, 1)
        return mu + sd * math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
    if noise_kind == NOISE_BERNOULLI:
        return 1.0 if hashed_uniform(key, arm, pull, 0) <= mu else 0.0
    return mu


@jit
def draw_run_rewards(
    means: np.ndarray,
    noise_kind: int,
    noise_sigma: float,
    noise_std: np.ndarray,
    key: np.uint64,
    arms: np.ndarray,
) -> np.ndarray:
    """The reward of every round of a run that played ``arms`` (round by round): exactly what
    the compiled simulator drew, since the n-th pull of an arm always gets the same reward."""
    counts = np.zeros(means.shape[0], np.int64)
    out = np.empty(arms.shape[0])
    for r in range(arms.shape[0]):
        arm = arms[r]
        counts[arm] += 1
        out[r] = draw_reward(means, noise_kind, noise_sigma, noise_std, key, arm, counts[arm])
    return out
