"""sigma="estimate": the online noise level of risingbandits.policies.machinery.noise_level."""

from __future__ import annotations

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies.machinery.noise_level import (
    FLOOR,
    PRIOR_SIGMA,
    new_noise_level,
    noise_observe,
    noise_sigma,
    noise_sigma_residuals,
    noise_sigma_upper,
)
from risingbandits.policies.machinery.windows import history_push, new_history


def estimate(rewards: np.ndarray, upper: bool = False, residuals: bool = False) -> float:
    """Feed rewards (arms x pulls, round robin) and return the estimate (or its upper bound, or
    the residuals' own estimate)."""
    n_arms, n = rewards.shape
    hist = new_history(n_arms, n)
    level = new_noise_level(None)
    for j in range(n):
        for arm in range(n_arms):
            history_push(hist, arm, float(rewards[arm, j]))
            noise_observe(level, hist.prefix, arm, int(hist.counts[arm]))
    if residuals:
        return float(noise_sigma_residuals(level))
    return float(noise_sigma_upper(level) if upper else noise_sigma(level))


def test_prior_before_any_residual_and_fixed_sigma_is_kept() -> None:
    assert estimate(np.zeros((3, 2))) == pytest.approx(PRIOR_SIGMA)
    level = new_noise_level(0.07)
    assert noise_sigma(level) == 0.07


@pytest.mark.parametrize("sd", [0.02, 0.1, 0.3])
def test_gaussian_noise_around_a_rising_trend_is_recovered(sd: float) -> None:
    rng = np.random.default_rng(1)
    n = 3_000
    trend = 0.2 + 0.6 * (1 - np.exp(-np.arange(n) / 300))  # a learning curve
    rewards = trend + rng.normal(0, sd, (4, n))
    assert estimate(rewards) == pytest.approx(sd, rel=0.1)


def test_bernoulli_rewards_give_the_binomial_spread() -> None:
    rng = np.random.default_rng(2)
    rewards = (rng.random((3, 4_000)) < 0.8).astype(float)
    assert estimate(rewards) == pytest.approx(np.sqrt(0.8 * 0.2), rel=0.1)


def test_noise_free_rewards_stop_at_the_floor() -> None:
    trend = np.linspace(0.1, 0.9, 5_000)
    assert estimate(np.vstack([trend, trend**2])) == FLOOR


def test_the_estimate_follows_a_change_of_noise_level() -> None:
    rng = np.random.default_rng(3)
    early = rng.normal(0.5, 0.3, (2, 3_000))
    late = rng.normal(0.5, 0.03, (2, 3_000))
    assert estimate(np.hstack([early, late])) == pytest.approx(0.03, rel=0.3)


@pytest.mark.parametrize("name", ["cure-ucb", "red-ucb", "red-ae"])
def test_policies_accept_estimate_and_run(name: str) -> None:
    policy = rb.make_policy(name, sigma="estimate")
    res = rb.simulate(rb.intro(2_000), policy, 2_000, seeds=2)
    assert res.pulls.sum(axis=1).tolist() == [2_000, 2_000]
    assert rb.make_policy(name, sigma=0.1) != policy


def test_the_upper_bound_ignores_the_prior_and_covers_sigma() -> None:
    """noise_sigma_upper: +inf with fewer than two residuals; not held down by the prior's 0.25
    (Bernoulli rewards at p = 0.5, sigma 0.5, 4 pulls of 7 arms: the estimate is still near
    the prior, the bound is well above it); above sigma in about 95% of small samples (a
    little more: the halved degrees of freedom are conservative) and close to it in large ones."""
    rng = np.random.default_rng(4)
    assert estimate(np.zeros((1, 3)), upper=True) == np.inf
    coin = (rng.random((7, 4)) < 0.5).astype(float)
    assert estimate(coin) < 0.4 < estimate(coin, upper=True)
    covered = [estimate(rng.normal(0.5, 0.1, (5, 6)), upper=True) >= 0.1 for _ in range(400)]
    assert 0.88 <= np.mean(covered) <= 0.995
    assert 0.1 <= estimate(rng.normal(0.5, 0.1, (4, 3_000)), upper=True) <= 0.11
    assert noise_sigma_upper(new_noise_level(0.07)) == 0.07


def test_the_residuals_own_estimate_has_neither_prior_nor_floor() -> None:
    """noise_sigma_residuals (HACE-UCB's deployed model in cost): 0 before the first residual
    and for a linear trend (where the prior and the floor hold the estimate up), otherwise
    sqrt(mean r^2 / 6) of the residuals r, second differences of each arm's rewards (a few
    dozen residuals are barely forgotten)."""
    rng = np.random.default_rng(5)
    assert estimate(np.full((3, 2), 0.5), residuals=True) == 0.0
    trend = np.vstack([np.linspace(0.1, 0.6, 8), np.linspace(0.3, 0.4, 8)])
    assert estimate(trend, residuals=True) == pytest.approx(0.0, abs=1e-7)
    assert estimate(trend) > 0.1  # the prior's share is still there
    rewards = rng.normal(0.5, 0.1, (5, 6))
    second = np.diff(rewards, 2, axis=1)
    expected = np.sqrt(np.mean(second**2) / 6.0)
    assert estimate(rewards, residuals=True) == pytest.approx(expected, rel=0.01)
    assert noise_sigma_residuals(new_noise_level(0.07)) == 0.07
