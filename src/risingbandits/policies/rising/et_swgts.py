"""ET-SWGTS (Fiandri, Metelli, Trovò 2025, "Thompson Sampling-like Algorithms for Stochastic
Rising Bandits"): forced round-robin exploration, then gamma-SWGTS, Gaussian Thompson sampling
over a sliding window of the last tau rounds (rising-baselines.md section 4, DECISIONS.md row 6).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import TIE_BREAK, Param, Policy
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.common import argmax_ties, round_robin, set_terms, show_forced
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.rng import rng_normal
from risingbandits.policies.machinery.round_window import (
    RoundWindow,
    new_round_window,
    window_push,
)
from risingbandits.policies.machinery.windows import (
    ArmHistory,
    history_push,
    new_history,
    window_sum,
)


class SwgtsState(NamedTuple):
    hist: ArmHistory  # window="pulls": the arm's own pulls (unused, one column, otherwise)
    rounds: RoundWindow  # window="rounds": the last tau rounds (unused, one slot, otherwise)
    scores: np.ndarray
    terms: np.ndarray  # K x 2: posterior mean, sampled perturbation
    tau: int
    gamma: float
    forced_pulls: int  # Gamma: round-robin pulls per arm before sampling
    by_rounds: bool
    tie_first: bool


@helper
def swgts_window(state: SwgtsState, arm: int) -> tuple[float, int]:
    """(S, M): sum and number of the arm's rewards in its window (spec 4.2/4.3)."""
    if state.by_rounds:
        return state.rounds.sums[arm], state.rounds.counts[arm]
    n = state.hist.counts[arm]
    m = min(n, state.tau)
    return window_sum(state.hist, arm, n - m, n), m


def _select(state: SwgtsState, t: int, rng: np.ndarray) -> int:
    n_arms = state.scores.shape[0]
    forced = round_robin(t, n_arms, state.forced_pulls)
    if forced >= 0:
        return show_forced(state.scores, state.terms, forced)
    empty = False
    for i in range(n_arms):
        m = swgts_window(state, i)[1]
        set_terms(state.scores, state.terms, i, np.inf if m == 0 else -np.inf, 0.0)
        empty = empty or m == 0
    if empty:  # an arm with no reward in its window is played: no posterior is sampled
        return argmax_ties(state.scores, rng, state.tie_first)
    for i in range(n_arms):
        s, m = swgts_window(state, i)
        noise = rng_normal(rng, 0.0, 1.0 / math.sqrt(state.gamma * m))
        set_terms(state.scores, state.terms, i, s / m, noise)
    return argmax_ties(state.scores, rng, state.tie_first)


def _update(state: SwgtsState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    if state.by_rounds:
        window_push(state.rounds, arm, reward)
    else:
        history_push(state.hist, arm, reward)


register_kernel(SwgtsState, _select, _update)


class EtSwgts(Policy):
    """ET-SWGTS: Gamma forced pulls per arm, then Gaussian Thompson sampling over a window.

    Paper: Fiandri, Metelli, Trovò, "Thompson Sampling-like Algorithms for Stochastic Rising
    Bandits", 2025 (arXiv 2505.12092; ET-gamma-SWGTS). Its Gaussian TS step is gamma-SWGTS,
    whose only definition we could read is Algorithm 2 of the same authors' "Sliding-Window
    Thompson Sampling for Non-Stationary Settings" (arXiv 2409.05181, which credits the rising
    paper): the window holds the last tau *global rounds*. Rounds 1..K Gamma play the arms in
    round robin (so exactly Gamma pulls each, or round robin throughout when T < K Gamma);
    afterwards each arm draws theta_i ~ N(S_i/M_i, 1/(gamma M_i)) from the sum S_i and number
    M_i of its rewards in the window, and the largest draw is played. An arm with M_i = 0 is
    played first (no draw). Does not use T.

    Parameters (CURE-UCB paper's values, appendix "Hyperparameter"):
      gamma: posterior precision scale, 1.0 in every setting.
      tau: window length, 1000 (ltf), 200 (concave, imdb).
      Gamma: forced round-robin pulls per arm, 10 (ltf), 1000 (concave, imdb).
      window: "rounds" (default since issue 10, DECISIONS.md row 6): the arm's rewards in the
        last tau global rounds (arXiv 2409.05181 Alg. 2), so an arm absent from them is
        force-played, i.e. every arm is re-sampled at least once every tau rounds; or "pulls"
        (the first version's default, a variant): the arm's own last tau pulls,
        M_i = min(tau, N_i) (lower regret on LTF, docs/fidelity.md).
      tie_break: "random" (DECISIONS.md row 3) or "first"; only arms with M_i = 0 can tie.

    Choices: with Gamma = 0 the M_i = 0 rule gives gamma-SWGTS's one-pull-per-arm start; the
    forced phase keeps round-robin order; no prior beyond the window.
    """

    name = "et-swgts"
    trace_terms = ("posterior mean", "sample - mean")
    trace_kind = "sample"
    summary = "ET-SWGTS: Gamma forced pulls per arm, then sliding-window Gaussian TS"
    paper = (
        "Fiandri, Metelli, Trovò 2025, Thompson Sampling-like Algorithms for Stochastic Rising "
        "Bandits, ET-gamma-SWGTS"
    )
    params_spec = (
        Param("gamma", 1.0, "posterior precision scale", low=0.0, low_open=True),
        Param("tau", 1000, "window length", kind=int, low=1),
        Param("Gamma", 10, "forced round-robin pulls per arm", kind=int, low=0),
        Param(
            "window",
            "rounds",
            "window over the arm's own pulls or over global rounds",
            kind=str,
            choices=("pulls", "rounds"),
        ),
        TIE_BREAK,
    )
    presets = {
        "ltf": {"gamma": 1.0, "tau": 1000, "Gamma": 10},
        "concave": {"gamma": 1.0, "tau": 200, "Gamma": 1000},
        "imdb": {"gamma": 1.0, "tau": 200, "Gamma": 1000},
    }

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        tau = int(self._params["tau"])
        by_rounds = self._params["window"] == "rounds"
        return SwgtsState(
            new_history(n_arms, 0 if by_rounds else held(horizon, capacity)),
            new_round_window(n_arms, min(tau, held(horizon, capacity)) if by_rounds else 1),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            tau,
            float(self._params["gamma"]),
            int(self._params["Gamma"]),
            by_rounds,
            self._params["tie_break"] == "first",
        )
