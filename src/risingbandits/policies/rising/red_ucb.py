"""R-ed-UCB (Metelli, Trovò, Pirola, Restelli, "Stochastic Rising Bandits", ICML 2022) in the
paper form of rising-baselines.md sections 3.2-3.5, and its deterministic version of the CURE-UCB
paper's Appendix B (Algorithm "R-ed-UCB (Deterministic Version)", Eq. det_red).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import TIE_BREAK, Param, Policy, sigma_param
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.common import (
    argmax_ties,
    round_robin,
    set_terms,
    show_forced,
)
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.noise_level import (
    NoiseLevel,
    new_noise_level,
    noise_observe,
    noise_sigma,
)
from risingbandits.policies.machinery.projection import projected_mean
from risingbandits.policies.machinery.trace import finite_point
from risingbandits.policies.machinery.windows import (
    ArmHistory,
    floor_fraction,
    history_push,
    new_history,
)


class RedState(NamedTuple):
    hist: ArmHistory  # weighted: window sums of X(l) and l X(l) in O(1)
    scores: np.ndarray
    terms: np.ndarray  # K x 2: projected estimate, bonus
    eps: float
    noise: NoiseLevel
    log_inv_delta: float  # ln(1/delta) = log_inv_delta + log_t_power * ln t
    log_t_power: float
    fixed_window: int  # 0: h = floor(eps N); else this h for every arm
    start_pulls: int  # round-robin pulls per arm before the index is used
    tie_first: bool


@helper
def red_index_terms(
    hist: ArmHistory, arm: int, h: int, t: int, sigma: float, log_inv_delta: float
) -> tuple[float, float]:
    """(mu_hat_i(t), beta_i(t)) of B_i(t) with window h >= 1 (spec 3.2, closed form of 3.3).

    mu_hat = (1/h) sum_{l=N-h+1..N} [X(l) + (t - l)(X(l) - X(l-h))/h]
    (:func:`~risingbandits.policies.machinery.projection.projected_mean` to round t);
    beta = sigma (t - N + h - 1) sqrt(10 ln(1/delta) / h^3).
    """
    n = hist.counts[arm]
    estimate = projected_mean(hist.prefix, hist.wprefix, arm, n, h, t)
    bonus = 0.0
    if sigma > 0.0:
        bonus = sigma * (t - n + h - 1) * math.sqrt(10.0 * log_inv_delta / float(h) ** 3)
    return estimate, bonus


def _select(state: RedState, t: int, rng: np.ndarray) -> int:
    n_arms = state.scores.shape[0]
    forced = round_robin(t, n_arms, state.start_pulls)
    if forced >= 0:
        return show_forced(state.scores, state.terms, forced)
    log_inv_delta = state.log_inv_delta + state.log_t_power * math.log(t)
    sigma = noise_sigma(state.noise)
    for i in range(n_arms):
        h = state.fixed_window
        if h == 0:
            h = floor_fraction(state.hist.counts[i], state.eps)
        estimate, bonus = np.inf, 0.0  # an empty window (h = 0): played
        if h > 0:
            estimate, bonus = red_index_terms(state.hist, i, h, t, sigma, log_inv_delta)
        set_terms(state.scores, state.terms, i, estimate, bonus)
    return argmax_ties(state.scores, rng, state.tie_first)


def _update(state: RedState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    history_push(state.hist, arm, reward)
    noise_observe(state.noise, state.hist.prefix, arm, state.hist.counts[arm])


register_kernel(RedState, _select, _update)


class RedUCB(Policy):
    """R-ed-UCB: optimistic linear projection of the last h rewards to the current round t.

    Paper: Metelli, Trovò, Pirola, Restelli, "Stochastic Rising Bandits", ICML 2022, in the
    paper form of rising-baselines.md 3.2/3.5 (DECISIONS.md row 5). For arm i with N pulls and
    window h = floor(eps N):
    B_i(t) = (1/h) sum_{l=N-h+1..N} [X(l) + (t - l)(X(l) - X(l-h))/h]
             + sigma (t - N + h - 1) sqrt(10 ln(1/delta_t) / h^3).
    An arm whose window is empty (h = 0, fewer than 1/eps pulls) gets +inf, so every arm is
    pulled ceil(1/eps) times first. Does not use T (its runs can be read at every prefix).

    Parameters (CURE-UCB paper's values, appendix "Hyperparameter"):
      eps: window fraction in (0, 1/2); 1/4 (ltf, concave), 1/32 (imdb).
      delta: confidence level, 0.001, constant over rounds (as the CURE-UCB paper lists it).
      delta_schedule: "constant" (delta_t = delta) or "t^-4" (delta_t = t^-4 with the current
        round t, Metelli's code; delta is then unused).
      sigma: noise proxy in the bonus; 0.1 in every preset (the reference code's value),
        "auto" for the instance's proxy (0.5 for Bernoulli rewards), or "estimate" (online).
      tie_break: "random" (DECISIONS.md row 3) or "first".

    Choices: the paper's (t - l) weights, recomputed for every arm every round (not the
    reference code's reversed weights and frozen projection, spec 3.6); +inf while h = 0
    instead of the code's 2K round-robin start and index 1; no clipping of the bonus.
    State: per-arm prefix sums of X(l) and l X(l), so a pull is an O(1) update and an index
    an O(1) evaluation.
    """

    name = "red-ucb"
    trace_terms = ("projected estimate", "bonus")
    summary = "R-ed-UCB: windowed linear projection to round t + bonus (horizon-agnostic)"
    paper = "Metelli, Trovò, Pirola, Restelli 2022, Stochastic Rising Bandits (ICML), R-ed-UCB"
    params_spec = (
        Param(
            "eps",
            0.25,
            "window fraction: h = floor(eps N)",
            low=0.0,
            high=0.5,
            low_open=True,
            high_open=True,
        ),
        Param(
            "delta",
            0.001,
            "confidence level of the constant schedule",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        Param(
            "delta_schedule",
            "constant",
            "delta_t = delta, or t^-4 as in Metelli's code",
            kind=str,
            choices=("constant", "t^-4"),
        ),
        sigma_param("noise proxy in the exploration bonus"),
        TIE_BREAK,
    )
    presets = {
        "ltf": {"eps": 0.25, "delta": 0.001, "sigma": 0.1},
        "concave": {"eps": 0.25, "delta": 0.001, "sigma": 0.1},
        "imdb": {"eps": 1 / 32, "delta": 0.001, "sigma": 0.1},
    }

    def target_point(
        self, pulls: int, t: int, horizon: int, terms: np.ndarray
    ) -> tuple[float, float] | None:
        """The round t itself, read as a pull number, with the projected estimate: R-ed-UCB
        projects the arm's line to the current round whatever T is (CURE-UCB paper, Figure 3)."""
        return finite_point(t, terms[0])

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        constant = self._params["delta_schedule"] == "constant"
        return RedState(
            new_history(n_arms, held(horizon, capacity), weighted=True),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            float(self._params["eps"]),
            self._noise_level(noise_proxy),
            -math.log(self._params["delta"]) if constant else 0.0,
            0.0 if constant else 4.0,
            0,
            0,
            self._params["tie_break"] == "first",
        )


class RedUCBDet(Policy):
    """Deterministic R-ed-UCB of the strict-dominance theorem (CURE-UCB paper, Appendix B).

    B_i(t) = mu_i(N) + (t - N)(mu_i(N) - mu_i(N - 1)) (Eq. det_red): R-ed-UCB's kernel with
    window h = 1 and no bonus, each arm once in round robin first, mu_i(0) = 0, argmax ties to
    the lowest index. Meant for noise-free instances (the theorem checks); no parameters.
    Choice: the K-round start plays arms 1..K in order (the paper's (t mod K) + 1 starts at
    arm 2; on rested arms the order of the start does not matter).
    """

    name = "red-ucb-det"
    trace_terms = ("projected estimate", "bonus")
    summary = "deterministic R-ed-UCB (h = 1, no bonus, K-round start; dominance theorem)"
    paper = "Song et al. 2026, Appendix B, Algorithm R-ed-UCB (Deterministic Version), Eq. det_red"
    target_point = RedUCB.target_point

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        return RedState(
            new_history(n_arms, held(horizon, capacity), weighted=True),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            0.25,
            new_noise_level(0.0),
            0.0,
            0.0,
            1,
            1,
            True,
        )
