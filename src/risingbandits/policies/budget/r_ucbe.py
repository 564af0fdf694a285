"""R-UCBE: UCB-E for stochastic rising bandits (Mussi, Montenegro, Trovò, Restelli, Metelli,
"Best Arm Identification for Stochastic Rising Bandits", ICML 2024)."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import TIE_BREAK, Param, Policy, sigma_param
from risingbandits.policies.budget.mussi import AUTHORS_EPS, PAPER, authors_presets
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.common import argmax_ties, round_robin, set_terms, show_forced
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.noise_level import NoiseLevel, noise_observe, noise_sigma
from risingbandits.policies.machinery.projection import projected_mean
from risingbandits.policies.machinery.transplant import ArmPlan, carry_fields, register_transplant
from risingbandits.policies.machinery.windows import (
    ArmHistory,
    floor_fraction,
    history_push,
    new_history,
)


class UcbeState(NamedTuple):
    hist: ArmHistory  # weighted: the projection's window sums in O(1)
    estimates: np.ndarray  # mu_check: last h rewards projected to T (0 while h = 0)
    widths: np.ndarray  # beta_check / sigma = (T - n + h - 1) sqrt(a / h^3)
    scores: np.ndarray
    terms: np.ndarray  # K x 2: projected estimate, bonus
    horizon: int
    eps: float
    root_a: float
    warm_pulls: int  # round-robin pulls per arm until every window has h >= 1
    noise: NoiseLevel
    tie_first: bool


def _select(state: UcbeState, t: int, rng: np.ndarray) -> int:
    n_arms = state.scores.shape[0]
    forced = round_robin(t, n_arms, state.warm_pulls)
    if forced >= 0:
        return show_forced(state.scores, state.terms, forced)
    sigma = noise_sigma(state.noise)
    for i in range(n_arms):
        set_terms(state.scores, state.terms, i, state.estimates[i], sigma * state.widths[i])
    return argmax_ties(state.scores, rng, state.tie_first)


@helper
def bonus_width(horizon: int, n: int, h: int, root_a: float) -> float:
    """beta_check / sigma = (T - n + h - 1) sqrt(a / h^3) for an arm with n pulls, window h."""
    return (horizon - n + h - 1) * root_a / (h * math.sqrt(h))


def _update(state: UcbeState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    history_push(state.hist, arm, reward)
    n = state.hist.counts[arm]
    h = floor_fraction(n, state.eps)
    if h > 0:  # else estimate and width stay 0 (the warm-up is not over)
        state.estimates[arm] = projected_mean(
            state.hist.prefix, state.hist.wprefix, arm, n, h, state.horizon
        )
        state.widths[arm] = bonus_width(state.horizon, n, h, state.root_a)
    noise_observe(state.noise, state.hist.prefix, arm, state.hist.counts[arm])


def _recommend(state: UcbeState, counts: np.ndarray, last: np.ndarray) -> int:
    return int(np.argmax(state.estimates))


register_kernel(UcbeState, _select, _update, _recommend)


def _carry_ucbe(fresh: UcbeState, old: UcbeState, plan: ArmPlan) -> UcbeState:
    """Transplant rule (a changed budget or set of arms): every arm's projection and width are
    recomputed for the new T and a (they change only when an arm is pulled otherwise)."""
    state = carry_fields(fresh, old, plan)
    hist = state.hist
    for arm, n in enumerate(hist.counts.tolist()):
        h = floor_fraction(n, state.eps)
        if h > 0:
            horizon = state.horizon
            state.estimates[arm] = projected_mean(hist.prefix, hist.wprefix, arm, n, h, horizon)
            state.widths[arm] = bonus_width(horizon, n, h, state.root_a)
    return state


register_transplant(UcbeState, _carry_ucbe)


def warm_up_pulls(eps: float) -> int:
    """Pulls after which an arm's window h = floor(eps n) is at least 1."""
    n = 1
    while floor_fraction(n, eps) < 1:
        n += 1
    return n


def auto_exploration(n_arms: int, horizon: int, delta: float) -> float:
    """a = 10 ln(2 K T / delta): the smallest a at which the error bound 2 K T exp(-a / 10) of
    R-UCBE (the authors' ``config/oracle.py``, ``OracleUCBSrb.compute_error_ub``) is delta.
    Needs no knowledge of the instance."""
    return 10.0 * math.log(2.0 * n_arms * horizon / delta)


