"""The argument of the paper's Section 3.1 ("Necessity of Horizon Awareness") as a check.

On the intro instance (arm A: mu = 0.4; arm B: mu(n) = min(1, n/20000)) the best fixed arm is A
for T < 16,000 and B from T = 16,000 on. A policy that does not know T makes the same pulls up
to t = 8,000 whatever T is. With N = its arm-A pulls by t = 8,000 the paper distinguishes
Case 1 (N < 4,000: B too early, regret at short horizons, T ~ 10,000) and Case 2 (N > 4,000:
A too long, regret at long horizons, T ~ 30,000).

:func:`least_regret` makes the argument quantitative: the smallest regret at horizon T that any
continuation of a prefix with N arm-A pulls in 8,000 rounds can still reach (rested rewards: only
the counts matter). :func:`agnostic_price` minimises the larger of the two over N (and over
distributions of N): no policy that ignores T can do better at both T = 10,000 and
T = 30,000. :func:`check_policies` simulates the horizon-agnostic policies of the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from risingbandits.instances import Noise, RisingInstance, intro
from risingbandits.policies import POLICIES, make_policy
from risingbandits.simulate import simulate

PROBE = 8_000  # the paper's t = 8,000
SPLIT = 4_000  # Case 1: N < 4,000, Case 2: N > 4,000
SHORT, LONG = 10_000, 30_000
ARM_A = 0


CASES = {
    "case 1": "N < 4,000: B too early, loses at short horizons (T ~ 10,000)",
    "case 2": "N > 4,000: A too long, loses at long horizons (T ~ 30,000)",
}


def case_of(pulls_a: float) -> str:
    """The paper's case ("case 1", "case 2", see :data:`CASES`) for N arm-A pulls by 8,000."""
    if pulls_a < SPLIT:
        return "case 1"
    return "case 2" if pulls_a > SPLIT else "N = 4,000"


def least_regret(instance: RisingInstance, pulls_a: int, probe: int, horizon: int) -> float:
    """min over continuations of the regret at T, given N arm-A pulls in the first ``probe``
    rounds of a two-arm instance: V*(T) - max_x [S_A(N + x) + S_B(probe - N + T - probe - x)]."""
    if instance.n_arms != 2:
        raise ValueError(f"least_regret needs a two-arm instance, got {instance.n_arms} arms")
    if not 0 <= pulls_a <= probe <= horizon <= instance.max_horizon:
        raise ValueError(
            f"need 0 <= N={pulls_a} <= probe={probe} <= T={horizon} <= {instance.max_horizon}"
        )
    cum = instance.oracle.cumulative
    extra = np.arange(horizon - probe + 1)
    collected = cum[ARM_A, pulls_a + extra] + cum[1 - ARM_A, horizon - pulls_a - extra]
    return float(instance.oracle.value(horizon) - collected.max())


@dataclass(frozen=True)
class AgnosticPrice:
    """What ignoring T costs on a two-arm instance, at T = 10,000 or at T = 30,000.

    ``pulls_a`` minimises max(least regret at 10,000, at 30,000) over N, with those two
    values; ``randomised`` is the same min-max over distributions of N (a policy that
    randomises), max over lambda of min over N of lambda R_short(N) + (1 - lambda) R_long(N).
    """

    pulls_a: int
    regret_short: float
    regret_long: float
    randomised: float

    @property
    def value(self) -> float:
        return max(self.regret_short, self.regret_long)


def agnostic_price(instance: RisingInstance | None = None, step: int = 1) -> AgnosticPrice:
    """:class:`AgnosticPrice` over N = 0, step, ..., 8,000 (noise-free intro by default)."""
    inst = instance or intro(LONG, Noise("none"))
    grid = np.arange(0, PROBE + 1, step)
    short = np.array([least_regret(inst, int(n), PROBE, SHORT) for n in grid])
    long = np.array([least_regret(inst, int(n), PROBE, LONG) for n in grid])
    best = int(np.argmin(np.maximum(short, long)))
    lam = np.linspace(0.0, 1.0, 1001)[:, None]
    randomised = float((lam * short + (1.0 - lam) * long).min(axis=1).max())
    return AgnosticPrice(int(grid[best]), float(short[best]), float(long[best]), randomised)


@dataclass(frozen=True)
class PolicyCheck:
    """A policy's mean arm-A pulls by t = 8,000 in its T = 10,000 and T = 30,000 runs (equal
    for a policy that ignores T) and its mean regret at both horizons."""

    policy: str
    uses_horizon: bool
    pulls_a_short: float
    pulls_a_long: float
    regret_short: float
    regret_long: float

    @property
    def case(self) -> str:
        return "uses T" if self.uses_horizon else case_of(self.pulls_a_short)


def horizon_agnostic_policies() -> list[str]:
    """Registry policies whose default configuration does not read T."""
    return [name for name, cls in POLICIES.items() if not cls().uses_horizon]


def _preset(name: str) -> str | None:
    return "ltf" if "ltf" in POLICIES[name].presets else None


def check_policies(
    names: Sequence[str],
    seeds: int,
    noise: Noise,
    progress: Callable[[str], None] | None = None,
) -> list[PolicyCheck]:
    """Simulate each policy (its "ltf" preset) on the intro instance.

    A policy that ignores T runs once to T = 30,000 and is read at 8,000, 10,000 and 30,000
    (a prefix of its run is its run at the shorter horizon); one that uses T (CURE-UCB, as
    the reference) is run at 10,000 and at 30,000.
    """
    inst = intro(LONG, noise)
    out = []
    for name in names:
        if progress is not None:
            progress(name)
        pol = make_policy(name, preset=_preset(name))
        if pol.uses_horizon:
            runs = [simulate(inst, pol, h, seeds, record_arms=True) for h in (SHORT, LONG)]
            pulls = [_probe_pulls(r.arms) for r in runs]
            regrets = [float(r.regret.mean()) for r in runs]
        else:
            res = simulate(inst, pol, LONG, seeds, checkpoints=(PROBE, SHORT, LONG))
            pulls = [float(res.at(PROBE).pulls[:, ARM_A].mean())] * 2
            regrets = [float(res.at(h).regret.mean()) for h in (SHORT, LONG)]
        out.append(PolicyCheck(name, pol.uses_horizon, *pulls, *regrets))
    return out


def _probe_pulls(arms: np.ndarray | None) -> float:
    assert arms is not None
    return float((arms[:, :PROBE] == ARM_A).sum(axis=1).mean())


def intro_switching_horizon(noise: Noise | None = None) -> int:
    """The horizon at which the intro instance's best fixed arm changes (the paper: 16,000)."""
    switches = intro(LONG, noise).oracle.switching_horizons()
    if len(switches) != 1:
        raise RuntimeError(f"the intro instance should switch once, got {switches}")
    return switches[0].horizon
