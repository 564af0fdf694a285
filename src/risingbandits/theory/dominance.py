"""The strict-dominance claim of the paper (Thm. 5.2 "Strict Dominance in deterministic LTF"):
Reg(CURE-UCB, h = 1) <= Reg(R-ed-UCB, h = 1) on every deterministic LTF instance and horizon.

:func:`check` compares the two exact runs of :mod:`risingbandits.theory.exact` at one horizon;
:func:`search` tries many random and adversarial instances (small and paper-scale, integer and
real saturation times), keeps every violation and shrinks some of them with Hypothesis
(:mod:`risingbandits.theory.shrink`). The claim is a parameter so that a test can plant a
violation (the inverted inequality) and watch the machinery find and shrink it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from risingbandits.policies.machinery.checkpoint import shown
from risingbandits.theory.exact import MAX_EXACT_HORIZON, ExactLTF, run_exact

PAPER_HORIZON = 50_000
SMALL_HORIZON = 100  # small instances are checked at every T = 1..100
FAMILIES = ("small-int", "small-real", "paper-int", "paper-real", "adversarial")
MAX_INSTANCES = 1_000_000
"""The most instances of one search (5,000 take about 90 s: a million, about 5 hours)."""


@dataclass(frozen=True)
class DominanceCase:
    """Both exact regrets of one instance at one horizon."""

    instance: ExactLTF
    horizon: int
    regret_cure: Fraction
    regret_red: Fraction
    pulls_cure: tuple[int, ...]
    pulls_red: tuple[int, ...]

    @property
    def holds(self) -> bool:
        """Whether Reg(CURE-UCB) <= Reg(R-ed-UCB), the theorem's inequality."""
        return self.regret_cure <= self.regret_red

    @property
    def excess(self) -> Fraction:
        """Reg(CURE-UCB) - Reg(R-ed-UCB): positive exactly when the inequality fails."""
        return self.regret_cure - self.regret_red

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly: exact values as strings, and their floats."""
        return {
            **self.instance.as_lists(),
            "horizon": self.horizon,
            "regret_cure": float(self.regret_cure),
            "regret_red": float(self.regret_red),
            "regret_cure_exact": str(self.regret_cure),
            "regret_red_exact": str(self.regret_red),
            "holds": self.holds,
            "pulls_cure": list(self.pulls_cure),
            "pulls_red": list(self.pulls_red),
        }


Claim = Callable[[DominanceCase], bool]


def theorem_claim(case: DominanceCase) -> bool:
    """The paper's claim (Thm. 5.2): Reg(CURE-UCB) <= Reg(R-ed-UCB)."""
    return case.holds


def check(instance: ExactLTF, horizon: int) -> DominanceCase:
    """Exact regrets of deterministic CURE-UCB and R-ed-UCB (h = 1) at horizon T."""
    return check_horizons(instance, [horizon])[0]


def check_horizons(instance: ExactLTF, horizons: Iterable[int]) -> list[DominanceCase]:
    """:func:`check` at several horizons: R-ed-UCB does not use T, so one run to the largest
    horizon gives its regret at every smaller one; CURE-UCB is re-run for each T."""
    hs = sorted(set(horizons))
    if not hs:
        return []
    red = run_exact(instance, "red", hs[-1])
    out = []
    for h, red_pulls in zip(hs, red.pulls_at(hs), strict=True):
        cure = run_exact(instance, "cure", h).pulls()
        out.append(
            DominanceCase(
                instance, h, instance.regret(cure), instance.regret(red_pulls), cure, red_pulls
            )
        )
    return out


# -- random and adversarial instances -------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """An instance to check, at which horizons, and the family it was drawn from."""

    family: str
    instance: ExactLTF
    horizons: tuple[int, ...]


def _b(rng: np.random.Generator, low: float = 0.1, high: float = 1.0) -> Fraction:
    """b ~ U[low, high) on a grid of 1/1000, kept inside (0, 1)."""
    return Fraction(int(min(max(rng.uniform(low, high), 0.001), 0.999) * 1000), 1000)


def _paper_t_sat(rng: np.random.Generator, scale: int, real: bool) -> Fraction:
    """t_sat ~ U[0.05 scale, scale] (paper App. A.1): an integer, or with two decimals."""
    x = rng.uniform(0.05 * scale, scale)
    return Fraction(round(x * 100), 100) if real else Fraction(max(1, round(x)))


