"""Sliding-window policies: SW-UCB, SW-KL-UCB and SW-TS (the paper's non-stationary baselines).

All three read only the last tau *global rounds*
(:mod:`risingbandits.policies.machinery.round_window`): at the decision for round t the window
holds rounds max(1, t - tau) .. t - 1, and an arm pulled in none of them has count 0. None of them
uses the rested structure of the problem (nonstationary-baselines.md sections 1-4; DECISIONS.md
rows 9-11).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import TIE_BREAK, Param, Policy
from risingbandits.policies.machinery.capacity import held
from risingbandits.policies.machinery.common import argmax_ties, clip_unit, set_terms
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.kl_index import kl_ucb_bernoulli
from risingbandits.policies.machinery.rng import rng_beta, rng_uniform
from risingbandits.policies.machinery.round_window import (
    RoundWindow,
    new_round_window,
    window_push,
    window_rounds,
)

SETTINGS = ("ltf", "concave", "imdb")


def _tau_param(doc: str) -> Param:
    return Param("tau", "auto", doc, kind=int, low=1, special=("auto",))


def _window(n_arms: int, tau: int, horizon: int, capacity: int | None) -> RoundWindow:
    # A window at least as long as the run never evicts: T slots are enough, and an online run
    # that has made at most C rounds needs C (risingbandits.policies.machinery.capacity).
    return new_round_window(n_arms, min(tau, held(horizon, capacity)))


# -- SW-UCB ------------------------------------------------------------------------------------


class SwUcbState(NamedTuple):
    win: RoundWindow
    scores: np.ndarray
    terms: np.ndarray  # K x 2: window mean, bonus
    xi: float
    bound: float
    tie_first: bool


def _sw_ucb_select(state: SwUcbState, t: int, rng: np.ndarray) -> int:
    win = state.win
    log_m = math.log(max(window_rounds(win), 1))
    for i in range(state.scores.shape[0]):
        n = win.counts[i]
        mean, bonus = np.inf, 0.0  # an arm absent from the window is played
        if n > 0:
            mean, bonus = win.sums[i] / n, state.bound * math.sqrt(state.xi * log_m / n)
        set_terms(state.scores, state.terms, i, mean, bonus)
    return argmax_ties(state.scores, rng, state.tie_first)


def _sw_ucb_update(state: SwUcbState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    window_push(state.win, arm, reward)


register_kernel(SwUcbState, _sw_ucb_select, _sw_ucb_update)


def sw_ucb_tau(horizon: int) -> int:
    """The paper's window: tau = floor(2 sqrt(T ln T)), at least 1 (1471 at T = 50,000)."""
    return max(1, math.floor(2.0 * math.sqrt(horizon * math.log(horizon))))


class SlidingWindowUCB(Policy):
    """SW-UCB: UCB over the last tau rounds (Garivier & Moulines, ALT 2011, arXiv 0805.3415).

    Index of arm k with N_k pulls and reward sum S_k in the window:
    S_k / N_k + B sqrt(xi ln(min(t, tau)) / N_k), and +inf when N_k = 0 (an arm that left the
    window is played again; the first K rounds play every arm once). DECISIONS.md row 9.

    Parameters (paper values):
      tau: window in rounds; "auto" = floor(2 sqrt(T ln T)) (at least 1), which uses T; an
        integer makes the policy horizon-free.
      xi: exploration constant, 1.5 (GM's analysis needs xi > 1/2).
      bound: B, the reward bound in the bonus, 1.
      tie_break: "random" (DECISIONS.md row 3) or "first".

    Choices: t inside the log is the number of completed rounds (SMPyBandits' convention; GM
    write the current round, an immaterial difference); rewards enter raw, not clipped (B = 1
    is GM's convention); window sums are updated incrementally (round_window).
    """

    name = "sw-ucb"
    trace_terms = ("window mean", "bonus")
    summary = "SW-UCB: UCB over the last tau rounds, tau = 2 sqrt(T ln T)"
    paper = (
        "Garivier & Moulines 2011, On Upper-Confidence Bound Policies for Switching Bandit "
        "Problems (ALT)"
    )
    params_spec = (
        _tau_param("window in rounds; auto = floor(2 sqrt(T ln T))"),
        Param("xi", 1.5, "exploration constant in the bonus", low=0.0, low_open=True),
        Param("bound", 1.0, "B, the reward bound in the bonus", low=0.0, low_open=True),
        TIE_BREAK,
    )
    presets = {s: {"tau": "auto", "xi": 1.5, "bound": 1.0} for s in SETTINGS}

    @property
    def uses_horizon(self) -> bool:
        return bool(self._params["tau"] == "auto")

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        tau = self._params["tau"]
        return SwUcbState(
            _window(n_arms, sw_ucb_tau(horizon) if tau == "auto" else tau, horizon, capacity),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            float(self._params["xi"]),
            float(self._params["bound"]),
            self._params["tie_break"] == "first",
        )


