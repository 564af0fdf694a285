"""ACE-UCB: each piece of the index against its definition (docs/ace-ucb.md), and the
properties the design promises (an index within the reward range, young arms first)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.machinery.kernel import recommend_one, select_one, update_one
from risingbandits.policies.rising.ace import (
    LEVEL,
    affordability,
    capped_average,
    chord_slope,
    level_window,
)
from risingbandits.seeding import policy_rng


@pytest.mark.parametrize("a", [0.0, 0.3, 0.95, 1.0, 1.2])
@pytest.mark.parametrize("b", [0.0, 1e-4, 0.01, 0.3])
@pytest.mark.parametrize("r", [1, 2, 7, 500])
def test_capped_average_is_the_mean_of_the_capped_line(a: float, b: float, r: int) -> None:
    brute = float(np.mean(np.minimum(1.0, a + b * np.arange(r))))
    assert capped_average(a, b, r, 1.0) == pytest.approx(brute, rel=1e-12, abs=1e-12)


def test_level_window_is_a_fraction_of_the_pulls_with_a_minimum() -> None:
    assert [level_window(n, 0.5, 16) for n in (1, 10, 16, 31, 32, 33, 100)] == [
        1,
        10,
        16,
        16,
        16,
        16,
        50,
    ]
    assert level_window(100, 0.29, 1) == 29  # not 28: the float guard


def prefix_of(rewards: list[float]) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(rewards)])[None, :]


def last(prefix: np.ndarray, n: int, w: int) -> float:
    """Sum of the last w of n rewards."""
    return float(prefix[0, n] - prefix[0, n - w])


def test_chord_slope_recovers_a_line_and_needs_two_windows() -> None:
    rewards = [0.1 + 0.002 * k for k in range(1, 41)]
    prefix = prefix_of(rewards)
    slope, unit = chord_slope(prefix, 0, 40, 16, last(prefix, 40, 16), 1 / 16, 0.1)
    assert slope == pytest.approx(0.002)
    assert unit == pytest.approx(math.sqrt(2 / 16) / 16) or unit == pytest.approx(
        math.sqrt(2 / 16) / 24
    )
    slope, unit = chord_slope(
        prefix, 0, 31, 16, last(prefix, 31, 16), 1 / 16, 0.1
    )  # 31 < 2 x 16: no chord
    assert (slope, unit) == (0.0, math.inf)


def test_chord_slope_takes_the_far_chord_when_its_bound_is_smaller() -> None:
    # concave: steep early, flat late; the far chord (against the first w pulls) is longer,
    # so its SE is smaller, but it is steeper; with a large sigma the SE decides
    rewards = [min(0.5, 0.01 * k) for k in range(1, 101)]
    prefix = prefix_of(rewards)
    w = 10
    near_sum = sum(rewards[80:90])
    recent_sum = sum(rewards[90:100])
    first_sum = sum(rewards[:10])
    near = (recent_sum - near_sum) / w / w
    far = (recent_sum - first_sum) / w / 90
    noisy, unit = chord_slope(prefix, 0, 100, w, recent_sum, 1 / w, 1.0)
    assert noisy == pytest.approx(far) and unit == pytest.approx(math.sqrt(2 / w) / 90)
    quiet, unit = chord_slope(prefix, 0, 100, w, recent_sum, 1 / w, 1e-6)
    assert quiet == pytest.approx(near) and unit == pytest.approx(math.sqrt(2 / w) / w)


def phi_by_definition(
    level: float,
    slope: float,
    se: float,
    n: int,
    bar: float,
    remaining: int,
    lever: float,
    level_ucb: float,
    z: float,
    eta: float,
) -> float:
    """The affordability as the module docstring defines it (a power, no shortcuts)."""
    gap = bar - level
    if gap <= 0:
        return 1.0
    s_top = slope + z * se
    line = np.minimum(1.0, level_ucb + s_top * lever + s_top * np.arange(remaining))
    benefit = max(0.0, float(line.mean()) - bar) * remaining
    if benefit <= 0:
        return 0.0
    need = 2 * gap / remaining
    extra = max(0.0, n * (z * se / need) ** (2 / 3) - n)
    return float(np.clip(2 - extra * gap / (eta * benefit), 0.0, 1.0))


def test_affordability_follows_its_definition() -> None:
    rng = np.random.default_rng(5)
    values = []
    for _ in range(3_000):
        level = rng.uniform(0.2, 0.8)
        args = dict(
            level=level,
            slope=rng.uniform(-1e-4, 1e-3),
            se=10 ** rng.uniform(-6, -2),
            n=int(rng.integers(32, 5_000)),
            bar=level + rng.uniform(-0.05, 0.2),
            remaining=int(rng.integers(10, 5_000)),
            lever=rng.uniform(8, 200),
            level_ucb=level + rng.uniform(0, 0.05),
            z=rng.uniform(1, 4.5),
            eta=0.04,
        )
        got = affordability(**{k: v for k, v in args.items() if k != "eta"}, top=1.0, eta=0.04)
        assert got == pytest.approx(phi_by_definition(**args), abs=1e-9), args
        values.append(got)
    shares = [np.mean(np.array(values) == v) for v in (0.0, 1.0)]
    assert all(0.05 < s < 0.95 for s in shares)  # the draws reach all three regimes
    assert any(0 < v < 1 for v in values)


def test_the_index_never_exceeds_the_largest_reward() -> None:
    instance = rb.ltf(np.array([0.2, 0.9, 0.5]), np.array([300, 3_000, 800]), 4_000)
    result = rb.simulate(instance, "ace-ucb", 4_000, 3, trace=True)
    assert result.trace is not None
    index = result.trace.index
    ranked = np.isfinite(index)  # the forced start shows +-inf
    assert ranked.mean() > 0.9
    assert index[ranked].max() <= 1.0 + 1e-12


def test_an_arm_without_pulls_is_played_next_and_the_highest_level_is_recommended() -> None:
    state = make_policy("ace-ucb").init_state(3, 200)
    for _ in range(40):
        for arm, reward in ((0, 0.3), (1, 0.6)):
            update_one(state, arm, reward, 1, policy_rng(0))
    assert state.arm[0, LEVEL] == pytest.approx(0.3) and state.arm[1, LEVEL] == pytest.approx(0.6)
    assert select_one(state, 81, policy_rng(0)) == 2  # arm 2 has no pull (added late)
    assert recommend_one(state, state.hist.counts.copy(), np.zeros(3)) == 1