def critical_horizons(instance: ExactLTF, max_horizon: int) -> set[int]:
    """Horizons near the points where a deterministic policy changes its mind.

    After arm j saturates, CURE-UCB prefers a fresh arm i while a_i (T - t)/2 beats b_j,
    i.e. up to T = t_sat_j + 2 b_j / a_i; R-ed-UCB switches to i once a_i t exceeds b_j,
    at t = b_j / a_i; the best fixed arm changes where cumulative means cross. Each point
    is taken with its neighbours (-3 .. K + 3: the K start rounds shift it).
    """
    k = instance.n_arms
    points: set[Fraction] = set()
    for i in range(k):
        for j in range(k):
            if i != j:
                ratio = instance.b[j] / instance.a[i]
                points.update({instance.t_sat[j] + 2 * ratio, ratio, instance.t_sat[j] + ratio})
    out: set[int] = set()
    for p in points:
        base = int(p)
        out.update(h for h in range(base - 3, base + k + 4) if 1 <= h <= max_horizon)
    return out


def _paper_horizons(rng: np.random.Generator, instance: ExactLTF, max_horizon: int) -> tuple:
    grid = np.unique(np.geomspace(1, max_horizon, 24).astype(int))
    uniform = rng.integers(1, max_horizon + 1, 24)
    hs = {*grid.tolist(), *uniform.tolist(), max_horizon}
    return tuple(sorted(hs | critical_horizons(instance, max_horizon)))


def _small(rng: np.random.Generator, real: bool, max_horizon: int) -> tuple:
    k = int(rng.integers(2, 5))
    b = [Fraction(int(rng.integers(1, 20)), 20) for _ in range(k)]
    if real:
        t_sat = [Fraction(int(rng.integers(1, 121)), int(rng.choice([2, 3, 4, 7]))) for _ in b]
    else:
        t_sat = [Fraction(int(rng.integers(1, 41))) for _ in b]
    return ExactLTF(tuple(b), tuple(t_sat)), tuple(range(1, min(SMALL_HORIZON, max_horizon) + 1))


def _paper(rng: np.random.Generator, real: bool, max_horizon: int) -> tuple:
    k = int(rng.integers(2, 6))
    b = tuple(_b(rng) for _ in range(k))
    t_sat = tuple(_paper_t_sat(rng, max_horizon, real) for _ in range(k))
    inst = ExactLTF(b, t_sat)
    return inst, _paper_horizons(rng, inst, max_horizon)


def _adversarial(rng: np.random.Generator, max_horizon: int) -> tuple:
    """A fast arm with a low cap against a slower arm with a higher cap (the situation the
    proof of Thm. 5.2 discusses), at small or paper scale. Half of the time the slopes are
    within 2.5/t_fast of each other, where R-ed-UCB wastes under ~2 rounds after the fast arm
    saturates, so an error of CURE-UCB's index there is not outweighed by R-ed-UCB's wait.
    Sometimes an arm flat from its first pull or one with the slow arm's slope is added, plus
    0-2 random arms, in random order.
    """
    small = rng.random() < 0.5
    scale = min(40 if small else max_horizon, max_horizon)
    b_fast = _b(rng, 0.1, 0.7)
    b_slow = _b(rng, float(b_fast), 1.0)
    t_fast = Fraction(max(1, int(rng.uniform(0.05, 0.3) * scale)))
    if rng.random() < 0.5:  # a_slow / a_fast = 1 / U[1.01, 4]
        ratio = Fraction(round(rng.uniform(1.01, 4.0) * 100), 100)
    else:  # a_slow = a_fast (1 - u / t_fast), u ~ U[0.05, 2.5]
        ratio = 1 / (1 - Fraction(round(rng.uniform(0.05, 2.5) * 100), 100) / (t_fast + 3))
    t_slow = t_fast * b_slow / b_fast * ratio
    arms = [(b_fast, t_fast), (b_slow, t_slow)]
    extra = rng.random()
    if extra < 0.25:
        arms.append((_b(rng), Fraction(int(rng.integers(1, 5)), 4)))  # flat after one pull
    elif extra < 0.5:
        b_same = _b(rng)
        arms.append((b_same, b_same * t_slow / b_slow))  # the slow arm's slope
    for _ in range(int(rng.integers(0, 3))):
        arms.append((_b(rng), Fraction(max(1, int(rng.uniform(0.05, 1.0) * scale)))))
    order = rng.permutation(len(arms))
    inst = ExactLTF(tuple(arms[i][0] for i in order), tuple(arms[i][1] for i in order))
    if small:
        return inst, tuple(range(1, min(SMALL_HORIZON, max_horizon) + 1))
    return inst, _paper_horizons(rng, inst, max_horizon)


