"""One conformance suite over every registered policy (like scikit-learn's estimator checks)."""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import pytest

import risingbandits as rb
from conftest import random_ltf
from risingbandits.policies import POLICIES, make_policy, policy_from_dict
from risingbandits.policies.machinery.kernel import (
    _KERNELS,
    _default_recommend,
    register_kernel,
    register_plan,
)
from risingbandits.reproduce.settings import POLICY_VARIANTS
from risingbandits.seeding import reward_key

NAMES = sorted(POLICIES)
VARIANTS = [
    *((v.name, {v.param: v.value}) for v in POLICY_VARIANTS),  # the ones the report shows
    ("ti-ucb", {"detector": "none"}),
    ("ti-ucb", {"delta_schedule": "1/t"}),
]
CONFIGS = pytest.mark.parametrize(
    ("name", "params"),
    [pytest.param(name, {}, id=name) for name in NAMES]
    + [pytest.param(n, p, id=n + "".join(f"[{k}={v}]" for k, v in p.items())) for n, p in VARIANTS],
)
"""Every registered policy with its defaults, and every variant parameter value."""
NOISES = [rb.Noise("gaussian", 0.1), rb.Noise("bernoulli"), rb.Noise("none")]


def online_arms(
    policy: rb.Policy, instance: rb.RisingInstance, horizon: int, seed: int
) -> list[int]:
    """Drive the online object with the same counter-based rewards as the simulator."""
    noise = instance.noise
    key = reward_key(seed)
    policy.reset(instance.n_arms, horizon, seed=seed, noise_proxy=noise.proxy)
    pulls = np.zeros(instance.n_arms, np.int64)
    arms = []
    for _ in range(horizon):
        arm = policy.select()
        pulls[arm] += 1
        x = instance.reward(key, arm, int(pulls[arm]))
        policy.update(arm, x)
        arms.append(arm)
    return arms


@CONFIGS
@pytest.mark.parametrize("noise", NOISES, ids=str)
def test_online_equals_compiled(name: str, params: dict, noise: rb.Noise) -> None:
    instance = random_ltf(np.random.default_rng(1), 3, 300, noise)
    policy = make_policy(name, **params)
    for seed in (0, 5):
        sim = rb.simulate(instance, policy, 300, [seed], record_arms=True)
        assert sim.arms is not None
        assert online_arms(policy, instance, 300, seed) == sim.arms[0].tolist()
        assert policy.recommend() == sim.recommended[0]  # the arm it would deploy


@pytest.mark.parametrize("name", NAMES)
def test_recommendation_is_a_valid_arm_by_the_policy_rule(
    name: str, small_instance: rb.RisingInstance
) -> None:
    """The default rule (most pulls, then the higher last reward, then the lowest index) unless
    the policy registers its own; the final gap is the oracle's for that arm."""
    policy = make_policy(name)
    res = rb.simulate(small_instance, policy, 400, [0, 1, 2])
    last = np.zeros(small_instance.n_arms)
    state = policy.init_state(small_instance.n_arms, 400, small_instance.noise_proxy)
    default = _KERNELS[type(state)][2].py_func is _default_recommend
    for s, seed in enumerate(res.seeds):
        pulls, rec = res.pulls[s], int(res.recommended[s])
        assert 0 <= rec < small_instance.n_arms
        gap = small_instance.oracle.final_gap(pulls, np.array(rec))
        assert res.final_gap[s] == pytest.approx(gap)
        if default:
            for i in range(small_instance.n_arms):
                n = int(pulls[i])
                last[i] = small_instance.reward(reward_key(seed), i, n) if n else 0.0
            order = sorted(range(small_instance.n_arms), key=lambda i: (-pulls[i], -last[i], i))
            assert rec == order[0]


@CONFIGS
def test_arms_valid_for_small_sizes(name: str, params: dict) -> None:
    rng = np.random.default_rng(2)
    policy = make_policy(name, **params)
    for n_arms in range(2, 11):
        instance = random_ltf(rng, n_arms, 3 * n_arms, rb.Noise("gaussian", 0.1))
        for horizon in range(1, 3 * n_arms + 1):
            res = rb.simulate(instance, policy, horizon, 2, record_arms=True)
            assert res.arms is not None
            assert res.arms.shape == (2, horizon)
            assert res.arms.min() >= 0 and res.arms.max() < n_arms
            assert (res.pulls.sum(axis=1) == horizon).all()


