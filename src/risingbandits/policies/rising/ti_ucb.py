"""TI-UCB (Xia, Kong, Yu, Guo, Rossi, Kim, Li, "Which LLM to Play? Convergence-Aware Online
Model Selection with Time-Increasing Bandits", WWW 2024): a RECONSTRUCTION, the provisional
design of rising-baselines.md section 5.1 (the paper's algorithm box was not available).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits.policies.base import TIE_BREAK, Param, Policy, sigma_param
from risingbandits.policies.common import argmax_ties, set_terms
from risingbandits.policies.kernel import register_kernel
from risingbandits.policies.noise_level import NoiseLevel, noise_observe, noise_sigma
from risingbandits.policies.rising.linefit import line_fit
from risingbandits.policies.windows import ArmHistory, history_push, new_history, window_sum

STATISTICS = ("slope-ratio", "none")


class TiState(NamedTuple):
    hist: ArmHistory  # weighted: least-squares fits over any window in O(1)
    segment_start: np.ndarray  # first pull index of each arm's current segment (1-based)
    converged: np.ndarray  # bool per arm
    scores: np.ndarray
    terms: np.ndarray  # K x 2: prediction, bonus
    omega: int
    threshold: float  # gamma of the slope-ratio statistic
    detect: bool  # False: statistic "none"
    noise: NoiseLevel
    log_inv_delta: float  # ln(1/delta); the bonus scale is 2 sigma^2 ln(1/delta)
    tie_first: bool


def _select(state: TiState, t: int, rng: np.ndarray) -> int:
    hist = state.hist
    sigma = noise_sigma(state.noise)
    bonus_scale = 2.0 * sigma * sigma * state.log_inv_delta
    for i in range(state.scores.shape[0]):
        n = hist.counts[i]
        m = n - state.segment_start[i] + 1
        if m < 2:
            set_terms(state.scores, state.terms, i, np.inf, 0.0)
        elif state.converged[i]:
            mean = window_sum(hist, i, n - m, n) / m
            set_terms(state.scores, state.terms, i, mean, math.sqrt(bonus_scale / m))
        else:
            fitted = min(m, state.omega)
            mean, slope, mean_l, s_ll = line_fit(hist, i, n - fitted, n)
            lever = n + 1 - mean_l
            bonus = math.sqrt(bonus_scale * (1.0 / fitted + lever * lever / s_ll))
            set_terms(state.scores, state.terms, i, mean + slope * lever, bonus)
    return argmax_ties(state.scores, rng, state.tie_first)


def _update(state: TiState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    history_push(state.hist, arm, reward)
    noise_observe(state.noise, state.hist, arm)
    n = state.hist.counts[arm]
    if not state.detect or state.converged[arm] or n < state.omega:
        return
    # Before detection the segment is the whole history, so it holds n >= omega samples.
    half = state.omega // 2
    old_slope = line_fit(state.hist, arm, n - state.omega, n - half)[1]
    new_slope = line_fit(state.hist, arm, n - half, n)[1]
    if new_slope <= 0.0 or (old_slope > 0.0 and new_slope <= (1.0 - state.threshold) * old_slope):
        state.converged[arm] = True
        state.segment_start[arm] = n - half + 1


register_kernel(TiState, _select, _update)


class TiUCB(Policy):
    """TI-UCB, RECONSTRUCTION (rising-baselines.md 5.1, DECISIONS.md row 7): not the paper's
    Algorithm 1, which could not be read; check it before publishing numbers under this name.

    Paper: Xia et al., "Which LLM to Play? Convergence-Aware Online Model Selection with
    Time-Increasing Bandits", WWW 2024. Verified from the abstract only: it predicts each arm's
    increase, uses a UCB index, and detects convergence by comparing consecutive increase
    predictions. Reconstructed index of arm i with N pulls, current segment of m samples:
    m < 2: +inf. Before convergence: least squares X(l) ~ a + b l over the last
    m' = min(m, omega) pulls, predicted at the next pull N + 1, plus the prediction-interval
    bonus sqrt(2 sigma^2 ln(1/delta) (1/m' + (N + 1 - mean_l)^2 / S_ll)). After convergence:
    segment mean + sqrt(2 sigma^2 ln(1/delta) / m). Detection, after each pull of a
    non-converged arm with N >= omega: slopes b_old, b_new of the older and newer halves of the
    last omega pulls (newer half = last floor(omega/2)); "slope-ratio" declares convergence when
    b_new <= 0 or (b_old > 0 and b_new <= (1 - gamma) b_old), a dimensionless placeholder for the
    paper's statistic; the arm then stays converged and its segment restarts at the newer half.
    Does not use T.

    Parameters (CURE-UCB paper's values): delta = 0.01, omega = 100, gamma = 0.3 (threshold of
    the statistic); sigma: noise proxy, 0.1 as for the other baselines (the paper states none),
    or "auto"; statistic: "slope-ratio" or "none" (never converge; ablation); tie_break.
    Caveat: on noisy rewards the half-window slopes are noisy, so "slope-ratio" can fire early.
    """

    name = "ti-ucb"
    trace_terms = ("prediction", "bonus")
    summary = "TI-UCB reconstruction: windowed OLS prediction + bonus, convergence detection"
    paper = (
        "Xia et al. 2024, Which LLM to Play? Convergence-Aware Online Model Selection with "
        "Time-Increasing Bandits (WWW); reconstruction"
    )
    reconstruction = True
    params_spec = (
        Param("delta", 0.01, "confidence level", low=0.0, high=1.0, low_open=True, high_open=True),
        Param("omega", 100, "window of the fit and of the detection test", kind=int, low=4),
        Param("gamma", 0.3, "threshold of the convergence statistic", low=0.0, high=1.0),
        Param(
            "statistic",
            "slope-ratio",
            "convergence statistic (placeholder) or none",
            kind=str,
            choices=STATISTICS,
        ),
        sigma_param("noise proxy in the bonus"),
        TIE_BREAK,
    )
    presets = {
        name: {"delta": 0.01, "omega": 100, "gamma": 0.3, "sigma": 0.1}
        for name in ("ltf", "concave", "imdb")
    }

    def init_state(self, n_arms: int, horizon: int, noise_proxy: float | None = None) -> Any:
        return TiState(
            new_history(n_arms, horizon, weighted=True),
            np.ones(n_arms, np.int64),
            np.zeros(n_arms, np.bool_),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            int(self._params["omega"]),
            float(self._params["gamma"]),
            self._params["statistic"] != "none",
            self._noise_level(noise_proxy),
            -math.log(self._params["delta"]),
            self._params["tie_break"] == "first",
        )