def candidates(count: int, max_horizon: int, seed: int) -> Iterator[Candidate]:
    """``count`` instances cycling through :data:`FAMILIES`, reproducible from ``seed``."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2026]))
    for j in range(count):
        fam = FAMILIES[j % len(FAMILIES)]
        if fam.startswith("small"):
            inst, hs = _small(rng, fam == "small-real", max_horizon)
        elif fam.startswith("paper"):
            inst, hs = _paper(rng, fam == "paper-real", max_horizon)
        else:
            inst, hs = _adversarial(rng, max_horizon)
        yield Candidate(fam, inst, hs)


# -- the search ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Violation:
    """A case where the claim fails, the family it came from, and its shrunk form (if any)."""

    family: str
    case: DominanceCase
    minimal: DominanceCase | None = None


@dataclass
class SearchReport:
    """Counts per family and every violation found."""

    seed: int
    max_horizon: int
    instances: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAMILIES, 0))
    cases: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FAMILIES, 0))
    violations: list[Violation] = field(default_factory=list)

    @property
    def tried(self) -> int:
        """Number of (instance, horizon) cases checked."""
        return sum(self.cases.values())

    def by_family(self) -> dict[str, dict[str, int]]:
        """Instances, cases and violations of each search family."""
        return {
            f: {
                "instances": self.instances[f],
                "cases": self.cases[f],
                "violations": sum(v.family == f for v in self.violations),
            }
            for f in FAMILIES
        }

    def minimal_counterexamples(self) -> list[tuple[Violation, tuple[int, ...]]]:
        """Each distinct shrunk counterexample once (several violations of one instance often
        shrink to the same case), with the horizons of the violations it came from."""
        found: dict[tuple[str, int], tuple[Violation, list[int]]] = {}
        for v in self.violations:
            if v.minimal is not None:
                key = (str(v.minimal.instance), v.minimal.horizon)
                found.setdefault(key, (v, []))[1].append(v.case.horizon)
        return [(v, tuple(horizons)) for v, horizons in found.values()]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "max_horizon": self.max_horizon,
            "instances": sum(self.instances.values()),
            "cases": self.tried,
            "by_family": self.by_family(),
            "violations": [
                {
                    "family": v.family,
                    **v.case.to_dict(),
                    "minimal": None if v.minimal is None else v.minimal.to_dict(),
                }
                for v in self.violations
            ],
        }


def check_search_args(instances: int, max_horizon: int, seed: int, shrink: int) -> None:
    """One clear ValueError for a bad search setting."""
    if not 1 <= instances <= MAX_INSTANCES:
        raise ValueError(f"instances={shown(instances)} is not allowed: use 1..{MAX_INSTANCES:,}")
    if not 1 <= max_horizon <= MAX_EXACT_HORIZON:
        raise ValueError(
            f"max_horizon={shown(max_horizon)} is not allowed: use 1..{MAX_EXACT_HORIZON:,}"
        )
    if seed < 0:
        raise ValueError(f"seed={seed} is not allowed: use an integer >= 0")
    if shrink < 0:
        raise ValueError(f"shrink={shrink} is not allowed: use an integer >= 0")


def search(
    instances: int = 200,
    max_horizon: int = PAPER_HORIZON,
    seed: int = 0,
    *,
    shrink: int = 3,
    claim: Claim = theorem_claim,
    progress: Callable[[int, int], None] | None = None,
) -> SearchReport:
    """Check ``claim`` on ``instances`` random/adversarial instances at many horizons each.

    Small instances are checked at every T <= 100, paper-scale ones (t_sat ~ U[0.05, 1] x
    ``max_horizon``) on a grid, at random horizons and near their critical horizons. Every
    violation is kept; the first one of each family, then further ones up to ``shrink`` in
    all, are shrunk with Hypothesis to a minimal counterexample.
    """
    from risingbandits.theory.shrink import shrink_case

    check_search_args(instances, max_horizon, seed, shrink)
    report = SearchReport(seed, max_horizon)
    for j, cand in enumerate(candidates(instances, max_horizon, seed)):
        report.instances[cand.family] += 1
        report.cases[cand.family] += len(cand.horizons)
        for case in check_horizons(cand.instance, cand.horizons):
            if not claim(case):
                report.violations.append(Violation(cand.family, case))
        if progress is not None:
            progress(j + 1, instances)
    firsts = {v.family: i for i, v in reversed(list(enumerate(report.violations)))}
    order = sorted(firsts.values()) + [
        i for i in range(len(report.violations)) if i not in firsts.values()
    ]
    for i in order[:shrink]:
        v = report.violations[i]
        report.violations[i] = Violation(v.family, v.case, shrink_case(v.case, claim, seed))
    return report
