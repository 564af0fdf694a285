"""Run seeds of a sweep: common random numbers across policies and horizons.

The run with seed index s on instance ``iid`` of a sweep with seed ``sweep_seed`` uses
``SeedSequence(entropy=sweep_seed, spawn_key=(hash32(iid), s))``. The policy and the horizon are
not part of it, so every policy meets the same rewards on an instance (the n-th pull of arm i
gives the same reward under every policy, see :mod:`risingbandits.rewards`), and the run of a
horizon-free policy to the largest T can be read at every smaller horizon.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_hash32(text: str) -> int:
    """A 32-bit hash of ``text`` that is the same in every process and on every day.

    (Python's ``hash`` of a string is salted per process, so it cannot be used.) It is the first
    four bytes of the SHA-256 of the UTF-8 text, big-endian.
    """
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big")


def run_seed(sweep_seed: int, instance_id: str, seed_index: int) -> np.random.SeedSequence:
    """The seed of run ``seed_index`` on instance ``instance_id`` in a sweep."""
    if sweep_seed < 0 or seed_index < 0:
        raise ValueError(
            f"sweep_seed={sweep_seed}, seed_index={seed_index} are not allowed: use integers >= 0"
        )
    return np.random.SeedSequence(
        entropy=sweep_seed, spawn_key=(stable_hash32(instance_id), seed_index)
    )
