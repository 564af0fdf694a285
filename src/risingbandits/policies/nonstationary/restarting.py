"""Restarting policies: Rexp3 (periodic restarts) and Ser4 (random resets).

Both forget by starting afresh, through :mod:`risingbandits.policies.machinery.restarts`, and both
assume rewards in [0, 1]: observations are clipped (nonstationary-baselines.md sections 5-6;
DECISIONS.md rows 12-13). Neither uses the rested structure of the problem.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from risingbandits._jit import helper
from risingbandits.policies.base import Param, Policy
from risingbandits.policies.machinery.checkpoint import RunFacts, check_within, register_state_check
from risingbandits.policies.machinery.common import best_active, clip_unit, largest, show_active
from risingbandits.policies.machinery.kernel import register_kernel
from risingbandits.policies.machinery.restarts import (
    RestartClock,
    new_restart_clock,
    periodic_restart,
    random_restart,
)
from risingbandits.policies.machinery.rng import rng_below, rng_uniform
from risingbandits.policies.machinery.transplant import ArmPlan, carry_fields, register_transplant

SETTINGS = ("ltf", "concave", "imdb")


# -- Rexp3 -------------------------------------------------------------------------------------


class Rexp3State(NamedTuple):
    log_weights: np.ndarray
    scores: np.ndarray  # the distribution the current round's arm was drawn from
    terms: np.ndarray  # K x 1: the same probabilities (the trace view of a sampling policy)
    gamma: float
    clock: RestartClock


@helper
def sample_index(probs: np.ndarray, rng: np.ndarray) -> int:
    """An index drawn from the distribution ``probs`` (one uniform draw, inverse CDF)."""
    u = rng_uniform(rng)
    acc = 0.0
    last = probs.shape[0] - 1
    for i in range(last):
        acc += probs[i]
        if u < acc:
            return i
    return last


def _rexp3_select(state: Rexp3State, t: int, rng: np.ndarray) -> int:
    lw, p = state.log_weights, state.scores
    n_arms = lw.shape[0]
    top = largest(lw)
    total = 0.0
    for i in range(n_arms):
        p[i] = math.exp(lw[i] - top)
        total += p[i]
    for i in range(n_arms):
        p[i] = (1.0 - state.gamma) * p[i] / total + state.gamma / n_arms
        state.terms[i, 0] = p[i]
    return sample_index(p, rng)


def _rexp3_update(state: Rexp3State, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    n_arms = state.log_weights.shape[0]
    state.log_weights[arm] += state.gamma * clip_unit(reward) / (state.scores[arm] * n_arms)
    if periodic_restart(state.clock, t):
        state.log_weights[:] = 0.0


register_kernel(Rexp3State, _rexp3_select, _rexp3_update)


def rexp3_batch(n_arms: int, horizon: int, variation: float) -> int:
    """Delta_T = ceil((K ln K)^(1/3) (T / V_T)^(2/3)) (931 at K = 5, T = 50,000, V_T = K),
    capped at T (a tiny V_T gives a batch longer than the run: one batch, no restart)."""
    k_log_k = n_arms * math.log(n_arms)
    batch = k_log_k ** (1.0 / 3.0) * (horizon / variation) ** (2.0 / 3.0)
    return max(1, math.ceil(min(batch, horizon)))


def rexp3_gamma(n_arms: int, batch: int) -> float:
    """gamma = min(1, sqrt(K ln K / ((e - 1) Delta_T))) (0.0709 at K = 5, Delta_T = 931)."""
    return min(1.0, math.sqrt(n_arms * math.log(n_arms) / ((math.e - 1.0) * batch)))


class Rexp3(Policy):
    """Rexp3: Exp3 restarted after every batch of Delta_T rounds.

    Paper: Besbes, Gur, Zeevi, "Stochastic Multi-Armed-Bandit Problem with Non-stationary
    Rewards", NeurIPS 2014. Within a batch, Exp3 (Auer et al. 2002): play k with probability
    p_k = (1 - gamma) w_k / sum_j w_j + gamma / K, then w_k <- w_k exp(gamma x / (p_k K)) for
    the played arm. At the end of rounds Delta_T, 2 Delta_T, ... all weights are reset to 1
    (the last batch may be shorter). DECISIONS.md row 12.

    Parameters (paper values):
      variation: the variation budget V_T, "K" (the number of arms).
      batch: Delta_T; "auto" = ceil((K ln K)^(1/3) (T / V_T)^(2/3)) capped at T, which uses
        T; an integer makes the policy horizon-free.
      gamma: exploration rate; "auto" = min(1, sqrt(K ln K / ((e - 1) Delta_T))).

    Choices: the "auto" batch is capped at T (a V_T near 0 makes the formula's batch longer
    than the run, so it is one batch of T rounds, and gamma is Exp3's for T rounds); weights
    kept as logarithms and normalised after subtracting their maximum (a
    batch can raise a log-weight by up to Delta_T, which overflows exp); rewards clipped to
    [0, 1]; the arm is drawn by inverse CDF with one uniform of the policy's generator.
    """

    name = "rexp3"
    trace_terms = ("probability",)
    trace_kind = "probability"
    summary = "Rexp3: Exp3 restarted every Delta_T rounds, V_T = K"
    paper = (
        "Besbes, Gur, Zeevi 2014, Stochastic Multi-Armed-Bandit Problem with Non-stationary "
        "Rewards (NeurIPS)"
    )
    params_spec = (
        Param("variation", "K", "variation budget V_T", low=0.0, low_open=True, special=("K",)),
        Param(
            "batch", "auto", "restart period Delta_T in rounds", kind=int, low=1, special=("auto",)
        ),
        Param(
            "gamma",
            "auto",
            "exploration rate of Exp3",
            low=0.0,
            high=1.0,
            low_open=True,
            special=("auto",),
        ),
    )
    presets = {s: {"variation": "K", "batch": "auto", "gamma": "auto"} for s in SETTINGS}

    @property
    def uses_horizon(self) -> bool:
        return bool(self._params["batch"] == "auto")

    def resolved(self, n_arms: int, horizon: int) -> tuple[int, float]:
        """(Delta_T, gamma) for K arms and horizon T."""
        batch = self._params["batch"]
        if batch == "auto":
            variation = self._params["variation"]
            batch = rexp3_batch(n_arms, horizon, n_arms if variation == "K" else variation)
        gamma = self._params["gamma"]
        if gamma == "auto":
            gamma = rexp3_gamma(n_arms, batch)
        return int(batch), float(gamma)

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        batch, gamma = self.resolved(n_arms, horizon)
        return Rexp3State(
            np.zeros(n_arms),
            np.zeros(n_arms),
            np.zeros((n_arms, 1)),
            gamma,
            new_restart_clock(period=batch),
        )


# -- Ser4 --------------------------------------------------------------------------------------


class Ser4State(NamedTuple):
    active: np.ndarray  # arms still in the candidate set S
    means: np.ndarray  # each active arm's mean reward since the last reset
    order: np.ndarray  # order[:cursor[1]]: this round's shuffled active arms
    cursor: np.ndarray  # [0]: position in order; [1]: arms in this round
    rounds: np.ndarray  # [0]: rounds completed since the last reset (tau in the paper)
    scores: np.ndarray
    terms: np.ndarray  # K x 2: mean since the last reset, 0 (active) or -inf (eliminated)
    delta: float
    eps: float
    elim_const: float
    clock: RestartClock


@helper
def shuffle_active(active: np.ndarray, order: np.ndarray, rng: np.ndarray) -> int:
    """Write the active arms into ``order`` in a uniformly random order; returns their number."""
    n = 0
    for i in range(active.shape[0]):
        if active[i]:
            order[n] = i
            n += 1
    for j in range(n - 1, 0, -1):  # Fisher-Yates
        k = rng_below(rng, j + 1)
        order[j], order[k] = order[k], order[j]
    return n


@helper
def ser4_radius(tau: int, n_arms: int, delta: float, elim_const: float) -> float:
    """Elimination threshold r(tau) = sqrt(elim_const ln(4 K tau^2 / delta) / tau)."""
    return math.sqrt(elim_const * math.log(4.0 * n_arms * tau * tau / delta) / tau)


@helper
def _eliminate(state: Ser4State) -> None:
    active, means = state.active, state.means
    best = -np.inf
    for i in range(active.shape[0]):
        if active[i]:
            best = max(best, means[i])
    radius = ser4_radius(state.rounds[0], active.shape[0], state.delta, state.elim_const)
    for i in range(active.shape[0]):
        if active[i] and means[i] < best and best - means[i] + state.eps >= radius:
            active[i] = False


def _ser4_select(state: Ser4State, t: int, rng: np.ndarray) -> int:
    show_active(state.scores, state.terms, state.active, state.means)
    if state.cursor[0] == state.cursor[1]:  # a new round over the active arms
        state.cursor[1] = shuffle_active(state.active, state.order, rng)
        state.cursor[0] = 0
    return state.order[state.cursor[0]]


def _ser4_update(state: Ser4State, arm: int, reward: float, t: int, rng: np.ndarray) -> None:
    samples = state.rounds[0] + 1  # this is arm's samples-th reward since the last reset
    state.means[arm] += (clip_unit(reward) - state.means[arm]) / samples
    state.cursor[0] += 1
    if state.cursor[0] < state.cursor[1]:
        return
    state.rounds[0] = samples
    if state.cursor[1] > 1:
        _eliminate(state)
    if random_restart(state.clock, t, rng):
        state.active[:] = True
        state.means[:] = 0.0
        state.rounds[0] = 0


def _ser4_recommend(state: Ser4State, counts: np.ndarray, last: np.ndarray) -> int:
    return best_active(state.active, state.means)


register_kernel(Ser4State, _ser4_select, _ser4_update, _ser4_recommend)


def _carry_ser4(fresh: Ser4State, old: Ser4State, plan: ArmPlan) -> Ser4State:
    """Transplant rule: the current round's order keeps its remaining arms, renumbered (a
    removed arm leaves it; a new arm joins at the next round, its mean since the reset at 0)."""
    state = carry_fields(fresh, old, plan)
    done, size = int(old.cursor[0]), int(old.cursor[1])
    order = plan.renumber[old.order[:size]]
    state.order[:] = 0
    kept = order[order >= 0]
    state.order[: kept.size] = kept
    state.cursor[:] = (np.count_nonzero(order[:done] >= 0), kept.size)
    return state


register_transplant(Ser4State, _carry_ser4)


def _check_ser4(field: str, state: Ser4State, facts: RunFacts) -> None:
    """A saved round: arm indices in ``order``, the cursor within the round's arms."""
    check_within(f"{field}.order", state.order, 0, facts.n_arms - 1)
    check_within(f"{field}.cursor", state.cursor[1:], 0, facts.n_arms)
    check_within(f"{field}.cursor", state.cursor[:1], 0, int(state.cursor[1]))