def oracle_exploration(
    means: np.ndarray, horizon: int, eps: float, sigma: float, beta: float
) -> float:
    """The authors' oracle a* for a K x T mean table (``config/oracle.py``,
    ``OracleUCBSrb.compute_exploration_parameter``): FOR SIMULATION STUDIES ONLY, it reads the
    arms' values at the budget, which no learner knows.

    With gaps Delta_i = max_j mu_j(T) - mu_i(T) and phi = sum over Delta_i > 0 of
    Delta_i^(-2/3): a* = num / (4 sigma^2 eps^-3), num = (sqrt(T / phi) - (1 - 2 eps)^-beta)^2
    for beta >= 3/2, (T^(beta-1) / phi^beta - (1 - 2 eps)^-beta)^2 for 1 < beta < 3/2, and 0
    for beta <= 1; beta is the rate at which the arms' increments vanish (the authors take 1.3
    and 1.001 in their synthetic settings, 1.5 on IMDB). Pass the result as ``a=``.
    """
    table = np.asarray(means, dtype=np.float64)
    if table.ndim != 2 or not 1 <= horizon <= table.shape[1]:
        raise ValueError(
            f"horizon={horizon} is not allowed: use 1..{table.shape[-1]} for a K x T mean table"
        )
    if sigma <= 0.0 or not 0.0 < eps < 0.5:
        raise ValueError(
            f"sigma={sigma}, eps={eps} are not allowed: use sigma > 0, eps in (0, 1/2)"
        )
    values = table[:, horizon - 1]
    gaps = values.max() - values
    phi = float(np.sum(gaps[gaps > 0] ** (-2.0 / 3.0)))
    if phi == 0.0:
        raise ValueError("every arm has the same value at the budget: a* is not defined")
    lead = (1.0 - 2.0 * eps) ** -beta
    if beta >= 1.5:
        num = (math.sqrt(horizon / phi) - lead) ** 2
    elif beta > 1.0:
        num = (horizon ** (beta - 1.0) / phi**beta - lead) ** 2
    else:
        num = 0.0
    return num / (4.0 * sigma**2 * eps**-3)


class RisingUCBE(Policy):
    """R-UCBE: an optimistic estimate of each arm's value at the end of the budget.

    Paper: Mussi, Montenegro, Trovò, Restelli, Metelli, "Best Arm Identification for Stochastic
    Rising Bandits", ICML 2024; read from the authors' code (MontenegroAlessandro/BestArmIdSRB,
    ``agent/agent.py``, class ``UcbSRB``). Round robin until every arm has h = floor(eps n) >= 1;
    then, for arm i with n pulls and window h, over its last h pulls l = n-h+1..n:
      mu_check_i = (1/h) sum_l [X(l) + (T - l)(X(l) - X(l-h))/h]   (R-ed-UCB's projection,
        to the budget T instead of the current round),
      beta_check_i = sigma (T - n + h - 1) sqrt(a / h^3),
    pull the argmax of mu_check + beta_check. Uses T.

    Parameters:
      eps: window fraction in (0, 1/2); 1/4 as in the authors' experiments (every preset).
      sigma: noise proxy; 0.1 as for the other baselines, "auto" (the instance's proxy) or
        "estimate" (online, :mod:`~risingbandits.policies.machinery.noise_level`).
      a: exploration parameter; "auto" (default) = 10 ln(2 K T / delta)
        (:func:`auto_exploration`), which needs no knowledge of the instance. The authors set a
        with an oracle that knows the gaps at T: :func:`oracle_exploration` computes that value
        from a mean table, for simulation studies only (pass it as ``a=``).
      delta: the error level ``a="auto"`` aims at, 0.05 (unused when a is a number).
      tie_break: "random" (DECISIONS.md row 3) or "first" (the authors' np.argmax).

    Choices: mu_check and the width (T - n + h - 1) sqrt(a / h^3) change only when the arm is
    pulled (as in the authors' code); the index multiplies the width by the current sigma, which
    changes between pulls only with sigma="estimate". No clipping of the projection.
    Recommendation: argmax of mu_check, ties to the lowest index (arms whose window is still
    empty count 0, as in the authors' code).
    """

    name = "r-ucbe"
    trace_terms = ("projected estimate", "bonus")
    summary = "R-UCBE: windowed projection to the budget T + bonus; recommends the best projection"
    paper = f"{PAPER}, R-UCBE"
    params_spec = (
        Param(
            "eps",
            AUTHORS_EPS,
            "window fraction: h = floor(eps n)",
            low=0.0,
            high=0.5,
            low_open=True,
            high_open=True,
        ),
        sigma_param("noise proxy in the exploration bonus"),
        Param(
            "a",
            "auto",
            "exploration parameter; auto = 10 ln(2 K T / delta)",
            low=0.0,
            low_open=True,
            special=("auto",),
        ),
        Param(
            "delta",
            0.05,
            "error level of a = auto",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        TIE_BREAK,
    )
    presets = authors_presets(sigma=0.1)

    @property
    def uses_horizon(self) -> bool:
        return True

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        a = self._params["a"]
        if a == "auto":
            a = auto_exploration(n_arms, horizon, self._params["delta"])
        eps = float(self._params["eps"])
        return UcbeState(
            new_history(n_arms, held(horizon, capacity), weighted=True),
            np.zeros(n_arms),
            np.zeros(n_arms),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            int(horizon),
            eps,
            math.sqrt(float(a)),
            warm_up_pulls(eps),
            self._noise_level(noise_proxy),
            self._params["tie_break"] == "first",
        )
