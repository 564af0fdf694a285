"""Seeds: every random number of a run comes from one ``numpy.random.SeedSequence``.

A run seed is split into two independent children: one gives the key of the policy's own
generator (tie-breaks, posterior samples; :mod:`risingbandits.policies.machinery.rng`); the other
gives the 64-bit key of the environment's counter-based rewards (see :mod:`risingbandits.rewards`).
The derivation is the same for the compiled simulator and the online object, so a seed means
the same run everywhere.
"""

from __future__ import annotations

import numpy as np

SeedLike = int | np.random.SeedSequence


def as_seed_sequence(seed: SeedLike) -> np.random.SeedSequence:
    """A ``SeedSequence`` for ``seed`` (non-negative int or a ``SeedSequence``)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed={seed!r} is not allowed: use a non-negative integer")
    return np.random.SeedSequence(int(seed))


def _child(ss: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    # Built explicitly (not ss.spawn) so that earlier spawns of ss never change the result.
    return np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, index))


def policy_rng(seed: SeedLike) -> np.ndarray:
    """The generator a policy uses in the run with this seed (``[key, counter]``, uint64)."""
    key = _child(as_seed_sequence(seed), 0).generate_state(1, np.uint64)[0]
    return np.array([key, 0], dtype=np.uint64)


def reward_key(seed: SeedLike) -> np.uint64:
    """The 64-bit key of the environment's rewards in the run with this seed."""
    return _child(as_seed_sequence(seed), 1).generate_state(1, np.uint64)[0]
