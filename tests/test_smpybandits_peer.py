"""SW-UCB and SW-KL-UCB against the real SMPyBandits 0.9.7 (nonstationary-baselines.md §7).

SMPyBandits 0.9.7 gets its own virtual environment (its dependencies stay out of the project's;
its package needs a name SciPy 1.14 removed, which the peer script restores), created once in
``${XDG_CACHE_HOME:-~/.cache}/risingbandits/smpybandits-0.9.7`` (reused while it imports) and
run as a subprocess on ``peer_smpybandits.py``; none of its code is copied here.
If the environment cannot be built the tests FAIL with pip's output (CI has PyPI access).

Tie-breaking is made identical on both sides: SMPyBandits draws among tied maximal indices with
the global ``np.random``, our policies with their generator; here our side uses
``tie_break="first"`` and the peer script overrides SMPyBandits' ``choice`` to take the first
maximal index. Ties matter: every arm absent from the window has index +inf.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from risingbandits.policies import make_policy

SMPY_VERSION = "0.9.7"
PEER_SCRIPT = Path(__file__).with_name("peer_smpybandits.py")
HORIZON, N_ARMS = 5000, 5


def peer_venv() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "risingbandits" / f"smpybandits-{SMPY_VERSION}"


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def _imports(python: Path) -> subprocess.CompletedProcess[str] | None:
    """The peer script's check in ``python``'s environment (it imports SMPyBandits, whose import
    prints warnings, then prints its version last); None if there is no such environment."""
    if not python.exists():
        return None
    res = _run([str(python), str(PEER_SCRIPT), "check"])
    version = (res.stdout.strip().splitlines() or [""])[-1]
    if res.returncode == 0 and version != SMPY_VERSION:
        res.returncode, res.stderr = 1, f"smpybandits {version!r} is installed"
    return res


@pytest.fixture(scope="session")
def smpy_python() -> Path:
    """The Python of a working SMPyBandits 0.9.7 environment (built on first use)."""
    venv = peer_venv()
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    done = _imports(python)
    if done is not None and done.returncode == 0:
        return python
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            f"smpybandits=={SMPY_VERSION}",
        ],
    ]
    for cmd in steps:
        res = _run(cmd)
        if res.returncode != 0:
            pytest.fail(
                f"could not build the SMPyBandits environment: {' '.join(cmd)} exited with "
                f"{res.returncode}\n{res.stdout}\n{res.stderr}"
            )
    done = _imports(python)
    assert done is not None
    if done.returncode != 0:
        pytest.fail(f"SMPyBandits {SMPY_VERSION} does not import in {venv}:\n{done.stderr}")
    return python


def reward_table() -> np.ndarray:
    """Bernoulli rewards of 5 arms over 5,000 rounds whose means swap at round 2,500."""
    means = np.where(
        np.arange(HORIZON)[:, None] < HORIZON // 2,
        [0.3, 0.5, 0.45, 0.7, 0.6],
        [0.7, 0.3, 0.6, 0.45, 0.5],
    )
    return (np.random.default_rng(2024).random((HORIZON, N_ARMS)) < means).astype(float)


def our_arms(policy_name: str, params: dict, table: np.ndarray) -> np.ndarray:
    policy = make_policy(policy_name, tie_break="first", **params)
    policy.reset(N_ARMS, HORIZON, seed=0)
    arms = np.empty(HORIZON, np.int64)
    for t in range(HORIZON):
        arm = policy.select()
        policy.update(arm, table[t, arm])
        arms[t] = arm
    return arms


def peer_arms(python: Path, spec: dict, table: np.ndarray, tmp_path: Path) -> np.ndarray:
    table_file, out_file = tmp_path / "table.npy", tmp_path / "arms.npy"
    np.save(table_file, table)
    res = _run([str(python), str(PEER_SCRIPT), json.dumps(spec), str(table_file), str(out_file)])
    assert res.returncode == 0, res.stdout + res.stderr
    return np.load(out_file)


# SMPyBandits' conventions: SWUCB's alpha = xi B^2; SWklUCB's level c ln(min(t, tau)) / N with
# c = 1 (our c = 0: no ln ln term) and bisection to 1e-4 in at most 50 halvings.
CASES = {
    "sw-ucb": (
        {"xi": 1.5},  # tau "auto": floor(2 sqrt(T ln T)) = 412 at T = 5,000
        {
            "policy": "SWUCB",
            "tau": math.floor(2 * math.sqrt(HORIZON * math.log(HORIZON))),
            "alpha": 1.5,
        },
    ),
    "sw-kl-ucb": (
        {"c": 0.0, "precision": 1e-4, "max_halvings": 50},  # tau = ceil(1e-3^(-4/5)) = 252
        {"policy": "SWklUCB", "tau": 252},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_arms_as_smpybandits(name: str, smpy_python: Path, tmp_path: Path) -> None:
    params, spec = CASES[name]
    table = reward_table()
    ours = our_arms(name, params, table)
    theirs = peer_arms(smpy_python, spec, table, tmp_path)
    assert theirs.shape == (HORIZON,)
    mismatch = np.flatnonzero(ours != theirs)
    assert mismatch.size == 0, f"first difference at round {mismatch[0] + 1} of {HORIZON}"
    # The comparison is not trivial: every arm is played and the policy switches often.
    assert np.bincount(ours, minlength=N_ARMS).min() > 20
    assert np.count_nonzero(np.diff(ours)) > 200
