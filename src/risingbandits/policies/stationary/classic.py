"""UCB1 (Auer, Cesa-Bianchi, Fischer 2002): the classic stationary reference policy."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits.policies.base import TIE_BREAK, Param, Policy
from risingbandits.policies.machinery.common import argmax_ties, round_robin, set_terms, show_forced
from risingbandits.policies.machinery.kernel import register_kernel


class Ucb1State(NamedTuple):
    counts: np.ndarray
    sums: np.ndarray
    scores: np.ndarray
    terms: np.ndarray  # K x 2: mean, bonus
    alpha: float
    tie_first: bool


def _select(state: Ucb1State, t: int, rng: np.ndarray) -> int:
    n_arms = state.counts.shape[0]
    forced = round_robin(t, n_arms, 1)
    if forced >= 0:
        return show_forced(state.scores, state.terms, forced)
    for i in range(n_arms):  # an arm added to a running selector is played first
        if state.counts[i] == 0:
            return show_forced(state.scores, state.terms, i)
    log_t = math.log(t)
    for i in range(n_arms):
        n = state.counts[i]
        set_terms(
            state.scores, state.terms, i, state.sums[i] / n, math.sqrt(state.alpha * log_t / n)
        )
    return argmax_ties(state.scores, rng, state.tie_first)


def _update(state: Ucb1State, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    state.counts[arm] += 1
    state.sums[arm] += reward


register_kernel(Ucb1State, _select, _update)


class UCB1(Policy):
    """UCB1: empirical mean of all rewards + sqrt(alpha ln t / N).

    Paper: Auer, Cesa-Bianchi, Fischer, "Finite-time Analysis of the Multiarmed Bandit
    Problem", Machine Learning 2002 (alpha = 2). A stationary reference: it neither forgets nor
    extrapolates, and does not use the horizon. Each arm is played once first.
    """

    name = "ucb1"
    trace_terms = ("mean", "bonus")
    summary = "UCB1: mean of all rewards + sqrt(alpha ln t / N) (stationary reference)"
    paper = (
        "Auer, Cesa-Bianchi, Fischer 2002, Finite-time Analysis of the Multiarmed Bandit Problem"
    )
    params_spec = (
        Param("alpha", 2.0, "exploration constant inside the square root", low=0.0),
        TIE_BREAK,
    )

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        return Ucb1State(
            np.zeros(n_arms, np.int64),
            np.zeros(n_arms),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            float(self._params["alpha"]),
            self._params["tie_break"] == "first",
        )