# -- SW-KL-UCB ---------------------------------------------------------------------------------


class SwKlUcbState(NamedTuple):
    win: RoundWindow
    scores: np.ndarray
    terms: np.ndarray  # K x 2: window mean, KL bonus (index - mean)
    stale: np.ndarray  # arm's window stats changed since its index was computed
    level: np.ndarray  # [0]: the exploration level f of the current scores (nan: none yet)
    c: float
    precision: float
    max_halvings: int
    tie_first: bool


@helper
def kl_exploration_level(m: int, c: float) -> float:
    """f = ln m + c ln ln m for a window of m rounds (just ln m when c = 0; 0 when m <= 1)."""
    if m <= 1:
        return 0.0
    log_m = math.log(m)
    if c == 0.0:
        return log_m
    return log_m + c * math.log(log_m)


def _sw_kl_ucb_select(state: SwKlUcbState, t: int, rng: np.ndarray) -> int:
    win = state.win
    f = kl_exploration_level(window_rounds(win), state.c)
    if f != state.level[0]:
        state.stale[:] = True
        state.level[0] = f
    for i in range(state.scores.shape[0]):
        if not state.stale[i]:
            continue
        state.stale[i] = False
        n = win.counts[i]
        mean, bonus = np.inf, 0.0  # an arm absent from the window is played
        if n > 0:
            mean = win.sums[i] / n
            index = 1.0
            if f > 0.0:
                index = kl_ucb_bernoulli(mean, f / n, state.precision, state.max_halvings)
            bonus = index - mean
        set_terms(state.scores, state.terms, i, mean, bonus)
    return argmax_ties(state.scores, rng, state.tie_first)


def _sw_kl_ucb_update(
    state: SwKlUcbState, arm: int, reward: float, t: int, rng: np.ndarray
) -> None:
    evicted = window_push(state.win, arm, clip_unit(reward))
    state.stale[arm] = True
    if evicted >= 0:
        state.stale[evicted] = True


register_kernel(SwKlUcbState, _sw_kl_ucb_select, _sw_kl_ucb_update)


def sw_kl_ucb_tau(drift: float) -> int:
    """The paper's window tau = ceil(sigma^(-4/5)), sigma the drift speed (252 at 1e-3)."""
    return max(1, math.ceil(drift ** (-0.8)))