@CONFIGS
def test_deterministic_under_seed(
    name: str, params: dict, small_instance: rb.RisingInstance
) -> None:
    policy = make_policy(name, **params)
    a = rb.simulate(small_instance, policy, 400, [3, 4], record_arms=True)
    b = rb.simulate(small_instance, policy, 400, [3, 4], record_arms=True)
    assert a.arms is not None and b.arms is not None
    np.testing.assert_array_equal(a.arms, b.arms)
    np.testing.assert_array_equal(a.reward, b.reward)


@CONFIGS
def test_reset_really_resets(name: str, params: dict, small_instance: rb.RisingInstance) -> None:
    policy = make_policy(name, **params)
    first = online_arms(policy, small_instance, 200, seed=9)
    online_arms(policy, small_instance, 150, seed=1)  # a different run in between
    assert online_arms(policy, small_instance, 200, seed=9) == first


@CONFIGS
def test_prefix_property_when_horizon_free(
    name: str, params: dict, small_instance: rb.RisingInstance
) -> None:
    policy = make_policy(name, **params)
    short = rb.simulate(small_instance, policy, 150, [0, 1], record_arms=True)
    long = rb.simulate(
        small_instance,
        policy,
        400,
        [0, 1],
        record_arms=True,
        checkpoints=[] if policy.uses_horizon else [150, 400],
    )
    assert short.arms is not None and long.arms is not None
    if policy.uses_horizon:
        with pytest.raises(ValueError, match="uses the horizon"):
            rb.simulate(small_instance, policy, 400, 1, checkpoints=[150])
        return
    np.testing.assert_array_equal(long.arms[:, :150], short.arms)
    prefix = long.at(150)
    np.testing.assert_array_equal(prefix.pulls, short.pulls)
    np.testing.assert_allclose(prefix.regret, short.regret)
    np.testing.assert_allclose(prefix.reward, short.reward)
    np.testing.assert_array_equal(prefix.recommended, short.recommended)
    np.testing.assert_allclose(prefix.final_gap, short.final_gap)


@pytest.mark.parametrize("name", NAMES)
def test_params_round_trip(name: str) -> None:
    cls = POLICIES[name]
    configs = [make_policy(name)] + [make_policy(name, preset=p) for p in cls.presets]
    for policy in configs:
        data = json.loads(json.dumps(policy.to_dict()))
        again = policy_from_dict(data)
        assert again == policy
        assert again.params == policy.params
        assert again.uses_horizon == policy.uses_horizon


@pytest.mark.parametrize("name", NAMES)
def test_documented(name: str) -> None:
    cls = POLICIES[name]
    assert cls.__doc__ and cls.paper and cls.summary
    info = make_policy(name).info()
    assert info["name"] == name
    assert isinstance(info["uses_horizon"], bool)
    if cls.reconstruction:
        assert "reconstruction" in cls.__doc__.lower()
        assert "reconstruction" in cls.summary.lower()


def test_a_kernel_named_unlike_its_entry_point_is_refused_at_registration() -> None:
    # Numba inlines a kernel in its entry point's place (kernel._implementation), which needs
    # the entry point's parameter names; a new policy learns it here, not from a Numba error
    class ThrowawayState(NamedTuple):
        counts: np.ndarray

    def select(state, t, rng):  # type: ignore[no-untyped-def]
        return 0

    def update(state, chosen, reward, t, rng):  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(
        TypeError,
        match=r"update\(.*'chosen'.*name its parameters "
        r"\('state', 'arm', 'reward', 't', 'rng'\)",
    ):
        register_kernel(ThrowawayState, select, update)
    with pytest.raises(TypeError, match="policy_plan kernel"):
        register_plan(ThrowawayState, select)
    assert ThrowawayState not in _KERNELS
