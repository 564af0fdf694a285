"""CURE-UCB (Song, Gan, Yoon, Wang, Chen, Ok, "Rising Multi-Armed Bandits with Known Horizons",
ICML 2026): Algorithm 1 with the index of Eq. (index), and its deterministic variant of
Appendix B (Algorithm "CURE-UCB (Deterministic Version)", Eq. det_cure).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import TIE_BREAK, Param, Policy, sigma_param
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.common import argmax_ties, round_robin, show_forced
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.noise_level import (
    NoiseLevel,
    new_noise_level,
    noise_observe,
    noise_sigma,
)
from risingbandits.policies.machinery.trace import finite_point
from risingbandits.policies.machinery.windows import (
    ArmHistory,
    fraction_window,
    history_push,
    new_history,
    window_sum,
)


class CureState(NamedTuple):
    hist: ArmHistory
    scores: np.ndarray
    terms: np.ndarray  # K x 3: recent average, future gain, bonus
    horizon: int
    eps: float
    noise: NoiseLevel
    fixed_window: int  # 0: h = max(1, floor(eps N)); else this h for every arm
    start_pulls: int  # round-robin pulls per arm before the index is used
    tie_first: bool


@helper
def cure_index_terms(
    hist: ArmHistory, arm: int, h: int, remaining: float, log_t: float, sigma: float
) -> tuple[float, float, float]:
    """The three terms of B_i(t), paper Eq. (index), with window h and ``remaining`` = T - t.

    (i) recent average (1/h) sum_{l=N-h+1..N} X(l);
    (ii) (T - t)/2 x (1/h) sum_l (X(l) - X(l-h))/h, the estimated average future gain;
    (iii) sigma sqrt(2 [3 (T-t)^2 + 8 h^2] ln(t^3) / (4 h^3)), with ``log_t`` = ln t.
    Pulls before the first count as reward 0 (mu(0) = 0, used by the deterministic variant).
    """
    n = hist.counts[arm]
    upper = window_sum(hist, arm, n - h, n)
    lower = window_sum(hist, arm, n - 2 * h, n - h)
    hf = float(h)
    recent = upper / hf
    future = 0.5 * remaining * (upper - lower) / (hf * hf)
    bonus = 0.0
    if sigma > 0.0:
        bonus = sigma * math.sqrt(
            2.0 * (3.0 * remaining * remaining + 8.0 * hf * hf) * 3.0 * log_t / (4.0 * hf**3)
        )
    return recent, future, bonus


def _select(state: CureState, t: int, rng: np.ndarray) -> int:
    n_arms = state.scores.shape[0]
    forced = round_robin(t, n_arms, state.start_pulls)
    if forced >= 0:
        return show_forced(state.scores, state.terms, forced)
    remaining = float(state.horizon - t)
    log_t = math.log(t)
    sigma = noise_sigma(state.noise)
    for i in range(n_arms):
        h = state.fixed_window
        if h == 0:
            h = fraction_window(state.hist.counts[i], state.eps)
        recent, future, bonus = cure_index_terms(state.hist, i, h, remaining, log_t, sigma)
        state.terms[i, 0] = recent
        state.terms[i, 1] = future
        state.terms[i, 2] = bonus
        state.scores[i] = recent + future + bonus
    return argmax_ties(state.scores, rng, state.tie_first)


def _update(state: CureState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    history_push(state.hist, arm, reward)
    noise_observe(state.noise, state.hist.prefix, arm, state.hist.counts[arm])


register_kernel(CureState, _select, _update)


class CureUCB(Policy):
    """CURE-UCB: cumulative-reward estimation UCB for rising bandits with a known horizon T.

    Paper: Song et al., "Rising Multi-Armed Bandits with Known Horizons" (ICML 2026), Alg. 1.
    Index (Eq. index) of arm i at round t, with N = N_{i,t-1} pulls and window h:
    recent average of the last h rewards + (T - t)/2 x their mean slope against the h before
    + sigma sqrt(2 [3 (T-t)^2 + 8 h^2] ln(t^3) / (4 h^3)).

    Parameters (paper values):
      eps: window fraction, h = max(1, floor(eps N)) so 2h <= N; 1/4 (synthetic), 1/32 (IMDB).
      sigma: sub-Gaussian proxy in the bonus; 0.1 in every preset (the paper states none;
        DECISIONS.md row 4), "auto" for the instance's proxy (0.5 for Bernoulli rewards), or
        "estimate" (online, from the rewards: :mod:`risingbandits.policies.machinery.noise_level`).
      tie_break: "random" (DECISIONS.md row 3) or "first".

    Choices: play each arm twice in round robin first (Alg. 1, line 2); ln(t^3) uses the
    current round t; the bonus is not clipped.
    """

    name = "cure-ucb"
    trace_terms = ("recent average", "future gain", "bonus")
    summary = "CURE-UCB: recent average + (T-t)/2 x slope + bonus (the paper's method; uses T)"
    paper = "Song et al. 2026, Rising Multi-Armed Bandits with Known Horizons, Alg. 1, Eq. (index)"
    params_spec = (
        Param(
            "eps",
            0.25,
            "window fraction: h = max(1, floor(eps N))",
            low=0.0,
            high=0.5,
            low_open=True,
            high_open=True,
        ),
        sigma_param("noise proxy in the exploration bonus"),
        TIE_BREAK,
    )
    presets = {
        "ltf": {"eps": 0.25, "sigma": 0.1},
        "concave": {"eps": 0.25, "sigma": 0.1},
        "imdb": {"eps": 1 / 32, "sigma": 0.1},
    }

    @property
    def uses_horizon(self) -> bool:
        return True

    def target_point(
        self, pulls: int, t: int, horizon: int, terms: np.ndarray
    ) -> tuple[float, float] | None:
        """The pull N + (T - t)/2 with value recent average + future gain: the average reward of
        the remaining T - t pulls on the arm's projected line (paper Figure 3, Eq. (index))."""
        return finite_point(pulls + (horizon - t) / 2, terms[0] + terms[1])

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        return CureState(
            new_history(n_arms, held(horizon, capacity)),
            np.zeros(n_arms),
            np.zeros((n_arms, 3)),
            int(horizon),
            float(self._params["eps"]),
            self._noise_level(noise_proxy),
            0,
            2,
            self._params["tie_break"] == "first",
        )


class CureUCBDet(Policy):
    """Deterministic CURE-UCB of the strict-dominance theorem (paper Thm. 5.2, Appendix B).

    B_i(t) = mu_i(N) + (T - t)/2 x (mu_i(N) - mu_i(N - 1)): window h = 1, no bonus, each arm
    once in round robin first, mu_i(0) = 0, argmax ties to the lowest index. Meant for
    noise-free instances (the theorem checks); it has no parameters.
    """

    name = "cure-ucb-det"
    trace_terms = ("recent average", "future gain", "bonus")
    summary = "deterministic CURE-UCB (h = 1, no bonus, K-round start; dominance theorem)"
    paper = "Song et al. 2026, Appendix B, Algorithm CURE-UCB (Deterministic Version)"
    target_point = CureUCB.target_point

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
        return CureState(
            new_history(n_arms, held(horizon, capacity)),
            np.zeros(n_arms),
            np.zeros((n_arms, 3)),
            int(horizon),
            0.25,
            new_noise_level(0.0),
            1,
            1,
            True,
        )