register_state_check(Ser4State, _check_ser4)


class Ser4(Policy):
    """Ser4: successive elimination with randomised round robin (SER3) and random resets.

    Paper: Allesiardo, Féraud, Maillard, "The Non-Stationary Stochastic Multi-Armed Bandit
    Problem", IJDSA 2017 (arXiv 1609.02139). A round plays every arm of the candidate set S
    once, in a fresh uniformly random order. After round tau, with mu_k the mean of arm k's
    tau rewards since the last reset and m = max over S of mu_k, arm k leaves S when
    m - mu_k + eps >= r(tau) = sqrt(elim_const ln(4 K tau^2 / delta) / tau). Then, with
    probability phi, S is reset to all arms and the means are forgotten. DECISIONS.md row 13.

    Parameters (paper values):
      delta: confidence, "auto" = 1/T.
      eps: elimination slack, "auto" = 1/(K T).
      phi: reset probability per round, "auto" = sqrt(N / (T K ln(K T))) (capped at 1).
      n_changes: N in phi, the number of best-arm segments; 1 (the paper sets none; the best
        fixed arm of the RMAB regret is one segment).
      elim_const: the constant of r(tau); 2 (the Even-Dar et al. radius, twice the Hoeffding
        radius sqrt(ln(4 K tau^2 / delta) / (2 tau)), which elim_const = 1/2 gives). Taken from
        the spec's recollection of SER3. Checking it against the paper failed (issue 10,
        docs/fidelity.md): the public pages we could search (Springer's article page, arXiv
        1609.02139, a reworded copy in a web-text data set) hold only the abstract, the
        introduction and the setting, never Algorithm SER3; Metelli et al.'s Ser4 code uses
        another form (2 sqrt(ln(2 |S| tau / delta)), no division by tau). So the constant stays
        unverified, a named parameter.
    The policy uses T unless delta, eps and phi are all given.

    Choices: rewards clipped to [0, 1]; the reset coin is flipped once at the end of each
    round (also when a single arm is left, so a reset can then happen at any step); an
    empirical best arm is never eliminated (it could only be if r(tau) <= eps); K in
    ln(4 K tau^2 / delta) is the number of arms, not |S|. Recommendation: the active arm with
    the highest mean since the last reset (the survivor when one is left).
    """

    name = "ser4"
    trace_terms = ("mean since reset", "eliminated")
    trace_kind = "elimination"
    summary = "Ser4: successive elimination, random round robin, random resets"
    paper = (
        "Allesiardo, Féraud, Maillard 2017, The Non-Stationary Stochastic Multi-Armed Bandit "
        "Problem (IJDSA)"
    )
    params_spec = (
        Param(
            "delta",
            "auto",
            "confidence of the elimination test; auto = 1/T",
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
            special=("auto",),
        ),
        Param("eps", "auto", "elimination slack; auto = 1/(K T)", low=0.0, special=("auto",)),
        Param(
            "phi",
            "auto",
            "reset probability per round; auto = sqrt(N / (T K ln(K T)))",
            low=0.0,
            high=1.0,
            special=("auto",),
        ),
        Param("n_changes", 1, "N, the number of best-arm segments in phi", kind=int, low=1),
        Param("elim_const", 2.0, "constant of the elimination radius", low=0.0, low_open=True),
    )
    presets = {
        s: {"delta": "auto", "eps": "auto", "phi": "auto", "n_changes": 1, "elim_const": 2.0}
        for s in SETTINGS
    }

    @property
    def uses_horizon(self) -> bool:
        return any(self._params[k] == "auto" for k in ("delta", "eps", "phi"))

    def resolved(self, n_arms: int, horizon: int) -> tuple[float, float, float]:
        """(delta, eps, phi) for K arms and horizon T."""
        k, t = n_arms, horizon
        delta, eps, phi = (self._params[name] for name in ("delta", "eps", "phi"))
        if delta == "auto":
            delta = 1.0 / t
        if eps == "auto":
            eps = 1.0 / (k * t)
        if phi == "auto":
            phi = min(1.0, math.sqrt(self._params["n_changes"] / (t * k * math.log(k * t))))
        return float(delta), float(eps), float(phi)

    def init_state(
        self,
        n_arms: int,
        horizon: int,
        noise_proxy: float | None = None,
        capacity: int | None = None,
    ) -> Any:
        delta, eps, phi = self.resolved(n_arms, horizon)
        return Ser4State(
            np.ones(n_arms, np.bool_),
            np.zeros(n_arms),
            np.zeros(n_arms, np.int64),
            np.zeros(2, np.int64),
            np.zeros(1, np.int64),
            np.zeros(n_arms),
            np.zeros((n_arms, 2)),
            delta,
            eps,
            float(self._params["elim_const"]),
            new_restart_clock(prob=phi),
        )


POLICY_CLASSES: tuple[type[Policy], ...] = (Rexp3, Ser4)
