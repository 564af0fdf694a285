"""CURE-UCB: the index term by term on a crafted history, and the paper's intro behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest

import risingbandits as rb
from risingbandits.policies import make_policy
from risingbandits.policies.machinery.kernel import select_one
from risingbandits.policies.machinery.windows import history_push
from risingbandits.policies.rising.cure import cure_index_terms
from risingbandits.seeding import policy_rng

HISTORY = [0.1, 0.3, 0.2, 0.6, 0.5, 0.9, 0.7, 0.8]  # X(1..8) of one arm


def test_index_terms_by_hand() -> None:
    policy = make_policy("cure-ucb", eps=0.25, sigma=0.1)
    state = policy.init_state(2, 100)
    for x in HISTORY:
        history_push(state.hist, 0, x)
    # N = 8, h = floor(8/4) = 2: upper window X(7), X(8); lower window X(5), X(6).
    recent, future, bonus = cure_index_terms(state.hist, 0, 2, 100 - 20, math.log(20), 0.1)
    assert recent == pytest.approx((0.7 + 0.8) / 2)
    assert future == pytest.approx((80 / 2) * ((0.7 - 0.5) + (0.8 - 0.9)) / (2 * 2))  # = 1.0
    assert bonus == pytest.approx(
        0.1 * math.sqrt(2 * (3 * 80**2 + 8 * 2**2) * math.log(20**3) / (4 * 2**3))
    )
    assert bonus == pytest.approx(10.3937, abs=1e-3)


def test_select_is_argmax_of_index() -> None:
    policy = make_policy("cure-ucb", eps=0.25, sigma=0.1, tie_break="first")
    state = policy.init_state(2, 100)
    for x in HISTORY:
        history_push(state.hist, 0, x)
    for x in [0.9, 0.9, 0.9, 0.9]:  # arm 1: flat at 0.9, N = 4, h = 1
        history_push(state.hist, 1, x)
    t = 13
    b0 = sum(cure_index_terms(state.hist, 0, 2, 100 - t, math.log(t), 0.1))
    b1 = sum(cure_index_terms(state.hist, 1, 1, 100 - t, math.log(t), 0.1))
    rng = policy_rng(0)
    assert select_one(state, t, rng) == int(b1 > b0)
    np.testing.assert_allclose(state.scores, [b0, b1])


def test_window_and_start() -> None:
    # 2K round robin first, then the index; the window never exceeds N/2.
    inst = rb.intro(1000)
    res = rb.simulate(inst, make_policy("cure-ucb"), 1000, 1, record_arms=True)
    assert res.arms is not None
    assert res.arms[0, :4].tolist() == [0, 1, 0, 1]


@pytest.mark.parametrize(("horizon", "arm"), [(10_000, 0), (30_000, 1)])
def test_deterministic_intro_regret_is_near_zero(horizon: int, arm: int) -> None:
    """Noise-free intro: CURE-UCB (h = 1) stays on A at T = 10,000 and moves to B at 30,000."""
    inst = rb.intro(horizon, rb.Noise("none"))
    res = rb.simulate(inst, make_policy("cure-ucb-det"), horizon, 1)
    assert res.best_arm == arm
    assert res.regret[0] < 2.0  # the start pulls only (V* is 4,000 resp. 17,500)
    assert res.pulls[0, arm] >= horizon - 2


def test_sigma_auto_uses_noise_proxy() -> None:
    policy = make_policy("cure-ucb", sigma="auto")
    assert policy.init_state(2, 10, noise_proxy=0.5).noise.fixed == 0.5
    with pytest.raises(ValueError, match="sigma='auto' needs the noise proxy"):
        policy.init_state(2, 10)


def test_parameter_errors_name_the_range() -> None:
    with pytest.raises(ValueError, match=r"eps=0.5 is not allowed: use a number in \(0, 1/2\)"):
        make_policy("cure-ucb", eps=0.5)
    with pytest.raises(ValueError, match=r"sigma=-1.0 is not allowed: use a number >= 0"):
        make_policy("cure-ucb", sigma=-1.0)
    with pytest.raises(ValueError, match="unknown parameter 'epsilon'"):
        make_policy("cure-ucb", epsilon=0.1)
    with pytest.raises(ValueError, match="preset='nope'"):
        make_policy("cure-ucb", preset="nope")
    with pytest.raises(ValueError, match=r"^cure-ucb: preset=\['imdb'\] is not allowed: use "):
        make_policy("cure-ucb", preset=["imdb"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^policy=\['cure-ucb'\] is not allowed: use one of "):
        make_policy(["cure-ucb"])  # type: ignore[arg-type]
    assert make_policy("cure-ucb", preset="imdb").params["eps"] == 1 / 32