class SlidingWindowKLUCB(Policy):
    """SW-KL-UCB: Bernoulli KL-UCB over the last tau rounds.

    KL-UCB (Garivier & Cappé, COLT 2011) with the sliding window of Combes & Proutière (ICML
    2014), as the paper lists it (tau = sigma^(-4/5)). With N_k pulls and mean p_k of arm k in
    the window of m = min(t, tau) rounds, the index is max{q in [p_k, 1] : N_k d(p_k, q) <= f},
    f = ln m + c ln ln m, d the Bernoulli divergence; +inf when N_k = 0. DECISIONS.md row 10.

    Parameters (paper values):
      drift: sigma in tau = ceil(sigma^(-4/5)), read as the drift speed of the means (the
        paper's sigma clashes with the noise level); 1e-3, so tau = 252 for every T (the
        value of the rising-bandit papers' code); the policy never uses T.
      tau: "auto" (from drift) or an integer window, which then overrides drift.
      c: weight of the ln ln m term, 3 (GC's theorem); c = 0 gives f = ln m, SMPyBandits'
        ``SWklUCB`` level with its constant 1.
      precision, max_halvings: the bisection stops when the bracket is at most ``precision``
        wide or after ``max_halvings`` halvings (1e-10 and 50 here; SMPyBandits: 1e-4, 50).
      tie_break: "random" (DECISIONS.md row 3) or "first".

    Choices: rewards clipped to [0, 1]; t inside the logs is the number of completed rounds;
    when f <= 0 (m <= 2 with c = 3) the index is 1 (maximal optimism, as the reference code;
    only the first rounds or a window of tau <= 2 see it); the root is bracketed by Pinsker
    (module ``kl_index``); an index is recomputed only when its arm's window statistics or f
    changed; f is constant once t > tau, so from then on a step costs at most two bisections
    (the pulled arm and the evicted one); the arms are ranked by window mean + (index - mean),
    the sum of the two traced terms (equal to the index up to one rounding).
    """

    name = "sw-kl-ucb"
    trace_terms = ("window mean", "KL bonus")
    summary = "SW-KL-UCB: Bernoulli KL-UCB over the last tau = drift^(-4/5) rounds"
    paper = (
        "Garivier & Cappé 2011, The KL-UCB Algorithm for Bounded Stochastic Bandits and Beyond; "
        "window of Combes & Proutière 2014"
    )
    params_spec = (
        Param(
            "drift",
            1e-3,
            "drift speed sigma of the means: tau = ceil(sigma^(-4/5))",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        _tau_param("window in rounds; auto = ceil(drift^(-4/5)), 252 at the default drift"),
        Param("c", 3.0, "weight of ln ln m in the exploration level", low=0.0),
        Param(
            "precision",
            1e-10,
            "bisection stops at this bracket width",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        Param("max_halvings", 50, "at most this many bisection halvings", kind=int, low=1),
        TIE_BREAK,
    )
    presets = {s: {"drift": 1e-3, "tau": "auto", "c": 3.0} for s in SETTINGS}

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        tau = self._params["tau"]
        if tau == "auto":
            tau = sw_kl_ucb_tau(self._params["drift"])
        return SwKlUcbState(
            _window(n_arms, tau, horizon, capacity),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            np.ones(n_arms, np.bool_),
            np.full(1, np.nan),
            float(self._params["c"]),
            float(self._params["precision"]),
            int(self._params["max_halvings"]),
            self._params["tie_break"] == "first",
        )


# -- SW-TS -------------------------------------------------------------------------------------


class SwTsState(NamedTuple):
    win: RoundWindow
    scores: np.ndarray
    terms: np.ndarray  # K x 2: posterior mean, sample - mean


@helper
def binarise(x: float, rng: np.ndarray) -> float:
    """A Bernoulli(clip(x, 0, 1)) draw; no draw when x <= 0 or x >= 1 (the outcome is sure)."""
    p = clip_unit(x)
    if p == 0.0 or p == 1.0:
        return p
    return 1.0 if rng_uniform(rng) < p else 0.0


def _sw_ts_select(state: SwTsState, t: int, rng: np.ndarray) -> int:
    win = state.win
    for i in range(state.scores.shape[0]):
        a = 1.0 + win.sums[i]
        b = 1.0 + win.counts[i] - win.sums[i]
        mean = a / (a + b)
        set_terms(state.scores, state.terms, i, mean, rng_beta(rng, a, b) - mean)
    return argmax_ties(state.scores, rng, False)


def _sw_ts_update(state: SwTsState, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    window_push(state.win, arm, binarise(reward, rng))


register_kernel(SwTsState, _sw_ts_select, _sw_ts_update)


def sw_ts_tau(horizon: int, beta: float) -> int:
    """The paper's window tau = ceil(T^(1 - beta)) (224 at T = 50,000, beta = 0.5)."""
    return max(1, math.ceil(horizon ** (1.0 - beta)))


class SlidingWindowTS(Policy):
    """SW-TS: Beta-Bernoulli Thompson sampling over the last tau rounds.

    Paper: Trovò, Paladino, Restelli, Gatti, "Sliding-Window Thompson Sampling for
    Non-Stationary Settings", JAIR 2020 (Beta-SWTS). Each round, arm k with N_k pulls and S_k
    successes in the window draws theta_k ~ Beta(S_k + 1, N_k - S_k + 1) (a Beta(1, 1) prior)
    and the largest draw is played. DECISIONS.md row 11.

    Parameters (paper values):
      beta: 0.5; "auto" tau = ceil(T^(1 - beta)), which uses T.
      tau: "auto" or an integer window (the policy is then horizon-free).

    Choices: a reward x is binarised as Bernoulli(clip(x, 0, 1)) with the policy's generator
    (no draw when the clipped x is 0 or 1, so Bernoulli rewards pass unchanged); an arm absent
    from the window returns to the uniform prior (it is not forced); ties (probability 0) go
    uniformly at random; the arms are ranked by posterior mean + (sample - mean), the sum of
    the two traced terms (the sample up to one rounding).
    """

    name = "sw-ts"
    trace_terms = ("posterior mean", "sample - mean")
    trace_kind = "sample"
    summary = "SW-TS: Beta-Bernoulli Thompson sampling over the last tau = T^(1-beta) rounds"
    paper = "Trovò, Paladino, Restelli, Gatti 2020, Sliding-Window Thompson Sampling (JAIR)"
    params_spec = (
        Param(
            "beta",
            0.5,
            "window exponent: tau = ceil(T^(1 - beta))",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
        ),
        _tau_param("window in rounds; auto = ceil(T^(1 - beta))"),
    )
    presets = {s: {"beta": 0.5, "tau": "auto"} for s in SETTINGS}

    @property
    def uses_horizon(self) -> bool:
        return bool(self._params["tau"] == "auto")

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        tau = self._params["tau"]
        if tau == "auto":
            tau = sw_ts_tau(horizon, self._params["beta"])
        return SwTsState(
            _window(n_arms, tau, horizon, capacity), np.zeros(n_arms), np.zeros((n_arms, 2))
        )


POLICY_CLASSES: tuple[type[Policy], ...] = (
    SlidingWindowUCB,
    SlidingWindowKLUCB,
    SlidingWindowTS,
)
