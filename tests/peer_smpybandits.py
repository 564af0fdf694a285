"""Run SMPyBandits' SWUCB or SWklUCB on a pre-drawn reward table and save the arms it plays.

The peer side of ``test_smpybandits_peer.py``: it runs as a subprocess in a separate virtual
environment with smpybandits 0.9.7, never in the project's.

Usage: python peer_smpybandits.py '{"policy": "SWUCB", "tau": 412, "alpha": 1.5}' table.npy out.npy
(or ``python peer_smpybandits.py check``: exits 0 if this environment can run the peer).

SMPyBandits imports ``scipy.special.btdtri`` when its package loads (its Beta posterior, which
SW-UCB and SW-KL-UCB never use); SciPy 1.14 removed that name for ``betaincinv``, the same
function, and Python 3.13 has no SciPy wheel older than 1.14. The name is restored before the
import, so the peer runs on any SciPy.

``table[t, k]`` is the reward of arm k in round t + 1. The only change to SMPyBandits'
policies: ``choice`` takes the *first* arm of maximal index instead of ``np.random.choice``
among them (the project side uses ``tie_break="first"``).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys

import numpy as np
import scipy.special

if not hasattr(scipy.special, "btdtri"):
    scipy.special.btdtri = scipy.special.betaincinv

from SMPyBandits.Policies import SWUCB, SWklUCB


class FirstMaxSWUCB(SWUCB):
    def choice(self):
        self.computeAllIndex()
        return int(np.argmax(self.index))


class FirstMaxSWklUCB(SWklUCB):
    def choice(self):
        self.computeAllIndex()
        return int(np.argmax(self.index))


def main() -> None:
    if sys.argv[1:] == ["check"]:
        print(importlib.metadata.version("smpybandits"))
        return
    spec = json.loads(sys.argv[1])
    table = np.load(sys.argv[2])
    horizon, n_arms = table.shape
    if spec["policy"] == "SWUCB":
        policy = FirstMaxSWUCB(n_arms, tau=spec["tau"], alpha=spec["alpha"])
    elif spec["policy"] == "SWklUCB":
        policy = FirstMaxSWklUCB(n_arms, tau=spec["tau"])
    else:
        raise SystemExit(f"unknown policy {spec['policy']!r}")
    policy.startGame()  # mandatory in 0.9.7 (t starts at -1 otherwise)
    arms = np.empty(horizon, np.int64)
    for t in range(horizon):
        arm = policy.choice()
        policy.getReward(arm, table[t, arm])
        arms[t] = arm
    np.save(sys.argv[3], arms)


if __name__ == "__main__":
    main()
