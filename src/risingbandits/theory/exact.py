"""Exact simulation of the deterministic CURE-UCB and R-ed-UCB of the paper's Appendix B.

Paper: Song et al. 2026, Appendix B, Algorithms "R-ed-UCB (Deterministic Version)" and
"CURE-UCB (Deterministic Version)" with the indices of Eq. (det_red) and Eq. (det_cure):

    B_red(t)  = mu(N) + (t - N) (mu(N) - mu(N - 1)),
    B_cure(t) = mu(N) + (T - t)/2 (mu(N) - mu(N - 1)),

with N = N_{i,t-1} and mu(0) = 0; each arm is played once in rounds 1..K, then the argmax is
played with ties to the lowest index. On a Linear-Then-Flat instance (Definition 5.1,
mu_i(n) = min(b_i, a_i n), a_i = b_i / t_sat_i) with rational b_i and t_sat_i every mean and every
index is rational, so the arm sequences and regrets here are exact (:class:`fractions.Fraction`).

Choices: the start plays arm (t - 1) mod K in round t, as the library's policies do (the paper
writes (t mod K) + 1; the order of the first K rounds changes no count after round K, and the
comparison of the two policies at T < K, where both play the same arms). Indices are compared as
integers after scaling by a common denominator, which is exact and much faster than Fractions.

Two simulators give the same run: :func:`step_run` follows the pseudo-code round by round (the
definition); :func:`event_run` jumps over the rounds in which the same arm keeps the lead (the
indices are affine in t between the kinks of the LTF means), for paper-scale horizons. A test
checks that they agree on every round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Literal

import numpy as np

from risingbandits.instances import Noise, RisingInstance, ltf
from risingbandits.policies.machinery.checkpoint import integer, shown

PolicyName = Literal["cure", "red"]
POLICY_NAMES: tuple[PolicyName, ...] = ("cure", "red")
MAX_EXACT_HORIZON = 10_000_000
"""The largest horizon of an exact run: it holds the arm of every round, and the pull counts
after every round are tabled from it (about 0.8 GB at 10^7 rounds with 5 arms)."""
# The registry policies these exact runs are checked against (tests/test_theory_exact.py).
LIBRARY_POLICIES: dict[PolicyName, str] = {"cure": "cure-ucb-det", "red": "red-ucb-det"}

Rational = int | str | Fraction | float


def as_fraction(value: Rational, field: str) -> Fraction:
    """``value`` as an exact Fraction: ``"3/10"``, ``"0.3"``, 3, Fraction(3, 10).

    A float is read as its shortest decimal (0.3 -> 3/10), the number its user typed.
    """
    try:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError
            return Fraction(repr(value))
        if isinstance(value, bool):
            raise ValueError
        return Fraction(value)
    except (ValueError, ZeroDivisionError, TypeError):
        raise ValueError(
            f"{field}={value!r} is not allowed: use a rational number such as 0.3 or 3/10"
        ) from None


def _fmt(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


@dataclass(frozen=True)
class ExactLTF:
    """A deterministic Linear-Then-Flat instance with rational b_i in (0, 1) and t_sat_i > 0.

    mu_i(n) = min(b_i, a_i n) with slope a_i = b_i / t_sat_i (paper Definition 5.1), mu_i(0) = 0.
    """

    b: tuple[Fraction, ...]
    t_sat: tuple[Fraction, ...]

    @classmethod
    def create(cls, b: Sequence[Rational], t_sat: Sequence[Rational]) -> ExactLTF:
        """Validated instance: at least two arms, one t_sat per b, 0 < b < 1, t_sat > 0."""
        if len(b) != len(t_sat):
            raise ValueError(
                f"b has {len(b)} value(s) and t_sat has {len(t_sat)}: give one t_sat per arm"
            )
        if len(b) < 2:
            raise ValueError(f"b has {len(b)} value(s): an instance needs at least 2 arms")
        bs = tuple(as_fraction(x, f"b[arm {i}]") for i, x in enumerate(b))
        ts = tuple(as_fraction(x, f"t_sat[arm {i}]") for i, x in enumerate(t_sat))
        for i, x in enumerate(bs):
            if not 0 < x < 1:
                raise ValueError(f"b[arm {i}]={_fmt(x)} is not allowed: use 0 < b < 1")
        for i, x in enumerate(ts):
            if x <= 0:
                raise ValueError(f"t_sat[arm {i}]={_fmt(x)} is not allowed: use t_sat > 0")
        return cls(bs, ts)

    @property
    def n_arms(self) -> int:
        return len(self.b)

    @cached_property
    def a(self) -> tuple[Fraction, ...]:
        """Slopes a_i = b_i / t_sat_i."""
        return tuple(bi / ti for bi, ti in zip(self.b, self.t_sat, strict=True))

    @cached_property
    def scaled(self) -> ScaledMeans:
        """The means as integers over a common denominator (fast exact arithmetic)."""
        return ScaledMeans.of(self)

    def mean(self, arm: int, n: int) -> Fraction:
        """mu_arm(n) = min(b, a n); mu(0) = 0."""
        return min(self.b[arm], self.a[arm] * n)

    def cumulative(self, arm: int, n: int) -> Fraction:
        """sum_{k=1..n} mu_arm(k), in closed form."""
        return Fraction(self.scaled.cumulative(arm, n), self.scaled.den)

    def value(self, horizon: int) -> Fraction:
        """V*(T) = max_i sum_{n <= T} mu_i(n) (paper Prop. 3.2)."""
        return Fraction(self.scaled.value(horizon), self.scaled.den)

    def regret(self, pulls: Sequence[int]) -> Fraction:
        """Policy regret of a run with these pull counts: V*(sum pulls) - reward collected."""
        sc = self.scaled
        collected = sum(sc.cumulative(i, int(n)) for i, n in enumerate(pulls))
        return Fraction(sc.value(int(sum(pulls))) - collected, sc.den)

    def to_instance(self, horizon: int) -> RisingInstance:
        """The float, noise-free library instance (``risingbandits.ltf``) for horizons <= T."""
        return ltf(
            [float(x) for x in self.b], [float(x) for x in self.t_sat], horizon, Noise("none")
        )

    def as_lists(self) -> dict[str, list[str]]:
        """``{"b": [...], "t_sat": [...]}`` with exact values as strings (``"3/10"``)."""
        return {"b": [_fmt(x) for x in self.b], "t_sat": [_fmt(x) for x in self.t_sat]}

    def __str__(self) -> str:
        lists = self.as_lists()
        return f"b=({', '.join(lists['b'])}) t_sat=({', '.join(lists['t_sat'])})"


@dataclass(frozen=True)
class ExactRun:
    """One exact run of a deterministic policy: the arm of every round.

    ``min_gap`` is the smallest margin between the largest index and the runner-up over the
    index rounds (t > K); 0 means an exact tie was broken to the lowest index, None that there
    was no index round. Float implementations can only be expected to agree when it is clearly
    positive.
    """

    policy: PolicyName
    instance: ExactLTF
    horizon: int
    arms: np.ndarray
    min_gap: Fraction | None
    counts: tuple[int, ...]
    """Pull counts at the end of the run."""

    def pulls(self, rounds: int | None = None) -> tuple[int, ...]:
        """Pull counts after ``rounds`` rounds (default: the whole run)."""
        if rounds is None or rounds == self.horizon:
            return self.counts
        counts = np.bincount(self.arms[:rounds], minlength=self.instance.n_arms)
        return tuple(int(c) for c in counts)

    def pulls_at(self, rounds: Sequence[int]) -> list[tuple[int, ...]]:
        """Pull counts after each of ``rounds`` (one pass over the run)."""
        table = np.zeros((self.horizon + 1, self.instance.n_arms), np.int64)
        table[np.arange(1, self.horizon + 1), self.arms] = 1
        np.cumsum(table, axis=0, out=table)
        return [tuple(int(c) for c in table[r]) for r in rounds]

    def regret(self, rounds: int | None = None) -> Fraction:
        """Exact regret of the first ``rounds`` rounds against V*(rounds).

        For R-ed-UCB (which does not use T) this is the regret of a run with horizon ``rounds``;
        for CURE-UCB only ``rounds = horizon`` is a CURE-UCB regret.
        """
        return self.instance.regret(self.pulls(rounds))


@dataclass(frozen=True)
class ScaledMeans:
    """D mu_i(n) as integers, D = lcm of the denominators of every b_i and a_i."""

    den: int
    cap: tuple[int, ...]  # D b_i
    slope: tuple[int, ...]  # D a_i
    last_linear: tuple[int, ...]  # floor(t_sat_i): the last n with mu_i(n) = a_i n

    @classmethod
    def of(cls, inst: ExactLTF) -> ScaledMeans:
        den = 1
        for x in (*inst.b, *inst.a):
            den = math.lcm(den, x.denominator)
        return cls(
            den,
            tuple(int(x * den) for x in inst.b),
            tuple(int(x * den) for x in inst.a),
            tuple(math.floor(t) for t in inst.t_sat),
        )

    def mean(self, arm: int, n: int) -> int:
        """D mu_arm(n) (n >= 0)."""
        return min(self.cap[arm], self.slope[arm] * n)

    def cumulative(self, arm: int, n: int) -> int:
        """D sum_{k=1..n} mu_arm(k) = D [a m(m + 1)/2 + b (n - m)], m = min(n, floor(t_sat))."""
        m = min(n, self.last_linear[arm])
        return self.slope[arm] * (m * (m + 1) // 2) + self.cap[arm] * (n - m)

    def value(self, horizon: int) -> int:
        """D V*(T)."""
        return max(self.cumulative(i, horizon) for i in range(len(self.cap)))


class _Indices:
    """The deterministic indices as integers (2D B_i(t)) for one policy and horizon."""

    def __init__(self, inst: ExactLTF, policy: PolicyName, horizon: int) -> None:
        self.means = inst.scaled
        self.scale = 2 * self.means.den
        self.cure = policy == "cure"
        self.horizon = horizon

    def index(self, arm: int, t: int, n: int) -> int:
        """2D B_arm(t) with N = n pulls: Eq. (det_cure) or Eq. (det_red)."""
        last = self.means.mean(arm, n)
        weight = self.horizon - t if self.cure else 2 * (t - n)
        return 2 * last + weight * (last - self.means.mean(arm, n - 1))

    def affine_rounds(self, arm: int, n: int) -> int:
        """Rounds over which the index of ``arm``, pulled at each of them from count n, stays
        affine in t: the rest of its linear part, one round at the kink, unbounded once flat."""
        last_linear = self.means.last_linear[arm]
        if n <= last_linear:
            return last_linear - n + 1
        return 1 if n == last_linear + 1 else 1 << 62


def _check_run(policy: str, horizon: int) -> None:
    if policy not in POLICY_NAMES:
        raise ValueError(f"policy={policy!r} is not allowed: use one of {', '.join(POLICY_NAMES)}")
    if not integer(horizon) or not 1 <= horizon <= MAX_EXACT_HORIZON:
        raise ValueError(
            f"horizon={shown(horizon)} is not allowed: use an integer in 1..{MAX_EXACT_HORIZON:,}"
        )


def _leader(indices: list[int]) -> tuple[int, int]:
    """The argmax (ties to the lowest index) and its margin over the runner-up."""
    top = max(indices)
    arm = indices.index(top)
    return arm, top - max(indices[:arm] + indices[arm + 1 :])


def _start(instance: ExactLTF, horizon: int) -> tuple[list[int], np.ndarray]:
    """Rounds 1..min(K, T): arm t - 1 in round t."""
    k = instance.n_arms
    arms = np.empty(horizon, np.int64)
    played = min(k, horizon)
    arms[:played] = np.arange(played)
    return [1 if i < played else 0 for i in range(k)], arms


def step_run(instance: ExactLTF, policy: PolicyName, horizon: int) -> ExactRun:
    """Run the deterministic ``policy`` for ``horizon`` rounds, one round at a time."""
    _check_run(policy, horizon)
    sc = _Indices(instance, policy, horizon)
    counts, arms = _start(instance, horizon)
    min_gap: int | None = None
    for t in range(instance.n_arms + 1, horizon + 1):
        arm, gap = _leader([sc.index(i, t, n) for i, n in enumerate(counts)])
        min_gap = gap if min_gap is None else min(min_gap, gap)
        counts[arm] += 1
        arms[t - 1] = arm
    return ExactRun(policy, instance, horizon, arms, _gap(min_gap, sc), tuple(counts))


def _first_failure(diff0: int, slope: int, strict: bool) -> int | None:
    """First k >= 0 with diff0 + slope k < 0 (or <= 0 when ``strict``); None if never."""
    if slope >= 0:
        return None
    step = -slope
    return -(-diff0 // step) if strict else diff0 // step + 1


def event_run(instance: ExactLTF, policy: PolicyName, horizon: int) -> ExactRun:
    """The run of :func:`step_run`, computed by jumping over rounds won by the same arm.

    Between two kinks of its mean (end of the linear part, the fractional step at t_sat, the
    flat part) the index of an arm pulled round after round is affine in t, and so is the
    index of every arm that is not pulled. The leader's lead over each arm is then affine in
    the number k of further rounds, and the first round at which it would lose (strictly
    behind, or level with a lower-indexed arm) is solved for exactly.
    """
    _check_run(policy, horizon)
    sc = _Indices(instance, policy, horizon)
    counts, arms = _start(instance, horizon)
    min_gap: int | None = None
    t = instance.n_arms + 1
    while t <= horizon:
        now = [sc.index(i, t, n) for i, n in enumerate(counts)]
        arm, gap = _leader(now)
        rounds = min(sc.affine_rounds(arm, counts[arm]), horizon - t + 1)
        if rounds > 1:
            rise = sc.index(arm, t + 1, counts[arm] + 1) - now[arm]
            lead = []
            for j, n in enumerate(counts):
                if j == arm:
                    continue
                diff0 = now[arm] - now[j]
                slope = rise - (sc.index(j, t + 1, n) - now[j])
                fail = _first_failure(diff0, slope, strict=j < arm)
                if fail is not None:
                    rounds = min(rounds, fail)
                lead.append((diff0, slope))
            # The lead over each arm is affine in k: its minimum is at an end of the segment.
            gap = min(min(d, d + s * (rounds - 1)) for d, s in lead)
        min_gap = gap if min_gap is None else min(min_gap, gap)
        counts[arm] += rounds
        arms[t - 1 : t - 1 + rounds] = arm
        t += rounds
    return ExactRun(policy, instance, horizon, arms, _gap(min_gap, sc), tuple(counts))


def _gap(min_gap: int | None, sc: _Indices) -> Fraction | None:
    return None if min_gap is None else Fraction(min_gap, sc.scale)


def run_exact(instance: ExactLTF, policy: PolicyName, horizon: int) -> ExactRun:
    """The exact run of ``policy`` ("cure" or "red") on ``instance`` for ``horizon`` rounds."""
    return event_run(instance, policy, horizon)
