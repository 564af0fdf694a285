"""R-ed-AE (Amichay & Mansour 2025, "Rising Rested MAB with Linear Drift"): a RECONSTRUCTION,
the provisional horizon-aware successive elimination of rising-baselines.md section 6.1 (the
paper's algorithm box was not available).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits.policies.base import Param, Policy, sigma_param
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.common import best_active, lowest_active, show_active
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.noise_level import NoiseLevel, noise_observe, noise_sigma
from risingbandits.policies.machinery.windows import ArmHistory, history_push, new_history
from risingbandits.policies.rising.linefit import line_fit


class AeState(NamedTuple):
    hist: ArmHistory  # weighted: least-squares fits over all pulls in O(1)
    active: np.ndarray  # bool per arm
    values: np.ndarray  # V_hat of the last elimination test
    widths: np.ndarray  # c of the last elimination test
    scores: np.ndarray
    terms: np.ndarray  # K x 2: V_hat of the last test, 0 (active) or -inf (eliminated)
    horizon: int
    noise: NoiseLevel
    width_log: float  # sqrt(2 ln(2 K T / delta)); the radius scale is sigma times it


def _select(state: AeState, t: int, rng: np.ndarray) -> int:
    show_active(state.scores, state.terms, state.active, state.values)
    # Round robin over the active arms: the one with the fewest pulls, lowest index first.
    return lowest_active(state.active, state.hist.counts, rng, True)


def _update(state: AeState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    history_push(state.hist, arm, reward)
    noise_observe(state.noise, state.hist.prefix, arm, state.hist.counts[arm])
    n = state.hist.counts[arm]
    for i in range(state.active.shape[0]):
        if state.active[i] and state.hist.counts[i] != n:
            return  # the cycle over the active arms is not complete
    if n < 2:
        return
    remaining = float(state.horizon - t)
    target = n + 0.5 * (remaining + 1.0)  # x_f: mean pull index of the remaining rounds
    best_lower = -np.inf
    width_scale = noise_sigma(state.noise) * state.width_log
    for i in range(state.active.shape[0]):
        if state.active[i]:
            mean, slope, mean_l, s_ll = line_fit(state.hist, i, 0, n)
            lever = target - mean_l
            state.values[i] = remaining * (mean + slope * lever)
            state.widths[i] = remaining * width_scale * math.sqrt(1.0 / n + lever * lever / s_ll)
            best_lower = max(best_lower, state.values[i] - state.widths[i])
    for i in range(state.active.shape[0]):
        if state.active[i] and state.values[i] + state.widths[i] < best_lower:
            state.active[i] = False


def _recommend(state: AeState, counts: np.ndarray, last: np.ndarray) -> int:
    return best_active(state.active, state.values)


register_kernel(AeState, _select, _update, _recommend)


class RedAE(Policy):
    """R-ed-AE, RECONSTRUCTION (rising-baselines.md 6.1, DECISIONS.md row 8): not the paper's
    algorithm, which could not be read; check it before publishing numbers under this name.

    Paper: Amichay & Mansour, "Rising Rested MAB with Linear Drift", 2025 (model
    mu_i(n) = L_i n + b_i; horizon-aware successive elimination). Reconstruction: pull the
    active arms in round robin; after each complete cycle (every active arm has n >= 2 pulls)
    fit each active arm by least squares over all its pulls, X(l) ~ b + L l, and estimate the
    reward of committing to it for the R = T - t remaining rounds,
    V_i = R (b_i + L_i x_f), x_f = n + (R + 1)/2, with the radius
    c_i = R sigma sqrt(2 ln(2 K T / delta) (1/n + (x_f - mean_l)^2 / S_ll)); every arm with
    V_j + c_j < max_i (V_i - c_i) is eliminated. A single survivor is played to the end; with
    several arms left when the horizon ends, the round robin simply continues. Uses T.

    Parameters (CURE-UCB paper's values): delta = 0.01; sigma: noise proxy, 0.1 as for the
    other baselines (the paper states none), or "auto".
    Choices: the fit uses every pull (no window), rewards are not capped at 1 when
    extrapolating, the round robin has no ties (no randomness at all). Recommendation: the
    survivor, or the active arm with the highest V of the last test (lowest index before any).
    """

    name = "red-ae"
    trace_terms = ("projected value", "eliminated")
    trace_kind = "elimination"
    summary = "R-ed-AE reconstruction: successive elimination on linear fits to the horizon"
    paper = "Amichay & Mansour 2025, Rising Rested MAB with Linear Drift, R-ed-AE; reconstruction"
    reconstruction = True
    params_spec = (
        Param("delta", 0.01, "confidence level", low=0.0, high=1.0, low_open=True, high_open=True),
        sigma_param("noise proxy in the confidence radius"),
    )
    presets = {name: {"delta": 0.01, "sigma": 0.1} for name in ("ltf", "concave", "imdb")}

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
        log_term = math.log(2.0 * n_arms * horizon / self._params["delta"])
        return AeState(
            new_history(n_arms, held(horizon, capacity), weighted=True),
            np.ones(n_arms, np.bool_),
            np.zeros(n_arms),
            np.zeros(n_arms),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            int(horizon),
            self._noise_level(noise_proxy),
            math.sqrt(2.0 * log_term),
        )
