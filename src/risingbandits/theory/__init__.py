"""Checks of the CURE-UCB paper's theory (docs/theory.md).

* :mod:`~risingbandits.theory.exact`: exact (rational) runs of the deterministic CURE-UCB and
  R-ed-UCB of Appendix B on Linear-Then-Flat instances;
* :mod:`~risingbandits.theory.dominance` and :mod:`~risingbandits.theory.shrink`: the strict
  dominance claim (Thm. 5.2), a search for violations and a Hypothesis shrinker;
* :mod:`~risingbandits.theory.bound`: Upsilon and the regret bound of Thm. 5.4;
* :mod:`~risingbandits.theory.horizon_awareness`: the argument of Section 3.1.
"""
