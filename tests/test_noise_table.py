"""Noise ``curve-std``: a standard deviation per (arm, pull) carried by the instance."""

from __future__ import annotations

import numpy as np
import pytest

import risingbandits as rb


def _instance(std: np.ndarray) -> rb.RisingInstance:
    means = np.full((2, 400), 0.5)
    return rb.RisingInstance(means, rb.Noise.parse("curve-std"), noise_std=std)


def test_zero_table_means_noise_free_rewards() -> None:
    inst = _instance(np.zeros((2, 400)))
    res = rb.simulate(inst, rb.make_policy("ucb1"), 400, seeds=3)
    np.testing.assert_allclose(res.reward, 200.0)


def test_gaussian_spread_matches_the_table() -> None:
    from risingbandits.rewards import NOISE_CURVE_STD, draw_reward
    from risingbandits.seeding import reward_key

    means = np.full((2, 20_000), 0.5)
    std = np.full((2, 20_000), 0.05)
    key = reward_key(3)
    draws = np.array(
        [draw_reward(means, NOISE_CURVE_STD, 0.0, std, key, 1, n) for n in range(1, 20_001)]
    )
    assert draws.std() == pytest.approx(0.05, rel=0.03)
    assert draws.mean() == pytest.approx(0.5, abs=0.002)


def test_curve_std_without_a_table_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"noise=curve-std is not allowed.*noise_std"):
        rb.RisingInstance(np.full((2, 10), 0.5), rb.Noise.parse("curve-std"))


@pytest.mark.parametrize(
    ("std", "match"),
    [
        (np.zeros((2, 9)), "noise_std has shape"),
        (np.full((2, 10), -0.1), r"noise_std\[arm 0, pull 1\] = -0.1 is not allowed"),
        (np.full((2, 10), np.nan), "is not allowed: use a finite number >= 0"),
    ],
)
def test_bad_tables_are_refused(std: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        rb.RisingInstance(np.full((2, 10), 0.5), noise_std=std)


def test_other_noise_models_ignore_the_table_and_with_noise_keeps_it() -> None:
    inst = _instance(np.full((2, 400), 0.3)).with_noise(rb.Noise("none"))
    assert inst.noise_std is not None and inst.noise_table.shape == (0, 0)
    assert inst.with_noise(rb.Noise.parse("curve-std")).noise_proxy == pytest.approx(0.3)
