"""Shrinking a dominance counterexample with Hypothesis (``hypothesis.find``).

The strategy draws cases *near* the one found: each arm is kept (9 draws in 10) or dropped,
each b and t_sat is the found value (9 in 10) or one of a ladder of simpler rationals
(smaller denominators, nearby integers), the rounds after the K-round start are the found
number (9 in 10) or fewer. Hypothesis generates until a draw still violates the claim, then
shrinks its choices towards fewer arms, smaller horizons and the simplest rationals of the
ladders, and returns the minimal case it reaches: a counterexample by construction, reported
exactly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TypeVar

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from risingbandits.theory.dominance import Claim, DominanceCase, check
from risingbandits.theory.exact import ExactLTF

X = TypeVar("X")
_DENOMINATORS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 50, 100, 1000)


def ladder(x: Fraction, allowed: Callable[[Fraction], bool], integers: bool) -> list[Fraction]:
    """Rationals simpler than ``x`` (best approximations with small denominators, and with
    ``integers`` the nearby integers and 1, 2), simplest first; ``x`` itself excluded."""
    near = {x.limit_denominator(d) for d in _DENOMINATORS}
    if integers:
        near |= {Fraction(1), Fraction(2), Fraction(math.floor(x)), Fraction(math.ceil(x))}
    simpler = [y for y in near if y != x and allowed(y)]
    return sorted(simpler, key=lambda y: (y.denominator, abs(y.numerator)))


def mostly(simpler: Sequence[X], original: X) -> st.SearchStrategy[X]:
    """``original`` in 9 draws out of 10, else one of ``simpler``; shrinks to ``simpler[0]``."""
    n = len(simpler)
    return st.integers(0, 10 * n).map(lambda i: simpler[i] if i < n else original)


def near(case: DominanceCase) -> st.SearchStrategy[tuple[ExactLTF, int] | None]:
    """Cases near ``case``: (instance, horizon), or None when fewer than 2 arms are kept.

    The horizon is drawn as K + m, m = the rounds after the K-round start (the found m, or
    fewer), so that dropping an arm also shortens the start.
    """
    inst = case.instance
    keeps = [mostly([False], True) for _ in range(inst.n_arms)]
    bs = [mostly(ladder(b, lambda y: 0 < y < 1, False), b) for b in inst.b]
    ts = [mostly(ladder(t, lambda y: y > 0, True), t) for t in inst.t_sat]
    after_start = max(case.horizon - inst.n_arms, 0)

    def build(
        keep: tuple[bool, ...], b: tuple[Fraction, ...], t_sat: tuple[Fraction, ...], m: int
    ) -> tuple[ExactLTF, int] | None:
        arms = [i for i, k in enumerate(keep) if k]
        if len(arms) < 2:
            return None
        kept = ExactLTF(tuple(b[i] for i in arms), tuple(t_sat[i] for i in arms))
        return kept, len(arms) + m

    return st.builds(
        build,
        st.tuples(*keeps),
        st.tuples(*bs),
        st.tuples(*ts),
        mostly(range(after_start), after_start),
    )


def shrink_case(
    case: DominanceCase, claim: Claim, seed: int = 0, max_examples: int = 300, passes: int = 4
) -> DominanceCase | None:
    """A minimal case near ``case`` on which ``claim`` fails (None if none was drawn).

    Each pass shrinks within the neighbourhood of the previous result (whose ladders are then
    built from the simpler values), until a pass changes nothing or ``passes`` are done.
    """
    best: DominanceCase | None = None
    current = case
    for _ in range(passes):
        found = _shrink_once(current, claim, seed, max_examples)
        if found is None or (best is not None and _same(found, best)):
            break
        best = current = found
    return best


def _same(a: DominanceCase, b: DominanceCase) -> bool:
    return a.instance == b.instance and a.horizon == b.horizon


def _shrink_once(
    case: DominanceCase, claim: Claim, seed: int, max_examples: int
) -> DominanceCase | None:
    def fails(drawn: tuple[ExactLTF, int] | None) -> bool:
        return drawn is not None and not claim(check(*drawn))

    try:
        found = find(
            near(case),
            fails,
            settings=settings(
                max_examples=max_examples,
                database=None,
                deadline=None,
                phases=(Phase.generate, Phase.shrink),
                suppress_health_check=list(HealthCheck),
            ),
            random=random.Random(seed),
        )
    except NoSuchExample:
        return None
    assert found is not None
    return check(*found)
